import DepotTesting
import Foundation
import Hummingbird
import Testing

/// Another program's SQLite file, or an empty one, named by mistake: the server
/// refuses to start on it and leaves it byte for byte as it was, as the
/// `reminders` command refuses it.
extension ServerStartupTests {
    /// Runs SQL on a file through SQLite's own shell (not Depot, which would switch it to WAL).
    static func sqlite(_ path: String, _ sql: String) async throws {
        let (status, output) = try await ChildProcess.run("/usr/bin/sqlite3", [path, sql])
        #expect(status == 0, "sqlite3 \(sql): \(output)")
    }

    /// Every file in a folder, and its bytes.
    static func snapshot(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[name] = try Data(contentsOf: folder.appendingPathComponent(name))
        }
        return files
    }

    @Test func anotherProgramsFileOrAnEmptyOneIsRefusedAndLeftByteForByte() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("reminders-server-foreign-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let journal = folder.appendingPathComponent("swiftpm.db").path
        try await Self.sqlite(journal, "CREATE TABLE manifests (key TEXT PRIMARY KEY, value BLOB); INSERT INTO manifests VALUES ('k', x'00ff')")
        let wal = folder.appendingPathComponent("cache.db").path
        try await Self.sqlite(wal, "PRAGMA journal_mode = WAL; CREATE TABLE cache (key TEXT PRIMARY KEY)")
        let empty = folder.appendingPathComponent("empty.sqlite").path
        try #require(FileManager.default.createFile(atPath: empty, contents: Data()))
        let before = try Self.snapshot(folder)
        #expect(before.count == 3, "\(before.keys.sorted())")
        for (path, expected) in [(journal, "is not a reminders database (it holds manifests)"), (wal, "is not a reminders database (it holds cache)"),
                                 (empty, "holds no tables: the server starts a database only where there is no file")] {
            for mode in [[], ["--sync"]] {
                _ = try await expectOneLineFailure(["--database", path, "--port", "0"] + mode, expected)
                #expect(try Self.snapshot(folder) == before, "\(path) \(mode): left as it was")
            }
        }
    }
}

/// HEAD wherever GET, and a refused value that names its field.
@Suite struct ServerHTTPDetailTests {
    @Test func everyGETRouteAnswersHEADWithItsHeadersAndNoBody() async throws {
        try await withServer { client in
            _ = try await client.send(.post, "/lists", #"{"title": "Errands"}"#)
            for path in ["/", "/home", "/lists", "/lists/errands", "/health"] {
                let get = try await client.send(.get, path)
                let head = try await client.send(.head, path)
                #expect(head.status == get.status, "HEAD \(path): \(head.status)")
                #expect(head.text.isEmpty, "HEAD \(path) has no body")
                #expect(head.headers[.contentType] == get.headers[.contentType], "HEAD \(path)")
            }
            let refused = try await client.send(.put, "/home")
            #expect(refused.status == .methodNotAllowed)
            #expect(refused.headers[.allow]?.contains("HEAD") == true, "\(String(describing: refused.headers[.allow]))")
        }
    }

    @Test func aValueTheDatabaseRefusesIsA422ThatNamesTheField() async throws {
        try await withServer { client in
            _ = try await client.send(.post, "/lists", #"{"title": "Errands"}"#)
            // U+0000: refused by the model on every engine (PostgreSQL cannot store it, so it could never sync there).
            for body in [#"{"title": "a\u0000b"}"#, #"{"title": "ok", "notes": "a\u0000b"}"#] {
                let nul = try await client.send(.post, "/lists/errands/reminders", body)
                #expect(nul.status == .unprocessableContent, "\(nul.text)")
                let error = nul.object["error"] as? String ?? ""
                #expect(error.hasPrefix(body.contains("notes") ? "the notes cannot hold" : "a title cannot hold"), "\(nul.text)")
            }
            let yearZero = try await client.send(.post, "/lists/errands/reminders", #"{"title": "x", "dueDate": "0000-06-01T00:00:00Z"}"#)
            #expect(yearZero.status == .unprocessableContent, "\(yearZero.text)")
            #expect((yearZero.object["error"] as? String)?.contains("dueDate") == true, "\(yearZero.text)")
        }
    }
}
