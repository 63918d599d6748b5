import Depot
import Foundation

// The sync protocol's big messages (pushes, pages, staged pages) read and
// written by hand: the same JSON as their `Codable` conformances, which
// stay for anyone who encodes them, with keys written sorted, so the
// content hash of a push is its changes as written here.

extension SyncPush {
    /// The push in the wire form: the JSON its `Encodable` conformance
    /// writes (keys sorted), written directly, several times faster.
    public func wireJSON() -> Data {
        var writer = JSONWriter(capacity: 256 + changes.count * 512)
        writer.byte(UInt8(ascii: "{"))
        writer.key("changes")
        SyncChange.write(changes, to: &writer)
        writer.member("client")
        writer.string(UUIDText.uppercased(client))
        writer.member("number")
        writer.int(number)
        if let protocolVersion {
            writer.member("protocolVersion")
            writer.int(Int64(protocolVersion))
        }
        if let schema {
            writer.member("schema")
            schema.write(to: &writer)
        }
        if let seen {
            writer.member("seen")
            writer.int(seen)
        }
        writer.byte(UInt8(ascii: "}"))
        return Data(writer.bytes)
    }

    /// A push read from its wire form, as its `Decodable` conformance reads it.
    ///
    /// - Throws: `DecodingError.dataCorrupted`, naming what is wrong and
    ///   at which byte (never the values).
    public init(wireJSON data: Data) throws {
        self = try SyncWire.reading(data) { reader in
            var (client, number, changes): (UUID?, Int64?, [SyncChange]?) = (nil, nil, nil)
            var push = SyncPush(client: UUID(), number: 0, changes: [])
            try reader.object { reader, key in
                switch key {
                case "client": client = try SyncWire.uuid(&reader)
                case "number": number = try reader.int64()
                case "changes": changes = try SyncChange.read(&reader)
                case "seen": push.seen = try reader.null() ? nil : try reader.int64()
                case "protocolVersion": push.protocolVersion = try reader.null() ? nil : try SyncWire.int(&reader)
                case "schema": push.schema = try reader.null() ? nil : try SyncSchema.read(&reader)
                default: try reader.skip()
                }
            }
            guard let client, let number, let changes else { throw reader.failure("a push without its client, number or changes") }
            (push.client, push.number, push.changes) = (client, number, changes)
            return push
        }
    }
}

extension SyncPage {
    /// The page in the wire form: the JSON its `Encodable` conformance
    /// writes (keys sorted), written directly, several times faster.
    public func wireJSON() -> Data {
        var writer = JSONWriter(capacity: 256 + changes.count * 512)
        writer.byte(UInt8(ascii: "{"))
        writer.key("changes")
        SyncChange.write(changes, to: &writer)
        writer.member("head")
        writer.int(head)
        if horizon > 0 {
            writer.member("horizon")
            writer.int(horizon)
        }
        writer.member("isCaughtUp")
        writer.bool(isCaughtUp)
        writer.member("next")
        next.write(to: &writer)
        writer.member("overridden")
        SyncOverride.write(overridden, to: &writer)
        if startsOver {
            writer.member("startsOver")
            writer.bool(true)
        }
        writer.byte(UInt8(ascii: "}"))
        return Data(writer.bytes)
    }

    /// A page read from its wire form, as its `Decodable` conformance reads it.
    ///
    /// - Throws: `DecodingError.dataCorrupted`, naming what is wrong and
    ///   at which byte (never the values).
    public init(wireJSON data: Data) throws {
        self = try SyncWire.reading(data) { reader in
            var (changes, next, head, isCaughtUp): ([SyncChange]?, SyncCursor?, Int64?, Bool?) = (nil, nil, nil, nil)
            var page = SyncPage(changes: [], next: .start, head: 0, isCaughtUp: false)
            try reader.object { reader, key in
                switch key {
                case "changes": changes = try SyncChange.read(&reader)
                case "next": next = try SyncCursor.read(&reader)
                case "head": head = try reader.int64()
                case "isCaughtUp": isCaughtUp = try reader.bool()
                case "overridden": page.overridden = try reader.null() ? [] : try SyncOverride.read(&reader)
                case "startsOver": page.startsOver = try reader.null() ? false : try reader.bool()
                case "horizon": page.horizon = try reader.null() ? 0 : try reader.int64()
                default: try reader.skip()
                }
            }
            guard let changes, let next, let head, let isCaughtUp else { throw reader.failure("a page without its changes, next, head or isCaughtUp") }
            (page.changes, page.next, page.head, page.isCaughtUp) = (changes, next, head, isCaughtUp)
            return page
        }
    }
}

