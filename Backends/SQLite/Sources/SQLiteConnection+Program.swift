import CSQLite

extension SQLiteConnection {
    /// Whether SQLite compiles `sql` into a program that returns one row at
    /// most, read from its `EXPLAIN` listing: one `ResultRow`, and nothing but
    /// opcodes that run straight through (every jump forward, but the
    /// prologue's return to the start), so no instruction runs twice. A
    /// lookup by rowid or by a unique index compiles so; SQLite leaves out the
    /// loop only when it knows the key unique, collations and affinities
    /// included. Any other program, or one that fails to compile, says false.
    func compilesToOneRowAtMost(_ sql: String) -> Bool {
        var program: OpaquePointer?
        defer { sqlite3_finalize(program) }
        // Compiled only to be read: what it would touch is no statement's.
        tables.beginStatement()
        let code = sqlite3_prepare_v2(handle, "EXPLAIN " + sql, -1, &program, nil)
        tables.discardStatement()
        guard code == SQLITE_OK, let program else { return false }
        var results = 0
        var returnedToStart = false
        while sqlite3_step(program) == SQLITE_ROW {
            // A return to the start must be the last instruction.
            if returnedToStart { return false }
            let address = sqlite3_column_int64(program, 0)
            let target = sqlite3_column_int64(program, 3)
            guard let name = sqlite3_column_text(program, 1),
                  let kind = Self.straightOpcodes[String(cString: name)] else { return false }
            switch kind {
            case .plain:
                break
            case .result:
                results += 1
            case .jump:
                if target <= address {
                    guard String(cString: name) == "Goto", target == 1 else { return false }
                    returnedToStart = true
                }
            }
        }
        return results == 1
    }

    private enum OpcodeKind {
        /// Runs and goes on to the next instruction.
        case plain
        /// Returns a row.
        case result
        /// May jump to the instruction its P2 names.
        case jump
    }

    /// The opcodes of a lookup that runs straight through. Anything else (a
    /// loop's `Next`, a subroutine, a sorter, a function) makes the answer false.
    private static let straightOpcodes: [String: OpcodeKind] = [
        "Init": .jump, "Goto": .jump, "Once": .jump, "If": .jump, "IfNot": .jump,
        "SeekRowid": .jump, "NotExists": .jump, "IsNull": .jump, "NotNull": .jump, "MustBeInt": .jump,
        "SeekGE": .jump, "SeekGT": .jump, "SeekLE": .jump, "SeekLT": .jump,
        "IdxGE": .jump, "IdxGT": .jump, "IdxLE": .jump, "IdxLT": .jump,
        "Transaction": .plain, "TableLock": .plain, "OpenRead": .plain, "ReopenIdx": .plain,
        "Variable": .plain, "Integer": .plain, "Int64": .plain, "Real": .plain, "String8": .plain, "Null": .plain,
        "Copy": .plain, "SCopy": .plain, "Affinity": .plain, "RealAffinity": .plain, "Cast": .plain,
        "Rowid": .plain, "Column": .plain, "DeferredSeek": .plain, "IdxRowid": .plain, "ColumnsUsed": .plain,
        "Noop": .plain, "Explain": .plain, "Halt": .plain,
        "ResultRow": .result,
    ]
}
