import Depot
import Foundation

/// The reminders schema: migrations are history, applied in order, never edited
/// once shipped. The model types describe the newest schema.
///
/// Where the engines differ, each migration writes its own SQL per vocabulary
/// of column types (`ScriptSet`, chosen by the type names the dialect
/// spells): SQLite tables are STRICT, with booleans checked to 0 or 1;
/// PostgreSQL uses native types (`boolean`, `timestamptz`, identity columns, `bigint` colours,
/// since 0xRRGGBBAA above 0x7FFFFFFF does not fit an `integer`). MariaDB came
/// after migration 10: its first migration makes the newest tables at once, and
/// the later ones do on it only what still applies (observation, the search index).
public enum RemindersSchema {
    /// The registered migrations.
    public static var migrator: Migrator {
        var migrator = Migrator()
        // A script: its text is checksummed, so an edit after it ran is refused.
        migrator.register("1 lists, reminders, tags", script: { dialect in
            switch ScriptSet(dialect) {
            case .nativeTypes: postgresV1
            case .newestTables: mariadbNewest
            case .strictTables: sqliteV1
            }
        })
        migrator.register("2 dates in SQLite's own text form") { db in
            // Depot once stored `2026-11-22T02:45:18.123456Z`; it now stores SQLite's
            // `2026-11-22 02:45:18.123456`. Mixed forms would compare wrongly as text
            // within a day, so rewrite the old ones. An engine with a date type stores them natively.
            guard SchemaCheck.family(db.dialect.typeName(.date)) == "text" else { return }
            for row in try db.fetchAll(StoredDates.self, "SELECT \(ident: "id"), \(ident: "dueDate"), \(ident: "createdAt") FROM \(ident: "reminders")") {
                try db.execute("UPDATE \(ident: "reminders") SET \(ident: "dueDate") = \(row.dueDate), \(ident: "createdAt") = \(row.createdAt) WHERE \(ident: "id") = \(row.id)")
            }
        }
        migrator.register("3 observed tables") { db in
            // PostgreSQL: a trigger per table tells every process's observations.
            // (SQLite's record of observable tables came later: migration 7.)
            try db.enableObservation(of: observedTables)
        }
        migrator.register("4 list cover images") { db in
            // A database whose first migration made the newest tables has it already.
            guard try !db.tableNames().contains("remindersListCoverImages") else { return }
            // Its own table, as in the app: listings read a list's row without its image.
            try db.execute("""
                CREATE TABLE "remindersListCoverImages" (
                    "remindersListID" \(type: .integer) PRIMARY KEY REFERENCES "remindersLists" ("id") ON DELETE CASCADE,
                    "image" \(type: .blob) NOT NULL
                )\(unsafeRaw: db.dialect.typeCheckedTableOption)
                """)
            try db.enableObservation(of: ["remindersListCoverImages"])
        }
        migrator.register("5 manual sort") { db in
            // A list may be sorted by hand: 'manual' joins the allowed sorts.
            if try hasNewestTables(db) {
                return // its first migration allowed 'manual'
            } else if ScriptSet(db.dialect) == .nativeTypes {
                try db.execute(script: """
                    ALTER TABLE "remindersLists" DROP CONSTRAINT "remindersLists_sort_check";
                    ALTER TABLE "remindersLists" ADD CONSTRAINT "remindersLists_sort_check"
                      CHECK ("sort" IN ('dueDate', 'priority', 'title', 'createdAt', 'manual'))
                    """)
            } else {
                // SQLite cannot alter a CHECK; widening one is its documented
                // schema edit (lang_altertable.html, "other kinds of changes"):
                // every stored row already satisfies the wider constraint.
                let version = try db.fetchOne(Int.self, "PRAGMA schema_version") ?? 0
                try db.execute(script: """
                    PRAGMA writable_schema = ON;
                    UPDATE sqlite_schema SET sql = replace(sql, '''title'', ''createdAt''))', '''title'', ''createdAt'', ''manual''))')
                      WHERE type = 'table' AND name = 'remindersLists';
                    PRAGMA writable_schema = OFF;
                    PRAGMA schema_version = \(unsafeRaw: String(version + 1))
                    """)
                let widened = try db.fetchOne(String.self, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'remindersLists'") ?? ""
                guard widened.contains("'manual'") else {
                    throw RemindersError.invalidInput("the remindersLists table is not the one this migration knows; it was left unchanged")
                }
            }
        }
        migrator.register("6 keys never reused") { db in
            // A deleted list's id must not come back as a new list's (a link, a
            // sync peer or a person may still hold it). PostgreSQL's identity
            // columns never go back; SQLite's INTEGER PRIMARY KEY takes the
            // largest key plus one, so it gives a deleted last row's key again.
            // AUTOINCREMENT changes only how SQLite picks the next key, not how
            // the table is stored: the same documented schema edit as migration 5,
            // with sqlite_sequence (which AUTOINCREMENT keeps) made first and
            // started at the largest key each table holds.
            guard ScriptSet(db.dialect) == .strictTables else { return }
            let tables = ["remindersLists", "reminders", "tags"]
            try db.execute(script: """
                CREATE TABLE "depot_make_sequence" ("id" INTEGER PRIMARY KEY AUTOINCREMENT);
                DROP TABLE "depot_make_sequence"
                """)
            let version = try db.fetchOne(Int.self, "PRAGMA schema_version") ?? 0
            try db.execute(script: """
                PRAGMA writable_schema = ON;
                UPDATE sqlite_schema SET sql = replace(sql, '"id" INTEGER PRIMARY KEY,', '"id" INTEGER PRIMARY KEY AUTOINCREMENT,')
                  WHERE type = 'table' AND name IN ('remindersLists', 'reminders', 'tags');
                PRAGMA writable_schema = OFF;
                PRAGMA schema_version = \(unsafeRaw: String(version + 1))
                """)
            for table in tables {
                let definition = try db.fetchOne(String.self, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = \(table)") ?? ""
                guard definition.contains("AUTOINCREMENT") else {
                    throw RemindersError.invalidInput("the \(table) table is not the one this migration knows; it was left unchanged")
                }
                // Never below a key given before, when the migration runs again.
                let largest = try db.fetchOne(Int64.self, """
                    SELECT max(coalesce((SELECT max("id") FROM \(ident: table)), 0), coalesce((SELECT max(seq) FROM sqlite_sequence WHERE name = \(table)), 0))
                    """) ?? 0
                try db.execute("DELETE FROM sqlite_sequence WHERE name = \(table)")
                try db.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (\(table), \(largest))")
            }
        }
        migrator.register("7 observed tables on every engine") { db in
            // Depot now refuses, on SQLite as on PostgreSQL, an observation that
            // reads a table never made observable; SQLite databases made before
            // ran migrations 3 and 4 when that recorded nothing. Running it again
            // is harmless on PostgreSQL (CREATE OR REPLACE TRIGGER).
            try db.enableObservation(of: observedTables + ["remindersListCoverImages"])
        }
        migrator.register("8 reminder search", revision: "1") { db in
            // Depot's full-text index of titles, tags and notes; observable, as
            // the tables it serves. Migration 9 makes it again for the new keys
            // and fills it (it was filled here until then: the model's records
            // no longer read these tables' integer keys).
            // A database whose first migration made the newest tables makes it with the newest keys, in migration 9.
            guard try !hasNewestTables(db) else { return }
            try db.createSearchIndex(Reminder.searchIndex, keyType: .integer)
            try db.enableObservation(of: [Reminder.searchIndex.tableName])
        }
        migrator.register("9 keys that never collide") { db in
            try KeysMigration.run(db)
        }
        migrator.register("10 sync account") { db in
            // The account a device syncs with, and the namespace of its tag keys.
            try createSyncAccount(db)
        }
        return migrator
    }

    /// Whether the first migration made the newest tables at once (an engine
    /// that came after migration 10, MariaDB): the reminders' keys are no
    /// longer integers. Later migrations then do only what still applies.
    static func hasNewestTables(_ db: Database) throws -> Bool {
        guard let key = try db.tableSchema("reminders")?.columns.first(where: { $0.name == "id" }) else { return false }
        return SchemaCheck.family(key.type) != "integer"
    }

    /// The tables the model's screens read.
    static let observedTables = ["remindersLists", "reminders", "tags", "remindersTags"]

    private struct StoredDates: Decodable {
        var id: Int64
        var dueDate: Date?
        var createdAt: Date
    }

    /// Applies the migrations not applied yet.
    public static func migrate(_ store: Store) async throws {
        try await migrator.migrate(store)
    }

    /// What a database holds, told by a read that changes nothing.
    public enum Contents: Sendable, Equatable {
        /// No table at all: a new database.
        case empty
        /// The reminders tables, with Depot's record of their migrations.
        case reminders
        /// Tables of something else (their names, a few of them): not ours to change.
        case other([String])
    }

    /// What the store's database holds, read without writing: so a command can
    /// refuse a database that is not a reminders one before migrating it.
    public static func contents(of store: Store) async throws -> Contents {
        try await store.read { db in
            // Tables and views (the dialect's schema objects but sequences), by name.
            struct SchemaObject: Decodable { var kind: String; var name: String }
            let tables = try db.fetchAll(SchemaObject.self, SQL(unsafeRaw: db.dialect.schemaObjectsQuery))
                .filter { $0.kind != "sequence" }.map(\.name).sorted()
            // Depot's migrations table alone: another process is setting the database up.
            if tables.allSatisfy({ $0 == "depotMigrations" }) { return .empty }
            guard tables.contains("depotMigrations"), tables.contains("reminders"), tables.contains("remindersLists") else {
                return .other(Array(tables.prefix(3)))
            }
            let first = try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "depotMigrations") WHERE \(ident: "name") = \("1 lists, reminders, tags")") ?? 0
            return first == 1 ? .reminders : .other(Array(tables.prefix(3)))
        }
    }

    static let sqliteV1: SQL = """
        CREATE TABLE "remindersLists" (
            "id" INTEGER PRIMARY KEY,
            "title" TEXT NOT NULL,
            "color" INTEGER NOT NULL CHECK ("color" BETWEEN 0 AND 4294967295),
            "position" INTEGER NOT NULL,
            "sort" TEXT NOT NULL CHECK ("sort" IN ('dueDate', 'priority', 'title', 'createdAt')),
            "sortAscending" INTEGER NOT NULL CHECK ("sortAscending" IN (0, 1)),
            "showCompleted" INTEGER NOT NULL CHECK ("showCompleted" IN (0, 1))
        ) STRICT;
        CREATE TABLE "reminders" (
            "id" INTEGER PRIMARY KEY,
            "title" TEXT NOT NULL,
            "notes" TEXT NOT NULL,
            "isCompleted" INTEGER NOT NULL CHECK ("isCompleted" IN (0, 1)),
            "isFlagged" INTEGER NOT NULL CHECK ("isFlagged" IN (0, 1)),
            "priority" INTEGER NOT NULL CHECK ("priority" BETWEEN 0 AND 3),
            "dueDate" TEXT,
            "createdAt" TEXT NOT NULL,
            "position" INTEGER NOT NULL,
            "remindersListID" INTEGER NOT NULL REFERENCES "remindersLists" ("id") ON DELETE CASCADE
        ) STRICT;
        CREATE INDEX "reminders_list" ON "reminders" ("remindersListID", "isCompleted");
        CREATE INDEX "reminders_due" ON "reminders" ("dueDate") WHERE NOT "isCompleted";
        CREATE TABLE "tags" (
            "id" INTEGER PRIMARY KEY,
            "title" TEXT NOT NULL
        ) STRICT;
        CREATE UNIQUE INDEX "tags_title" ON "tags" (lower("title"));
        CREATE TABLE "remindersTags" (
            "reminderID" INTEGER NOT NULL REFERENCES "reminders" ("id") ON DELETE CASCADE,
            "tagID" INTEGER NOT NULL REFERENCES "tags" ("id") ON DELETE CASCADE,
            PRIMARY KEY ("reminderID", "tagID")
        ) STRICT;
        CREATE INDEX "remindersTags_tag" ON "remindersTags" ("tagID");
        """

    /// MariaDB's first migration: the tables as migration 10 leaves them on the
    /// other engines (UUID keys, numbers, manual sort, cover images), in MariaDB's
    /// types (dates `DATETIME(6)` in UTC, UUIDs `CHAR(36)`), with table-level
    /// foreign keys and a full index on due dates (it has no partial indexes).
    static let mariadbNewest: SQL = """
        CREATE TABLE "depotNumbers" ("tbl" VARCHAR(64) PRIMARY KEY, "last" BIGINT NOT NULL);
        INSERT INTO "depotNumbers" ("tbl", "last") VALUES ('remindersLists', 0), ('reminders', 0);
        CREATE TABLE "remindersLists" (
            "id" CHAR(36) PRIMARY KEY,
            "number" BIGINT UNIQUE,
            "title" LONGTEXT NOT NULL,
            "color" BIGINT NOT NULL CHECK ("color" BETWEEN 0 AND 4294967295),
            "position" BIGINT NOT NULL,
            "sort" VARCHAR(20) NOT NULL CHECK ("sort" IN ('dueDate', 'priority', 'title', 'createdAt', 'manual')),
            "sortAscending" BOOLEAN NOT NULL,
            "showCompleted" BOOLEAN NOT NULL
        );
        CREATE TABLE "reminders" (
            "id" CHAR(36) PRIMARY KEY,
            "number" BIGINT UNIQUE,
            "title" LONGTEXT NOT NULL,
            "notes" LONGTEXT NOT NULL,
            "isCompleted" BOOLEAN NOT NULL,
            "isFlagged" BOOLEAN NOT NULL,
            "priority" BIGINT NOT NULL CHECK ("priority" BETWEEN 0 AND 3),
            "dueDate" DATETIME(6),
            "createdAt" DATETIME(6) NOT NULL,
            "position" BIGINT NOT NULL,
            "remindersListID" CHAR(36) NOT NULL,
            FOREIGN KEY ("remindersListID") REFERENCES "remindersLists" ("id") ON DELETE CASCADE
        );
        CREATE INDEX "reminders_list" ON "reminders" ("remindersListID", "isCompleted");
        CREATE INDEX "reminders_due" ON "reminders" ("dueDate");
        CREATE TABLE "tags" (
            "id" CHAR(36) PRIMARY KEY,
            "title" LONGTEXT NOT NULL
        );
        CREATE TABLE "remindersTags" (
            "reminderID" CHAR(36) NOT NULL,
            "tagID" CHAR(36) NOT NULL,
            PRIMARY KEY ("reminderID", "tagID"),
            FOREIGN KEY ("reminderID") REFERENCES "reminders" ("id") ON DELETE CASCADE,
            FOREIGN KEY ("tagID") REFERENCES "tags" ("id") ON DELETE CASCADE
        );
        CREATE INDEX "remindersTags_tag" ON "remindersTags" ("tagID");
        CREATE TABLE "remindersListCoverImages" (
            "remindersListID" CHAR(36) PRIMARY KEY,
            "image" LONGBLOB NOT NULL,
            FOREIGN KEY ("remindersListID") REFERENCES "remindersLists" ("id") ON DELETE CASCADE
        )
        """ + SQL(unsafeRaw: KeysMigration.numbered.map { ";\n" + KeysMigration.mariadbNumbering($0) }.joined())

    static let postgresV1: SQL = """
        CREATE TABLE "remindersLists" (
            "id" bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            "title" text NOT NULL,
            "color" bigint NOT NULL CHECK ("color" BETWEEN 0 AND 4294967295),
            "position" bigint NOT NULL,
            "sort" text NOT NULL CHECK ("sort" IN ('dueDate', 'priority', 'title', 'createdAt')),
            "sortAscending" boolean NOT NULL,
            "showCompleted" boolean NOT NULL
        );
        CREATE TABLE "reminders" (
            "id" bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            "title" text NOT NULL,
            "notes" text NOT NULL,
            "isCompleted" boolean NOT NULL,
            "isFlagged" boolean NOT NULL,
            "priority" bigint NOT NULL CHECK ("priority" BETWEEN 0 AND 3),
            "dueDate" timestamptz,
            "createdAt" timestamptz NOT NULL,
            "position" bigint NOT NULL,
            "remindersListID" bigint NOT NULL REFERENCES "remindersLists" ("id") ON DELETE CASCADE
        );
        CREATE INDEX "reminders_list" ON "reminders" ("remindersListID", "isCompleted");
        CREATE INDEX "reminders_due" ON "reminders" ("dueDate") WHERE NOT "isCompleted";
        CREATE TABLE "tags" (
            "id" bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            "title" text NOT NULL
        );
        CREATE UNIQUE INDEX "tags_title" ON "tags" (lower("title" COLLATE "C"));
        CREATE TABLE "remindersTags" (
            "reminderID" bigint NOT NULL REFERENCES "reminders" ("id") ON DELETE CASCADE,
            "tagID" bigint NOT NULL REFERENCES "tags" ("id") ON DELETE CASCADE,
            PRIMARY KEY ("reminderID", "tagID")
        );
        CREATE INDEX "remindersTags_tag" ON "remindersTags" ("tagID");
        """
}

/// Which of the migrations' scripts a database runs, chosen by the column
/// types its dialect spells: the scripts are history, written once in each
/// vocabulary of types and never edited, so the dialect's own words pick them
/// (never its engine's name).
enum ScriptSet: Sendable, Hashable {
    /// STRICT tables of INTEGER and TEXT: booleans as checked integers, dates
    /// and keys as text, rowid keys (SQLite's vocabulary).
    case strictTables
    /// Native types: `boolean`, `bigint`, `text`, `timestamptz`, `uuid` and
    /// identity columns (PostgreSQL's vocabulary).
    case nativeTypes
    /// Any other vocabulary: an engine that came after migration 10 makes the
    /// newest tables at once, in the script written for the first such engine
    /// (MariaDB's types), and the later migrations do only what still applies.
    case newestTables

    init(_ dialect: any SQLDialect) {
        func spells(_ words: [ColumnType: String]) -> Bool {
            words.allSatisfy { dialect.typeName($0.key) == $0.value }
        }
        if spells([.bool: "INTEGER", .integer: "INTEGER", .text: "TEXT", .date: "TEXT", .uuid: "TEXT", .blob: "BLOB"]),
           dialect.typeCheckedTableOption == " STRICT" {
            self = .strictTables
        } else if spells([.bool: "boolean", .integer: "bigint", .text: "text", .date: "timestamptz", .uuid: "uuid", .blob: "bytea"]) {
            self = .nativeTypes
        } else {
            self = .newestTables
        }
    }
}