extension SyncClient.StagedPage {
    /// The staged form: the JSON its `Encodable` conformance writes, written directly.
    func wireJSON() -> Data {
        var writer = JSONWriter(capacity: 256 + changes.count * 512)
        writer.byte(UInt8(ascii: "{"))
        writer.key("changes")
        SyncChange.write(changes, to: &writer)
        for (key, value) in [("fromStartAt", fromStartAt), ("fromStartHorizon", fromStartHorizon), ("horizon", horizon)] as [(StaticString, Int64?)] {
            guard let value else { continue }
            writer.member(key)
            writer.int(value)
        }
        writer.member("next")
        next.write(to: &writer)
        if let overridden {
            writer.member("overridden")
            SyncOverride.write(overridden, to: &writer)
        }
        writer.byte(UInt8(ascii: "}"))
        return Data(writer.bytes)
    }

    /// A staged page read back (one an earlier version staged too: the same JSON).
    init(wireJSON data: Data) throws {
        self = try SyncWire.reading(data) { reader in
            var (changes, next): ([SyncChange]?, SyncCursor?) = (nil, nil)
            var staged = SyncClient.StagedPage(changes: [], next: .start)
            try reader.object { reader, key in
                switch key {
                case "changes": changes = try SyncChange.read(&reader)
                case "next": next = try SyncCursor.read(&reader)
                case "overridden": staged.overridden = try reader.null() ? nil : try SyncOverride.read(&reader)
                case "fromStartAt": staged.fromStartAt = try reader.null() ? nil : try reader.int64()
                case "horizon": staged.horizon = try reader.null() ? nil : try reader.int64()
                case "fromStartHorizon": staged.fromStartHorizon = try reader.null() ? nil : try reader.int64()
                default: try reader.skip()
                }
            }
            guard let changes, let next else { throw reader.failure("a staged page without its changes or next") }
            (staged.changes, staged.next) = (changes, next)
            return staged
        }
    }
}

extension SyncChange {
    static func write(_ changes: [SyncChange], to writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "["))
        var first = true
        for change in changes {
            writer.comma(&first)
            change.write(to: &writer)
        }
        writer.byte(UInt8(ascii: "]"))
    }

    /// Keys sorted: `evicted`, `key`, `row`, `synced`, `table`, `v`.
    func write(to writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "{"))
        if isEvicted {
            writer.key("evicted")
            writer.bool(true)
            writer.byte(UInt8(ascii: ","))
        }
        writer.key("key")
        writer.string(key)
        writer.member("row")
        row.write(to: &writer)
        if wasSynced {
            writer.member("synced")
            writer.bool(true)
        }
        writer.member("table")
        writer.string(table)
        if let version {
            writer.member("v")
            writer.int(version)
        }
        writer.byte(UInt8(ascii: "}"))
    }

    static func read(_ reader: inout JSONReader) throws -> [SyncChange] {
        var changes: [SyncChange] = []
        try reader.array { reader in changes.append(try SyncChange(reading: &reader)) }
        return changes
    }

    init(reading reader: inout JSONReader) throws {
        var (table, key, row): (String?, String?, SyncRow?) = (nil, nil, nil)
        var (isEvicted, wasSynced, version): (Bool, Bool, Int64?) = (false, false, nil)
        try reader.object { reader, name in
            switch name {
            case "table": table = try reader.string()
            case "key": key = try reader.string()
            case "row": row = try SyncRow(reading: &reader)
            case "evicted": isEvicted = try reader.null() ? false : try reader.bool()
            case "synced": wasSynced = try reader.null() ? false : try reader.bool()
            case "v": version = try reader.null() ? nil : try reader.int64()
            default: try reader.skip()
            }
        }
        guard let table, let key, let row else { throw reader.failure("a change without its table, key or row") }
        self.init(table: table, key: key, row: row, isEvicted: isEvicted, wasSynced: wasSynced, version: version)
    }
}

