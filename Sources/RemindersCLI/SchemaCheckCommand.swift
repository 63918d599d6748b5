import ArgumentParser
import Depot
import Foundation
import Reminders

/// `reminders schema-check`: the migrations' tables against the model, and
/// against a committed snapshot, on any engine a URL names.
struct SchemaCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema-check",
        abstract: "Migrate a (scratch) database, then check its tables against what the model reads, and against a snapshot file.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "A snapshot of the schema to compare with (one line per table, column and index).") var snapshot: String?
    @Flag(help: "Write the database's schema to the --snapshot file instead of comparing.") var record = false

    func validate() throws {
        if record, snapshot == nil { throw ValidationError("--record writes the --snapshot file: name one") }
    }

    func run() async throws {
        try await running {
            let model = try await options.model()
            var differences = try await model.store.read { db in try RemindersModel.schemaCheck.differences(db) }
            let schema = try await model.store.read { db in try SchemaCheck.snapshot(db) }
            if let snapshot {
                if record {
                    try schema.write(toFile: snapshot, atomically: true, encoding: .utf8)
                } else {
                    let committed: String
                    do {
                        committed = try String(contentsOfFile: snapshot, encoding: .utf8)
                    } catch {
                        throw RemindersError.invalidInput("cannot read the snapshot \(snapshot): \(error.localizedDescription)")
                    }
                    differences += SchemaCheck.differences(snapshot: schema, expected: committed)
                }
            }
            guard differences.isEmpty else {
                for difference in differences { print(difference) }
                throw RemindersError.invalidInput("the schema differs from the model\(snapshot == nil || record ? "" : " or its snapshot") in \(differences.count) \(differences.count == 1 ? "place" : "places")")
            }
            let tables = schema.split(separator: "\n").filter { $0.hasPrefix("table ") }.count
            print("schema check: \(tables) tables match the model\(snapshot.map { record ? "; written to \($0)" : " and \($0)" } ?? "")")
        }
    }
}
