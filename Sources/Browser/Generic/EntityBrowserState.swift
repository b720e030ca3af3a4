import Foundation
import GraphStore

/// Where the entity browser's keyboard focus is.
public enum EntityPane: String, Equatable, Sendable, CaseIterable {
    /// The model's entities with their counts.
    case entities
    /// A list of objects: an entity's, or the members of a to-many.
    case objects
    /// One object: its attributes and relationships.
    case object
    case sqlLog
}

/// Everything the entity browser's views draw, as plain values (see `BrowserState` for the chat browser's).
public struct EntityBrowserState: Equatable, Sendable {
    public var width: Int
    public var height: Int
    public var storeName: String
    public var settings: BrowserSettings
    public var focus = EntityPane.entities
    /// The chat browser's overlays: help, the delete preview, the quit question, the filter field (`.search`, its
    /// text a predicate) and a statement in full.
    public var overlay = Overlay.none
    public var helpTop = 0

    public var entities = EntityListState()
    /// What the main pane shows: the last step of the path (nil until an entity is opened).
    public var main: MainPane?
    /// The path to it, one crumb per step: `Person › p3 Jane Doe › cars › Car p12`.
    public var breadcrumb: [String] = []

    public var sqlSelected = 0
    public var explained: [String]?

    public var progress: WorkProgress?
    public var message: String?
    public var messageIsError = false
    /// Unsaved changes, for the status line.
    public var pending: String?
    public var quitRequested = false
    /// Whether the store is open read-only (the default for a store that is not the chat store).
    public var storeIsReadOnly = true

    public init(width: Int, height: Int, storeName: String, settings: BrowserSettings) {
        self.width = width
        self.height = height
        self.storeName = storeName
        self.settings = settings
    }

    /// Whether the keys that write (`d`, `w`, `u`, `Ctrl-R`) are offered.
    public var isWritable: Bool { !storeIsReadOnly && !settings.readOnly }
}

/// The main pane: a list of objects or one object.
public enum MainPane: Equatable, Sendable {
    case list(ObjectListState)
    case object(ObjectDetailState)
}

/// The entities pane: every entity of the model in `Z_ENT` order, sub-entities under their parents.
public struct EntityListState: Equatable, Sendable {
    public var rows: [EntityRow] = []
    public var selected = 0
    public var top = 0
}

public struct EntityRow: Equatable, Sendable {
    public var name: String
    /// How deep below its root entity (0 for a root).
    public var depth: Int
    public var isAbstract: Bool
    /// Objects of the entity and of its sub-entities (a SportCar is a Car); nil until counted.
    public var count: Int?
}

/// One column of an objects list: an attribute, a to-one, or the entity of each object.
public struct ListColumn: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case attribute
        /// The destination's name is shown (read from it: a fault unless prefetched).
        case toOne
        /// Which entity each object is, for a list of an entity with sub-entities.
        case entity
    }

    public var key: String
    public var width: Int
    public var kind: Kind
}

/// One cell's text, and whether it stands for no value.
public struct Cell: Equatable, Sendable {
    public var text: String
    public var isNull: Bool

    public init(_ text: String, isNull: Bool = false) {
        self.text = text
        self.isNull = isNull
    }
}

/// A list of objects as the objects pane draws it.
public struct ObjectListState: Equatable, Sendable {
    /// `Car`, or `cars of Person p3` for a to-many's members.
    public var title: String
    /// The entity listed.
    public var entity: String
    /// Objects listed (the fetch's count).
    public var count = 0
    public var selected = 0
    public var top = 0
    /// `key ↑`, `maker ↓`, `relationship order`.
    public var sortLabel = ""
    /// The predicate the list is filtered by ("" for none).
    public var filter = ""
    /// The filter in force when the filter field opened: Esc leaves it.
    public var filterBefore = ""
    public var columns: [ListColumn] = []
    /// The width of the key column (`p12`).
    public var keyWidth = 4
    /// The visible rows, from `top`.
    public var rows: [ObjectRow] = []
}

public struct ObjectRow: Equatable, Sendable {
    /// `p12`, or `SportCar p14` when a sub-entity's object is listed with its parent's.
    public var key: String
    public var cells: [Cell]
}

/// One object as the object pane draws it.
public struct ObjectDetailState: Equatable, Sendable {
    /// `Car p12 FIAT Panda`.
    public var title: String
    public var uri: String
    public var rows: [DetailRow] = []
    public var selected = 0
    public var top = 0
}

/// One attribute or relationship of the object shown.
public struct DetailRow: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case attribute
        case toOne
        case toMany
    }

    public var name: String
    public var kind: Kind
    /// The value's text: an attribute's value, `→ Person p17`, `⇉ Car` with its count when counts are on.
    public var value: Cell
    /// `String`, `Date`, `to-one Person`, `to-many Car, ordered`.
    public var type: String
}
