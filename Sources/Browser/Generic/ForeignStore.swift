import ChatFixture
import Foundation
import GraphStore

/// The model of a store that is not the chat store: the object model the store is read with, and what the model
/// file says of its attributes beyond the store's layout (the class a Transformable value holds, whether a Binary
/// value may live in a file of its own).
///
/// ```swift
/// let model = try ForeignModel.load(path: "Cars.xcdatamodeld")
/// model.isChatModel    // false: `browse` and `trace` open the entity browser
/// ```
public struct ForeignModel: Sendable {
    public let objectModel: ObjectModel
    public let details: ModelFileDetails

    public init(objectModel: ObjectModel, details: ModelFileDetails = ModelFileDetails()) {
        self.objectModel = objectModel
        self.details = details
    }

    /// Reads a `.xcdatamodeld` folder (its current version), a `.xcdatamodel` folder or a `contents` file.
    public static func load(path: String) throws(ModelError) -> ForeignModel {
        let url = URL(fileURLWithPath: path)
        let objectModel = try XcodeModelLoader.load(contentsOf: url)
        return ForeignModel(objectModel: objectModel, details: ModelFileDetails.read(modelAt: url))
    }

    /// Whether this is the chat model, which the chat browser shows.
    public var isChatModel: Bool {
        guard let chat = try? ChatModel.make() else { return false }
        return chat == objectModel
    }
}

/// A store opened for the entity browser, with its model.
public struct ForeignStore {
    public let coordinator: PersistentStoreCoordinator
    public let model: ForeignModel

    /// Opens the store at `path` for `model`: read-only unless `writable`, never created. This is the one place a
    /// store other than the chat store is opened for browsing.
    ///
    /// Read-only, the store is read through a look that changes nothing (`PersistentStore.Options.readOnly`): the
    /// file keeps every byte and no `-wal`, `-shm` or `-journal` stays beside it. Writable, the whole file is
    /// checked before the first write, as the chat browser does.
    public static func open(path: String, model: ForeignModel, writable: Bool, settings: BrowserSettings) throws(StoreError) -> ForeignStore {
        let options = PersistentStore.Options(readOnly: !writable || settings.readOnly, createIfMissing: false,
                                              busyTimeout: settings.busyTimeout, checkBeforeFirstWrite: true)
        let coordinator = try PersistentStoreCoordinator(path: path, model: model.objectModel, options: options)
        return ForeignStore(coordinator: coordinator, model: model)
    }
}
