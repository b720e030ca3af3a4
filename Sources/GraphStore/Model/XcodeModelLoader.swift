import Foundation

/// Reads the model files Xcode's Core Data model editor saves.
///
/// A model is a folder: `Name.xcdatamodel/contents` holds the XML. A versioned model is a folder of such folders,
/// `Name.xcdatamodeld/`, whose `.xccurrentversion` property list names the version in use.
///
/// Errors name the file the way the caller spelled it (a relative path stays relative); when the XML sits inside
/// the folder the caller named, the path to it is appended (`Name.xcdatamodeld/Name 2.xcdatamodel/contents`), so a
/// line number always belongs to the file named in front of it.
public enum XcodeModelLoader {
    /// Loads a `.xcdatamodeld` folder (its current version), a `.xcdatamodel` folder, or a `contents` XML file.
    public static func load(contentsOf url: URL) throws(ModelError) -> ObjectModel {
        guard url.isFileURL else {
            throw ModelError(file: url.absoluteString, problems: ["is not a file URL"])
        }
        let location = try locateContents(of: ModelLocation(url: url, shownPath: url.relativePath))
        let data = try read(location)
        let declarations = try declarations(fromXML: data, file: location.shownPath)
        do {
            return try ObjectModel(declarations)
        } catch {
            throw ModelError(file: location.shownPath, problems: error.problems)
        }
    }

    /// Parses model XML into declarations (no cross-entity validation). `file` names the file in errors.
    public static func declarations(fromXML data: Data, file: String) throws(ModelError) -> [EntityDescription] {
        if data.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            throw ModelError(file: file, problems: ["is empty"])
        }
        let result = XcodeModelParser.parse(data)
        guard result.problems.isEmpty else { throw ModelError(file: file, problems: result.problems) }
        return result.entities
    }
}

/// A file or folder on disk, with the path to show for it in errors.
private struct ModelLocation {
    var url: URL
    var shownPath: String

    func appending(_ name: String) -> ModelLocation {
        let separator = shownPath.hasSuffix("/") || shownPath.isEmpty ? "" : "/"
        return ModelLocation(url: url.appendingPathComponent(name), shownPath: shownPath + separator + name)
    }

    func failure(_ problem: String) -> ModelError {
        ModelError(file: shownPath, problems: [problem])
    }
}

extension XcodeModelLoader {
    private enum Kind {
        case missing, file, directory
    }

    private static func kind(of url: URL) -> Kind {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return .missing }
        return isDirectory.boolValue ? .directory : .file
    }

    /// Follows folders down to the `contents` file that holds the model's XML.
    private static func locateContents(of location: ModelLocation) throws(ModelError) -> ModelLocation {
        switch kind(of: location.url) {
        case .missing:
            throw location.failure("no such file or directory")
        case .file:
            return location
        case .directory where location.url.pathExtension == "xcdatamodeld":
            return try locateContents(of: currentVersion(in: location))
        case .directory:
            let contents = location.appending("contents")
            guard kind(of: contents.url) == .file else {
                throw location.failure("is a directory without a 'contents' file")
            }
            return contents
        }
    }

    /// The `.xcdatamodel` folder a versioned model uses: the one `.xccurrentversion` names, or its only version.
    private static func currentVersion(in bundle: ModelLocation) throws(ModelError) -> ModelLocation {
        let marker = bundle.appending(".xccurrentversion")
        if kind(of: marker.url) == .missing {
            let versions: [String]
            do {
                versions = try FileManager.default.contentsOfDirectory(atPath: bundle.url.path)
                    .filter { $0.hasSuffix(".xcdatamodel") }
                    .sorted()
            } catch {
                throw bundle.failure("cannot be listed")
            }
            switch versions.count {
            case 0:
                throw bundle.failure("has no '.xccurrentversion' and no '.xcdatamodel' version")
            case 1:
                return bundle.appending(versions[0])
            default:
                let names = versions.map { "'\($0)'" }.joined(separator: ", ")
                throw bundle.failure("has no '.xccurrentversion' to choose among \(versions.count) versions (\(names))")
            }
        }

        let data = try read(marker, as: "'.xccurrentversion'", in: bundle)
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw bundle.failure("'.xccurrentversion' is not a property list")
        }
        guard let name = (plist as? [String: Any])?["_XCCurrentVersionName"] as? String, !name.isEmpty else {
            throw bundle.failure("'.xccurrentversion' does not name a version (no '_XCCurrentVersionName')")
        }
        let version = bundle.appending(name)
        guard !name.contains("/"), name != ".", name != "..", kind(of: version.url) == .directory else {
            throw bundle.failure("'.xccurrentversion' names version '\(name)', which is not a folder here")
        }
        return version
    }

    /// The bytes of a model file; problems are reported against the file itself.
    private static func read(_ location: ModelLocation) throws(ModelError) -> Data {
        guard FileManager.default.isReadableFile(atPath: location.url.path) else {
            throw location.failure("is not readable")
        }
        do {
            return try Data(contentsOf: location.url)
        } catch {
            throw location.failure("cannot be read")
        }
    }

    /// The bytes of a helper file inside `folder`; problems are reported against the folder, naming the file.
    private static func read(_ location: ModelLocation, as label: String, in folder: ModelLocation) throws(ModelError) -> Data {
        do {
            return try Data(contentsOf: location.url)
        } catch {
            throw folder.failure("\(label) cannot be read")
        }
    }
}
