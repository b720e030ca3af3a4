import CNcursesw
import Glibc
@testable import Terminal
import Testing

/// A real `TerminalScreen` without a terminal, so drawing and key reading run under `swift test`: ncurses writes
/// to /dev/null and reads keys from a pipe the test types into; what was drawn is read back from the window.
/// ncurses has one current screen per process, so tests using this must not run in parallel.
///
/// ```swift
/// let headless = try HeadlessScreen(width: 20, height: 4)
/// headless.screen.draw(frame)
/// #expect(headless.row(0) == "hello               ")
/// ```
final class HeadlessScreen {
    let screen: TerminalScreen
    private let output: UnsafeMutablePointer<FILE>
    private let input: UnsafeMutablePointer<FILE>
    private let keyboard: Int32

    /// A screen of terminal type `type` (xterm's by default, whose mouse reports ncurses reads in SGR form itself),
    /// writing to `outputPath` (a file the test reads back) or nowhere.
    init(width: Int, height: Int, type: String = "xterm-256color", outputPath: String = "/dev/null") throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        output = try #require(fopen(outputPath, "w"))
        input = try #require(fdopen(ends[0], "r"))
        keyboard = ends[1]
        screen = try TerminalScreen.open(type: type, output: output, input: input)
        resize(width: width, height: height)
        // Leave the resize this queued unread, as if the screen had started at this size.
        _ = screen.readKey(timeoutMilliseconds: 0)
    }

    deinit {
        screen.close()
        fclose(output)
        fclose(input)
        Glibc.close(keyboard)
    }

    /// Changes the screen's size as a SIGWINCH would; ncurses queues a resize key.
    func resize(width: Int, height: Int) {
        resizeterm(Int32(height), Int32(width))
    }

    /// Sends bytes as if typed on the keyboard (escape sequences included).
    func type(_ bytes: String) {
        _ = bytes.utf8CString.withUnsafeBufferPointer { buffer in
            write(keyboard, buffer.baseAddress, buffer.count - 1)
        }
    }

    /// A row as the window holds it: each character once (wide ones too), trailing blanks kept.
    func row(_ row: Int) -> String {
        guard let window = screen.window else { return "" }
        let width = screen.size.width
        var characters = [wchar_t](repeating: 0, count: width + 1)
        let count = mvwinnwstr(window, Int32(row), 0, &characters, Int32(width))
        guard count != ERR else { return "" }
        let scalars = characters.prefix(while: { $0 != 0 }).compactMap { Unicode.Scalar(UInt32(bitPattern: $0)) }
        return String(String.UnicodeScalarView(scalars))
    }

    /// What one cell holds: its characters, attributes (without colour) and colour pair.
    func cell(row: Int, column: Int) -> (text: String, attributes: attr_t, pair: Int16) {
        guard let window = screen.window else { return ("", 0, 0) }
        var cell = cchar_t()
        mvwin_wch(window, Int32(row), Int32(column), &cell)
        var characters = [wchar_t](repeating: 0, count: 8)
        var attributes: attr_t = 0
        var pair: Int16 = 0
        getcchar(&cell, &characters, &attributes, &pair, nil)
        let scalars = characters.prefix(while: { $0 != 0 }).compactMap { Unicode.Scalar(UInt32(bitPattern: $0)) }
        let emphasis = faultline_a_bold() | faultline_a_dim() | faultline_a_reverse() | faultline_a_underline()
        return (String(String.UnicodeScalarView(scalars)), attributes & emphasis, pair)
    }
}
