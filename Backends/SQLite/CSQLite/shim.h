#include <sqlite3.h>
#include <stdint.h>

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

// Checked 64-bit integer arithmetic for the query builder, one meaning with
// PostgreSQL's bigint: NULL in, NULL out; an overflow is the error "integer
// overflow" (SQLite's own + - * turn it into a REAL), a zero divisor the error
// "division by zero" (SQLite's own / and % give NULL); division truncates
// toward zero and a remainder takes the dividend's sign, as in Swift and on
// PostgreSQL; INT64_MIN % -1 is 0, as on PostgreSQL.
enum { DEPOT_ADD, DEPOT_SUBTRACT, DEPOT_MULTIPLY, DEPOT_DIVIDE, DEPOT_REMAINDER };

static inline void depot_sqlite_checked(sqlite3_context *context, int argc, sqlite3_value **argv) {
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) {
        sqlite3_result_null(context);
        return;
    }
    if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER || sqlite3_value_type(argv[1]) != SQLITE_INTEGER) {
        sqlite3_result_error(context, "integer arithmetic on a value that is not an integer", -1);
        return;
    }
    sqlite3_int64 x = sqlite3_value_int64(argv[0]), y = sqlite3_value_int64(argv[1]), result = 0;
    int overflow = 0;
    switch ((int)(intptr_t)sqlite3_user_data(context)) {
    case DEPOT_ADD: overflow = __builtin_add_overflow(x, y, &result); break;
    case DEPOT_SUBTRACT: overflow = __builtin_sub_overflow(x, y, &result); break;
    case DEPOT_MULTIPLY: overflow = __builtin_mul_overflow(x, y, &result); break;
    case DEPOT_DIVIDE:
    case DEPOT_REMAINDER:
        if (y == 0) {
            sqlite3_result_error(context, "division by zero", -1);
            return;
        }
        if (y == -1) {
            // x / -1 is -x, which overflows for INT64_MIN; x % -1 is 0.
            if ((int)(intptr_t)sqlite3_user_data(context) == DEPOT_REMAINDER) result = 0;
            else overflow = __builtin_sub_overflow((sqlite3_int64)0, x, &result);
        } else {
            result = (int)(intptr_t)sqlite3_user_data(context) == DEPOT_DIVIDE ? x / y : x % y;
        }
        break;
    }
    if (overflow) {
        sqlite3_result_error(context, "integer overflow", -1);
        return;
    }
    sqlite3_result_int64(context, result);
}

// Registers depot_add, depot_subtract, depot_multiply, depot_divide and
// depot_remainder on a connection.
static inline int depot_sqlite_register_functions(sqlite3 *db) {
    static const char *names[] = {"depot_add", "depot_subtract", "depot_multiply", "depot_divide", "depot_remainder"};
    for (int op = DEPOT_ADD; op <= DEPOT_REMAINDER; op++) {
        int code = sqlite3_create_function_v2(db, names[op], 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                              (void *)(intptr_t)op, depot_sqlite_checked, 0, 0, 0);
        if (code != SQLITE_OK) return code;
    }
    return SQLITE_OK;
}
