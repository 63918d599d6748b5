extension Store {
    /// Observes a read: the closure's value now, then again after every commit
    /// that could change it, as an asynchronous sequence.
    ///
    /// ```swift
    /// let open = store.observe { db in
    ///     try db.fetchCount(Reminder.where { !$0.isCompleted })
    /// }
    /// for try await count in open.removeDuplicates() {
    ///     print("\(count) open")
    /// }
    /// ```
    ///
    /// See ``Observation`` for what it promises. On PostgreSQL, the tables read
    /// need ``Database/enableObservation(of:)`` once (a migration), so that
    /// commits from every connection are heard.
    ///
    /// Caveat: values arrive some time after the commit (a few milliseconds in
    /// this process; up to a tenth of a second more from another process on SQLite).
    public func observe<Value: Sendable>(_ read: @escaping @Sendable (Database) throws -> Value) -> Observation<Value> {
        Observation(store: self, fetch: read)
    }
}

extension Store {
    /// How many observations of this store are being iterated.
    @_spi(Driver) public var liveObservationCount: Int { observers.count }

    /// How long an observation's first read waits for the store to hear other
    /// connections' commits (PostgreSQL's listener to connect and listen)
    /// before it reads anyway: 5 seconds unless set.
    ///
    /// Caveat: an observation that read before the listener listened reads
    /// once more when it does (a commit in between would otherwise go
    /// unheard): a check that counts reads sets a bound it can wait out, so
    /// that a listener slow to connect on a busy machine adds no read.
    @_spi(Driver) public var observationHearingLimit: Duration {
        get { changeMonitor.hearingLimit }
        set { changeMonitor.hearingLimit = newValue }
    }
}

extension Database {
    /// Tells the store's observations that this transaction changed these
    /// tables, for writes Depot cannot see (a C library writing through its own
    /// connection). They refresh when the transaction commits.
    public func notifyChanges(in tables: String...) {
        notifiedTables.formUnion(tables)
    }

    /// Makes commits to these tables heard by observations in every store and
    /// process: on PostgreSQL, a statement-level trigger per table that sends a
    /// notification; on SQLite, nothing is needed. Run it in a migration; it may run again.
    ///
    /// ```swift
    /// migrator.register("observe reminders") { db in
    ///     try db.enableObservation(of: ["reminders", "remindersLists", "tags", "remindersTags"])
    /// }
    /// ```
    public func enableObservation(of tables: [String]) throws {
        for statement in dialect.observationSetup(tables: tables) {
            try runScript(statement)
        }
    }
}
