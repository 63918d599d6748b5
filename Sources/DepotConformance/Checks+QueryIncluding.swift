import Depot
import Foundation

@Columns
struct Rack: Record, Equatable {
    static var tableName: String { "racks" }
    var id: Int64
    var name: String
}

@Columns
struct Volume: Record, Equatable {
    static var tableName: String { "volumes" }
    var id: Int64
    var rackID: Int64?
    var title: String
    var position: Int
}

@Columns
struct VolumeLabel: Record, Equatable {
    static var tableName: String { "volumeLabels" }
    var id: Int64
    var name: String
}

@Columns
struct VolumeLabeling: Record, Equatable {
    static var tableName: String { "volumeLabelings" }
    var id: Int64
    var volumeID: Int64
    var labelID: Int64
}

/// Loading related records: children, a parent, and targets through a link table.
extension QueryChecks {
    static let rackRows = [Rack(id: 1, name: "Kitchen"), Rack(id: 2, name: "attic"), Rack(id: 3, name: "Empty"), Rack(id: 4, name: "Études")]
    static let volumeRows = [
        Volume(id: 1, rackID: 1, title: "Soup", position: 2), Volume(id: 2, rackID: 1, title: "bread", position: 1),
        Volume(id: 3, rackID: 2, title: "Maps", position: 1), Volume(id: 4, rackID: nil, title: "Loose", position: 1),
        Volume(id: 5, rackID: 4, title: "Chopin", position: 3), Volume(id: 6, rackID: 4, title: "Liszt", position: 3),
        Volume(id: 7, rackID: 99, title: "Lost", position: 1),
    ]
    static let labelRows = [VolumeLabel(id: 1, name: "old"), VolumeLabel(id: 2, name: "New"), VolumeLabel(id: 3, name: "unused")]
    static let labelingRows = [
        VolumeLabeling(id: 1, volumeID: 1, labelID: 1), VolumeLabeling(id: 2, volumeID: 1, labelID: 2), VolumeLabeling(id: 3, volumeID: 3, labelID: 1),
        VolumeLabeling(id: 4, volumeID: 1, labelID: 1), VolumeLabeling(id: 5, volumeID: 6, labelID: 2),
    ]

