/// One table whose every write a sync replica records, in the write's own
/// transaction, through ``ChangeCapturingDialect``: the contract between
/// DepotSync and an engine's triggers.
///
/// On each insert (unless the replica is applying a pull: `applying` is 0 in
/// the state table's row 1), the capture
/// - refuses the write with ``exhaustedMessage`` when the clock (`hlc` in the
///   state table) is at `Int64.max`, and otherwise moves it as
///   ``ChangeCapturingDialect/clockTickStatement(_:)`` does;
/// - gives the row a life: `cl` 1 in the rows table, or the next odd `cl`
///   where a deleted row (even `cl`) is recorded;
/// - stamps every column in the clocks table with the clock and the node;
/// - adds the row to the outbox unless an entry past `push_upto` waits already.
///
/// An update that changes a value column stamps the columns it changed and
/// adds the row to the outbox; one that changes none records nothing. A
/// change of the key is refused with ``keyChangeMessage``, whatever
/// `applying` says. A delete ends the row's life (the next even `cl`) and
/// adds it to the outbox.
public struct ChangeCapture: Sendable, Hashable {
    /// The replica's own tables.
    public struct Tables: Sendable, Hashable {
        /// One row (`id` 1): `node`, `hlc`, `applying`, `push_upto`.
        public var state: String
        /// `tbl`, `row_key`, `cl`: each row's life, keyed by table and key.
        public var rows: String
        /// `tbl`, `row_key`, `col`, `hlc`, `node`: each column's stamp.
        public var clocks: String
        /// `seq` (increasing), `tbl`, `row_key`: the rows a push sends.
        public var outbox: String

        /// The tables by name.
        public init(state: String, rows: String, clocks: String, outbox: String) {
            self.state = state
            self.rows = rows
            self.clocks = clocks
            self.outbox = outbox
        }
    }

    /// The table captured.
    public var table: String
    /// Its primary key's columns.
    public var keyColumns: [String]
    /// Every column sync carries, the key's included.
    public var columns: [String]
    /// SQL of the key's text of the row a trigger wrote (`NEW`).
    public var newKey: String
    /// SQL of the key's text of the row before the write (`OLD`).
    public var oldKey: String
    /// The replica's tables.
    public var tables: Tables
    /// The error a write meets when the clock has no later stamp to give.
    public var exhaustedMessage: String
    /// The error a change of a key meets.
    public var keyChangeMessage: String

    /// A capture from its parts.
    public init(table: String, keyColumns: [String], columns: [String], newKey: String, oldKey: String,
                tables: Tables, exhaustedMessage: String, keyChangeMessage: String) {
        self.table = table
        self.keyColumns = keyColumns
        self.columns = columns
        self.newKey = newKey
        self.oldKey = oldKey
        self.tables = tables
        self.exhaustedMessage = exhaustedMessage
        self.keyChangeMessage = keyChangeMessage
    }
}

/// A dialect whose engine records writes as ``ChangeCapture`` says, with
/// triggers: what a sync replica (DepotSync's `db.sync.installReplica`) needs of
/// its engine. SQLite's dialect is one; a store on an engine without one can
/// serve sync but not hold a replica.
public protocol ChangeCapturingDialect: SQLDialect {
    /// The statements that make the capture of one table (its triggers).
    func captureStatements(_ capture: ChangeCapture) -> [String]
    /// The statements that remove the capture of `table`, if there is one.
    func dropCaptureStatements(table: String) -> [String]
    /// The statement that moves the replica's hybrid clock in the state
    /// table: `max(hlc + 1, now in milliseconds << 16)`; NULL at the last
    /// value, which the column refuses, rather than an overflow.
    func clockTickStatement(_ tables: ChangeCapture.Tables) -> String
}

extension SQLDialect {
    /// Whether the engine records writes for a sync replica (``ChangeCapturingDialect``).
    public var capturesChanges: Bool { self is any ChangeCapturingDialect }
}
