import TerminalText

/// The "Graph activity" panel: what the last action cost beside the totals since the start, its warnings, the
/// entities it faulted most, and sparklines of the last minute.
///
/// ```swift
/// ActivityPanelView.lines(monitor: monitor, width: 40, height: 12).map(\.text)
/// // ["last: open chat                         ",
/// //  "SQL 7 stmts 1.3ms  rows 18              ", …]
/// ```
/// At small sizes the panel keeps, in this order, the title, the last action's figures, its warnings, the
/// sparklines, the totals and the entities, and leaves out what no longer fits.
public enum ActivityPanelView {
    /// From this width on, the last action and the totals since the start are two columns side by side.
    public static let twoColumnWidth = 64

    /// The panel for `monitor`'s values: exactly `height` lines, each `width` display columns.
    public static func lines(monitor: ActivityMonitor, width: Int, height: Int) -> [StyledLine] {
        lines(summary: monitor.lastAction, totals: monitor.totals, timeline: monitor.timeline, width: width, height: height)
    }

    /// The panel: exactly `height` lines, each `width` display columns.
    ///
    /// - Parameters:
    ///   - summary: the last action, with its warnings; nil before the first one ends.
    ///   - totals: the figures since the start.
    ///   - timeline: statements and SQL time per second, for the sparklines.
    public static func lines(
        summary: ActionSummary?, totals: ActivityCounts, timeline: ActivityTimeline, width: Int, height: Int
    ) -> [StyledLine] {
        let width = max(0, width)
        let counts = summary?.counts ?? ActivityCounts()
        let title = [Span("last: ", Style(.muted)), Span(summary?.action ?? "no action yet", Style(.title, bold: true))]
        var sections: [Section] = []
        if width >= twoColumnWidth {
            sections.append(Section(priority: 0, lines: [columns(title, [Span("since start", Style(.title, bold: true))], width: width)]))
            sections.append(Section(priority: 1, lines: zip(figures(counts, partial: totals.partialFaults > 0), figures(totals, partial: totals.partialFaults > 0)).map { columns($0, $1, width: width) }))
        } else {
            sections.append(Section(priority: 0, lines: [ActivityLine.fit(title, width: width)]))
            sections.append(Section(priority: 1, lines: figures(counts, partial: totals.partialFaults > 0).map { ActivityLine.fit($0, width: width) }))
        }
        sections.append(Section(priority: 2, lines: (summary?.warnings ?? []).flatMap { warning in
            // Wrapped, not cut: the advice (what to prefetch, which count to derive) is at the end.
            DisplayWidth.wrap(warning.message, width: max(1, width - 2)).enumerated().map { index, text in
                ActivityLine.fit([Span((index == 0 ? "! " : "  ") + text, Style(.warning))], width: width)
            }
        }))
        sections.append(Section(priority: 5, lines: mostFaulted(counts, width: width)))
        if width < twoColumnWidth {
            let heading = ActivityLine.fit([Span("since start", Style(.title, bold: true))], width: width)
            sections.append(Section(priority: 4, lines: [heading] + figures(totals, partial: totals.partialFaults > 0).map { ActivityLine.fit($0, width: width) }))
        }
        sections.append(Section(priority: 3, lines: sparklines(timeline, width: width)))
        return arrange(sections, width: width, height: height)
    }

    /// Lines of a part of the panel; parts with a lower `priority` get room first.
    private struct Section {
        let priority: Int
        let lines: [StyledLine]
    }

    /// The sections in their order, each cut to the room left by those more important, padded to `height`.
    private static func arrange(_ sections: [Section], width: Int, height: Int) -> [StyledLine] {
        var room = max(0, height)
        var granted = Array(repeating: 0, count: sections.count)
        for index in sections.indices.sorted(by: { sections[$0].priority < sections[$1].priority }) {
            granted[index] = min(room, sections[index].lines.count)
            room -= granted[index]
        }
        let lines = zip(sections, granted).flatMap { section, count in section.lines.prefix(count) }
        return lines + Array(repeating: ActivityLine.blank(width: width), count: room)
    }