    static func racks(_ context: ConformanceContext) async throws -> Store {
        let store = try await context.makeStore(Store.Configuration())
        try await store.write { db in
            // No foreign key on volumes.rackID: volume 7 names a rack that does not exist.
            try DepotConformance.createTable(db, "racks", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")])
            try DepotConformance.createTable(db, "volumes", [("id", .integer, "PRIMARY KEY"), ("rackID", .integer, ""),
                                                           ("title", .text, "NOT NULL"), ("position", .integer, "NOT NULL")])
            try DepotConformance.createTable(db, "volumeLabels", [("id", .integer, "PRIMARY KEY"), ("name", .text, "NOT NULL")])
            try DepotConformance.createTable(db, "volumeLabelings", [("id", .integer, "PRIMARY KEY"), ("volumeID", .integer, "NOT NULL"),
                                                                   ("labelID", .integer, "NOT NULL")])
            try db.insert(contentsOf: rackRows)
            try db.insert(contentsOf: volumeRows)
            try db.insert(contentsOf: labelRows)
            try db.insert(contentsOf: labelingRows)
        }
        return store
    }

    static let including: [ConformanceCheck] = [
        ConformanceCheck("query: including(all:) loads each record's children in their order, and [] for none", includingChildren),
        ConformanceCheck("query: including(optional:) and including(required:) load the record a column names", includingParent),
        ConformanceCheck("query: including(all:through:) loads targets through a link table, once each, in their order", includingThrough),
    ]

    static func includingChildren(_ context: ConformanceContext) async throws {
        let store = try await racks(context)
        let (all, paged, filtered) = try await store.read { db in
            (try db.fetchAll(Rack.all.including(all: Volume.self, by: \.rackID) { $0.order { [$0.position, $0.title] } }),
             try db.fetchAll(Rack.order { $0.name }.limit(2, offset: 1).including(all: Volume.self, by: \.rackID)),
             try db.fetchAll(Rack.where { $0.name.hasPrefix("K") || $0.id.eq(3) }
                .including(all: Volume.self, by: \.rackID) { $0.where { $0.title.folded.hasPrefix("b") } }))
        }
        try expectEqual(all.map(\.0.id), [1, 2, 3, 4], "every rack, by primary key")
        try expectEqual(all.map { $0.1.map(\.id) }, [[2, 1], [3], [], [5, 6]], "volumes by position, then title by code point; none for rack 3")
        try expectEqual(paged.map(\.0.name), ["Kitchen", "attic"], "the page of racks by name in code-point order: Empty, Kitchen, attic, Études")
        try expectEqual(paged.map { $0.1.map(\.id) }, [[1, 2], [3]], "only the page's volumes, by primary key")
        try expectEqual(filtered.map { $0.1.map(\.id) }, [[2], []], "the children's own filter")
        try await expectError(.misuse, "a limit on the children") {
            try await store.read { db in try db.fetchAll(Rack.all.including(all: Volume.self, by: \.rackID) { $0.limit(1) }) }
        }
        let none = try await store.read { db in try db.fetchAll(Rack.where { $0.id > 100 }.including(all: Volume.self, by: \.rackID)) }
        try expect(none.isEmpty, "no racks, no volumes")
    }

    static func includingParent(_ context: ConformanceContext) async throws {
        let store = try await racks(context)
        let (optional, required, page) = try await store.read { db in
            (try db.fetchAll(Volume.all.including(optional: Rack.self, by: \.rackID)),
             try db.fetchAll(Volume.order { $0.title.descending() }.including(required: Rack.self, by: \.rackID)),
             try db.fetchAll(Volume.all.limit(3).including(required: Rack.self, by: \.rackID)))
        }
        try expectEqual(optional.map(\.0.id), [1, 2, 3, 4, 5, 6, 7], "every volume")
        try expectEqual(optional.map { $0.1?.id }, [1, 1, 2, nil, 4, 4, nil], "its rack, nil for NULL and for a rack that does not exist")
        try expectEqual(required.map(\.0.title), ["bread", "Soup", "Maps", "Liszt", "Chopin"], "only volumes on a rack, by title descending")
        try expectEqual(required.map(\.1.name), ["Kitchen", "Kitchen", "attic", "Études", "Études"], "with their racks")
        try expectEqual(page.map(\.0.id), [1, 2, 3], "a limit counts volumes that have a rack")
    }

    static func includingThrough(_ context: ConformanceContext) async throws {
        let store = try await racks(context)
        let (all, ordered) = try await store.read { db in
            (try db.fetchAll(Volume.where { $0.id <= 4 }.including(all: VolumeLabel.self, through: VolumeLabeling.self, from: \.volumeID, to: \.labelID)),
             try db.fetchAll(Volume.all.including(all: VolumeLabel.self, through: VolumeLabeling.self, from: \.volumeID, to: \.labelID) { $0.order { $0.name } }))
        }
        try expectEqual(all.map(\.0.id), [1, 2, 3, 4], "the volumes")
        try expectEqual(all.map { $0.1.map(\.id) }, [[1, 2], [], [1], []], "labels by primary key, a label linked twice once")
        try expectEqual(ordered.map { $0.1.map(\.name) }, [["New", "old"], [], ["old"], [], [], ["New"], []], "labels by name in code-point order")
        let nested = try await store.read { db in
            try db.fetchAll(Rack.all.including(all: Volume.self, by: \.rackID)
                .including(all: VolumeLabel.self, through: VolumeLabeling.self, from: \.volumeID, to: \.labelID) { $0.order { $0.name } })
        }
        try expectEqual(nested.map { rack, volumes in "\(rack.id): " + volumes.map { "\($0.0.id)\($0.1.map(\.name))" }.joined(separator: " ") },
                        ["1: 1[\"New\", \"old\"] 2[]", "2: 3[\"old\"]", "3: ", "4: 5[] 6[\"New\"]"],
                        "racks, their volumes by key, each volume's labels by name")
    }
}
