import Foundation
import Reminders

// What clients send. Every field a body holds is either applied or refused:
// an unknown field, a value of the wrong type, `null` where nothing can be
// cleared, a priority or colour out of range, each is a 422 naming the field.
// The forms are the command's --json forms (colours "#RRGGBBAA", a list's place
// from 1, priorities 0 to 3, ISO 8601 dates).

/// A body's key, any name: the known ones are checked by hand.
struct BodyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A body's fields, read strictly.
struct BodyFields {
    let container: KeyedDecodingContainer<BodyKey>

    /// Refuses a body that holds a field not in `known`.
    init(_ decoder: any Decoder, known: Set<String>) throws {
        container = try decoder.container(keyedBy: BodyKey.self)
        // The names are the client's text: they go in the response, never in a log line.
        let unknown = container.allKeys.map(\.stringValue).filter { !known.contains($0) }.sorted()
        if !unknown.isEmpty {
            throw BodyError("unknown field\(unknown.count == 1 ? "" : "s") \(unknown.map { "\"\($0)\"" }.joined(separator: ", ")); "
                + "this body takes \(known.sorted().joined(separator: ", "))")
        }
    }

    /// A field that must be there.
    func required<T: Decodable>(_ name: String, _ type: T.Type) throws -> T {
        guard container.contains(BodyKey(name)) else { throw BodyError("\"\(name)\" is required") }
        return try value(name, type) ?? { throw BodyError("\"\(name)\" cannot be null") }()
    }

    /// A field that may be absent; `null` is refused (nothing to clear).
    func optional<T: Decodable>(_ name: String, _ type: T.Type) throws -> T? {
        guard container.contains(BodyKey(name)) else { return nil }
        return try value(name, type) ?? { throw BodyError("\"\(name)\" cannot be null; leave it out to keep it") }()
    }

    /// A field that may be absent (nil), `null` (`.some(nil)`, clear it) or a value.
    func clearable<T: Decodable>(_ name: String, _ type: T.Type) throws -> T?? {
        guard container.contains(BodyKey(name)) else { return nil }
        return .some(try value(name, type))
    }

    private func value<T: Decodable>(_ name: String, _ type: T.Type) throws -> T? {
        let key = BodyKey(name)
        if try container.decodeNil(forKey: key) { return nil }
        do {
            return try container.decode(type, forKey: key)
        } catch is DecodingError {
            throw BodyError("\"\(name)\" must be \(Self.expected(type))")
        }
    }

    static func expected(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "text"
        case is Bool.Type: "true or false"
        case is Int.Type: "a whole number"
        case is Date.Type: "an ISO 8601 date, such as 2026-11-25T17:00:00Z"
        case is [String].Type: "an array of text"
        default: "\(type)"
        }
    }
}

/// A body the server refuses: 400 when it is not JSON, 422 when it is but a field is wrong.
struct BodyError: Error {
    var message: String
    var isMalformed = false
    init(_ message: String, isMalformed: Bool = false) {
        self.message = message
        self.isMalformed = isMalformed
    }
}

/// Reads a request body: a JSON object, or a 400.
enum Body {
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard !data.isEmpty else { throw BodyError("the body is empty; send a JSON object", isMalformed: true) }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = Self.date(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 date"))
            }
            return date
        }
        do {
            return try decoder.decode(type, from: data)
        } catch let error as BodyError {
            throw error
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty {
            throw BodyError("the body must be a JSON object", isMalformed: true)
        } catch {
            throw BodyError("the body is not valid JSON", isMalformed: true)
        }
    }

    /// An ISO 8601 date and time with a zone, with or without fractions of a second.
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions.insert(.withFractionalSeconds)
        return formatter.date(from: text)
    }
}

/// `POST /lists`.
struct NewList: Decodable {
    var title: String
    var color: Int64?

    init(from decoder: any Decoder) throws {
        let fields = try BodyFields(decoder, known: ["title", "color"])
        title = try fields.required("title", String.self)
        color = try fields.optional("color", String.self).map(Fields.color)
    }
}

/// `PATCH /lists/:list`.
struct ListEdit: Decodable {
    var changes = ListChanges()

    init(from decoder: any Decoder) throws {
        let fields = try BodyFields(decoder, known: ["title", "color", "position", "sort", "sortAscending", "showCompleted"])
        changes.title = try fields.optional("title", String.self)
        changes.color = try fields.optional("color", String.self).map(Fields.color)
        changes.position = try fields.optional("position", Int.self).map(Fields.place)
        changes.sort = try fields.optional("sort", String.self).map(Fields.sort)
        changes.sortAscending = try fields.optional("sortAscending", Bool.self)
        changes.showCompleted = try fields.optional("showCompleted", Bool.self)
        if changes == ListChanges() { throw BodyError("the body changes nothing; send at least one field") }
    }
}

/// `POST /lists/:list/reminders`.
struct NewReminder: Decodable {
    var draft: ReminderDraft

    init(from decoder: any Decoder) throws {
        let fields = try BodyFields(decoder, known: ["title", "notes", "dueDate", "priority", "isFlagged", "tags"])
        draft = ReminderDraft(
            title: try fields.required("title", String.self),
            notes: try fields.optional("notes", String.self),
            dueDate: try fields.clearable("dueDate", Date.self),
            priority: try fields.optional("priority", Int.self).map(Fields.priority),
            isFlagged: try fields.optional("isFlagged", Bool.self),
            tags: try fields.optional("tags", [String].self) ?? [])
    }
}

/// `PATCH /reminders/:id`: `"dueDate": null` clears the due date; `tags` become its only tags.
struct ReminderEdit: Decodable {
    var draft: ReminderDraft

    init(from decoder: any Decoder) throws {
        let fields = try BodyFields(decoder, known: ["title", "notes", "dueDate", "priority", "isFlagged", "isCompleted", "list", "tags"])
        let tags = try fields.optional("tags", [String].self)
        draft = ReminderDraft(
            title: try fields.optional("title", String.self),
            notes: try fields.optional("notes", String.self),
            dueDate: try fields.clearable("dueDate", Date.self),
            priority: try fields.optional("priority", Int.self).map(Fields.priority),
            isFlagged: try fields.optional("isFlagged", Bool.self),
            isCompleted: try fields.optional("isCompleted", Bool.self),
            list: try fields.optional("list", String.self),
            tags: tags ?? [],
            replacesTags: tags != nil)
        if draft == ReminderDraft() { throw BodyError("the body changes nothing; send at least one field") }
    }
}

/// The fields whose values have a range.
enum Fields {
    static func color(_ text: String) throws -> Int64 {
        do { return try ListColor.parse(text) } catch { throw BodyError("\"color\" must be \"#RRGGBB\" or \"#RRGGBBAA\"") }
    }

    /// A place among the lists from 1, as the JSON forms number it; the model counts from 0.
    static func place(_ position: Int) throws -> Int {
        guard position >= 1 else { throw BodyError("\"position\" counts from 1") }
        return position - 1
    }

    static func priority(_ value: Int) throws -> Priority {
        guard let priority = Priority(rawValue: value) else {
            throw BodyError("\"priority\" is 0 (none), 1 (low), 2 (medium) or 3 (high)")
        }
        return priority
    }

    static func sort(_ text: String) throws -> ReminderSort {
        guard let sort = ReminderSort(rawValue: text) else {
            throw BodyError("\"sort\" is one of \(ReminderSort.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return sort
    }
}
