// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "Depot", targets: ["Depot"]),
        .library(name: "DepotDriver", targets: ["DepotDriver"]),
        .library(name: "DepotSQLite", targets: ["DepotSQLite"]),
        .library(name: "DepotPostgres", targets: ["DepotPostgres"]),
        .library(name: "DepotConformance", targets: ["DepotConformance"]),
        .library(name: "DepotDifferential", targets: ["DepotDifferential"]),
        .library(name: "DepotLifecycle", targets: ["DepotLifecycle"]),
        .library(name: "DepotSync", targets: ["DepotSync"]),
        .executable(name: "depot-conformance", targets: ["DepotConformanceRunner"]),
        .library(name: "DepotTesting", targets: ["DepotTesting"]),
        .library(name: "DepotPostgresTesting", targets: ["DepotPostgresTesting"]),
        .library(name: "DepotSwiftUI", targets: ["DepotSwiftUI"]),
        .library(name: "Reminders", targets: ["Reminders"]),
        .executable(name: "reminders", targets: ["RemindersCommand"]),
        .library(name: "RemindersCLI", targets: ["RemindersCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        // Logging: the one dependency of the core, the API every Swift server logs through.
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        // Metrics through swift-metrics: connections, waits, statement durations, errors by kind.
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        // Tracing through swift-distributed-tracing: a span per access and per statement.
        .package(url: "https://github.com/apple/swift-distributed-tracing", exact: "1.7.3"),
        // DepotLifecycle only: a store as a service of a server's ServiceGroup.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        // The @Columns macro's compiler plugin.
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1"),
        // DepotDifferential and tests: random values with printed, replayable seeds.
        .package(url: "https://github.com/x-sheep/swift-property-based", exact: "2.0.1"),
    ],
    targets: [
        // The driver SPI: what a backend implements and the values it passes
        // (Value, Row, SQL, errors, dialects, capabilities). Foundation only.
        .target(name: "DepotDriver", path: "Sources/DepotDriver"),

        // The engine-independent core, re-exporting the SPI. Imports no C.
        .target(
            name: "Depot",
            dependencies: [
                "DepotDriver",
                "DepotMacros",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Sources/Depot"
        ),

        // `@Columns`: positional column mappings. The macro is a plain library
        // (its tests link it) behind a thin compiler plugin: a test target that
        // depends on a macro target makes SwiftPM build every test target, and
        // Depot under them, a second time for the host.
        .target(
            name: "DepotMacrosImplementation",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ],
            path: "Sources/DepotMacrosImplementation"
        ),
        .macro(
            name: "DepotMacros",
            dependencies: [
                "DepotMacrosImplementation",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ],
            path: "Sources/DepotMacros"
        ),

        // Sync between stores: hybrid clocks and a merge that converges (the core does not depend on it).
        .target(
            name: "DepotSync",
            dependencies: ["Depot"],
            path: "Sources/DepotSync"
        ),

        // The sync client that the kill tests run and SIGKILL (not a product).
        .executableTarget(
            name: "DepotSyncProbe",
            dependencies: ["Depot", "DepotSQLite", "DepotPostgres", "DepotSync", "Reminders"],
            path: "Sources/DepotSyncProbe"
        ),

        // A store as a swift-service-lifecycle Service: graceful shutdown on SIGTERM.
        .target(
            name: "DepotLifecycle",
            dependencies: ["Depot", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            path: "Sources/DepotLifecycle"
        ),

        // The shared conformance suite: plain Swift, no test framework.
        .target(
            name: "DepotConformance",
            dependencies: [
                "Depot", .product(name: "Logging", package: "swift-log"), .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            path: "Sources/DepotConformance"
        ),

        // Differential checks beside the conformance suite: random queries, values
        // and the reminders scenario on a reference engine and the engine under
        // test, against a model of their meaning.
        .target(
            name: "DepotDifferential",
            dependencies: ["Depot", "DepotSQLite", "DepotSync", "DepotTesting", "Reminders", .product(name: "PropertyBased", package: "swift-property-based")],
            path: "Sources/DepotDifferential"
        ),

        // Embedded SQLite, linked from the system (Debian: libsqlite3-dev).
        .systemLibrary(
            name: "CSQLite",
            path: "Backends/SQLite/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "DepotSQLite", dependencies: ["Depot", "CSQLite"], path: "Backends/SQLite/Sources"),

        // PostgreSQL through the system's libpq (Debian: libpq-dev). A separate
        // product, so SQLite-only users never need libpq.
        .systemLibrary(
            name: "CLibPQ",
            path: "Backends/PostgreSQL/CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(name: "DepotPostgres", dependencies: ["Depot", "CLibPQ"], path: "Backends/PostgreSQL/Sources"),

        // `depot-conformance URL`: the suite against any SQLite path or PostgreSQL server.
        .executableTarget(
            name: "DepotConformanceRunner",
            dependencies: ["Depot", "DepotSQLite", "DepotPostgres", "DepotConformance"],
            path: "Sources/DepotConformanceRunner"
        ),

        // The reminders app's model: lists, reminders, tags, on any engine.
        .target(name: "Reminders", dependencies: ["Depot", "DepotSync", .product(name: "Logging", package: "swift-log")], path: "Sources/Reminders"),

        // `reminders`: the command-line app, embedded SQLite by default, PostgreSQL by
        // URL; its code is a library, so a backend package can ship it with its own URLs.
        .target(
            name: "RemindersCLI",
            dependencies: [
                "Reminders", "DepotSQLite", "DepotPostgres", "DepotSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/RemindersCLI",
            plugins: ["BuildCommit"]
        ),
        .executableTarget(name: "RemindersCommand", dependencies: ["RemindersCLI"], path: "Sources/RemindersCommand"),

        // The git commit a build was made from, for `reminders --version`.
        .plugin(name: "BuildCommit", capability: .buildTool(), path: "Plugins/BuildCommit"),

        // A SwiftUI property wrapper over LiveQuery; empty where SwiftUI does not exist.
        .target(name: "DepotSwiftUI", dependencies: ["Depot"], path: "Sources/DepotSwiftUI"),

        // For users' tests: fresh migrated stores, snapshot tables, seeded
        // randomness, outages staged in front of a real server.
        .target(name: "DepotTesting", dependencies: ["Depot", "DepotSQLite", .product(name: "Logging", package: "swift-log")], path: "Sources/DepotTesting"),
        // The same on PostgreSQL: a fresh schema of a named or throwaway server.
        .target(name: "DepotPostgresTesting", dependencies: ["Depot", "DepotPostgres", "DepotTesting"], path: "Sources/DepotPostgresTesting"),

        // Depot's own tests: DepotTesting and DepotPostgresTesting, re-exported.
        .target(name: "TestSupport", dependencies: ["DepotTesting", "DepotPostgresTesting"], path: "Tests/TestSupport"),

        .testTarget(name: "DepotTests", dependencies: ["Depot", "DepotTesting"], path: "Tests/DepotTests"),
        // The @Columns macro's expansions and refusals.
        .testTarget(
            name: "DepotMacrosTests",
            dependencies: [
                "DepotMacrosImplementation",
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ],
            path: "Tests/DepotMacrosTests"
        ),
        .testTarget(
            name: "DepotSQLiteTests",
            dependencies: [
                "Depot", "DepotSQLite", "DepotConformance", "DepotLifecycle", "TestSupport", "CSQLite",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/DepotSQLiteTests"
        ),
        .testTarget(
            name: "DepotPostgresTests",
            dependencies: ["Depot", "DepotPostgres", "DepotSQLite", "DepotConformance", "TestSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/DepotPostgresTests"
        ),
        // Differential property tests: random values and cells through both engines.
        .testTarget(
            name: "DepotPropertyTests",
            dependencies: [
                "Depot", "DepotSQLite", "DepotPostgres", "DepotConformance", "DepotDifferential", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            path: "Tests/DepotPropertyTests"
        ),
        .testTarget(
            name: "DepotSyncTests",
            dependencies: ["Depot", "DepotSQLite", "DepotPostgres", "DepotSync", "DepotDifferential", "DepotTesting", "Reminders", "TestSupport"],
            path: "Tests/DepotSyncTests"
        ),
        .testTarget(
            name: "RemindersTests",
            dependencies: ["Reminders", "RemindersCLI", "Depot", "DepotSQLite", "DepotPostgres", "DepotDifferential", "TestSupport", "CSQLite"],
            path: "Tests/RemindersTests"
        ),
    ]
)
