import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Columns`: a struct's positional column mapping, generated from its stored
/// properties (or its `CodingKeys`) so that it means what synthesized `Codable` means.
public struct ColumnsMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            throw DiagnosticsError(diagnostics: [Diagnostic(node: node, message: ColumnsDiagnostic.notAStruct)])
        }
        let properties = try ColumnProperties(structDecl)
        let access = accessModifier(of: structDecl)
        let keys = properties.mapped.map { "\"\($0.key)\"" }.joined(separator: ", ")
        // Every column is read into a local, and the value is made from them
        // in one call to an initializer that cannot throw. Stored into `self`
        // one by one in the throwing initializer, a value of many properties
        // was built in memory and copied out of it on return (a retain and
        // release of every reference it holds, on every row).
        let mapped = Array(properties.mapped.enumerated())
        let reads = mapped.map { "    let read\($0.offset) = try columns.decode(\($0.element.typeExpression).self)" }
            + (mapped.isEmpty ? [] : ["    self.init(depotColumnValues: (\(mapped.map { "read\($0.offset)" }.joined(separator: ", "))))"])
        // One value is no tuple: it is used as itself.
        let valuesType = mapped.count == 1 ? mapped[0].element.typeExpression : "(\(mapped.map(\.element.typeExpression).joined(separator: ", ")))"
        let valueAssignments = mapped.map { "    self.\($0.element.name) = values\(mapped.count == 1 ? "" : ".\($0.offset)")" }
        let valuesInitializer = mapped.isEmpty ? "" : """
            /// The value made from its columns' values, in `columnKeys` order.
            private init(depotColumnValues values: \(valuesType)) {
            \(valueAssignments.joined(separator: "\n"))
            }
            """
        let writes = properties.mapped.map { "    try columns.encode(self.\($0.name))" }
        let conformance = protocols.isEmpty ? "" : ": Depot.ColumnMapped"
        let columns = properties.mapped.map { "    \(access)let \($0.name): Depot.QueryExpression<\($0.typeExpression)>" }
        let assignments = properties.mapped.map { "        \($0.name) = .init(column: \"\($0.key)\", source: source)" }
        let source: DeclSyntax = """
            extension \(type.trimmed)\(raw: conformance) {
            \(raw: access)struct Columns: Depot.QueryColumns {
            \(raw: columns.joined(separator: "\n"))
                \(raw: access)init(source: Depot.QuerySource) {
            \(raw: assignments.joined(separator: "\n"))
                }
            }
            \(raw: access)static var columnKeys: [String] { [\(raw: keys)] }
            \(raw: access)init(columns: inout Depot.ColumnReader) throws {
            \(raw: reads.joined(separator: "\n"))
            }
            \(raw: valuesInitializer)
            \(raw: access)func encode(columns: inout Depot.ColumnWriter) throws {
            \(raw: writes.joined(separator: "\n"))
            }
            }
            """
        guard let ext = source.as(ExtensionDeclSyntax.self) else { return [] }
        return [ext]
    }

    /// `public ` or `package ` when the struct is; the members must be as visible as the conformance.
    private static func accessModifier(of decl: StructDeclSyntax) -> String {
        for modifier in decl.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }
}

/// One stored property the mapping reads and writes.
struct ColumnProperty {
    let name: String
    let key: String
    let type: TypeSyntax

    /// The type as an expression before `.self`: `(any P)`, `Optional<T>` for `T!`.
    var typeExpression: String {
        if let iuo = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return "Optional<\(iuo.wrappedType.trimmedDescription)>"
        }
        if type.is(SomeOrAnyTypeSyntax.self) || type.is(FunctionTypeSyntax.self) {
            return "(\(type.trimmedDescription))"
        }
        return type.trimmedDescription
    }
}

/// The stored properties of a struct, in declaration order, with their coding keys.
struct ColumnProperties {
    var mapped: [ColumnProperty] = []

    init(_ decl: StructDeclSyntax) throws {
        var diagnostics: [Diagnostic] = []
        var codingKeys: [String: String]?
        for member in decl.memberBlock.members {
            if let function = member.decl.as(FunctionDeclSyntax.self), function.name.text == "encode",
               function.signature.parameterClause.parameters.first?.firstName.text == "to" {
                diagnostics.append(Diagnostic(node: function, message: ColumnsDiagnostic.customCodable))
            }
            if let initializer = member.decl.as(InitializerDeclSyntax.self),
               initializer.signature.parameterClause.parameters.first?.firstName.text == "from" {
                diagnostics.append(Diagnostic(node: initializer, message: ColumnsDiagnostic.customCodable))
            }
            if let keysEnum = member.decl.as(EnumDeclSyntax.self), keysEnum.name.text == "CodingKeys" {
                codingKeys = Self.keys(of: keysEnum)
            }
        }
        for member in decl.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            if variable.modifiers.contains(where: { [.keyword(.static), .keyword(.class), .keyword(.lazy)].contains($0.name.tokenKind) }) {
                continue
            }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            let bindings = Array(variable.bindings)
            for (offset, binding) in bindings.enumerated() {
                if let accessors = binding.accessorBlock, !Self.isObserversOnly(accessors) { continue }
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
                let name = pattern.identifier.trimmedDescription.filter { $0 != "`" }
                let key: String
                if let codingKeys {
                    guard let explicit = codingKeys[name] else { continue }
                    key = explicit
                } else {
                    key = name
                }
                if isLet, binding.initializer != nil {
                    diagnostics.append(Diagnostic(node: binding, message: ColumnsDiagnostic.letWithValue(name)))
                    continue
                }
                // `var a, b: Int`: the annotation of a later binding applies to the earlier ones.
                guard let annotation = bindings[offset...].lazy.compactMap(\.typeAnnotation).first else {
                    diagnostics.append(Diagnostic(node: binding, message: ColumnsDiagnostic.needsType(name)))
                    continue
                }
                mapped.append(ColumnProperty(name: pattern.identifier.trimmedDescription, key: key, type: annotation.type))
            }
        }
        if !diagnostics.isEmpty { throw DiagnosticsError(diagnostics: diagnostics) }
    }

    /// `case id, title = "name"` gives `["id": "id", "title": "name"]`.
    private static func keys(of keysEnum: EnumDeclSyntax) -> [String: String] {
        var keys: [String: String] = [:]
        for member in keysEnum.memberBlock.members {
            guard let cases = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
            for element in cases.elements {
                let name = element.name.text.filter { $0 != "`" }
                if let literal = element.rawValue?.value.as(StringLiteralExprSyntax.self),
                   let text = literal.representedLiteralValue {
                    keys[name] = text
                } else {
                    keys[name] = name
                }
            }
        }
        return keys
    }

    private static func isObserversOnly(_ block: AccessorBlockSyntax) -> Bool {
        guard case .accessors(let accessors) = block.accessors else { return false }
        return accessors.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }
}

enum ColumnsDiagnostic: DiagnosticMessage {
    case notAStruct
    case customCodable
    case letWithValue(String)
    case needsType(String)

    var message: String {
        switch self {
        case .notAStruct:
            return "@Columns applies to a struct"
        case .customCodable:
            return "@Columns cannot follow a hand-written init(from:) or encode(to:); remove @Columns to keep this Codable conformance"
        case .letWithValue(let name):
            return "'\(name)' is a let with an initial value, which Codable writes but never reads; make it a var, or leave it out of CodingKeys"
        case .needsType(let name):
            return "'\(name)' needs a type annotation for @Columns to read it"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "DepotMacros", id: "\(self)") }
    var severity: DiagnosticSeverity { .error }
}
