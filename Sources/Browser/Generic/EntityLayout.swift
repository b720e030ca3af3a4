/// Where the entity browser's panes go for a window size: the entities on the left, the main pane (an objects list
/// or one object) beside them, the activity panel over the SQL log on the right when the window is 110 columns wide
/// or more, in a band below otherwise. Until an entity is opened the entities pane takes the main pane's room too.
/// The last two rows are the status line and the hint bar.
///
/// ```swift
/// EntityLayout(width: 120, height: 40, mainIsOpen: true).main.width   // 58
/// ```
struct EntityLayout: Equatable, Sendable {
    var entities: Rect
    var main: Rect
    var activity: Rect
    var sqlLog: Rect
    var statusRow: Int
    var hintRow: Int

    /// Lines of the main pane above its rows: the title and the breadcrumb; a list adds its column headings.
    static let objectHeaderLines = 2
    static let listHeaderLines = 3

    init(_ state: EntityBrowserState) {
        self.init(width: state.width, height: state.height, mainIsOpen: state.main != nil)
    }

    init(width: Int, height: Int, mainIsOpen: Bool = true) {
        let body = max(1, height - 2)
        statusRow = height - 2
        hintRow = height - 1
        if width >= 110 {
            let entitiesWidth = max(20, width * 20 / 100)
            let panelWidth = max(34, width * 30 / 100)
            entities = Rect(row: 0, column: 0, width: entitiesWidth, height: body)
            main = Rect(row: 0, column: entitiesWidth + 1, width: width - entitiesWidth - panelWidth - 2, height: body)
            let activityHeight = body * 55 / 100
            activity = Rect(row: 0, column: width - panelWidth, width: panelWidth, height: activityHeight)
            sqlLog = Rect(row: activityHeight, column: width - panelWidth, width: panelWidth, height: body - activityHeight)
        } else {
            let band = max(6, body / 3)
            let top = body - band
            let entitiesWidth = max(16, width * 25 / 100)
            entities = Rect(row: 0, column: 0, width: entitiesWidth, height: top)
            main = Rect(row: 0, column: entitiesWidth + 1, width: width - entitiesWidth - 1, height: top)
            let activityWidth = width / 2
            activity = Rect(row: top, column: 0, width: activityWidth, height: band)
            sqlLog = Rect(row: top, column: activityWidth + 1, width: width - activityWidth - 1, height: band)
        }
        if !mainIsOpen {
            entities.width = main.column + main.width - entities.column
            main = Rect(row: main.row, column: main.column + main.width, width: 0, height: main.height)
        }
    }

    /// Rows of the entities pane below its title.
    var entityRows: Int { max(0, entities.height - 1) }

    /// Rows of objects an objects list shows.
    var listRows: Int { max(1, main.height - Self.listHeaderLines) }

    /// Rows of attributes and relationships the object pane shows.
    var objectRows: Int { max(1, main.height - Self.objectHeaderLines) }
}
