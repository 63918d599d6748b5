import Depot
import DepotPostgres
import Foundation
import Testing
import TestSupport

/// TLS against the test server, which scripts/test starts with a certificate
/// for 127.0.0.1 signed by a throwaway authority (DEPOT_POSTGRES_TLS_CA), beside
/// an authority that signed nothing (DEPOT_POSTGRES_TLS_OTHER_CA).
/// Whether the TLS test server's authorities are named.
let tlsAuthoritiesNamed = !(PostgresTestServer.environment["DEPOT_POSTGRES_TLS_CA"] ?? "").isEmpty

@Suite(.serialized, .enabled(if: PostgresTestServer.shouldRun && (tlsAuthoritiesNamed || PostgresTestServer.isCI),
                              "no TLS test server named (set DEPOT_POSTGRES_TLS_CA and DEPOT_POSTGRES_TLS_OTHER_CA, or run scripts/test)"))
struct PostgresTLSTests {
    /// The authority that signed the server's certificate, and one that signed
    /// nothing; an error when they are not named (in CI, where scripts/test names them).
    static func authorities() throws -> (known: String, unknown: String) {
        let environment = PostgresTestServer.environment
        guard let known = environment["DEPOT_POSTGRES_TLS_CA"], let unknown = environment["DEPOT_POSTGRES_TLS_OTHER_CA"],
              !known.isEmpty, !unknown.isEmpty else {
            throw DatabaseError(.misuse, "the TLS tests need DEPOT_POSTGRES_TLS_CA and DEPOT_POSTGRES_TLS_OTHER_CA (scripts/test sets them)")
        }
        return (known, unknown)
    }

    static func configuration(host: String = "127.0.0.1", _ parameters: [String: String]) throws -> PostgresConfiguration {
        var configuration = try PostgresTestServer.requireConfiguration()
        configuration.host = host
        configuration.parameters.merge(parameters) { _, new in new }
        configuration.store.checkoutTimeout = .seconds(20)
        return configuration
    }

    /// Whether the store's own connection runs over TLS, by the server's account of it.
    static func usesTLS(_ store: Store) async throws -> Bool {
        try await store.read { db in try db.fetchOne(Bool.self, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()") } ?? false
    }

    @Test func verifyFullWithTheServersAuthorityConnectsOverTLS() async throws {
        let (known, _) = try Self.authorities()
        let store = try await Store.postgres(try Self.configuration(["sslmode": "verify-full", "sslrootcert": known]))
        #expect(try await Self.usesTLS(store))
        await store.close()
    }

    @Test func aCertificateForAnotherHostNameIsAConnectionErrorThatSaysSo() async throws {
        let (known, _) = try Self.authorities()
        let configuration = try Self.configuration(host: "localhost", ["sslmode": "verify-full", "sslrootcert": known])
        let error = await #expect(throws: DatabaseError.self) { _ = try await Store.postgres(configuration) }
        let text = error.map { "\($0)" } ?? ""
        #expect(error?.kind == .connection)
        #expect(text.contains("does not match host name \"localhost\""), "\(text)")
        #expect(!text.contains(configuration.password ?? "-"))
    }

    @Test func anUnknownAuthorityIsAConnectionErrorThatSaysSo() async throws {
        let (_, unknown) = try Self.authorities()
        let configuration = try Self.configuration(["sslmode": "verify-full", "sslrootcert": unknown])
        let error = await #expect(throws: DatabaseError.self) { _ = try await Store.postgres(configuration) }
        let text = error.map { "\($0)" } ?? ""
        #expect(error?.kind == .connection)
        #expect(text.contains("certificate verify failed"), "\(text)")
        print("an unknown authority:", text)
        #expect(!text.contains(configuration.password ?? "-"))
    }

    @Test func requireEncryptsWithoutVerifying() async throws {
        _ = try Self.authorities()
        let store = try await Store.postgres(try Self.configuration(host: "localhost", ["sslmode": "require"]))
        #expect(try await Self.usesTLS(store))
        await store.close()
    }
}
