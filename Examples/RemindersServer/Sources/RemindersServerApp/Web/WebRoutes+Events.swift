import Depot
import DepotSync
import Foundation
import HummingbirdCore
import Hummingbird
import NIOCore
import ServiceLifecycle

/// A page that updates itself: what `/web/events` watches, named by its
/// query (`?list=<id>&from=<n>`, `?smart=<name>`, `?tag=<id>`, or nothing for the home page).
enum WebPage: Sendable, Equatable {
    case home
    case list(UUID, offset: Int)
    case smart(WebData.SmartList)
    case tag(UUID)

    init(_ query: FlatDictionary<Substring, Substring>) {
        if let list = query.get("list").flatMap(UUID.init(uuidString:)) {
            self = .list(list, offset: (try? Self.offset(query)) ?? 0)
        } else if let smart = query.get("smart").flatMap(WebData.SmartList.init(rawValue:)) {
            self = .smart(smart)
        } else if let tag = query.get("tag").flatMap(UUID.init(uuidString:)) {
            self = .tag(tag)
        } else {
            self = .home
        }
    }

    /// Where a page of a long list starts (`from=<n>`, 0 to a billion; 0
    /// without it); 404 for anything else.
    static func offset(_ query: FlatDictionary<Substring, Substring>) throws -> Int {
        guard let text = query.get("from") else { return 0 }
        guard let offset = Int(text), (0...1_000_000_000).contains(offset) else { throw WebData.notFound }
        return offset
    }

    /// The address of this page's events.
    var events: String {
        switch self {
        case .home: "/web/events"
        case .list(let id, let offset): "/web/events?list=\(WebData.key(id))" + (offset > 0 ? "&from=\(offset)" : "")
        case .smart(let smart): "/web/events?smart=\(smart.rawValue)"
        case .tag(let id): "/web/events?tag=\(WebData.key(id))"
        }
    }
}

extension RemindersRoutes {
    /// Server-sent events for an open page: `change` whenever what the page
    /// shows changed (from this page, another browser, a device's sync, or any
    /// other writer on the database: Depot's observation hears each commit), and
    /// a comment every 15 seconds, so that a page gone is noticed and its
    /// stream ends.
    static func events(_ session: WebSession, _ page: WebPage, _ sync: SyncEndpoints) -> Response {
        let (store, account) = (sync.server.store, session.account)
        // What the page shows: equal data, nothing to tell.
        let observed: Observation<WebData.Shown> = store.observe { db in try WebData.shown(db, account, page) }.removeDuplicates()
        let body = ResponseBody { writer in
            let (signals, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(8))
            let watching = Task {
                var first = true
                do {
                    for try await _ in observed {
                        if first { first = false; continue }
                        continuation.yield("event: change\ndata: \n\n")
                    }
                } catch {}
                continuation.finish()
            }
            let beating = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(15))
                    continuation.yield(": still here\n\n")
                }
            }
            defer { watching.cancel(); beating.cancel() }
            try await writer.write(ByteBuffer(string: "retry: 1000\n: listening\n\n"))
            // A server shutting down ends the stream (the page connects again, to another instance or later):
            // it would otherwise wait for every open page to go away.
            try await withGracefulShutdownHandler {
                for await signal in signals {
                    try await writer.write(ByteBuffer(string: signal))
                }
            } onGracefulShutdown: {
                continuation.finish()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }

}
