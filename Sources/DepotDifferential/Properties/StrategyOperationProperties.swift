import Depot
import Foundation
import PropertyBased
import DepotTesting

/// Every record operation under every combination of coding strategies, on
/// both engines: insert, find, update, upsert, delete by id and delete by
/// record give the same records and the same answers.
enum StrategyOperationProperties {
    struct Event: Record, Equatable {
        static let tableName = "events"
        var id: UUID
        var startsAt: Date
        var payload: Data
        var title: String
        var endsAt: Date?
    }

    static let dateStrategies: [(String, DateStrategy, ColumnType)] = [
        ("store", .deferredToStore, .date), ("iso8601Text", .iso8601Text, .text), ("seconds", .secondsSince1970, .double),
        ("milliseconds", .millisecondsSince1970, .integer), ("reference", .timeIntervalSinceReferenceDate, .double),
    ]
    static let uuidStrategies: [(String, UUIDStrategy, ColumnType)] = [
        ("store", .deferredToStore, .uuid), ("lowercase", .lowercaseText, .text), ("uppercase", .uppercaseText, .text), ("blob", .blob, .blob),
    ]
    static let dataStrategies: [(String, DataStrategy, ColumnType)] = [("blob", .blob, .blob), ("base64", .base64Text, .text)]
    static let keyStrategies: [(String, KeyStrategy)] = [("default", .useDefaultKeys), ("snake", .snakeCase)]

    static func everyOperationUnderEveryStrategy(_ run: DifferentialRun) async throws {
        var rng = propertySeed("strategies")
        var cases = 0
        for date in Self.dateStrategies {
            for uuid in Self.uuidStrategies {
                for data in Self.dataStrategies {
                    for key in Self.keyStrategies {
                        var configuration = Store.Configuration()
                        configuration.encoder.dateEncodingStrategy = date.1
                        configuration.decoder.dateDecodingStrategy = date.1
                        configuration.encoder.uuidEncodingStrategy = uuid.1
                        configuration.encoder.dataEncodingStrategy = data.1
                        configuration.decoder.dataDecodingStrategy = data.1
                        configuration.encoder.keyStrategy = key.1
                        configuration.decoder.keyStrategy = key.1
                        // Milliseconds keep milliseconds: draw whole ones there.
                        // Dates on the microsecond grid a store keeps (the millisecond one for milliseconds).
                        let step: Int64 = date.0 == "milliseconds" ? 1_000 : 1
                        let events = (0..<4).map { _ in
                            Event(id: UUID(), startsAt: ISO8601.date(microseconds: Int64.random(in: -2_000_000_000_000_000...4_000_000_000_000_000, using: &rng) / step * step),
                                  payload: Data((0..<Int.random(in: 0...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }),
                                  title: randomText(&rng), endsAt: Bool.random(using: &rng) ? Date(timeIntervalSince1970: 1_800_000_000) : nil)
                        }
                        let label = "dates \(date.0), uuids \(uuid.0), data \(data.0), keys \(key.0)"
                        let engines = try await run.makeEngines(configuration)
                        var answers: [String: [String]] = [:]
                        for (name, store) in engines.both {
                            do {
                                answers[name] = try await store.write { db in
                                    try Self.operations(db, events, dateType: date.2, uuidType: uuid.2, dataType: data.2, snake: key.0 == "snake")
                                }
                            } catch {
                                run.record("\(label) on \(name): \(error)")
                            }
                        }
                        await engines.close()
                        let (first, second) = (engines.both[0].name, engines.both[1].name)
                        run.expect(answers[first] == answers[second], "\(label): the engines disagree")
                        run.expect(answers[first]?.contains { $0.hasPrefix("wrong") } == false, "\(label): \(answers[first] ?? [])")
                        cases += 1
                    }
                }
            }
        }
        print("strategies: \(cases) strategy combinations, 7 operations each on both engines")
    }

    /// Runs every operation and describes what each answered.
    static func operations(_ db: Database, _ events: [Event], dateType: ColumnType, uuidType: ColumnType, dataType: ColumnType, snake: Bool) throws -> [String] {
        func column(_ name: String) -> String { snake ? KeyStrategy.snakeCase.columnName(for: name) : name }
        try db.execute("""
            CREATE TABLE \(ident: "events") (\(ident: "id") \(keyType: uuidType) PRIMARY KEY, \(ident: column("startsAt")) \(type: dateType) NOT NULL,
            \(ident: column("payload")) \(type: dataType) NOT NULL, \(ident: column("title")) \(type: .text) NOT NULL, \(ident: column("endsAt")) \(type: dateType))
            """)
        var answers: [String] = []
        func same(_ a: Event?, _ b: Event, _ what: String) {
            answers.append(a == b ? "\(what) ok" : "wrong \(what): \(String(describing: a)) for \(b)")
        }
        for event in events { same(try db.insert(event), event, "insert") }
        for event in events { same(try db.find(Event.self, id: event.id), event, "find") }
        var changed = events[0]
        changed.title += " (changed)"
        changed.endsAt = nil
        try db.update(changed)
        same(try db.find(Event.self, id: changed.id), changed, "update")
        changed.payload = Data([1, 2, 3])
        same(try db.upsert(changed), changed, "upsert of a stored one")
        answers.append("delete by id: \(try db.delete(Event.self, id: events[1].id))")
        answers.append("delete by record: \(try db.delete(events[2]))")
        let left = try db.fetchAll(Event.self, "SELECT * FROM \(ident: "events")").sorted { $0.id.uuidString < $1.id.uuidString }
        let expected = [changed, events[3]].sorted { $0.id.uuidString < $1.id.uuidString }
        answers.append(left == expected ? "rows left ok" : "wrong rows left: \(left)")
        return answers
    }
}
