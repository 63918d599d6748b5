// swift-tools-version:6.1
import PackageDescription

// Depot's benchmarks, a package of their own so the peer libraries they compare
// against never become dependencies of Depot's users.
let package = Package(
    name: "DepotBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Depot", path: ".."),
        .package(name: "DepotMariaDB", path: "../Backends/MariaDB"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/vapor/postgres-kit", exact: "2.17.0"),
        .package(url: "https://github.com/vapor/sql-kit", exact: "3.36.0"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
    ],
    targets: [
        .systemLibrary(name: "CLibPQBench", path: "CLibPQBench", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMariaDBBench", path: "CMariaDBBench", pkgConfig: "libmariadb", providers: [.apt(["libmariadb-dev"])]),
        .executableTarget(
            name: "DepotBenchmarks",
            dependencies: [
                .product(name: "Depot", package: "Depot"),
                .product(name: "DepotSQLite", package: "Depot"),
                .product(name: "DepotPostgres", package: "Depot"),
                .product(name: "Reminders", package: "Depot"),
                .product(name: "DepotSync", package: "Depot"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "DepotMariaDB", package: "DepotMariaDB"),
                "CLibPQBench",
                "CMariaDBBench",
            ],
            path: "Sources/DepotBenchmarks"
        ),
        .executableTarget(
            name: "RemindersBenchCommand",
            dependencies: [.product(name: "RemindersCLI", package: "Depot")],
            path: "Sources/RemindersBenchCommand"
        ),
    ]
)
