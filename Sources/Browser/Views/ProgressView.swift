import GraphStore
import TerminalText

/// The line drawn in place of the status line while long work runs: what, rows so far, elapsed time, and what a
/// key does meanwhile (Esc cancels a delete preview; other keys are dropped).
///
/// ```swift
/// ProgressView.line(progress, width: 80).text   // " saving: 120,000 rows, 0.4 s · keys are ignored until it ends"
/// ```
public enum ProgressView {
    public static func line(_ progress: WorkProgress, width: Int) -> StyledLine {
        let hint = progress.work == .deletePreview ? "Esc cancels, other keys are ignored" : "keys are ignored until it ends"
        return PaneView.fitted([
            Span(" \(progress.description)", Style(.warning, bold: true)),
            Span(" · \(hint)", Style(.status)),
        ], width: width, fill: Style(.status))
    }
}
