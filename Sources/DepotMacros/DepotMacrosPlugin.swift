import DepotMacrosImplementation
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// The compiler plugin behind `@Columns`. The macro itself lives in
/// `DepotMacrosImplementation`, a plain library its tests link: a test
/// target that depends on a macro target makes SwiftPM build the whole test
/// product a second time for the host.
@main
struct DepotMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [ColumnsMacro.self]
}

/// `@Columns`, under the name Depot's macro declaration gives the compiler
/// (`DepotMacros.ColumnsMacro`): the plugin finds a macro by its module and type.
public struct ColumnsMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try DepotMacrosImplementation.ColumnsMacro.expansion(of: node, attachedTo: declaration, providingExtensionsOf: type,
                                                             conformingTo: protocols, in: context)
    }
}
