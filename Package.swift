// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "Depot", targets: ["Depot"]),
        .library(name: "DepotSQLite", targets: ["DepotSQLite"]),
        .library(name: "DepotConformance", targets: ["DepotConformance"]),
    ],
    targets: [
        // The engine-independent core. Imports no C.
        .target(name: "Depot", path: "Sources/Depot"),

        // The shared conformance suite: plain Swift, no test framework.
        .target(name: "DepotConformance", dependencies: ["Depot"], path: "Sources/DepotConformance"),

        // Embedded SQLite, linked from the system (Debian: libsqlite3-dev).
        .systemLibrary(
            name: "CSQLite",
            path: "Backends/SQLite/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "DepotSQLite", dependencies: ["Depot", "CSQLite"], path: "Backends/SQLite/Sources"),

        .testTarget(name: "DepotTests", dependencies: ["Depot"], path: "Tests/DepotTests"),
        .testTarget(
            name: "DepotSQLiteTests",
            dependencies: ["Depot", "DepotSQLite", "DepotConformance"],
            path: "Tests/DepotSQLiteTests"
        ),
    ]
)
