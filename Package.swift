// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Faultline",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "GraphStore", targets: ["GraphStore"]),
        .library(name: "ChatFixture", targets: ["ChatFixture"]),
        .executable(name: "faultline", targets: ["faultline"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", exact: "1.6.0"),
    ],
    targets: [
        // MARK: libraries
        .target(
            name: "GraphStore",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Collections", package: "swift-collections"),
                "CZlib",
            ]
        ),
        // The system zlib: Core Data keeps a store's model compressed inside it.
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(
            name: "ChatFixture",
            dependencies: ["GraphStore"],
            // The texts the generator draws from, compiled in: the binary needs no files beside it.
            resources: [.embedInCode("Corpus")]
        ),
        .target(
            name: "Scenarios",
            dependencies: ["GraphStore"]
        ),
        .target(
            name: "Bench",
            dependencies: [
                "GraphStore",
                "ChatFixture",
                "Browser",
                "TerminalText",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),

        // MARK: terminal
        // Text for the screen with no terminal and no locale behind it: frames, styled lines, keys, display widths
        // (from a table generated from glibc's data), control characters, escape sequences.
        .target(
            name: "TerminalText"
        ),
        .systemLibrary(
            name: "CNcursesw",
            providers: [.apt(["libncursesw5-dev"])]
        ),
        .target(
            name: "Terminal",
            dependencies: ["CNcursesw", "TerminalText"]
        ),
        .target(
            name: "Browser",
            dependencies: ["GraphStore", "ChatFixture", "TerminalText"]
        ),

        // MARK: executable
        .executableTarget(
            name: "faultline",
            dependencies: [
                "GraphStore",
                "ChatFixture",
                "Bench",
                "Scenarios",
                "Browser",
                "Terminal",
                "TerminalText",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),

        // MARK: tests
        .testTarget(
            name: "GraphStoreTests",
            dependencies: ["GraphStore", "ChatFixture", "Scenarios", "CZlib", .product(name: "GRDB", package: "GRDB.swift")],
            exclude: ["Models"]
        ),
        .testTarget(
            name: "TerminalTests",
            dependencies: ["Terminal", "TerminalText", "CNcursesw"]
        ),
        .testTarget(
            name: "BrowserTests",
            dependencies: ["Browser", "TerminalText", "GraphStore", "ChatFixture"],
            exclude: ["Snapshots"]
        ),
        .testTarget(
            name: "FaultlineTests",
            dependencies: ["faultline", "GraphStore", "Scenarios", "TerminalText"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
