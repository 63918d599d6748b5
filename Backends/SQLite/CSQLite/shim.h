#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro Swift cannot import: a destructor value of -1.
static inline sqlite3_destructor_type depot_sqlite_transient(void) {
    return (sqlite3_destructor_type)-1;
}
