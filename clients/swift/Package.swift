// swift-tools-version:6.0
// The Swift client SDK on its own, for apps from iOS 15 and macOS 12 on. The repository's root
// package builds the service as well, which needs macOS 15, and SwiftPM sets platforms per
// package, not per target: this package exists for that minimum only. Its sources are the root
// package's Sources/IdentityClient (a symlink), so there is one copy of the code.
import PackageDescription

let package = Package(
    name: "IdentityClient",
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .library(name: "IdentityClient", targets: ["IdentityClient"]),
    ],
    targets: [
        // Foundation only (FoundationNetworking on Linux); CryptoKit and AuthenticationServices
        // where the platform has them.
        .target(name: "IdentityClient", path: "Sources/IdentityClient"),
    ],
    swiftLanguageModes: [.v6]
)
