import Depot
import DepotSQLite
import Foundation
import Testing
import TestSupport

/// A database file this process may not write: read-only, or immutable when
/// its folder may not be written either.
@Suite struct SQLiteReadOnlyTests {
    /// Makes the path unwritable: the immutable attribute for root (whom
    /// permissions do not stop), permissions otherwise. Undone by `writable`.
    func protect(_ path: String) async throws {
        if getuid() == 0 {
            let (status, output) = try await ChildProcess.run("/usr/bin/chattr", ["+i", path])
            try #require(status == 0, "chattr +i \(path): \(output)")
        } else {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            try FileManager.default.setAttributes([.posixPermissions: isFolder.boolValue ? 0o555 : 0o444], ofItemAtPath: path)
        }
    }

    func writable(_ path: String) {
        if getuid() == 0 {
            _ = try? ChildProcess.runOnThisThread("/usr/bin/chattr", ["-i", path])
        } else {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
    }

    func database() async throws -> String {
        let path = try temporaryDatabasePath()
        let store = try Store.sqlite(at: path)
        try await store.write { db in
            try db.execute("CREATE TABLE \(ident: "notes") (\(ident: "id") INTEGER PRIMARY KEY, \(ident: "text") TEXT NOT NULL)")
            try db.execute("INSERT INTO \(ident: "notes") VALUES (\(1), \("kept"))")
        }
        await store.close()
        return path
    }

    func expectReadsAndRefusedWrites(_ path: String) async throws {
        let store = try Store.sqlite(at: path)
        #expect(try await store.read { db in try db.fetchAll(String.self, "SELECT \(ident: "text") FROM \(ident: "notes")") } == ["kept"])
        let error = await #expect(throws: DatabaseError.self) {
            try await store.write { db in try db.execute("INSERT INTO \(ident: "notes") VALUES (\(2), \("lost"))") }
        }
        #expect(error?.kind == .misuse)
        #expect(error?.engineCode?.hasPrefix("SQLITE_READONLY") == true, "\(String(describing: error))")
        #expect(try await store.read { db in try db.fetchOne(Int.self, "SELECT count(*) FROM \(ident: "notes")") } == 1)
        await store.close()
    }

    @Test func aFileThatCannotBeWrittenIsReadAndItsWritesAreRefused() async throws {
        let path = try await database()
        try await protect(path)
        defer { writable(path) }
        try await expectReadsAndRefusedWrites(path)
    }

    @Test func aFileInAFolderThatCannotBeWrittenIsReadAsImmutable() async throws {
        let path = try await database()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"), "closing the store removed its -shm file")
        try await protect(path)
        try await protect(folder)
        defer { writable(folder); writable(path) }
        try await expectReadsAndRefusedWrites(path)
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
    }
}
