import Foundation
import Reminders

/// The web app's pages, as markup: server-rendered, usable without
/// JavaScript (every action is a form), labelled for screen readers, one
/// column that fits a phone. `app.js` only refreshes `<main>` when the data
/// changes elsewhere.
enum WebPages {
    /// A whole page around `main`.
    static func page(title: String, session: WebSession?, live: String? = nil, _ main: HTML) -> HTML {
        let account: HTML? = session.map { session in
            """
            <nav aria-label="Account"><span class="who">\(session.name)</span>
            <form method="post" action="/web/sign-out">\(csrfField(session))<button type="submit">Sign out</button></form></nav>
            """
        }
        let liveAttribute: HTML? = live.map { "data-live=\"\($0)\"" }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · Reminders</title><link rel="stylesheet" href="/web/app.css"><script type="module" src="/web/app.js"></script></head>
            <body><header><a class="home" href="/web">Reminders</a>\(account)</header>
            <main id="main" \(liveAttribute)>\(main)</main></body></html>
            """
    }

    static func csrfField(_ session: WebSession) -> HTML {
        "<input type=\"hidden\" name=\"csrf\" value=\"\(session.csrf)\">"
    }

    /// A line that says what went wrong, read out when it appears.
    static func problem(_ message: String?) -> HTML? {
        message.map { "<p class=\"problem\" role=\"alert\">\($0)</p>" }
    }

    /// The sign-in or sign-up form.
    static func signIn(signUp: Bool, name: String = "", problem message: String? = nil) -> HTML {
        let (heading, action, button, other): (String, String, String, HTML) = signUp
            ? ("Create an account", "/web/sign-up", "Create account", "<p>Have an account? <a href=\"/web/sign-in\">Sign in</a></p>")
            : ("Sign in", "/web/sign-in", "Sign in", "<p>New here? <a href=\"/web/sign-up\">Create an account</a></p>")
        return page(title: heading, session: nil, """
            <h1>\(heading)</h1>\(problem(message))
            <form method="post" action="\(action)" class="stack">
            <label for="name">Name</label><input id="name" name="name" autocomplete="username" required value="\(name)">
            <label for="password">Password</label><input id="password" name="password" type="password" required
              autocomplete="\(signUp ? "new-password" : "current-password")" minlength="\(signUp ? 8 : 1)">
            <button type="submit">\(button)</button></form>\(other)
            """)
    }

    /// A page for a failure: its status's words and the one-line message.
    static func failure(_ error: ServerError, session: WebSession?) -> HTML {
        page(title: error.status.reasonPhrase, session: session, """
            <h1>\(error.status.reasonPhrase)</h1><p role="alert">\(error.message)</p><p><a href="/web">Back to the lists</a></p>
            """)
    }

    /// A list's colour (stored as 0xRRGGBBAA) as CSS.
    static func color(_ value: Int64) -> String {
        let rgb = (UInt64(bitPattern: value) >> 8) & 0xFF_FFFF
        let hex = String(rgb, radix: 16)
        return "#" + String(repeating: "0", count: 6 - hex.count) + hex
    }
}
