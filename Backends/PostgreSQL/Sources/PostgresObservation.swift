import CLibPQ
import Depot
import Foundation

/// The channel Depot's triggers notify, with the changed table's `schema.name` as payload.
let depotChangeChannel = "depot_changes"

extension PostgresDialect {
    /// One shared trigger function, and a statement-level trigger per table that
    /// notifies `depot_changes` with the table's `schema.name`: once per table per
    /// transaction (identical notifications fold), for INSERT, UPDATE, DELETE,
    /// TRUNCATE and COPY, and only if the transaction commits.
    ///
    /// Caveat: a statement trigger on a partitioned table does not fire for
    /// writes addressed to a partition: enable each partition too.
    public func observationSetup(tables: [String]) -> [String] {
        guard !tables.isEmpty else { return [] }
        let function = """
            CREATE OR REPLACE FUNCTION depot_notify_change() RETURNS trigger LANGUAGE plpgsql AS $depot$
            BEGIN
                PERFORM pg_notify('\(depotChangeChannel)', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
                RETURN NULL;
            END
            $depot$
            """
        return [function] + tables.map { table in
            "CREATE OR REPLACE TRIGGER depot_observe AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(quote(identifier: table))"
                + " FOR EACH STATEMENT EXECUTE FUNCTION depot_notify_change()"
        }
    }
}

extension PostgresConnection: ReadTrackingConnection {
    /// The relations of the statement's plan (`EXPLAIN (FORMAT JSON, VERBOSE)`
    /// with the same values): views appear as their tables; a relation the
    /// planner proved unneeded does not appear, nor one read inside a function.
    func tablesRead(bySQL sql: String, values: [Value]) throws -> Set<String>? {
        if cannotListen {
            throw DatabaseError(.misuse, "an observation cannot hear commits through a pooler in transaction mode (LISTEN needs a session of its own): "
                + "name the server itself in PostgresConfiguration.listenerHosts (listener=host:port in the URL)")
        }
        if let known = explainedReads[sql] { return known }
        let statement = PostgresStatement(connection: self, sql: "EXPLAIN (FORMAT JSON, VERBOSE, COSTS OFF) " + sql)
        defer { statement.reset() }
        try statement.bind(values)
        guard try statement.step() else { return nil }
        let plan: String
        switch try statement.value(at: 0) {
        case .text(let text), .json(let text): plan = text
        default: return nil
        }
        guard let json = try? JSONSerialization.jsonObject(with: Data(plan.utf8)) else { return nil }
        var relations: [(schema: String, name: String)] = []
        Self.collectRelations(json, into: &relations)
        for relation in relations { try requireObservable(relation) }
        let tables = Set(relations.map { $0.schema + "." + $0.name })
        if explainedReads.count >= 1024 { explainedReads.removeAll(keepingCapacity: true) }
        explainedReads[sql] = tables
        return tables
    }

    /// Fails unless the relation carries Depot's notify trigger: without it,
    /// commits to it from other connections (and this store's) would go unheard.
    private func requireObservable(_ relation: (schema: String, name: String)) throws {
        let qualified = relation.schema + "." + relation.name
        guard !observableTables.contains(qualified) else { return }
        let statement = PostgresStatement(connection: self, sql: """
            SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'depot_observe'
              AND tgrelid = to_regclass(quote_ident($1) || '.' || quote_ident($2)))
            """)
        defer { statement.reset() }
        try statement.bind([.text(relation.schema), .text(relation.name)])
        guard try statement.step(), statement.bool(at: 0) == true else {
            throw DatabaseError.notObservable(relation.name)
        }
        observableTables.insert(qualified)
    }

    private static func collectRelations(_ node: Any, into relations: inout [(schema: String, name: String)]) {
        if let dictionary = node as? [String: Any] {
            if let name = dictionary["Relation Name"] as? String, let schema = dictionary["Schema"] as? String {
                relations.append((schema, name))
            }
            for value in dictionary.values { collectRelations(value, into: &relations) }
        } else if let array = node as? [Any] {
            for value in array { collectRelations(value, into: &relations) }
        }
    }
}

extension PostgresDriver: ChangeListeningDriver {
    func startChangeListener(_ onChange: @escaping @Sendable (ObservedChange) -> Void) -> any ChangeListener {
        PostgresListener(configuration: configuration, channels: [depotChangeChannel]) { event in
            switch event {
            case .listening:
                // Every (re)connect: changes may have been missed while nobody listened.
                onChange(.unknown)
            case .notifications(let batch):
                onChange(.tables(Set(batch.map(\.payload))))
            case .failedToConnect:
                break
            }
        }
    }
}
