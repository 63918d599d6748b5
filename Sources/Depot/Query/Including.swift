/// Records with their related records, loaded in a fixed number of queries
/// whatever the number of records: one for the records, one for the related
/// records of all of them (two through a link table).
///
/// ```swift
/// let lists = try db.fetchAll(RemindersList.all.order { $0.position }
///     .including(all: Reminder.self, by: \.listID) { $0.order { $0.position } })
/// for (list, reminders) in lists { ... }
/// ```
///
/// The related records are selected with `IN (SELECT key FROM ...)` over the
/// first query (its filters and page), so the second query's SQL does not
/// depend on how many records the first found.
public struct IncludingAll<Root: Record & ColumnMapped, Child: Record & ColumnMapped>: Sendable {
    var parents: Query<Root>
    var children: Query<Child>
    /// The child's column that holds its parent's primary key.
    let foreignKey: QueryNode.QueryColumn
}

/// Records each with the one record a column of theirs names (a reminder's
/// list), or nil where it names none; see ``IncludingAll``.
public struct IncludingOptional<Root: Record & ColumnMapped, Other: Record & ColumnMapped>: Sendable {
    var records: Query<Root>
    /// The root's column that holds the other record's primary key.
    let foreignKey: QueryNode.QueryColumn
}

/// Records each with the one record a column of theirs names; records whose
/// column names none are left out (before any limit, so pages stay full).
public struct IncludingRequired<Root: Record & ColumnMapped, Other: Record & ColumnMapped>: Sendable {
    var records: Query<Root>
    let foreignKey: QueryNode.QueryColumn
}

/// Records with the records a link table joins them to (a reminder's tags);
/// see ``IncludingAll``.
public struct IncludingThrough<Root: Record & ColumnMapped, Link: Record & ColumnMapped, Target: Record & ColumnMapped>: Sendable {
    var records: Query<Root>
    var targets: Query<Target>
    /// The link's column that holds the root's primary key.
    let rootKey: QueryNode.QueryColumn
    /// The link's column that holds the target's primary key.
    let targetKey: QueryNode.QueryColumn
}

/// Records with their children, and each child with the records a link table
/// joins it to (a list with its reminders, each with its tags); see ``IncludingAll``.
public struct IncludingAllThrough<Root: Record & ColumnMapped, Child: Record & ColumnMapped, Link: Record & ColumnMapped, Target: Record & ColumnMapped>: Sendable {
    var children: IncludingAll<Root, Child>
    var targets: Query<Target>
    let rootKey: QueryNode.QueryColumn
    let targetKey: QueryNode.QueryColumn
}

extension IncludingAll {
    /// Each child also with the records of `target` that rows of the link table
    /// `link` join it to: four queries in all, whatever the number of records.
    ///
    /// ```swift
    /// let lists = try db.fetchAll(RemindersList.all
    ///     .including(all: Reminder.self, by: \.listID)
    ///     .including(all: Tag.self, through: ReminderTag.self, from: \.reminderID, to: \.tagID))
    /// // [(RemindersList, [(Reminder, [Tag])])]
    /// ```
    public func including<Link, Target, ChildKey: QueryValue, TargetKey: QueryValue>(
        all target: Target.Type, through link: Link.Type,
        from: KeyPath<Link.Columns, QueryExpression<ChildKey>>, to: KeyPath<Link.Columns, QueryExpression<TargetKey>>,
        _ refine: (Query<Target>) -> Query<Target> = { $0 }
    ) -> IncludingAllThrough<Root, Child, Link, Target> {
        IncludingAllThrough(children: self, targets: refine(Query<Target>()),
                            rootKey: Query<Root>.column(Link.columns[keyPath: from]), targetKey: Query<Root>.column(Link.columns[keyPath: to]))
    }
}

extension Query {
    /// Each record with the records of `child` whose `foreignKey` holds its
    /// primary key (a list with its reminders), in `refine`'s order (then by
    /// primary key).
    ///
    /// `refine` may filter and order the children; a limit or an offset there
    /// is a `misuse` error when the query runs, since it would apply to all
    /// parents' children together.
    public func including<Child, Key: QueryValue>(
        all child: Child.Type, by foreignKey: KeyPath<Child.Columns, QueryExpression<Key>>,
        _ refine: (Query<Child>) -> Query<Child> = { $0 }
    ) -> IncludingAll<Root, Child> {
        IncludingAll(parents: self, children: refine(Query<Child>()), foreignKey: Self.column(Child.columns[keyPath: foreignKey]))
    }

    /// Each record with the record of `other` whose primary key its
    /// `foreignKey` holds (a reminder's list), or nil when there is none (the
    /// column is NULL, or names no record).
    public func including<Other, Key: QueryValue>(
        optional other: Other.Type, by foreignKey: KeyPath<Root.Columns, QueryExpression<Key>>
    ) -> IncludingOptional<Root, Other> {
        IncludingOptional(records: self, foreignKey: Self.column(Root.columns[keyPath: foreignKey]))
    }

    /// Each record with the record of `other` whose primary key its
    /// `foreignKey` holds; records without one are left out by the query
    /// itself, so a limit still counts only records that have one.
    public func including<Other, Key: QueryValue>(
        required other: Other.Type, by foreignKey: KeyPath<Root.Columns, QueryExpression<Key>>
    ) -> IncludingRequired<Root, Other> {
        IncludingRequired(records: self, foreignKey: Self.column(Root.columns[keyPath: foreignKey]))
    }

    /// Each record with the records of `target` that rows of the link table
    /// `link` join it to (a reminder with its tags through `remindersTags`):
    /// `from` is the link's column holding this record's key, `to` the one
    /// holding the target's. Targets come in `refine`'s order (then by primary
    /// key); a target linked twice to one record appears once.
    public func including<Link, Target, RootKey: QueryValue, TargetKey: QueryValue>(
        all target: Target.Type, through link: Link.Type,
        from: KeyPath<Link.Columns, QueryExpression<RootKey>>, to: KeyPath<Link.Columns, QueryExpression<TargetKey>>,
        _ refine: (Query<Target>) -> Query<Target> = { $0 }
    ) -> IncludingThrough<Root, Link, Target> {
        IncludingThrough(records: self, targets: refine(Query<Target>()),
                         rootKey: Self.column(Link.columns[keyPath: from]), targetKey: Self.column(Link.columns[keyPath: to]))
    }

    /// The column an expression names; an expression that is no column gives
    /// an empty key, which running the query reports as misuse.
    static func column<V>(_ expression: QueryExpression<V>) -> QueryNode.QueryColumn {
        if case .column(let column) = expression.node.kind { return column }
        return QueryNode.QueryColumn(key: "", source: 0)
    }
}
