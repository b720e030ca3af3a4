import Foundation
import GRDB

/// The model a store keeps inside itself, in its `Z_MODELCACHE` table: with it, a store opens without its model
/// file.
///
/// Core Data keeps there its `NSManagedObjectModel` as a keyed archive compressed with raw DEFLATE; GraphStore keeps
/// its declarations as JSON. Both are read.
///
/// ```swift
/// let stored = try StoredModel.read(storeAt: "Books.sqlite")
/// let coordinator = try PersistentStoreCoordinator(path: "Books.sqlite", model: stored.model)
/// ```
public struct StoredModel: Sendable {
    public enum Format: String, Sendable {
        /// Core Data's keyed archive of an `NSManagedObjectModel`.
        case coreData = "Core Data"
        /// GraphStore's own JSON of the declarations.
        case graphStore = "GraphStore"
    }

    public let model: ObjectModel
    public let format: Format
    /// What the cache declares that an `ObjectModel` cannot hold and was left out, each naming the entity and
    /// property (fetched properties, a transformable's default object, validation rules other than a range…).
    public let omissions: [String]

    /// Reads the cache of the store at `path` without changing the file or leaving a file beside it: the
    /// read-only looks `PersistentStore` opens with.
    public static func read(storeAt path: String, busyTimeout: TimeInterval = PersistentStore.standardBusyTimeout)
        throws(StoredModelError) -> StoredModel {
        let content: Data
        do {
            content = try cacheContent(path: path, busyTimeout: busyTimeout)
        } catch let error as StoredModelError {
            throw error
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .store(.sqlite(path: path, message: PersistentStore.sqliteMessage(error, busyTimeout: busyTimeout)))
        }
        do {
            return try decode(content)
        } catch {
            throw error.located(at: path)
        }
    }

    /// Decodes the content of a `Z_MODELCACHE` row (errors name no file).
    public static func decode(_ content: Data) throws(StoredModelError) -> StoredModel {
        guard !content.isEmpty else { throw .empty(path: "") }
        // GraphStore's JSON is an array of declarations. A raw DEFLATE stream may start with '[' too, so content
        // that is not JSON goes on to be inflated.
        if content.first == UInt8(ascii: "["), (try? JSONSerialization.jsonObject(with: content)) != nil {
            do {
                return StoredModel(model: try ModelCache.decode(content), format: .graphStore, omissions: [])
            } catch let error as ModelError {
                throw .invalid(path: "", error)
            } catch {
                throw .unknownShape(path: "", reason: "its JSON does not declare entities")
            }
        }
        let inflated: Data
        do {
            inflated = try RawDeflate.inflate(content)
        } catch {
            switch error {
            case .truncated: throw .damaged(path: "", reason: "its compressed model is cut short")
            case .damaged(let reason): throw .damaged(path: "", reason: "its compressed model cannot be inflated (\(reason))")
            case .tooLarge(let limit): throw .damaged(path: "", reason: "it inflates to more than \(limit >> 20) MB, which is no model")
            }
        }
        let archive: KeyedArchive
        do {
            archive = try KeyedArchive(propertyList: inflated)
        } catch {
            throw .unknownShape(path: "", reason: "it inflates to something that \(error.description)")
        }
        var reader = ArchivedModelReader(archive: archive)
        switch reader.read() {
        case .failure(let error):
            throw .unknownShape(path: "", reason: error.problems.joined(separator: "; "))
        case .success(let declarations):
            do {
                return StoredModel(model: try ObjectModel(declarations), format: .coreData, omissions: reader.omissions)
            } catch {
                throw .invalid(path: "", error)
            }
        }
    }

    /// The one row of `Z_MODELCACHE`, read through a look that changes nothing.
    private static func cacheContent(path: String, busyTimeout: TimeInterval) throws -> Data {
        let file = try StoreFileCheck.inspect(path: path)
        guard case .database = file.state else { throw StoreError.noSuchFile(path: path) }
        let busy = "another process kept writing it while its model was read, and this process cannot share the -wal and "
            + "-shm files that would let it read one state of it; read it again later"
        return try StoreLook.read(path: path, file: file, whileChanging: .unreadable(path: path, reason: busy)) { look
            -> Result<Result<Data, StoredModelError>, LookError> in
            do {
                let queue = try look.openQueue(busyTimeout: busyTimeout)
                defer { try? queue.close() }
                return .success(try queue.read { db -> Result<Data, StoredModelError> in
                    // Worded as opening a store words it, naming the first table missing.
                    for required in ["Z_METADATA", "Z_PRIMARYKEY"] where try !db.tableExists(required) {
                        return .failure(.store(.notAStore(path: path, reason: "it has no \(required) table")))
                    }
                    guard try db.tableExists("Z_MODELCACHE") else { return .failure(.missing(path: path)) }
                    guard let content = try Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1") else {
                        return .failure(.empty(path: path))
                    }
                    return .success(content)
                })
            } catch {
                return .failure(LookError(reading: error, path: path, look: look, busyTimeout: busyTimeout))
            }
        }.value.get()
    }
}

/// Why a store's own model could not be read.
public enum StoredModelError: Error, CustomStringConvertible, Sendable {
    /// The file cannot be read as a store at all.
    case store(StoreError)
    /// The store has no `Z_MODELCACHE` table (stores made by older versions of Core Data).
    case missing(path: String)
    /// The table is there but holds no model.
    case empty(path: String)
    /// The content is cut short or is not compressed as Core Data compresses it.
    case damaged(path: String, reason: String)
    /// The content inflates, but not to a model archive this reader knows.
    case unknownShape(path: String, reason: String)
    /// A model was read, but it is not a valid one.
    case invalid(path: String, ModelError)

    public var description: String {
        func located(_ path: String, _ text: String) -> String { path.isEmpty ? text : "\(path): \(text)" }
        switch self {
        case .store(let error): return error.description
        case .missing(let path): return located(path, "has no model inside it (no Z_MODELCACHE table, as in stores made by older Core Data versions)")
        case .empty(let path): return located(path, "its model cache (Z_MODELCACHE) is empty")
        case .damaged(let path, let reason): return located(path, "its model cache (Z_MODELCACHE) is damaged: \(reason)")
        case .unknownShape(let path, let reason): return located(path, "its model cache (Z_MODELCACHE) is not a model this version reads: \(reason)")
        case .invalid(let path, let error): return located(path, "the model in its cache (Z_MODELCACHE) is not valid: \(error.problems.joined(separator: "; "))")
        }
    }

    /// Whether giving the model file would get past this error (the file itself was readable as a store).
    public var modelFileWouldHelp: Bool {
        if case .store = self { return false }
        return true
    }

    func located(at path: String) -> StoredModelError {
        switch self {
        case .store: self
        case .missing: .missing(path: path)
        case .empty: .empty(path: path)
        case .damaged(_, let reason): .damaged(path: path, reason: reason)
        case .unknownShape(_, let reason): .unknownShape(path: path, reason: reason)
        case .invalid(_, let error): .invalid(path: path, error)
        }
    }
}
