import Foundation
import Reminders
@testable import RemindersCLI
import Testing

/// Due dates as people write them, on a fixed clock: Saturday 28 November 2026,
/// 10:00 in Paris, a British locale (day before month) unless said otherwise.
@Suite struct DateInputTests {
    static let paris = TimeZone(identifier: "Europe/Paris") ?? .current
    static let british = Locale(identifier: "en_GB"), american = Locale(identifier: "en_US")
    /// 2026-11-28 10:00 in Paris (09:00 UTC), a Saturday.
    static let saturday = Date(timeIntervalSince1970: 1_795_856_400)

    static func shown(_ text: String, now: Date = saturday, locale: Locale = british) throws -> String {
        guard let date = try DateInput.parse(text, timeZone: paris, now: now, locale: locale) else { return "none" }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = paris
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
            + (c.second == 0 ? "" : String(format: ":%02d", c.second ?? 0))
    }

    @Test func theClockIsASaturdayAtTenInParis() throws {
        #expect(try Self.shown("today") == "2026-11-28 09:00")
    }

    @Test(arguments: [
        // Spans from now.
        ("in 30 minutes", "2026-11-28 10:30"), ("in 2 hours", "2026-11-28 12:00"), ("in an hour", "2026-11-28 11:00"),
        ("in 3 days", "2026-12-01 09:00"), ("in 2 weeks", "2026-12-12 09:00"), ("in a day", "2026-11-29 09:00"),
        // Days, with and without a time, with and without "at".
        ("tomorrow", "2026-11-29 09:00"), ("tomorrow 9am", "2026-11-29 09:00"), ("tomorrow at 9am", "2026-11-29 09:00"),
        ("tomorrow at 5 pm", "2026-11-29 17:00"), ("friday at 17:00", "2026-12-04 17:00"), ("yesterday noon", "2026-11-27 12:00"),
        ("tonight", "2026-11-28 20:00"), ("tonight 11pm", "2026-11-28 23:00"), ("next week", "2026-12-05 09:00"),
        // A time alone: the next such time; one already past today is tomorrow's.
        ("noon", "2026-11-28 12:00"), ("at noon", "2026-11-28 12:00"), ("11am", "2026-11-28 11:00"),
        ("9am", "2026-11-29 09:00"), ("10:00", "2026-11-29 10:00"), ("midnight", "2026-11-29 00:00"),
        // Weekdays on a Saturday: saturday is next week's, next saturday the one after.
        ("saturday", "2026-12-05 09:00"), ("next saturday", "2026-12-12 09:00"), ("sunday", "2026-11-29 09:00"),
        ("next sunday", "2026-12-06 09:00"), ("monday", "2026-11-30 09:00"), ("next monday", "2026-11-30 09:00"),
        // Month names, with and without a year; a date past this year is next year's.
        ("Dec 24", "2026-12-24 09:00"), ("24 December", "2026-12-24 09:00"), ("December 24th, 2027", "2027-12-24 09:00"),
        ("24 Dec 2026 5pm", "2026-12-24 17:00"), ("dec 24 at noon", "2026-12-24 12:00"), ("Nov 27", "2027-11-27 09:00"),
        ("Nov 28", "2026-11-28 09:00"), ("sept 1", "2027-09-01 09:00"), ("29 feb", "2028-02-29 09:00"),
        // Numbers in the locale's order (day first here), or year first; ISO.
        ("24/12/2026", "2026-12-24 09:00"), ("24/12", "2026-12-24 09:00"), ("24.12.2026", "2026-12-24 09:00"),
        ("3/4/2027", "2027-04-03 09:00"), ("2026/12/24", "2026-12-24 09:00"), ("2026-12-24", "2026-12-24 09:00"),
        ("2026-12-24 9am", "2026-12-24 09:00"), ("2026-12-24 17:00", "2026-12-24 17:00"), ("2026-12-24 17:00:30", "2026-12-24 17:00:30"),
        ("2026-12-24T17:00", "2026-12-24 17:00"), ("2026-12-24T17:00:00+01:00", "2026-12-24 17:00"), ("2026-12-24T16:00Z", "2026-12-24 17:00"),
        ("none", "none"),
    ])
    func aFormPeopleWriteIsTheDateTheyMean(text: String, expected: String) throws {
        #expect(try Self.shown(text) == expected, "\(text)")
    }

    @Test func numericDatesFollowTheLocalesOrderAndTheOnlyOrderThatMakesADate() throws {
        #expect(try Self.shown("3/4/2027", locale: Self.american) == "2027-03-04 09:00")
        #expect(try Self.shown("12/24", locale: Self.american) == "2026-12-24 09:00")
        #expect(try Self.shown("24/12", locale: Self.american) == "2026-12-24 09:00", "only 24 December makes a date")
        #expect(DateInput.dayFirst(Locale(identifier: "de_DE")))
        #expect(!DateInput.dayFirst(Locale(identifier: "en_US_POSIX")))
    }

    @Test func aDaylightSavingChangeKeepsTheWallClockTimeAndRefusesATimeThatDoesNotExist() throws {
        // Paris springs forward on 28 March 2027 (02:00 → 03:00) and falls back on 31 October 2027.
        let friday = Date(timeIntervalSince1970: 1_806_048_000)   // 2027-03-26 09:00 in Paris (08:00 UTC)
        #expect(try Self.shown("sunday 9am", now: friday) == "2027-03-28 09:00")
        #expect(try Self.shown("in 3 days", now: friday) == "2027-03-29 09:00", "9:00 on the wall clock, 71 hours later")
        #expect(throws: RemindersError.self) { try Self.shown("sunday 2:30am", now: friday) }
        let beforeFallBack = Date(timeIntervalSince1970: 1_824_922_800)   // 2027-10-30 21:00 in Paris (19:00 UTC)
        #expect(try Self.shown("tomorrow 9am", now: beforeFallBack) == "2027-10-31 09:00")
    }

    @Test(arguments: ["in 3 fortnights", "32/12/2026", "24/12/26", "Decembr 24", "25:00", "9pm tomorrow tomorrow", "30 feb 2027", "13/13/2026", "someday"])
    func whatIsNoDateIsRefusedSayingWhatIsAccepted(text: String) throws {
        #expect(throws: RemindersError.self) { try Self.shown(text) }
    }
}
