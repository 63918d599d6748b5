import Foundation

/// An edge the thread sanitizer can see where a value crosses threads through
/// a continuation: the work done on a connection's queue before it resumes
/// the awaiting task happens before what that task does after.
///
/// The runtime orders the two (the resume publishes, the await takes), but
/// when the queue resumes the continuation before the task has suspended, the
/// task goes on without a step the sanitizer watches, and it reports a race
/// on every value handed over (swiftlang/swift#57803). In a process built with
/// `--sanitize=thread`, `publish()` and `observe()` tell the sanitizer of the
/// edge (its `__tsan_release` and `__tsan_acquire`, looked up once); in any
/// other they do nothing but test one static value.
final class SanitizerFence: Sendable {
    private typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void
    private struct Hooks: Sendable {
        let acquire: Annotation
        let release: Annotation
    }
    private static let hooks: Hooks? = {
        // RTLD_DEFAULT: the process's own symbols, the sanitizer's runtime among them when it is linked in.
        guard let acquire = dlsym(nil, "__tsan_acquire"), let release = dlsym(nil, "__tsan_release") else { return nil }
        return Hooks(acquire: unsafeBitCast(acquire, to: Annotation.self), release: unsafeBitCast(release, to: Annotation.self))
    }()

    /// After the work, before the resume.
    @inline(__always) func publish() {
        guard let hooks = Self.hooks else { return }
        hooks.release(Unmanaged.passUnretained(self).toOpaque())
    }

    /// After the await returns, before the values handed over are read.
    @inline(__always) func observe() {
        guard let hooks = Self.hooks else { return }
        hooks.acquire(Unmanaged.passUnretained(self).toOpaque())
    }
}
