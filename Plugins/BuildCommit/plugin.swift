import Foundation
import PackagePlugin

/// Writes `BuildCommit.swift` (`let buildCommit = "…"`) for the target that
/// uses it: the package's git commit, with `-modified` when tracked files have
/// changes, or `unknown` outside a git checkout. The file is rewritten only
/// when the commit changes, so an unchanged tree builds nothing again.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("BuildCommit")
        let file = output.appendingPathComponent("BuildCommit.swift").path
        let package = context.package.directoryURL.path
        let script = """
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
            if [ "$commit" != unknown ] && [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null | head -n 1)" ]; then
              commit="$commit-modified"
            fi
            mkdir -p "$(dirname "$2")"
            line="let buildCommit = \\"$commit\\""
            [ -f "$2" ] && [ "$(cat "$2")" = "$line" ] || printf '%s\\n' "$line" > "$2"
            """
        return [.prebuildCommand(displayName: "Stamping the git commit", executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: ["-c", script, "build-commit", package, file], outputFilesDirectory: output)]
    }
}
