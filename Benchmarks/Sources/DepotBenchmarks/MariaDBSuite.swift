import Depot
import DepotMariaDB
import Foundation

/// MariaDB through Depot's plug-in beside lean Connector/C loops, on one
/// connection each to a throwaway server on loopback (`DEPOT_MARIADB_URL`).
struct MariaDBSuite {
    let options: Options
    let items: [Item]
    let lookupIDs: [Int64]

    func run(into report: inout Report) async throws {
        guard let url = ProcessInfo.processInfo.environment["DEPOT_MARIADB_URL"] else {
            throw RawError.failed("the MariaDB half needs DEPOT_MARIADB_URL (Benchmarks/run starts a server)")
        }
        let group = "MariaDB, Depot's plug-in (Backends/MariaDB)"
        let repetitions = options.repetitions
        func add(_ scenario: String, _ contestants: [Contestant]) async throws {
            let samples = try await interleaved(contestants, repetitions: repetitions)
            for (contestant, seconds) in zip(contestants, samples) {
                report.add(group, scenario, contestant.name, contestant.isBaseline, seconds)
            }
        }
        let byID = Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0) })
        let expectedLookups = lookupIDs.compactMap { byID[$0] }
        let expectedLookupSum = expectedLookups.reduce(Int64(0)) { $0 &+ checksum($1) }
        let raw = try RawMariaDB(url: url)
        var configuration = try MariaDBConfiguration(url: url)
        configuration.maxConnections = 1
        let depot = try await Store.mariadb(configuration)
        let reset = { try raw.reset() }

        try await add("insert \(items.count) rows, one statement per row, one transaction", [
            Contestant(name: "raw Connector/C prepared INSERT", isBaseline: true, setUp: reset) { try raw.insertPerRow(items) },
            Contestant(name: "Depot insert per row, @Columns", setUp: reset) {
                try await depot.write { db in for item in items { try db.insert(item) } }
            },
            Contestant(name: "Depot insertWithoutReturning per row, @Columns", setUp: reset) {
                try await depot.write { db in for item in items { try db.insertWithoutReturning(item) } }
            },
        ])
        try await add("insert \(items.count) rows in bulk", [
            Contestant(name: "raw Connector/C prepared INSERT per row", isBaseline: true, setUp: reset) { try raw.insertPerRow(items) },
            Contestant(name: "Depot insert(contentsOf:), @Columns", setUp: reset) {
                try await depot.write { db in try db.insert(contentsOf: items) }
            },
        ])

        // The reads read what the raw loop wrote; each contender's rows are checked in full first.
        try reset()
        try raw.insertPerRow(items)
        let depotFetch: () async throws -> [Item] = { try await depot.read { db in try db.fetchAll(Item.self, "SELECT * FROM items") } }
        try verify(try raw.fetchAll(), items, precision: 0.000_000_5, "raw Connector/C")
        try verify(try await depotFetch(), items, precision: 0.000_000_5, "Depot @Columns")
        try verify(try raw.lookupItems(Array(lookupIDs.prefix(200))), Array(expectedLookups.prefix(200)), precision: 0.000_000_5, "raw Connector/C lookups")
        try verify(try await depot.read { db in try lookupIDs.compactMap { try db.find(Item.self, id: $0) } }, expectedLookups,
                   precision: 0.000_000_5, "Depot lookups")

        try await add("fetch all rows decoded into [Item]", [
            Contestant(name: "raw Connector/C, binary results", isBaseline: true) { _ = try raw.fetchAll() },
            Contestant(name: "Depot, @Columns") { _ = try await depotFetch() },
        ])
        try await add("fetch one row by primary key \(lookupIDs.count) times", [
            Contestant(name: "raw Connector/C prepared SELECT", isBaseline: true) {
                try check(try raw.lookups(lookupIDs) == expectedLookupSum, "raw Connector/C lookups")
            },
            Contestant(name: "Depot find in one read, @Columns") {
                let sum = try await depot.read { db in
                    var s: Int64 = 0
                    for id in lookupIDs { s &+= try db.find(Item.self, id: id).map { checksum($0) } ?? 0 }
                    return s
                }
                try check(sum == expectedLookupSum, "Depot lookups")
            },
        ])
        await depot.close()
        FileHandle.standardError.write(Data("  done: \(group)\n".utf8))
    }
}
