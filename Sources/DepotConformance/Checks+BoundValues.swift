import Depot
import Foundation

/// A backend may bind values without copying them, or copy them into buffers
/// it reuses; either way what is stored is what the caller passed, however the
/// caller's memory changes once the call has returned.
enum BoundValueChecks {
    /// A row of several texts and a blob: one bind that needs room for many bytes.
    @Columns
    struct Parcel: Record, Equatable {
        static var tableName: String { "parcels" }
        var id: Int64
        var label: String
        var first: String
        var second: String
        var payload: Data
    }

    static func createTable(_ db: Database) throws {
        try DepotConformance.createTable(db, "parcels", [
            ("id", .integer, "PRIMARY KEY"),
            ("label", .text, "NOT NULL"),
            ("first", .text, "NOT NULL"),
            ("second", .text, "NOT NULL"),
            ("payload", .blob, "NOT NULL"),
        ])
    }

    /// The values of parcel `n`: short texts (stored inside the string) and
    /// long ones (on the heap), blobs from empty to a few kilobytes, so one
    /// bind fills a reused buffer past its first size.
    static func parcel(_ n: Int) -> Parcel {
        let letters = ["a", "é", "字", "🙂"]
        return Parcel(
            id: Int64(n),
            label: "#\(n)",
            first: String(repeating: letters[n % 4], count: (n * 37) % 900),
            second: String(repeating: letters[(n + 1) % 4], count: (n * 53) % 1_300) + "|\(n)",
            payload: Data((0..<((n * 211) % 5_000)).map { UInt8(truncatingIfNeeded: $0 &* (n | 1)) }))
    }

    /// Overwrites a string's bytes where they are (it is the only reference
    /// now), keeping its length: what a driver still pointing at them would read.
    static func scribble(_ text: inout String) {
        let count = text.utf8.count
        text.removeAll(keepingCapacity: true)
        text.append(String(repeating: "x", count: count))
    }

    static let all: [ConformanceCheck] = [
        ConformanceCheck("values: what a caller changes or frees as soon as an insert returns is stored as it was passed") { context in
            let store = try await context.makeStore()
            try await store.write { db in try createTable(db) }
            try await store.write { db in
                for n in 0..<120 {
                    let expected = parcel(n)
                    var label = expected.label, first = expected.first, second = expected.second, payload = expected.payload
                    // The record lives only for the call: afterwards the caller's
                    // values are the only references to the bytes that were bound.
                    try db.insert(Parcel(id: expected.id, label: label, first: first, second: second, payload: payload))
                    scribble(&label)
                    scribble(&first)
                    scribble(&second)
                    payload.withUnsafeMutableBytes { bytes in
                        for index in bytes.indices { bytes[index] = 0xEE }
                    }
                }
                // A batch made on the fly: each record's memory is freed (and
                // reused by the next) before the batch ends.
                try db.insert(contentsOf: (120..<360).lazy.map { parcel($0) })
            }
            let stored = try await store.read { db in
                try db.fetchAll(Parcel.self, "SELECT * FROM \(ident: "parcels") ORDER BY \(ident: "id")")
            }
            try expectEqual(stored.count, 360, "parcels stored")
            for (n, parcel) in stored.enumerated() where parcel != Self.parcel(n) {
                throw ConformanceFailure("parcel \(n) came back changed: label \(parcel.label.prefix(20)), "
                    + "\(parcel.first.utf8.count) and \(parcel.second.utf8.count) bytes of text, \(parcel.payload.count) of blob")
            }
        },
        ConformanceCheck("values: a statement run again binds its new values, not what the last run left behind") { context in
            let store = try await context.makeStore()
            try await store.write { db in try createTable(db) }
            // Long values first, then shorter and empty ones into the same cached statement.
            let parcels = [parcel(999), Parcel(id: 1, label: "", first: "", second: "b", payload: Data()),
                           Parcel(id: 2, label: "two", first: String(repeating: "é", count: 3_000), second: "", payload: Data([0]))]
            try await store.write { db in for parcel in parcels { try db.insert(parcel) } }
            let stored = try await store.read { db in
                try db.fetchAll(Parcel.self, "SELECT * FROM \(ident: "parcels") ORDER BY \(ident: "id")")
            }
            try expectEqual(stored, parcels.sorted { $0.id < $1.id }, "parcels read back")
        },
        ConformanceCheck("values: a lookup by key made while another one's row is being read binds its own key") { context in
            let store = try await context.makeStore()
            try await store.write { db in try createTable(db) }
            try await store.write { db in try db.insert(contentsOf: (0..<40).map { parcel($0) }) }
            // Each row read, a lookup of the next key inside it, and one more
            // after it, on the same connection: no lookup sees another's key.
            let pairs = try await store.read { db in
                var pairs: [(Int64, Int64?, Int64?)] = []
                try db.forEach(Parcel.self, "SELECT * FROM \(ident: "parcels") ORDER BY \(ident: "id")") { row in
                    let next = try db.find(Parcel.self, id: row.id + 1)
                    let again = try db.find(Parcel.self, id: row.id)
                    pairs.append((row.id, next?.id, again?.id))
                }
                return pairs
            }
            try expectEqual(pairs.count, 40, "rows read")
            for (id, next, again) in pairs {
                try expectEqual(next, id < 39 ? id + 1 : nil, "the lookup of \(id + 1) inside row \(id)")
                try expectEqual(again, id, "the lookup of \(id) after it")
            }
        },
    ]
}
