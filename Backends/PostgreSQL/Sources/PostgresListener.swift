import CLibPQ
import Depot
import Foundation

/// A connection of its own, outside the pool and never in a transaction, that
/// LISTENs to some channels on a thread of its own, on the primary (after a
/// failover, the new one) or at ``PostgresConfiguration/listenerHosts``. When
/// the connection drops, it connects again (backing off up to two seconds),
/// LISTENs, and reports `.listening` again: notifications sent meanwhile are lost.
final class PostgresListener: ChangeListener, Sendable {
    enum Event {
        /// Listening, after the first connect or a reconnect.
        case listening
        /// Notifications that arrived together, in order.
        case notifications([PostgresNotification])
        /// A connection attempt failed (it is retried).
        case failedToConnect(DatabaseError)
    }

    private let loop: ListenerLoop<OpaquePointer>

    init(configuration: PostgresConfiguration, channels: [String], onEvent: @escaping @Sendable (Event) -> Void) {
        loop = ListenerLoop(name: "depot.postgresql.listener",
            connect: { try Self.connect(configuration, channels).get() },
            serve: { connection, loop in
                onEvent(.listening)
                Self.listen(on: connection, loop, onEvent)
            },
            close: { PQfinish($0) },
            failedToConnect: { error in
                onEvent(.failedToConnect(error as? DatabaseError ?? DatabaseError(.connection, "cannot connect the listener: \(error)")))
            })
    }

    var isListening: Bool { loop.isListening }

    func stop() {
        loop.stop()
    }

    private static func connect(_ configuration: PostgresConfiguration, _ channels: [String]) -> Result<OpaquePointer, DatabaseError> {
        // LISTEN runs on the primary (a standby refuses it, and commits notify
        // on the primary only), never through a pooler in transaction mode:
        // there the LISTEN stays on a pooled server connection that other
        // clients then share, which hears nothing for this one (PgBouncer
        // logs "got packet 'A' from server when not linked" for each
        // notification; PgBouncer 1.18 once stopped on such a connection
        // with "server in bad state").
        if configuration.transactionPooling && configuration.listenerHosts == nil {
            return .failure(DatabaseError(.misuse, "cannot LISTEN through a pooler in transaction mode (LISTEN needs a session of its own): "
                + "name the server itself in PostgresConfiguration.listenerHosts (listener=host:port in the URL)"))
        }
        let hosts = configuration.listenerHosts ?? configuration.hosts
        var pairs: [(String, String)]
        do {
            pairs = try configuration.connectionParameters(hosts: hosts, target: hosts.count > 1 ? "read-write" : nil)
        } catch let error as DatabaseError {
            return .failure(error)
        } catch {
            return .failure(DatabaseError(.connection, "cannot connect the listener: \(error)"))
        }
        // Named after the store's connections (`depot-listener` by default), so
        // each store's listener can be told apart in pg_stat_activity.
        let name = (pairs.last { $0.0 == "application_name" }?.1 ?? "depot") + "-listener"
        pairs.removeAll { $0.0 == "application_name" }
        pairs += [("application_name", name), ("keepalives", "1"), ("keepalives_idle", "5"),
                  ("keepalives_interval", "2"), ("keepalives_count", "3")]
        let connection = PostgresConnection.connect(pairs)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let error = PostgresError.connection(connection, "cannot connect the listener to PostgreSQL", neverConnected: true)
            PQfinish(connection)
            return .failure(error)
        }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        let script = channels.map { "LISTEN " + PostgresDialect().quote(identifier: $0) }.joined(separator: "; ")
        let result = PQexec(connection, script)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            let error = PostgresError.connection(connection, "cannot LISTEN")
            PQfinish(connection)
            return .failure(error)
        }
        return .success(connection)
    }

    /// Reads notifications until the connection fails or the listener stops.
    private static func listen(on connection: OpaquePointer, _ loop: ListenerLoop<OpaquePointer>, _ onEvent: @Sendable (Event) -> Void) {
        var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
        while !loop.isStopped {
            let ready = poll(&descriptor, 1, 100)
            guard ready >= 0 || errno == EINTR else { return }
            guard ready > 0 else { continue }
            guard PQconsumeInput(connection) == 1, PQstatus(connection) == CONNECTION_OK else { return }
            var batch: [PostgresNotification] = []
            while let notification = PQnotifies(connection) {
                let entry = notification.pointee
                batch.append(PostgresNotification(channel: entry.relname.map { String(cString: $0) } ?? "",
                                                  payload: entry.extra.map { String(cString: $0) } ?? "",
                                                  backendPID: entry.be_pid))
                PQfreemem(notification)
            }
            if !batch.isEmpty { onEvent(.notifications(batch)) }
        }
    }
}
