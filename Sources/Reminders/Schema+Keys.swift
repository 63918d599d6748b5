import Depot
import DepotSync
import Foundation

/// Migration 9: keys that never collide, so two devices can each add lists,
/// reminders and tags offline and sync them.
///
/// Lists and reminders get random UUID keys; a tag's key is made from its
/// folded title (``Tag/id(forTitle:namespace:)``), so the same tag made on two devices
/// is one tag; links and cover images follow their parents' new keys. People
/// keep naming lists and reminders by a short number: each store numbers its
/// rows 1, 2, 3... as they arrive (a trigger, so rows a sync brings are
/// numbered too), and the migration gives each existing row its old id as its
/// number, so `reminders complete 3` still means what it meant.
enum KeysMigration {
    static let tables = ["remindersLists", "reminders", "tags", "remindersTags", "remindersListCoverImages"]
    static let numbered = ["remindersLists", "reminders"]

    static func run(_ db: Database) throws {
        // A first migration that made the newest tables made these keys: only the search index remains.
        guard try !RemindersSchema.hasNewestTables(db) else { return try makeSearchIndex(db) }
        let native = ScriptSet(db.dialect) == .nativeTypes
        try db.execute(script: native ? postgresTables : sqliteTables)
        // Old integer keys to new UUIDs, made here (each engine would make them otherwise).
        try db.execute("CREATE TABLE \"depotKeyMap\" (\"tbl\" \(type: .text) NOT NULL, \"old\" \(type: .integer) NOT NULL, \"new\" \(type: .uuid) NOT NULL, PRIMARY KEY (\"tbl\", \"old\"))")
        struct OldTag: Decodable { var id: Int64; var title: String }
        var keys: [(String, Int64, UUID)] = []
        for table in numbered {
            keys += try db.fetchAll(Int64.self, "SELECT \"id\" FROM \(ident: table) ORDER BY \"id\"").map { (table, $0, UUID()) }
        }
        keys += try db.fetchAll(OldTag.self, "SELECT \"id\", \"title\" FROM \"tags\" ORDER BY \"id\"").map { ("tags", $0.id, Tag.id(forTitle: $0.title)) }
        for start in stride(from: 0, to: keys.count, by: 300) {
            let rows = keys[start..<min(start + 300, keys.count)].map { "(\($0.0), \($0.1), \(Value.uuid($0.2)))" as SQL }
            try db.execute("INSERT INTO \"depotKeyMap\" (\"tbl\", \"old\", \"new\") VALUES \(SQL.join(rows, separator: ", "))")
        }
        try db.execute(script: """
            INSERT INTO "remindersLists_new" ("id", "number", "title", "color", "position", "sort", "sortAscending", "showCompleted")
              SELECT k."new", l."id", l."title", l."color", l."position", l."sort", l."sortAscending", l."showCompleted"
              FROM "remindersLists" l JOIN "depotKeyMap" k ON k."tbl" = 'remindersLists' AND k."old" = l."id";
            INSERT INTO "reminders_new" ("id", "number", "title", "notes", "isCompleted", "isFlagged", "priority", "dueDate",
                "createdAt", "position", "remindersListID")
              SELECT k."new", r."id", r."title", r."notes", r."isCompleted", r."isFlagged", r."priority", r."dueDate",
                r."createdAt", r."position", kl."new"
              FROM "reminders" r JOIN "depotKeyMap" k ON k."tbl" = 'reminders' AND k."old" = r."id"
              JOIN "depotKeyMap" kl ON kl."tbl" = 'remindersLists' AND kl."old" = r."remindersListID";
            INSERT INTO "tags_new" ("id", "title")
              SELECT k."new", t."title" FROM "tags" t JOIN "depotKeyMap" k ON k."tbl" = 'tags' AND k."old" = t."id";
            INSERT INTO "remindersTags_new" ("reminderID", "tagID")
              SELECT kr."new", kt."new" FROM "remindersTags" rt
              JOIN "depotKeyMap" kr ON kr."tbl" = 'reminders' AND kr."old" = rt."reminderID"
              JOIN "depotKeyMap" kt ON kt."tbl" = 'tags' AND kt."old" = rt."tagID";
            INSERT INTO "remindersListCoverImages_new" ("remindersListID", "image")
              SELECT k."new", c."image" FROM "remindersListCoverImages" c
              JOIN "depotKeyMap" k ON k."tbl" = 'remindersLists' AND k."old" = c."remindersListID"
            """)
        // Numbers continue after every id ever given, so a number never names two rows.
        for table in numbered {
            let last: Int64
            if native {
                last = try db.fetchOne(Int64.self, """
                    SELECT greatest(coalesce((SELECT max("id") FROM \(ident: table)), 0),
                                    nextval(pg_get_serial_sequence(\("\"\(table)\""), 'id')) - 1)
                    """) ?? 0
                try db.execute("SELECT setval(\("\"\(table)_number\""), \(max(last, 1)), \(last > 0))")
            } else {
                last = try db.fetchOne(Int64.self, """
                    SELECT max(coalesce((SELECT max("id") FROM \(ident: table)), 0), coalesce((SELECT max(seq) FROM sqlite_sequence WHERE name = \(table)), 0))
                    """) ?? 0
                try db.execute("INSERT INTO \"depotNumbers\" (\"tbl\", \"last\") VALUES (\(table), \(last))")
            }
        }
        try db.execute("DROP TABLE \(ident: Reminder.searchIndex.tableName)")
        for table in tables.reversed() { try db.execute("DROP TABLE \(ident: table)") }
        try db.execute("DROP TABLE \"depotKeyMap\"")
        for table in tables { try db.execute("ALTER TABLE \(ident: table + "_new") RENAME TO \(ident: table)") }
        try db.execute(script: """
            CREATE INDEX "reminders_list" ON "reminders" ("remindersListID", "isCompleted");
            CREATE INDEX "reminders_due" ON "reminders" ("dueDate") WHERE NOT "isCompleted";
            CREATE INDEX "remindersTags_tag" ON "remindersTags" ("tagID")
            """)
        for table in numbered {
            try db.execute(SQL(unsafeRaw: native ? postgresNumbering(table) : sqliteNumbering(table)))
        }
        try makeSearchIndex(db)
    }

    /// The search index over the UUID keys, filled, and every table observed.
    static func makeSearchIndex(_ db: Database) throws {
        try db.createSearchIndex(Reminder.searchIndex, keyType: .uuid)
        try RemindersModel.reindexAll(db)
        try db.enableObservation(of: RemindersSchema.observedTables + ["remindersListCoverImages", Reminder.searchIndex.tableName])
    }

    /// Numbers a new row after the last number given (rows inserted with a number keep it).
    static func sqliteNumbering(_ table: String) -> String {
        """
        CREATE TRIGGER "\(table)_number" AFTER INSERT ON "\(table)" WHEN NEW."number" IS NULL BEGIN
          UPDATE "depotNumbers" SET "last" = "last" + 1 WHERE "tbl" = '\(table)';
          UPDATE "\(table)" SET "number" = (SELECT "last" FROM "depotNumbers" WHERE "tbl" = '\(table)') WHERE "id" = NEW."id";
        END
        """
    }

    /// MariaDB's numbering: the same counter as SQLite's, set before the row is stored.
    static func mariadbNumbering(_ table: String) -> String {
        """
        CREATE TRIGGER "\(table)_number" BEFORE INSERT ON "\(table)" FOR EACH ROW
        BEGIN
            IF NEW."number" IS NULL THEN
                UPDATE "depotNumbers" SET "last" = "last" + 1 WHERE "tbl" = '\(table)';
                SET NEW."number" = (SELECT "last" FROM "depotNumbers" WHERE "tbl" = '\(table)');
            END IF;
        END
        """
    }

    static func postgresNumbering(_ table: String) -> String {
        """
        CREATE TRIGGER "\(table)_number" BEFORE INSERT ON "\(table)" FOR EACH ROW EXECUTE FUNCTION "depot_number"('"\(table)_number"')
        """
    }

    static let sqliteTables: SQL = """
        CREATE TABLE "depotNumbers" ("tbl" TEXT PRIMARY KEY, "last" INTEGER NOT NULL) STRICT;
        CREATE TABLE "remindersLists_new" (
            "id" TEXT PRIMARY KEY NOT NULL,
            "number" INTEGER UNIQUE,
            "title" TEXT NOT NULL,
            "color" INTEGER NOT NULL CHECK ("color" BETWEEN 0 AND 4294967295),
            "position" INTEGER NOT NULL,
            "sort" TEXT NOT NULL CHECK ("sort" IN ('dueDate', 'priority', 'title', 'createdAt', 'manual')),
            "sortAscending" INTEGER NOT NULL CHECK ("sortAscending" IN (0, 1)),
            "showCompleted" INTEGER NOT NULL CHECK ("showCompleted" IN (0, 1))
        ) STRICT;
        CREATE TABLE "reminders_new" (
            "id" TEXT PRIMARY KEY NOT NULL,
            "number" INTEGER UNIQUE,
            "title" TEXT NOT NULL,
            "notes" TEXT NOT NULL,
            "isCompleted" INTEGER NOT NULL CHECK ("isCompleted" IN (0, 1)),
            "isFlagged" INTEGER NOT NULL CHECK ("isFlagged" IN (0, 1)),
            "priority" INTEGER NOT NULL CHECK ("priority" BETWEEN 0 AND 3),
            "dueDate" TEXT,
            "createdAt" TEXT NOT NULL,
            "position" INTEGER NOT NULL,
            "remindersListID" TEXT NOT NULL REFERENCES "remindersLists_new" ("id") ON DELETE CASCADE
        ) STRICT;
        CREATE TABLE "tags_new" (
            "id" TEXT PRIMARY KEY NOT NULL,
            "title" TEXT NOT NULL
        ) STRICT;
        CREATE TABLE "remindersTags_new" (
            "reminderID" TEXT NOT NULL REFERENCES "reminders_new" ("id") ON DELETE CASCADE,
            "tagID" TEXT NOT NULL REFERENCES "tags_new" ("id") ON DELETE CASCADE,
            PRIMARY KEY ("reminderID", "tagID")
        ) STRICT;
        CREATE TABLE "remindersListCoverImages_new" (
            "remindersListID" TEXT PRIMARY KEY NOT NULL REFERENCES "remindersLists_new" ("id") ON DELETE CASCADE,
            "image" BLOB NOT NULL
        ) STRICT
        """

    static let postgresTables: SQL = """
        CREATE FUNCTION "depot_number"() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW."number" IS NULL THEN NEW."number" := nextval(TG_ARGV[0]::regclass); END IF;
          RETURN NEW;
        END $$;
        CREATE SEQUENCE "remindersLists_number";
        CREATE SEQUENCE "reminders_number";
        CREATE TABLE "remindersLists_new" (
            "id" uuid PRIMARY KEY,
            "number" bigint UNIQUE,
            "title" text NOT NULL,
            "color" bigint NOT NULL CHECK ("color" BETWEEN 0 AND 4294967295),
            "position" bigint NOT NULL,
            "sort" text NOT NULL CHECK ("sort" IN ('dueDate', 'priority', 'title', 'createdAt', 'manual')),
            "sortAscending" boolean NOT NULL,
            "showCompleted" boolean NOT NULL
        );
        CREATE TABLE "reminders_new" (
            "id" uuid PRIMARY KEY,
            "number" bigint UNIQUE,
            "title" text NOT NULL,
            "notes" text NOT NULL,
            "isCompleted" boolean NOT NULL,
            "isFlagged" boolean NOT NULL,
            "priority" bigint NOT NULL CHECK ("priority" BETWEEN 0 AND 3),
            "dueDate" timestamptz,
            "createdAt" timestamptz NOT NULL,
            "position" bigint NOT NULL,
            "remindersListID" uuid NOT NULL REFERENCES "remindersLists_new" ("id") ON DELETE CASCADE
        );
        CREATE TABLE "tags_new" (
            "id" uuid PRIMARY KEY,
            "title" text NOT NULL
        );
        CREATE TABLE "remindersTags_new" (
            "reminderID" uuid NOT NULL REFERENCES "reminders_new" ("id") ON DELETE CASCADE,
            "tagID" uuid NOT NULL REFERENCES "tags_new" ("id") ON DELETE CASCADE,
            PRIMARY KEY ("reminderID", "tagID")
        );
        CREATE TABLE "remindersListCoverImages_new" (
            "remindersListID" uuid PRIMARY KEY REFERENCES "remindersLists_new" ("id") ON DELETE CASCADE,
            "image" bytea NOT NULL
        )
        """
}
