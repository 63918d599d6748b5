import Foundation

/// Collects measurements and prints them with each contender's ratio to the raw C baseline.
struct Report {
    let options: Options
    private(set) var groups: [String] = []
    private(set) var scenarios: [String: [String]] = [:]
    private(set) var measurements: [String: [Measurement]] = [:]
    var notes: [String] = []

    init(options: Options) { self.options = options }

    mutating func add(_ group: String, _ scenario: String, _ contender: String, _ isBaseline: Bool, _ seconds: [Double]) {
        if !groups.contains(group) { groups.append(group) }
        let key = group + "|" + scenario
        if !(scenarios[group] ?? []).contains(scenario) { scenarios[group, default: []].append(scenario) }
        measurements[key, default: []].append(Measurement(scenario: scenario, contender: contender, isBaseline: isBaseline, seconds: seconds))
    }

    static func format(_ seconds: Double) -> String {
        seconds >= 1 ? String(format: "%.3f s", seconds) : seconds >= 0.001 ? String(format: "%.2f ms", seconds * 1000) : String(format: "%.1f µs", seconds * 1e6)
    }

    /// What a scenario does once per repetition, counted: the first number its
    /// name gives ("2000 read accesses", "insert 20000 rows"), else every row.
    static func units(_ scenario: String, rows: Int) -> Int {
        let digits = scenario.drop { !$0.isNumber }.prefix { $0.isNumber }
        return Int(digits) ?? rows
    }

    /// Rows (or accesses, or lookups) a second, to three significant figures.
    static func perSecond(_ rate: Double) -> String {
        rate >= 1e6 ? String(format: "%.2fM/s", rate / 1e6) : rate >= 1e3 ? String(format: "%.0fk/s", rate / 1e3) : String(format: "%.0f/s", rate)
    }

    func rows() -> [(group: String, scenario: String, cells: [[String]])] {
        groups.flatMap { group in
            (scenarios[group] ?? []).map { scenario in
                let all = measurements[group + "|" + scenario] ?? []
                let baseline = all.first { $0.isBaseline }?.median
                let units = Self.units(scenario, rows: options.rows)
                let cells = all.map { m -> [String] in
                    [m.contender, Self.format(m.median), "\(Self.format(m.min)) – \(Self.format(m.max))",
                     baseline.map { String(format: "%.2fx", m.median / $0) } ?? "–",
                     m.median > 0 ? Self.perSecond(Double(units) / m.median) : "–"]
                }
                return (group, scenario, cells)
            }
        }
    }

    func print() {
        Swift.print("Depot benchmarks: \(options.rows) rows, \(options.lookups) lookups, median of \(options.repetitions) after a warm-up; ratio to the raw C API in the same run")
        var lastGroup = ""
        for row in rows() {
            if row.group != lastGroup { Swift.print("\n== \(row.group)"); lastGroup = row.group }
            Swift.print("-- \(row.scenario)")
            let widths = (0..<5).map { i in row.cells.map { $0[i].count }.max() ?? 0 }
            for cell in row.cells {
                Swift.print("   " + cell.enumerated().map { i, text in text.padding(toLength: widths[i], withPad: " ", startingAt: 0) }.joined(separator: "   "))
            }
        }
        for note in notes { Swift.print(note) }
    }

    func markdown() -> String {
        var text = ""
        var lastGroup = ""
        for row in rows() {
            if row.group != lastGroup {
                text += "\n### \(row.group)\n\n| scenario | contender | median | min – max | × raw C | per second |\n| --- | --- | ---: | ---: | ---: | ---: |\n"
                lastGroup = row.group
            }
            for (i, cell) in row.cells.enumerated() {
                text += "| \(i == 0 ? row.scenario : "") | \(cell[0]) | \(cell[1]) | \(cell[2]) | \(cell[3]) | \(cell[4]) |\n"
            }
        }
        if !notes.isEmpty { text += "\n" + notes.joined(separator: "\n") + "\n" }
        return text
    }
}