extension SyncRow {
    /// `{"cl":…,"writes":[{"node":…,"time":…,"values":{column:[kind,text]}}]}`:
    /// the registers grouped by the write that stamped them, in stamp
    /// order, columns sorted by their bytes.
    func write(to writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "{"))
        writer.key("cl")
        writer.int(causalLength)
        writer.member("writes")
        writer.byte(UInt8(ascii: "["))
        // Most rows carry one stamp (an insert) or a few: grouped without a dictionary.
        let registers = self.registers.sorted { lhs, rhs in
            lhs.value.stamp != rhs.value.stamp ? lhs.value.stamp < rhs.value.stamp : lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8)
        }
        var start = registers.startIndex
        var firstWrite = true
        while start < registers.endIndex {
            let stamp = registers[start].value.stamp
            var end = start
            while end < registers.endIndex, registers[end].value.stamp == stamp { end += 1 }
            writer.comma(&firstWrite)
            writer.byte(UInt8(ascii: "{"))
            writer.key("node")
            writer.string(UUIDText.uppercased(stamp.node))
            writer.member("time")
            writer.int(stamp.time.rawValue)
            writer.member("values")
            writer.byte(UInt8(ascii: "{"))
            var firstValue = true
            for (column, register) in registers[start..<end] {
                writer.comma(&firstValue)
                writer.string(column)
                writer.byte(UInt8(ascii: ":"))
                writer.byte(UInt8(ascii: "["))
                let wire = WireValue(register.value)
                writer.string(wire.kind)
                if let text = wire.text {
                    writer.byte(UInt8(ascii: ","))
                    writer.string(text)
                }
                writer.byte(UInt8(ascii: "]"))
            }
            writer.byte(UInt8(ascii: "}"))
            writer.byte(UInt8(ascii: "}"))
            start = end
        }
        writer.byte(UInt8(ascii: "]"))
        writer.byte(UInt8(ascii: "}"))
    }

    init(reading reader: inout JSONReader) throws {
        var causalLength: Int64?
        var registers: [String: SyncRegister] = [:]
        try reader.object { reader, key in
            switch key {
            case "cl": causalLength = try reader.int64()
            case "writes":
                try reader.array { reader in
                    var (time, node): (Int64?, UUID?) = (nil, nil)
                    var values: [(column: String, kind: String, text: String?)] = []
                    try reader.object { reader, key in
                        switch key {
                        case "time": time = try reader.int64()
                        case "node": node = try SyncWire.uuid(&reader)
                        case "values":
                            try reader.object { reader, column in
                                var parts: [String] = []
                                try reader.array { reader in
                                    guard parts.count < 2 else { throw reader.failure("a value is [kind] or [kind, text]") }
                                    parts.append(try reader.string())
                                }
                                guard let kind = parts.first else { throw reader.failure("a value is [kind] or [kind, text]") }
                                values.append((column, kind, parts.count == 2 ? parts[1] : nil))
                            }
                        default: try reader.skip()
                        }
                    }
                    guard let time, let node else { throw reader.failure("a write without its time or node") }
                    let stamp = SyncStamp(time: HybridTimestamp(rawValue: time), node: node)
                    for value in values {
                        do {
                            registers[value.column] = SyncRegister(value: try WireValue.value(kind: value.kind, text: value.text), stamp: stamp)
                        } catch let failure as WireValue.Failure {
                            throw reader.failure(failure.message)
                        }
                    }
                }
            default: try reader.skip()
            }
        }
        guard let causalLength else { throw reader.failure("a row without its causal length") }
        self.init(causalLength: causalLength, registers: registers)
    }
}

extension SyncCursor {
    func write(to writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "{"))
        writer.key("key")
        writer.string(key)
        writer.member("table")
        writer.string(table)
        writer.member("version")
        writer.int(version)
        writer.byte(UInt8(ascii: "}"))
    }

    static func read(_ reader: inout JSONReader) throws -> SyncCursor {
        var (version, table, key): (Int64?, String?, String?) = (nil, nil, nil)
        try reader.object { reader, name in
            switch name {
            case "version": version = try reader.int64()
            case "table": table = try reader.string()
            case "key": key = try reader.string()
            default: try reader.skip()
            }
        }
        guard let version, let table, let key else { throw reader.failure("a cursor without its version, table or key") }
        return SyncCursor(version: version, table: table, key: key)
    }
}

