@testable import Browser
import ChatFixture
import Foundation
import Testing

/// The browser's times, worked out by arithmetic on days, against Foundation's calendar and formatter.
@Suite struct TimeTextTests {
    private static func formatter(_ pattern: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = pattern
        return formatter
    }

    @Test func clockAndDayAgreeWithFoundationAcrossCenturies() {
        let clock = Self.formatter("HH:mm")
        let day = Self.formatter("EEE d MMM yyyy")
        var generator = SeededRandom(seed: 7)
        // Leap days, the turn of centuries, before 1970, and seconds just before and after midnight.
        var moments: [TimeInterval] = [0, -1, 86_399, 86_400, 951_782_400, 951_868_799, 4_107_542_400, -2_208_988_800,
                                       1_780_099_199, 1_780_099_200]
        for _ in 0..<2_000 { moments.append(TimeInterval(Int64.random(in: -3_000_000_000...6_000_000_000, using: &generator))) }
        for seconds in moments {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(TimeText.clock(date) == clock.string(from: date), "\(seconds)")
            #expect(TimeText.day(date) == day.string(from: date), "\(seconds)")
        }
    }

    @Test func theShortFormIsTheTimeTodayTheWeekdayThisWeekElseTheDate() {
        let now = Date(timeIntervalSince1970: 1_780_185_300) // Sat 30 May 2026 23:55 UTC
        let hour = 3_600.0
        #expect(TimeText.short(now.addingTimeInterval(-23 * hour), now: now) == "00:55")
        #expect(TimeText.short(now.addingTimeInterval(-24 * hour), now: now) == "Fri")
        #expect(TimeText.short(now.addingTimeInterval(-6 * 24 * hour), now: now) == "Sun")
        // Seven calendar days back is the same weekday as today, so it is written as a date.
        #expect(TimeText.short(now.addingTimeInterval(-7 * 24 * hour), now: now) == "2026-05-23")
        // A time after now (a clock set wrong) is written as a date.
        #expect(TimeText.short(now.addingTimeInterval(2 * 24 * hour), now: now) == "2026-06-01")
        #expect(TimeText.short(nil, now: now) == "")
    }
}

