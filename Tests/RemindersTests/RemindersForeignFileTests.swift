import CSQLite
import Foundation
import Testing

/// Another program's SQLite file, named by mistake: every command refuses it,
/// and leaves it exactly as it was (its bytes, its journal mode, no file
/// beside it). A reading command does the same to an empty file.
@Suite struct RemindersForeignFileTests {
    let commands = RemindersCommandTests()

    /// Runs SQL on a file through SQLite itself (not Depot, which would switch it to WAL).
    static func sqlite(_ path: String, _ sql: String) throws {
        var handle: OpaquePointer?
        defer { sqlite3_close(handle) }
        try #require(sqlite3_open(path, &handle) == SQLITE_OK)
        try #require(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK, "\(String(cString: sqlite3_errmsg(handle)))")
    }

    /// A folder with three files another program might own: a database in the
    /// rollback-journal mode, one in WAL mode (closed cleanly: no -wal beside it), and an empty file.
    static func foreignFiles() throws -> (folder: URL, files: [String: String]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("depot-foreign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let journal = folder.appendingPathComponent("journal.sqlite").path
        try sqlite(journal, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')")
        let wal = folder.appendingPathComponent("wal.sqlite").path
        try sqlite(wal, "PRAGMA journal_mode = WAL; CREATE TABLE cache (key TEXT PRIMARY KEY, value BLOB); INSERT INTO cache VALUES ('k', x'00ff')")
        let empty = folder.appendingPathComponent("empty.sqlite").path
        try #require(FileManager.default.createFile(atPath: empty, contents: Data()))
        return (folder, ["journal": journal, "wal": wal, "empty": empty])
    }

    /// Every file in the folder and its bytes.
    static func snapshot(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return files
    }

    static let readingCommands: [[String]] = [
        ["stats"], ["lists"], ["view", "all"], ["view", "scheduled"], ["show", "1"], ["detail", "1"], ["search", "milk"],
        ["tagged", "x"], ["tags"], ["watch", "all", "--count", "1"], ["sync", "--status"],
    ]

    @Test func everyReadingCommandRefusesAnotherProgramsFileOrAnEmptyOneAndLeavesItByteForByte() async throws {
        let (folder, files) = try Self.foreignFiles()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Self.snapshot(folder)
        #expect(before.count == 3, "no file beside the three: \(before.keys.sorted())")
        for (kind, path) in files.sorted(by: { $0.key < $1.key }) {
            for arguments in Self.readingCommands {
                let outcome = try await commands.run(arguments + ["--database", path])
                #expect(outcome.status == 1, "\(kind): \(arguments) exited \(outcome.status): \(outcome.stdout.prefix(200))")
                let expected = kind == "empty"
                    ? "reminders: \(path) holds no reminders yet; add a list or a reminder to start it (reminders lists add TITLE --database …)\n"
                    : "reminders: \(path) is not a reminders database (it holds \(kind == "wal" ? "cache" : "notes")); name another with --database\n"
                #expect(outcome.stderr == expected, "\(kind): \(arguments)")
                let after = try Self.snapshot(folder)
                #expect(after == before, "\(kind): \(arguments) changed \(after.filter { before[$0.key] != $0.value }.keys.sorted()) (files now \(after.keys.sorted()))")
            }
        }
    }

    @Test func aWritingCommandRefusesAnotherProgramsFileUntouchedAndStartsAnEmptyOne() async throws {
        let (folder, files) = try Self.foreignFiles()
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try Self.snapshot(folder)
        for kind in ["journal", "wal"] {
            let path = try #require(files[kind])
            let outcome = try await commands.run(["add", "Buy milk", "--database", path])
            #expect(outcome.status == 1, "\(kind): \(outcome.stderr)")
            #expect(try Self.snapshot(folder) == before, "\(kind): refused, and left as it was")
        }
        // The empty file is the one a writing command may start.
        let empty = try #require(files["empty"])
        let added = try await commands.run(["add", "Buy milk", "--database", empty])
        #expect(added.status == 0, "\(added.stderr)")
        let listed = try await commands.run(["view", "all", "--database", empty])
        #expect(listed.status == 0 && listed.stdout.contains("Buy milk"), "\(listed.stderr)")
    }
}
