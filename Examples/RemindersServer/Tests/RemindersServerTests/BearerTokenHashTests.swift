@testable import RemindersServerApp
import Testing

/// What the server stores of a device token.
@Suite struct BearerTokenHashTests {
    /// A token's stored hash is the SHA-256 of its hex text, as before (the
    /// tokens issued by an earlier build still sign in).
    @Test func aTokensHashIsTheSHA256OfItsHexText() {
        #expect(BearerToken.sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(BearerToken.sha256(String(repeating: "ab", count: 32))
                == "271a413bd339c5709fdceaec41f14f11e9fbfb5042d72d331c65f32b284cd09a")
    }
}