extension SyncOverride {
    static func write(_ overrides: [SyncOverride], to writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "["))
        var first = true
        for override in overrides {
            writer.comma(&first)
            writer.byte(UInt8(ascii: "{"))
            writer.key("column")
            writer.string(override.column)
            writer.member("row")
            writer.byte(UInt8(ascii: "{"))
            writer.key("key")
            writer.string(override.row.key)
            writer.member("table")
            writer.string(override.row.table)
            writer.byte(UInt8(ascii: "}"))
            writer.byte(UInt8(ascii: "}"))
        }
        writer.byte(UInt8(ascii: "]"))
    }

    static func read(_ reader: inout JSONReader) throws -> [SyncOverride] {
        var overrides: [SyncOverride] = []
        try reader.array { reader in
            var (row, column): (SyncRowID?, String?) = (nil, nil)
            try reader.object { reader, name in
                switch name {
                case "column": column = try reader.string()
                case "row":
                    var (table, key): (String?, String?) = (nil, nil)
                    try reader.object { reader, name in
                        switch name {
                        case "table": table = try reader.string()
                        case "key": key = try reader.string()
                        default: try reader.skip()
                        }
                    }
                    guard let table, let key else { throw reader.failure("a row without its table or key") }
                    row = SyncRowID(table: table, key: key)
                default: try reader.skip()
                }
            }
            guard let row, let column else { throw reader.failure("an override without its row or column") }
            overrides.append(SyncOverride(row: row, column: column))
        }
        return overrides
    }
}

extension SyncSchema {
    /// `{"tables":{table:[column]}}`, tables sorted by their bytes.
    func write(to writer: inout JSONWriter) {
        writer.byte(UInt8(ascii: "{"))
        writer.key("tables")
        writer.byte(UInt8(ascii: "{"))
        var first = true
        for (table, columns) in tables.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            writer.comma(&first)
            writer.string(table)
            writer.byte(UInt8(ascii: ":"))
            writer.byte(UInt8(ascii: "["))
            var firstColumn = true
            for column in columns {
                writer.comma(&firstColumn)
                writer.string(column)
            }
            writer.byte(UInt8(ascii: "]"))
        }
        writer.byte(UInt8(ascii: "}"))
        writer.byte(UInt8(ascii: "}"))
    }

    static func read(_ reader: inout JSONReader) throws -> SyncSchema {
        var tables: [String: [String]]?
        try reader.object { reader, key in
            guard key == "tables" else { return try reader.skip() }
            var read: [String: [String]] = [:]
            try reader.object { reader, table in
                var columns: [String] = []
                try reader.array { reader in columns.append(try reader.string()) }
                read[table] = columns
            }
            tables = read
        }
        guard let tables else { throw reader.failure("a schema without its tables") }
        var schema = SyncSchema([])
        schema.tables = tables
        return schema
    }
}

enum SyncWire {
    /// Reads a whole document with `body`, its failures as `DecodingError`s.
    static func reading<T>(_ data: Data, _ body: (inout JSONReader) throws -> T) throws -> T {
        var reader = JSONReader(data)
        do {
            let value = try body(&reader)
            try reader.end()
            return value
        } catch let failure as JSONReader.Failure {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: failure.description))
        }
    }

    static func uuid(_ reader: inout JSONReader) throws -> UUID {
        guard let uuid = UUIDText.parse(try reader.string()) else { throw reader.failure("not a UUID") }
        return uuid
    }

    static func int(_ reader: inout JSONReader) throws -> Int {
        let value = try reader.int64()
        guard let int = Int(exactly: value) else { throw reader.failure("a number out of range") }
        return int
    }
}

/// A message of the sync protocol as it travels: the big ones (a push, a
/// page) written and read by hand, the small ones through Foundation.
protocol SyncWireMessage: Codable, Sendable {
    func wireJSON() throws -> Data
    init(wireJSON: Data) throws
}

extension SyncWireMessage {
    func wireJSON() throws -> Data { try JSONEncoder().encode(self) }
    init(wireJSON data: Data) throws { self = try JSONDecoder().decode(Self.self, from: data) }
}

extension SyncPush: SyncWireMessage {}
extension SyncPage: SyncWireMessage {}
extension SyncPull: SyncWireMessage {}
extension SyncPushAnswer: SyncWireMessage {}
extension SyncWait: SyncWireMessage {}
extension SyncWaitAnswer: SyncWireMessage {}
