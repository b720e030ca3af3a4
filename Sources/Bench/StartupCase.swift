import Foundation
import GraphStore

/// `startup`: a cold start of `faultline trace` to its first screen, against `sqlite3` running the same query.
final class StartupCase {
    let quick: Bool
    let executable: String?
    let store: () throws -> ChatListStore

    init(quick: Bool, executable: String?, store: @escaping () throws -> ChatListStore) {
        self.quick = quick
        self.executable = executable
        self.store = store
    }

    func prepare() throws -> PreparedCase {
        throw BenchmarkError("startup is not built yet")
    }
}
