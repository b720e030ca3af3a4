/// A rectangle of screen cells.
public struct Rect: Equatable, Sendable {
    public var row: Int
    public var column: Int
    public var width: Int
    public var height: Int

    public func contains(row: Int, column: Int) -> Bool {
        row >= self.row && row < self.row + height && column >= self.column && column < self.column + width
    }
}

/// Where each pane goes for a window size. Wide windows get three columns (chats, messages, the activity panel
/// over the SQL log); narrower ones put the panel and the log in a band below. Until a chat is opened the chat list
/// also takes the messages pane's room (an empty pane would only say "Enter opens"), so the last messages can be
/// read in full. The last two rows are the status line and the hint bar. Used by the views and by clicks alike.
///
/// ```swift
/// Layout(width: 80, height: 24, chatIsOpen: false).chats.width   // 80
/// Layout(width: 80, height: 24).chats.width                      // 32, the messages pane beside it
/// ```
public struct Layout: Equatable, Sendable {
    public static let minimumWidth = 60
    public static let minimumHeight = 15
    /// The widths and heights a headless screen (`trace --size`, a script's `resize`) may have: the frame is built
    /// in memory, row by row, so its size is bounded.
    public static let sideRange = 1...1_000

    /// `WIDTHxHEIGHT` (`120x40`) read as a size with both sides in `sideRange`; nil for anything else.
    public static func size(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
              sideRange.contains(width), sideRange.contains(height) else { return nil }
        return (width, height)
    }

    public var chats: Rect
    public var main: Rect
    public var activity: Rect
    public var sqlLog: Rect
    public var statusRow: Int
    public var hintRow: Int

    public static func isTooSmall(width: Int, height: Int) -> Bool {
        width < minimumWidth || height < minimumHeight
    }

    /// The layout of what `state` shows: its size, and whether a chat is open.
    public init(_ state: BrowserState) {
        self.init(width: state.width, height: state.height, chatIsOpen: state.openChat != nil)
    }

    /// - Parameter chatIsOpen: false gives the chat list the messages pane's columns too (`main` is then empty).
    ///   The panes' heights do not depend on it.
    public init(width: Int, height: Int, chatIsOpen: Bool = true) {
        let body = max(1, height - 2)
        statusRow = height - 2
        hintRow = height - 1
        if width >= 110 {
            let chatsWidth = max(30, width * 32 / 100)
            let panelWidth = max(34, width * 30 / 100)
            let mainWidth = width - chatsWidth - panelWidth - 2
            chats = Rect(row: 0, column: 0, width: chatsWidth, height: body)
            main = Rect(row: 0, column: chatsWidth + 1, width: mainWidth, height: body)
            let activityHeight = body * 55 / 100
            activity = Rect(row: 0, column: width - panelWidth, width: panelWidth, height: activityHeight)
            sqlLog = Rect(row: activityHeight, column: width - panelWidth, width: panelWidth, height: body - activityHeight)
        } else {
            let band = max(6, body / 3)
            let top = body - band
            let chatsWidth = width * 40 / 100
            chats = Rect(row: 0, column: 0, width: chatsWidth, height: top)
            main = Rect(row: 0, column: chatsWidth + 1, width: width - chatsWidth - 1, height: top)
            let activityWidth = width / 2
            activity = Rect(row: top, column: 0, width: activityWidth, height: band)
            sqlLog = Rect(row: top, column: activityWidth + 1, width: width - activityWidth - 1, height: band)
        }
        if !chatIsOpen {
            chats.width = main.column + main.width - chats.column
            main = Rect(row: main.row, column: main.column + main.width, width: 0, height: main.height)
        }
    }

    /// Rows for content in a pane (its first row is its title).
    static func contentRows(_ rect: Rect) -> Int { max(0, rect.height - 1) }

    /// Screen lines each chat of the chat list takes (its title line, then its last message).
    public static var linesPerChat: Int { ChatListView.linesPerChat }

    /// How many chats the chat list shows in `rect`: each takes `linesPerChat` rows.
    public static func chatsShown(_ rect: Rect) -> Int { contentRows(rect) / linesPerChat }
}
