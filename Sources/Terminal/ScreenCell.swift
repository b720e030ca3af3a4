import TerminalText

/// What one screen position holds: a character that takes columns, with the zero-width marks that follow it,
/// in one style. Lines become cells the same way `DisplayWidth` counts them, so what views measure is what lands.
///
/// ```swift
/// StyledLine("日本語").cells(fittingWidth: 5).map(\.width)   // [2, 2]: the third would straddle the edge
/// ```
struct ScreenCell: Equatable {
    /// The spacing character first, then up to `ScreenCell.maximumMarks` zero-width ones.
    var scalars: [Unicode.Scalar]
    var style: Style
    /// Columns taken: 1, or 2 for wide characters.
    var width: Int

    /// Zero-width characters one cell carries after its spacing one (ncurses keeps `CCHARW_MAX`, 5, in all).
    static let maximumMarks = 4
}

extension StyledLine {
    /// The cells that fit in `width` columns, left to right. The line is cut at the first character that would
    /// cross the edge (so it never wraps); control and unprintable characters and zero-width joiners are left out
    /// (`DisplayWidth.drawnWidth(of:)`), and another zero-width character joins the cell before it.
    func cells(fittingWidth width: Int) -> [ScreenCell] {
        var cells: [ScreenCell] = []
        var used = 0
        for span in spans {
            for scalar in span.text.unicodeScalars {
                guard let columns = DisplayWidth.drawnWidth(of: scalar) else { continue }
                if columns == 0 {
                    if let last = cells.indices.last, cells[last].scalars.count <= ScreenCell.maximumMarks {
                        cells[last].scalars.append(scalar)
                    }
                    continue
                }
                guard used + columns <= width else { return cells }
                cells.append(ScreenCell(scalars: [scalar], style: span.style, width: columns))
                used += columns
            }
        }
        return cells
    }
}
