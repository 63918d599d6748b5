import RemindersCLI

// The `reminders` command, as Sources/RemindersCommand/main.swift makes it,
// built in the benchmarks' release build so `--reminders-command` can run it.
await RemindersCommand.start()
