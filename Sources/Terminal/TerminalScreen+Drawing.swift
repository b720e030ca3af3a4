import CNcursesw
import TerminalText

extension TerminalScreen {
    /// Shows `frame`: draws the lines that differ from the last frame (all of them after a resize or
    /// `invalidate()`), then updates the terminal once. Lines are cut at the right edge, never wrapped; rows the
    /// frame lacks are left blank.
    ///
    /// ```swift
    /// screen.draw(Frame(width: 80, height: 24, lines: rows))
    /// ```
    public func draw(_ frame: Frame) {
        guard let window else { return }
        let (width, height) = size
        let previous = drawnWidth == width && drawnLines?.count == height ? drawnLines : nil
        var lines: [StyledLine] = []
        lines.reserveCapacity(height)
        for row in 0..<height {
            let line = row < frame.lines.count ? frame.lines[row] : StyledLine()
            if previous?[row] != line { drawLine(line, row: row, width: width, in: window) }
            lines.append(line)
        }
        drawnLines = lines
        drawnWidth = width
        wnoutrefresh(window)
        doupdate()
    }

    /// Writes one line into the window, cleared to its end. `wadd_wchnstr` neither moves the cursor nor wraps, so
    /// the bottom-right cell is as safe to fill as any other.
    private func drawLine(_ line: StyledLine, row: Int, width: Int, in window: UnsafeMutablePointer<WINDOW>) {
        let cells = line.cells(fittingWidth: width)
        let characters = cells.map { cell in
            var character = cchar_t()
            let appearance = palette.appearance(of: cell.style)
            let scalars = cell.scalars.map { wchar_t(bitPattern: $0.value) } + [0]
            setcchar(&character, scalars, appearance.attributes, appearance.pair, nil)
            return character
        }
        wmove(window, Int32(row), 0)
        wadd_wchnstr(window, characters, Int32(characters.count))
        let used = cells.reduce(0) { $0 + $1.width }
        if used < width {
            wmove(window, Int32(row), Int32(used))
            wclrtoeol(window)
        }
    }
}
