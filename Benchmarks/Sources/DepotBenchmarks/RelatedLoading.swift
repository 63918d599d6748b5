import Depot
import DepotSQLite
import Foundation

/// Loading 1,000 lists with their reminders and each reminder's tags, SQLite in
/// memory, for `Benchmarks/instructions --scenarios related`: the query
/// builder's `including` (four queries) against the same four queries written
/// by hand, grouped in Swift.
enum RelatedLoading {
    @Columns
    struct List: Record, Equatable {
        static let tableName = "lists"
        var id: Int64
        var title: String
    }

    @Columns
    struct Task: Record, Equatable {
        static let tableName = "tasks"
        var id: Int64
        var listID: Int64
        var title: String
        var position: Int
    }

    @Columns
    struct Label: Record, Equatable {
        static let tableName = "labels"
        var id: Int64
        var name: String
    }

    @Columns
    struct Labeling: Record, Equatable {
        static let tableName = "labelings"
        static let primaryKey = ["taskID", "labelID"]
        var taskID: Int64
        var labelID: Int64
    }

    /// 1,000 lists of 5 tasks; 20 labels; each task carries 0, 1 or 2 of them.
    static func seed(_ store: Store) async throws {
        try await store.write { db in
            try db.execute(script: """
                CREATE TABLE lists (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
                CREATE TABLE tasks (id INTEGER PRIMARY KEY, listID INTEGER NOT NULL REFERENCES lists, title TEXT NOT NULL, position INTEGER NOT NULL);
                CREATE INDEX tasks_list ON tasks (listID);
                CREATE TABLE labels (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE labelings (taskID INTEGER NOT NULL REFERENCES tasks, labelID INTEGER NOT NULL REFERENCES labels,
                  PRIMARY KEY (taskID, labelID));
                """)
            try db.insert(contentsOf: (1...1_000).map { List(id: Int64($0), title: "list \($0)") })
            try db.insert(contentsOf: (1...5_000).map { Task(id: Int64($0), listID: Int64(($0 - 1) / 5 + 1), title: "task \($0)", position: $0 % 5) })
            try db.insert(contentsOf: (1...20).map { Label(id: Int64($0), name: "label \($0)") })
            try db.insert(contentsOf: (1...5_000).flatMap { task in
                (0..<(task % 3)).map { Labeling(taskID: Int64(task), labelID: Int64(1 + (task * 7 + $0 * 3) % 20)) }
            })
        }
    }

    /// The builder: `including` twice.
    static func builder(_ db: Database) throws -> Int {
        let lists = try db.fetchAll(List.all.including(all: Task.self, by: \.listID) { $0.order { [$0.position, $0.id] } }
            .including(all: Label.self, through: Labeling.self, from: \.taskID, to: \.labelID) { $0.order { $0.name } })
        return lists.reduce(0) { $0 + $1.1.reduce(0) { $0 + 1 + $1.1.count } }
    }

    /// The same four queries by hand, grouped in Swift.
    static func handWritten(_ db: Database) throws -> Int {
        let lists = try db.fetchAll(List.self, "SELECT id, title FROM lists ORDER BY id")
        let tasks = try db.fetchAll(Task.self, "SELECT id, listID, title, position FROM tasks WHERE listID IN (SELECT id FROM lists) ORDER BY position, id")
        struct Link: Decodable { var taskID: Int64; var labelID: Int64 }
        let links = try db.fetchAll(Link.self, "SELECT taskID, labelID FROM labelings WHERE taskID IN (SELECT id FROM tasks WHERE listID IN (SELECT id FROM lists))")
        let labels = try db.fetchAll(Label.self, """
            SELECT id, name FROM labels WHERE id IN (SELECT labelID FROM labelings WHERE taskID IN (SELECT id FROM tasks WHERE listID IN (SELECT id FROM lists)))
            ORDER BY name, id
            """)
        var position: [Int64: Int] = [:]
        for (index, label) in labels.enumerated() { position[label.id] = index }
        var labelsOfTask: [Int64: [Int]] = [:]
        for link in links { if let index = position[link.labelID] { labelsOfTask[link.taskID, default: []].append(index) } }
        var tasksOfList: [Int64: [(Task, [Label])]] = [:]
        for task in tasks { tasksOfList[task.listID, default: []].append((task, (labelsOfTask[task.id] ?? []).sorted().map { labels[$0] })) }
        let loaded = lists.map { ($0, tasksOfList[$0.id] ?? []) }
        return loaded.reduce(0) { $0 + $1.1.reduce(0) { $0 + 1 + $1.1.count } }
    }

    /// Runs one contender `repetitions` times after seeding, for callgrind.
    static func count(contender: String, repetitions: Int) async throws {
        let store = try Store.sqliteInMemory()
        try await seed(store)
        let run: @Sendable (Database) throws -> Int = contender.hasPrefix("Depot, including") ? builder : handWritten
        let expected = try await store.read { db in try handWritten(db) }
        for _ in 0..<repetitions {
            let loaded = try await store.read { db in try run(db) }
            guard loaded == expected else { throw RawError.failed("\(contender) loaded \(loaded) records, the hand-written queries \(expected)") }
        }
        await store.close()
    }
}
