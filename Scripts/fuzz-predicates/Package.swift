// swift-tools-version: 6.1
// A libFuzzer target for GraphStore's predicate parser, kept out of the main package so that its unsafe flags
// (`-sanitize=fuzzer`) touch nothing else. Build and run it with `Scripts/fuzz-predicates.sh`.
import PackageDescription

let package = Package(
    name: "PredicateFuzzer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Faultline", path: "../..")],
    targets: [
        .executableTarget(
            name: "PredicateFuzzer",
            dependencies: [.product(name: "GraphStore", package: "Faultline")],
            swiftSettings: [.unsafeFlags(["-parse-as-library", "-sanitize=fuzzer,address"])],
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])]
        ),
    ],
    swiftLanguageModes: [.v6]
)
