@testable import Depot
import Foundation
import Testing

/// A connection renders each query shape once; a cached shape is reused only
/// for a query of exactly that shape.
@Suite struct QueryShapeTests {
    @Columns
    struct Item: Record {
        static let tableName = "items"
        var id: Int64
        var title: String
        var rank: Int?
    }

    @Test func aCachedShapeMatchesTheSameStructureWithOtherValuesAndNothingElse() throws {
        let cached = try #require(RenderedShape(Item.where { $0.title.eq("a") && $0.rank > 3 }.order { $0.rank.ascending() }.limit(5), operation: 1, sql: "…", order: nil))
        #expect(cached.matches(Item.where { $0.title.eq("zzz") && $0.rank > 99 }.order { $0.rank.ascending() }.limit(1)))
        let others: [Query<Item>] = [
            Item.where { $0.title.eq("a") && $0.rank >= 3 }.order { $0.rank.ascending() }.limit(5),
            Item.where { $0.title.eq("a") && $0.id > 3 }.order { $0.rank.ascending() }.limit(5),
            Item.where { $0.title.eq("a") || $0.rank > 3 }.order { $0.rank.ascending() }.limit(5),
            Item.where { $0.title.eq("a") && $0.rank > 3 }.order { $0.rank.descending() }.limit(5),
            Item.where { $0.title.eq("a") && $0.rank > 3 }.order { $0.rank.ascending(nulls: .first) }.limit(5),
            Item.where { $0.title.eq("a") && $0.rank > 3 }.order { $0.rank.ascending() },
            Item.where { $0.title.eq("a") && $0.rank > 3 }.order { $0.rank.ascending() }.limit(5).offset(1),
            Item.where { $0.title.eq("a") }.where { $0.rank > 3 }.order { $0.rank.ascending() }.limit(5),
        ]
        for (index, other) in others.enumerated() {
            #expect(!cached.matches(other), "shape \(index) differs from the cached one")
        }
    }

    @Test func anEmptyNeedleIsAnotherShapeAndAnyOtherNeedleIsNot() throws {
        let cached = try #require(RenderedShape(Item.where { $0.title.contains("x") }, operation: 1, sql: "…", order: nil))
        #expect(cached.matches(Item.where { $0.title.contains("something else") }))
        #expect(!cached.matches(Item.where { $0.title.contains("") }))
        #expect(!cached.matches(Item.where { $0.title.contains("x", caseInsensitive: true) }))
    }

    @Test func aColumnOfAnotherNameOrSourceIsAnotherShape() throws {
        let cached = try #require(RenderedShape(Item.where { $0.title.eq("a") }, operation: 1, sql: "…", order: nil))
        #expect(!cached.matches(Item.where { $0.title.eq("a") && $0.title.eq("b") }))
        #expect(!cached.matches(Item.where { $0.rank.eq(3) }))
        #expect(cached.matches(Item.where { $0.title.eq("a much longer title than eight bytes") }))
    }
}
