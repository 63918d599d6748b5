import Depot
import DepotMariaDB
import RemindersCLI

// reminders-mariadb: the `reminders` command, with mariadb:// URLs beside SQLite
// files and postgres:// URLs: `reminders-mariadb demo --database mariadb://user:password@host:3306/db`.
RemindersDatabases.register(
    scheme: "mariadb",
    open: { url in try await Store.mariadb(MariaDBConfiguration(url: url)) },
    redact: { url in (try? MariaDBConfiguration(url: url)).map { "\($0)" } ?? "mariadb://…" }
)
await RemindersCommand.start()