    /// Two column groups separated by a rule: the last action at the left, the totals at the right.
    private static func columns(_ left: [Span], _ right: [Span], width: Int) -> StyledLine {
        let separator = " │ "
        let leftWidth = (width - DisplayWidth.of(separator)) / 2
        let rightWidth = width - DisplayWidth.of(separator) - leftWidth
        return StyledLine(ActivityLine.fit(left, width: leftWidth).spans + [Span(separator, Style(.muted))]
            + ActivityLine.fit(right, width: rightWidth).spans)
    }

    /// Three rows of figures: statements, object faults, then relationship faults, fetches and saves. With
    /// `partial` (once any partial fault has fired since the start), a row of partial faults after the faults: objects
    /// fetched with some properties that had to read the rest of their row.
    private static func figures(_ counts: ActivityCounts, partial: Bool) -> [[Span]] {
        let label = Style(.muted)
        let number = Style(.accent)
        var saves = [Span("  saves ", label), Span(ActivityFormat.count(counts.saves), number)]
        if counts.failedSaves > 0 {
            saves.append(Span(" (\(ActivityFormat.count(counts.failedSaves)) failed)", Style(.danger)))
        }
        return [
            [
                Span("SQL ", label), Span(ActivityFormat.count(counts.statements), number),
                Span(counts.statements == 1 ? " stmt " : " stmts ", label),
                // A duration takes at most five columns (under 10 s): right-aligned in them, the rest of the line
                // does not move as timings change.
                Span(DisplayWidth.fitRight(ActivityFormat.duration(counts.sqlTime), width: 5), number), Span("  rows ", label),
                Span(ActivityFormat.count(counts.rows), number),
            ],
            [
                Span("faults ", label), Span(ActivityFormat.count(counts.objectFaults), number),
                Span("  hits ", label), Span(ActivityFormat.count(counts.cacheHits), Style(.success)),
                Span("  misses ", label),
                Span(ActivityFormat.count(counts.cacheMisses), counts.cacheMisses > 0 ? Style(.warning) : number),
            ],
        ] + (partial ? [[
            Span("partial faults ", label),
            Span(ActivityFormat.count(counts.partialFaults), counts.partialFaults > 0 ? Style(.warning) : number),
            Span(" (rest of a row read)", label),
        ]] : []) + [
            [
                Span("rel. faults ", label), Span(ActivityFormat.count(counts.relationshipFaults), number),
                Span("  fetches ", label), Span(ActivityFormat.count(counts.fetches), number),
            ] + saves,
        ]
    }

    /// The three entities the last action faulted most, on one line; none when it faulted nothing.
    private static func mostFaulted(_ counts: ActivityCounts, width: Int) -> [StyledLine] {
        let entities = counts.mostFaultedEntities(3)
        guard !entities.isEmpty else { return [] }
        let list = entities.map { "\($0.entity) \(ActivityFormat.count($0.faults))" }.joined(separator: " · ")
        return [ActivityLine.fit([Span("by entity ", Style(.muted)), Span(list)], width: width)]
    }

    /// Statements per second and SQL time per second, as many recent seconds as fit (the same seconds on both
    /// lines), each with its peak over the minute when there is room for it beside at least ten bars.
    private static func sparklines(_ timeline: ActivityTimeline, width: Int) -> [StyledLine] {
        let statements = timeline.statementsPerSecond
        let sqlTimes = timeline.sqlTimePerSecond
        let rows: [(label: String, bars: String, peak: String)] = [
            ("stmts/s", Sparkline.bars(statements.map(Double.init)), " max " + ActivityFormat.count(statements.max() ?? 0)),
            ("SQL/s", Sparkline.bars(sqlTimes.map { $0 / .nanoseconds(1) }), " max " + ActivityFormat.duration(sqlTimes.max() ?? .zero)),
        ]
        let labelWidth = 8
        // A fixed width for the peaks (room for " max 999ms"), so the bars do not move when a peak's text changes
        // length.
        let peakWidth = max(11, rows.map { DisplayWidth.of($0.peak) }.max() ?? 0)
        let showsPeaks = width - labelWidth - peakWidth >= 10
        let barCount = max(0, width - labelWidth - (showsPeaks ? peakWidth : 0))
        return rows.map { row in
            ActivityLine.fit([
                Span(DisplayWidth.pad(row.label, width: labelWidth), Style(.muted)),
                Span(String(row.bars.suffix(barCount)), Style(.accent)),
                Span(showsPeaks ? DisplayWidth.pad(row.peak, width: peakWidth) : "", Style(.muted)),
            ], width: width)
        }
    }
}
