// swift-tools-version:6.1
import PackageDescription

// Depot's MariaDB backend, a plug-in in a package of its own: it uses only
// Depot's public API and its `Driver` SPI, as any outside backend would.
let package = Package(
    name: "DepotMariaDB",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "DepotMariaDB", targets: ["DepotMariaDB"]),
        .library(name: "DepotMariaDBTesting", targets: ["DepotMariaDBTesting"]),
        .executable(name: "depot-conformance-mariadb", targets: ["DepotConformanceMariaDB"]),
        .executable(name: "reminders-mariadb", targets: ["RemindersMariaDB"]),
    ],
    dependencies: [
        .package(name: "Depot", path: "../.."),
    ],
    targets: [
        // MariaDB Connector/C, linked from the system (Debian: libmariadb-dev).
        .systemLibrary(
            name: "CMariaDB",
            path: "Sources/CMariaDB",
            pkgConfig: "libmariadb",
            providers: [.apt(["libmariadb-dev"]), .brew(["mariadb-connector-c"])]
        ),
        .target(
            name: "DepotMariaDB",
            dependencies: [.product(name: "Depot", package: "Depot"), "CMariaDB"]
        ),
        // Scratch databases for tests and conformance runs.
        .target(name: "DepotMariaDBTesting", dependencies: ["DepotMariaDB", .product(name: "Depot", package: "Depot")]),
        // The conformance suite against a MariaDB server you name.
        .executableTarget(
            name: "DepotConformanceMariaDB",
            dependencies: ["DepotMariaDB", "DepotMariaDBTesting", .product(name: "Depot", package: "Depot"),
                           .product(name: "DepotConformance", package: "Depot")]
        ),
        // The reminders command with mariadb:// URLs.
        .executableTarget(
            name: "RemindersMariaDB",
            dependencies: ["DepotMariaDB", .product(name: "Depot", package: "Depot"), .product(name: "RemindersCLI", package: "Depot")]
        ),
        .testTarget(
            name: "DepotMariaDBTests",
            dependencies: [
                "DepotMariaDB",
                "DepotMariaDBTesting",
                .product(name: "Depot", package: "Depot"),
                .product(name: "DepotConformance", package: "Depot"),
                // The differential checks, with SQLite as the reference engine.
                .product(name: "DepotDifferential", package: "Depot"),
                .product(name: "DepotSQLite", package: "Depot"),
                // Sync histories with the server on MariaDB.
                .product(name: "DepotSync", package: "Depot"),
                .product(name: "DepotTesting", package: "Depot"),
            ]
        ),
    ]
)
