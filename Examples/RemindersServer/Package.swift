// swift-tools-version:6.1
import PackageDescription

// An HTTP server on Depot: the reminders model as JSON, on Hummingbird 2. A
// package of its own, so Depot's users never pull Hummingbird or SwiftNIO.
let package = Package(
    name: "RemindersServer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Depot", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
    ],
    targets: [
        // The routes, as a library so the tests can run them without a socket.
        .target(
            name: "RemindersServerApp",
            dependencies: [
                .product(name: "Reminders", package: "Depot"),
                .product(name: "DepotSQLite", package: "Depot"),
                .product(name: "DepotPostgres", package: "Depot"),
                .product(name: "DepotLifecycle", package: "Depot"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .executableTarget(
            name: "RemindersServer",
            dependencies: ["RemindersServerApp", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(
            name: "RemindersServerTests",
            dependencies: [
                "RemindersServerApp",
                .product(name: "DepotTesting", package: "Depot"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ]
)
