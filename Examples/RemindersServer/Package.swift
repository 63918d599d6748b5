// swift-tools-version:6.1
import PackageDescription

// An HTTP server on Depot: the reminders model as JSON, on Hummingbird 2. A
// package of its own, so Depot's users never pull Hummingbird or SwiftNIO.
let package = Package(
    name: "RemindersServer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Depot", path: "../.."),
        // The MariaDB backend, a plug-in package: the server serves on it too.
        .package(name: "DepotMariaDB", path: "../../Backends/MariaDB"),
        // Without its default trait ConfigurationSupport: swift-configuration
        // stays out of the build (the server reads its own options).
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        // Sync accounts: bcrypt for passwords (device tokens are hashed by
        // DepotSync's SHA-256: no cryptography package and its BoringSSL).
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", exact: "2.5.0"),
        // The tests' HTTP client: SwiftNIO's HTTP/1.1 codec, which Hummingbird
        // is built on already (not HummingbirdTesting, whose HTTP client
        // brings TLS, HTTP/2 and BoringSSL into the build).
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras", exact: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types", exact: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
    ],
    targets: [
        // The routes, as a library the tests serve on a loopback port.
        .target(
            name: "RemindersServerApp",
            dependencies: [
                .product(name: "Reminders", package: "Depot"),
                .product(name: "DepotSync", package: "Depot"),
                .product(name: "DepotSQLite", package: "Depot"),
                .product(name: "DepotPostgres", package: "Depot"),
                .product(name: "DepotMariaDB", package: "DepotMariaDB"),
                .product(name: "DepotLifecycle", package: "Depot"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "RemindersServer",
            dependencies: ["RemindersServerApp", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The web app's pages with 50,000 reminders, timed over HTTP (run it with -c release).
        .executableTarget(
            name: "RemindersWebBenchmark",
            dependencies: [
                "RemindersServerApp",
                .product(name: "Reminders", package: "Depot"),
                .product(name: "DepotSync", package: "Depot"),
                .product(name: "DepotPostgres", package: "Depot"),
            ]
        ),
        .testTarget(
            name: "RemindersServerTests",
            dependencies: [
                "RemindersServerApp",
                .product(name: "DepotSync", package: "Depot"),
                .product(name: "DepotSQLite", package: "Depot"),
                .product(name: "Reminders", package: "Depot"),
                .product(name: "DepotTesting", package: "Depot"),
                .product(name: "DepotMariaDB", package: "DepotMariaDB"),
                .product(name: "DepotMariaDBTesting", package: "DepotMariaDB"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ]
        ),
    ]
)
