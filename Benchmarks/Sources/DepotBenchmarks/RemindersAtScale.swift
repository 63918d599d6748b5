import Depot
import DepotPostgres
import DepotSQLite
import Foundation
import Reminders

/// Every reminders model call at scale (`--reminders N`, 50,000 by default in
/// `Benchmarks/run`): N reminders in 20 lists, a third of them due, a tenth
/// completed, a fifth flagged, 30 tags on about half of them; each call's
/// median over 5 runs after a warm-up, on SQLite (file) and PostgreSQL, slowest first.
enum RemindersAtScale {
    static let now = Date(timeIntervalSince1970: 1_773_568_800)   // 2026-03-15 10:00 UTC

    static func run(count: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-reminders-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var engines: [(String, Store)] = [("SQLite", try Store.sqlite(at: folder.appendingPathComponent("r.sqlite").path))]
        if let url = ProcessInfo.processInfo.environment["DEPOT_POSTGRES_URL"] {
            engines.append(("PostgreSQL", try await freshPostgresStore(url: url, prefix: "reminders_scale").store))
        }
        print("Reminders model at \(count) reminders: median of 5 runs per call, slowest first")
        for (engine, store) in engines {
            let model = RemindersModel(store: store, now: { now })
            try await seed(model, store, count: count)
            var results: [(String, Double)] = []
            for (name, call) in calls(model) {
                var samples: [Double] = []
                for round in 0...5 {
                    let started = DispatchTime.now().uptimeNanoseconds
                    try await call()
                    if round > 0 { samples.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6) }
                }
                results.append((name, samples.sorted()[samples.count / 2]))
            }
            print("-- \(engine)")
            for (name, ms) in results.sorted(by: { $0.1 > $1.1 }) {
                print(name.padding(toLength: 48, withPad: " ", startingAt: 0) + String(format: "%9.2f ms", ms))
            }
            await store.close()
        }
    }

    /// A store on a new schema of the server at `url`, and the schema's name.
    static func freshPostgresStore(url: String, prefix: String) async throws -> (store: Store, schema: String) {
        let admin = try await Store.postgres(url: url)
        let schema = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        try await admin.write { db in try db.execute("CREATE SCHEMA \(ident: schema)") }
        await admin.close()
        var configuration = try DepotPostgres.PostgresConfiguration(url: url)
        configuration.searchPath = schema
        return (try await Store.postgres(configuration), schema)
    }

    static func seed(_ model: RemindersModel, _ store: Store, count: Int) async throws {
        try await model.migrate()
        for index in 0..<20 { try await model.createList(title: "List \(index)") }
        let lists = try await model.lists().map(\.list.id)
        let ids = (0..<count).map { _ in UUID() }
        let tags = (0..<30).map { Tag(title: "tag\($0)") }
        try await store.write { db in
            for tag in tags { try db.insert(tag) }
            var reminders: [Reminder] = []
            reminders.reserveCapacity(count)
            for index in 0..<count {
                let due: Date? = index % 3 == 0 ? now.addingTimeInterval(Double((index &* 7919) % 121 - 60) * 86_400) : nil
                reminders.append(Reminder(id: ids[index], title: "Reminder \(index) \(index % 7 == 0 ? "milk" : "bread")", notes: index % 5 == 0 ? "notes for \(index)" : "",
                                          isCompleted: index % 10 == 0, isFlagged: index % 5 == 1,
                                          priority: Priority(rawValue: index % 4) ?? .none, dueDate: due,
                                          createdAt: now.addingTimeInterval(Double(-index)), position: index * 1024,
                                          remindersListID: lists[index % 20]))
            }
            try db.insert(contentsOf: reminders)
            var links: [ReminderTag] = []
            for reminderID in stride(from: 1, through: count, by: 2) {
                links.append(ReminderTag(reminderID: ids[reminderID - 1], tagID: tags[reminderID % 30].id))
            }
            try db.insert(contentsOf: links)
            // The model indexes what it writes; rows inserted here are indexed
            // at once, as the model would have: title, tags' titles, notes.
            let titleOfTag = Dictionary(uniqueKeysWithValues: tags.map { ($0.id, $0.title) })
            var tagTitles: [UUID: String] = [:]
            for link in links { tagTitles[link.reminderID] = titleOfTag[link.tagID] }
            try db.rebuildSearchIndex(Reminder.searchIndex) { [$0.title, tagTitles[$0.id] ?? "", $0.notes] }
        }
    }

    static func calls(_ model: RemindersModel) -> [(String, () async throws -> Void)] {
        var calls: [(String, () async throws -> Void)] = [
            ("homeScreen", { _ = try await model.homeScreen() }),
            ("lists", { _ = try await model.lists() }),
            ("tagsInUse", { _ = try await model.tagsInUse() }),
            ("tagPicker", { _ = try await model.tagPicker() }),
            ("tag(named:)", { _ = try await model.tag(named: "TAG7") }),
            ("reminders(taggedWith:)", { _ = try await model.reminders(taggedWith: "tag3") }),
            ("search (40% match)", { _ = try await model.search("bread") }),
            ("search (no match)", { _ = try await model.search("zzz") }),
            ("completedMatchCount(1 month)", { _ = try await model.completedMatchCount("milk", olderThan: .oneMonth) }),
            ("reminder(id)", { _ = try await model.reminder(4242) }),
            ("add, complete and delete a reminder", {
                let added = try await model.addReminder(ReminderDraft(title: "new", tags: ["tag1"]), to: "List 3")
                try await model.complete(added.reminder.number ?? 0)
                try await model.deleteReminder(added.reminder.number ?? 0)
            }),
            ("moveReminder(before:)", { _ = try await model.moveReminder(21, before: 1) }),
        ]
        for view in SmartList.allCases {
            calls.append(("reminders(in: .\(view))", { _ = try await model.reminders(in: view) }))
        }
        for sort in ReminderSort.allCases {
            calls.append(("list of 2,500 by \(sort)", {
                _ = try await model.reminders(on: .list("List 5"), order: ReminderOrder(sort: sort, ascending: false, showCompleted: true))
            }))
        }
        return calls
    }
}
