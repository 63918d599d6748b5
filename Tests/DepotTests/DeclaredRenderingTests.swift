@testable import Depot
import Foundation
import Testing

/// A declared query's rendering puts its values and parameter places in the
/// order the placeholders take them, once; a run only fills the places.
/// Engines with positional `?` placeholders (MariaDB) bind in that order, so a
/// place left in bind order binds a parameter to the wrong placeholder.
struct DeclaredRenderingTests {
    @Test func parametersGoToEveryPlaceholderThatTakesThemInTextOrder() throws {
        // Bind order: a constant, parameter 0, a constant, parameter 1. The text
        // takes parameter 1 first, then the first constant, parameter 0, and parameter 1 again.
        let rendering = DeclaredRendering(
            owner: DeclaredQueryIdentity(), text: "…",
            values: [.text("first constant"), .null, .text("second constant"), .null],
            slots: [(value: 1, parameter: 0), (value: 3, parameter: 1)],
            order: [3, 0, 1, 3])
        var parameters = DeclaredParameters(options: EncodingOptions(), rendering: rendering)
        parameters.place(.integer(10))  // parameter 0
        parameters.place(.integer(11))  // parameter 1
        #expect(parameters.values == [.integer(11), .text("first constant"), .integer(10), .integer(11)])
    }

    @Test func withoutAnOrderTheBindOrderIsTheTextOrder() throws {
        let rendering = DeclaredRendering(
            owner: DeclaredQueryIdentity(), text: "…",
            values: [.null, .bool(true), .null],
            slots: [(value: 0, parameter: 0), (value: 2, parameter: 0)],
            order: nil)
        var parameters = DeclaredParameters(options: EncodingOptions(), rendering: rendering)
        parameters.place(.text("x"))
        #expect(parameters.values == [.text("x"), .bool(true), .text("x")])
    }
}
