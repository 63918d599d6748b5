import RemindersCLI

// `reminders`: the command-line app, embedded SQLite by default, PostgreSQL by
// URL. A backend package adds its own URLs with `RemindersDatabases.register`
// in an executable like this one (see Backends/MariaDB's reminders-mariadb).
await RemindersCommand.start()
