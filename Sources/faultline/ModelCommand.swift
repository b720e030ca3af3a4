import ArgumentParser
import Foundation
import GraphStore

/// `faultline model PATH`: what a model file declares, and the store it makes.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Show the entities, attributes and relationships of a Core Data model file or store.",
        discussion: """
            PATH is a .xcdatamodeld folder (its current version is read), a .xcdatamodel folder, or its 'contents' file; \
            or a store (.sqlite), whose model is read from inside it (its Z_MODELCACHE table), without changing the file.
            With --ddl, prints every CREATE statement a store for the model gets, as a script sqlite3 runs as is.
            """
    )

    @Argument(help: "The model: a .xcdatamodeld or .xcdatamodel folder, a 'contents' XML file, or a store that keeps its model inside.")
    var path: String

    @Flag(help: "Print the CREATE TABLE/INDEX/TRIGGER statements of a store for this model.")
    var ddl = false

    @Flag(help: "Print the model as JSON.")
    var json = false

    func validate() throws {
        if ddl && json { throw ValidationError("--ddl and --json cannot be combined") }
    }

    func run() throws {
        // An empty path would read as the current folder.
        guard !path.isEmpty else {
            throw CommandFailure(ModelFileArgument.emptyPath)
        }
        let model: ObjectModel
        var source: String?
        var leftOut: [String] = []
        if StoreModelSource.isSQLiteFile(path) {
            let stored = try StoreModelSource.read(storeAt: path, suggestion: "read its model file instead: faultline model MODEL.xcdatamodeld")
            model = stored.model
            source = "the store's model cache, written by \(stored.format.rawValue)"
            leftOut = stored.omissions
        } else {
            model = try ModelFileArgument.load(path)
        }
        let schema = StoreSchema(model: model)
        let report = ModelReport(file: path, schema: schema, source: source, leftOut: leftOut)
        if ddl {
            try Output.write(schema.ddl)
        } else if json {
            try Output.write(try report.json() + "\n")
        } else {
            try Output.write(report.text())
        }
    }
}
