#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro Swift cannot import: a destructor value of -1.
static inline sqlite3_destructor_type depot_sqlite_transient(void) {
    return (sqlite3_destructor_type)-1;
}

// sqlite3_db_config is variadic, which Swift cannot call: turn off SQLite's
// "double-quoted string literal" misfeature, so "name" is always an identifier
// (a column that does not exist is an error, as on PostgreSQL, never the text 'name').
static inline int depot_sqlite_disable_double_quoted_strings(sqlite3 *db) {
    int code = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    if (code != SQLITE_OK) return code;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0);
}
