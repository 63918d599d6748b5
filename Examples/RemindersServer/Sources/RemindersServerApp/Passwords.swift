import Dispatch
import HummingbirdBcrypt

/// Password hashes: bcrypt, cost 10, run on a Dispatch thread (a hash takes
/// tens of milliseconds; the cooperative pool has one thread per core) and
/// never inside a database transaction.
///
/// bcrypt reads at most 72 bytes, so what it hashes is the password's
/// SHA-256 in hex (64 characters): every character of a 200-character
/// password counts, and no NUL byte cuts it short.
enum Passwords {
    static let cost: UInt8 = 10

    /// A hash of a valid password (``Credentials/validate()`` ran), with a new salt.
    static func hash(_ password: String) async -> String {
        await offThePool { Bcrypt.hash(BearerToken.sha256(password), cost: cost) }
    }

    /// Whether the password matches the hash. A nil hash (no such account)
    /// is checked against a decoy, so an unknown name takes as long as a wrong password.
    static func verify(_ password: String, hash: String?) async -> Bool {
        await offThePool {
            let matches = Bcrypt.verify(BearerToken.sha256(password), hash: hash ?? decoy)
            return hash != nil && matches
        }
    }

    /// A hash no password matches that anyone knows.
    private static let decoy = Bcrypt.hash(BearerToken.random().text, cost: cost)

    private static func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: work()) }
        }
    }
}
