/*
 * The benchmark's raw baselines (the "raw sqlite3" and "raw libpq" contenders in
 * Sources/DepotBenchmarks) in plain C, as a careful C programmer writes them.
 *   baselines --count SCENARIO [--dates text|native] [--rows N] [--lookups N] [--repetitions R]
 *   SQLite in memory: insert fetch lookup access stream; PostgreSQL ($DEPOT_POSTGRES_URL):
 *   pginsert pgbulk (binary COPY) pgbulktext (text COPY) pgfetch pgaccess
 * As `DepotBenchmarks --count`: set-up, then R repetitions of the loop, so Benchmarks/c-baselines
 * counts (R=3 - R=1) / 2 with callgrind; checks after the loop (an insert read back, a fetch's
 * rows folded) run once whatever R is and cancel out. Prints the Swift `checksum(_:)` fold
 * (Timing.swift) of what it read, and exits 1 unless it is the expected one.
 *   cc -std=c11 -O2 -I$(pg_config --includedir) baselines.c -lsqlite3 -lpq -lm
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The record, as Workload.swift's Item. Strings are pointer + length: owned
 * (malloc'd copies) in generated and fetched items, borrowed (pointing into the
 * driver's row) where a loop only folds a row into the checksum. */
typedef struct {
    int64_t id, priority, listID;
    const char *title, *notes;
    int titleLen, notesLen;
    bool isCompleted, isFlagged, hasPriority, hasDue;
    double dueDate, createdAt; /* seconds since 1970, as Foundation's Date gives them back */
    double score;
} Item;

static void die(const char *what, const char *detail) { fprintf(stderr, "error: %s: %s\n", what, detail ? detail : ""); exit(1); }

/* ---- Dates, exactly as Foundation and HandISO (Workload.swift) do them ---- */

/* Date stores seconds since 2001; Date(timeIntervalSince1970:) subtracts the
 * offset and timeIntervalSince1970 adds it back, which can move the last bit. */
static inline double date1970(double t) { return (t - 978307200.0) + 978307200.0; }

static inline double rounded6(double x) { return round(x * 1e6) / 1e6; }

/* HandISO.micros: the whole seconds and the fraction scaled apart. */
static inline int64_t hand_micros(double t) {
    double whole = floor(t);
    return (int64_t)whole * 1000000 + (int64_t)round((t - whole) * 1000000);
}

/* HandISO.date(micros:) */
static inline double micros_date(int64_t micros) {
    int64_t s = micros / 1000000, f = micros % 1000000;
    if (f < 0) { f += 1000000; s -= 1; }
    return date1970((double)s + (double)f / 1000000);
}
static inline void put_digits(char *p, int64_t v, int width) {
    for (int i = width - 1; i >= 0; i--) { p[i] = (char)('0' + v % 10); v /= 10; }
}

/* HandISO.write: `2026-11-22 02:45:18.123456`, milliseconds always, microseconds
 * when not zeros, no fraction on a whole second. Returns the length (<= 26). */
static int iso_write(double t, char *b) {
    int64_t total = hand_micros(t), sec = total / 1000000, us = total % 1000000;
    if (us < 0) { us += 1000000; sec -= 1; }
    int64_t days = sec / 86400, rest = sec % 86400;
    if (rest < 0) { rest += 86400; days -= 1; }
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097, doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2);
    put_digits(b, y, 4); b[4] = '-'; put_digits(b + 5, m, 2); b[7] = '-'; put_digits(b + 8, d, 2); b[10] = ' ';
    put_digits(b + 11, rest / 3600, 2); b[13] = ':'; put_digits(b + 14, rest / 60 % 60, 2); b[16] = ':';
    put_digits(b + 17, rest % 60, 2);
    if (us == 0) return 19;
    b[19] = '.';
    put_digits(b + 20, us, 6);
    return us % 1000 == 0 ? 23 : 26;
}
static inline int64_t get_digits(const unsigned char *p, int at, int width) {
    int64_t v = 0;
    for (int i = at; i < at + width; i++) v = v * 10 + (p[i] - '0');
    return v;
}

/* HandISO.parse, into seconds since 1970 as a Date would hold them. */
static double iso_parse(const unsigned char *p, int count) {
#define N(at, w) get_digits(p, at, w)
    int64_t y = N(0, 4), m = N(5, 2), d = N(8, 2);
    int64_t yy = m <= 2 ? y - 1 : y, era = (yy >= 0 ? yy : yy - 399) / 400, yoe = yy - era * 400;
    int64_t doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1, doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t seconds = (era * 146097 + doe - 719468) * 86400 + N(11, 2) * 3600 + N(14, 2) * 60 + N(17, 2);
#undef N
    int64_t fraction = 0;
    int digits = 0;
    for (int i = 20; i < count && i < 26 && p[i] >= '0' && p[i] <= '9'; i++, digits++) fraction = fraction * 10 + (p[i] - '0');
    for (; digits < 6; digits++) fraction *= 10;
    return micros_date(seconds * 1000000 + fraction);
}

/* ---- The workload and the checksum ---- */

/* Workload.items: the same LCG, words, padding, dates and nullable pattern. */
static Item *workload(int count) {
    static const char *words[] = {"milk", "report", "call", "review", "garden", "invoice", "flight", "dentist", "groceries", "meeting"};
    uint64_t state = 0x2545F4914F6CDD1DULL;
#define NEXT() (state = state * 6364136223846793005ULL + 1442695040888963407ULL, state >> 33)
    const double base = 1767225600.0; /* 2026-01-01T00:00:00Z */
    Item *items = calloc((size_t)count, sizeof(Item));
    char text[128];
    for (int n = 1; n <= count; n++) {
        Item *it = &items[n - 1];
        const char *w1 = words[NEXT() % 10], *w2 = words[NEXT() % 10];
        char *title = malloc(21), *notes = malloc(61);
        int len = snprintf(text, sizeof text, "%s %s #%d", w1, w2, n); /* padding(toLength:) truncates or pads */
        for (int i = 0; i < 20; i++) title[i] = i < len ? text[i] : '.';
        len = snprintf(text, sizeof text, "Remember the %s for %s; item %d, details follow here", w2, w1, n);
        for (int i = 0; i < 60; i++) notes[i] = i < len ? text[i] : ' ';
        title[20] = notes[60] = 0;
        double micros = (double)(NEXT() % 1000000) / 1000000;
        it->id = n; it->title = title; it->titleLen = 20; it->notes = notes; it->notesLen = 60;
        it->isCompleted = n % 4 == 0; it->isFlagged = n % 7 == 0;
        it->hasPriority = n % 3 != 0;
        if (it->hasPriority) it->priority = (int64_t)(NEXT() % 4);
        it->hasDue = n % 2 != 0;
        if (it->hasDue) it->dueDate = date1970(rounded6(base + (double)(NEXT() % 31536000) + micros));
        it->listID = (int64_t)(1 + NEXT() % 50);
        it->createdAt = date1970(rounded6(base - (double)(NEXT() % 31536000) + micros));
        it->score = (double)(NEXT() % 100000) / 100;
    }
#undef NEXT
    return items;
}
static inline int64_t millis(double t) { int64_t us = (int64_t)round(t * 1000000); return us >= 0 ? us / 1000 : (us - 999) / 1000; }

/* Timing.swift's checksum(_:), wrapping arithmetic. */
static inline uint64_t checksum(const Item *it) {
    uint64_t s = (uint64_t)it->id + (uint64_t)it->listID * 3 + (uint64_t)it->titleLen + (uint64_t)it->notesLen * 5;
    s += (uint64_t)(it->titleLen ? (unsigned char)it->title[it->titleLen - 1] : 0) + (uint64_t)(it->notesLen ? (unsigned char)it->notes[0] : 0);
    s += (uint64_t)it->isCompleted + (it->isFlagged ? 2 : 0) + (uint64_t)(it->hasPriority ? it->priority : -1) * 7;
    s += (uint64_t)(int64_t)(it->score * 100) + (it->hasDue ? 0 : 7);
    s += (uint64_t)(it->hasDue ? millis(it->dueDate) : 0) + (uint64_t)millis(it->createdAt) * 11;
    return s;
}

/* The fetched rows: an array of items owning their two strings. */
typedef struct { Item *items; int count, capacity; } Items;

static inline char *copy(const void *p, int n) { char *c = malloc((size_t)n ? (size_t)n : 1); memcpy(c, p, (size_t)n); return c; }

static void free_items(Items *a) {
    for (int i = 0; i < a->count; i++) { free((void *)a->items[i].title); free((void *)a->items[i].notes); }
    free(a->items);
    *a = (Items){0};
}
static uint64_t fold_items(const Items *a) {
    uint64_t s = 0;
    for (int i = 0; i < a->count; i++) s += checksum(&a->items[i]);
    return s;
}
static bool textDates = true;
static int rows = 10000, lookups = 2000, repetitions = 1;
static Item *items;

/* ---- SQLite: RawSQLite in SQLiteContenders.swift ---- */

static sqlite3 *db;
static sqlite3_stmt *sBegin, *sCommit, *sInsert, *sSelect, *sByID;
#define COLUMNS "id, title, notes, isCompleted, isFlagged, priority, dueDate, listID, createdAt, score"

static sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) die("prepare", sqlite3_errmsg(db));
    return s;
}
static void lite_exec(const char *sql) { if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) die("exec", sqlite3_errmsg(db)); }

/* A statement that returns no rows (BEGIN, COMMIT). */
static inline void run(sqlite3_stmt *s) {
    int code = sqlite3_step(s);
    sqlite3_reset(s);
    if (code != SQLITE_DONE) die("step", sqlite3_errmsg(db));
}

/* open(): the same flags, pragmas, table and five statements prepared once. */
static void lite_open(void) {
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) die("open", NULL);
    lite_exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
    const char *date = textDates ? "TEXT" : "REAL";
    char sql[512];
    snprintf(sql, sizeof sql, "CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL, notes TEXT NOT NULL, isCompleted INTEGER NOT NULL,\n"
             "  isFlagged INTEGER NOT NULL, priority INTEGER, dueDate %s, listID INTEGER NOT NULL, createdAt %s NOT NULL, score REAL NOT NULL)", date, date);
    lite_exec(sql);
    sBegin = prepare("BEGIN"), sCommit = prepare("COMMIT");
    sInsert = prepare("INSERT INTO items (" COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    sSelect = prepare("SELECT " COLUMNS " FROM items");
    sByID = prepare("SELECT " COLUMNS " FROM items WHERE id = ?1");
}
static void lite_close(void) {
    sqlite3_stmt *all[] = {sBegin, sCommit, sInsert, sSelect, sByID};
    for (int i = 0; i < 5; i++) sqlite3_finalize(all[i]);
    sqlite3_close(db);
}

/* A date: NULL, ISO text in one of two reused stack buffers (SQLITE_STATIC: they
 * outlive the step), or REAL seconds. */
static inline void bind_date(sqlite3_stmt *s, int i, bool has, double t, char *buffer) {
    if (!has) sqlite3_bind_null(s, i);
    else if (textDates) sqlite3_bind_text(s, i, buffer, iso_write(t, buffer), SQLITE_STATIC);
    else sqlite3_bind_double(s, i, t);
}

/* insertAll: one transaction, the prepared INSERT stepped per item; text bound in place. */
static void lite_insert(void) {
    char due[32], created[32];
    run(sBegin);
    for (int n = 0; n < rows; n++) {
        const Item *it = &items[n];
        sqlite3_stmt *s = sInsert;
        sqlite3_bind_int64(s, 1, it->id);
        sqlite3_bind_int64(s, 4, it->isCompleted);
        sqlite3_bind_int64(s, 5, it->isFlagged);
        if (it->hasPriority) sqlite3_bind_int64(s, 6, it->priority); else sqlite3_bind_null(s, 6);
        bind_date(s, 7, it->hasDue, it->dueDate, due);
        sqlite3_bind_int64(s, 8, it->listID);
        bind_date(s, 9, true, it->createdAt, created);
        sqlite3_bind_double(s, 10, it->score);
        sqlite3_bind_text(s, 2, it->title, it->titleLen, SQLITE_STATIC);
        sqlite3_bind_text(s, 3, it->notes, it->notesLen, SQLITE_STATIC);
        int code = sqlite3_step(s);
        sqlite3_reset(s);
        if (code != SQLITE_DONE) die("insert", sqlite3_errmsg(db));
    }
    run(sCommit);
}
static inline double read_date(sqlite3_stmt *s, int i, bool *has) {
    switch (sqlite3_column_type(s, i)) {
    case SQLITE_NULL: *has = false; return 0;
    case SQLITE_TEXT: *has = true; return iso_parse(sqlite3_column_text(s, i), sqlite3_column_bytes(s, i));
    default: *has = true; return date1970(sqlite3_column_double(s, i));
    }
}

/* row(): every column decoded; the strings borrowed from SQLite (valid until the next step). */
static inline void lite_row(sqlite3_stmt *s, Item *it) {
    bool hasCreated;
    it->createdAt = read_date(s, 8, &hasCreated);
    if (!hasCreated) die("createdAt is NULL", NULL);
    it->id = sqlite3_column_int64(s, 0);
    it->title = (const char *)sqlite3_column_text(s, 1); it->titleLen = sqlite3_column_bytes(s, 1);
    it->notes = (const char *)sqlite3_column_text(s, 2); it->notesLen = sqlite3_column_bytes(s, 2);
    it->isCompleted = sqlite3_column_int64(s, 3) != 0;
    it->isFlagged = sqlite3_column_int64(s, 4) != 0;
    it->hasPriority = sqlite3_column_type(s, 5) != SQLITE_NULL;
    it->priority = it->hasPriority ? sqlite3_column_int64(s, 5) : 0;
    it->dueDate = read_date(s, 6, &it->hasDue);
    it->listID = sqlite3_column_int64(s, 7);
    it->score = sqlite3_column_double(s, 9);
}

/* fetchAll: every row into a growing array, each keeping malloc'd copies of its two strings. */
static Items lite_fetch(void) {
    Items a = {0};
    run(sBegin);
    while (sqlite3_step(sSelect) == SQLITE_ROW) {
        if (a.count == a.capacity) /* doubling, as a Swift array grows */
            a.items = realloc(a.items, (size_t)(a.capacity = a.capacity ? a.capacity * 2 : 16) * sizeof(Item));
        Item *it = &a.items[a.count++];
        lite_row(sSelect, it);
        it->title = copy(it->title, it->titleLen);
        it->notes = copy(it->notes, it->notesLen);
    }
    sqlite3_reset(sSelect);
    run(sCommit);
    return a;
}

/* One lookup by key, folded straight from SQLite's row: nothing copied. */
static inline uint64_t lite_lookup(int64_t id) {
    uint64_t s = 0;
    sqlite3_bind_int64(sByID, 1, id);
    if (sqlite3_step(sByID) == SQLITE_ROW) { Item it; lite_row(sByID, &it); s = checksum(&it); }
    sqlite3_reset(sByID);
    return s;
}

/* fetchEach: every lookup in one transaction. */
static uint64_t lite_lookups(const int64_t *ids) {
    uint64_t sum = 0;
    run(sBegin);
    for (int i = 0; i < lookups; i++) sum += lite_lookup(ids[i]);
    run(sCommit);
    return sum;
}

/* accessEach: a BEGIN/lookup/COMMIT per key. */
static uint64_t lite_access(const int64_t *ids) {
    uint64_t sum = 0;
    for (int i = 0; i < lookups; i++) { run(sBegin); sum += lite_lookup(ids[i]); run(sCommit); }
    return sum;
}

/* stream: every row folded as it comes, nothing kept. */
static uint64_t lite_stream(void) {
    uint64_t sum = 0;
    Item it;
    run(sBegin);
    while (sqlite3_step(sSelect) == SQLITE_ROW) { lite_row(sSelect, &it); sum += checksum(&it); }
    sqlite3_reset(sSelect);
    run(sCommit);
    return sum;
}

/* ---- PostgreSQL: RawPostgres in PostgresRaw.swift ---- */

static PGconn *pg;
static int statements; /* fresh statement names, as RawPostgres.nextName */
static char *copyBuffer; /* one buffer for every COPY, allocated once */
#define FLUSH_AT (1 << 20)
#define PG_COLUMNS "id, title, notes, \"isCompleted\", \"isFlagged\", priority, \"dueDate\", \"listID\", \"createdAt\", score"
static const char *selectSQL = "SELECT " PG_COLUMNS " FROM items";
static const int64_t pgEpoch = 946684800000000LL; /* 2000-01-01 in microseconds since 1970 */

static void pg_exec(const char *sql) {
    PGresult *r = PQexec(pg, sql);
    ExecStatusType status = PQresultStatus(r);
    PQclear(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) die("exec", PQerrorMessage(pg));
}
static void pg_table(void) {
    char sql[512];
    const char *date = textDates ? "text" : "timestamptz";
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS items;\nCREATE TABLE items (id bigint PRIMARY KEY, title text NOT NULL, notes text NOT NULL, \"isCompleted\" boolean NOT NULL,\n"
             "  \"isFlagged\" boolean NOT NULL, priority bigint, \"dueDate\" %s, \"listID\" bigint NOT NULL, \"createdAt\" %s NOT NULL,\n  score double precision NOT NULL)", date, date);
    pg_exec(sql);
}
static void pg_prepare(char *name, const char *base, const char *sql, int n, const Oid *types) {
    sprintf(name, "%s_%d", base, ++statements);
    PGresult *r = PQprepare(pg, name, sql, n, types);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) die("prepare", PQerrorMessage(pg));
    PQclear(r);
}
static void noticeProcessor(void *arg, const char *message) { (void)arg; (void)message; }

static inline void be64(char *p, uint64_t v) { v = __builtin_bswap64(v); memcpy(p, &v, 8); }
static inline void be32(char *p, uint32_t v) { v = __builtin_bswap32(v); memcpy(p, &v, 4); }
static inline void be16(char *p, uint16_t v) { v = __builtin_bswap16(v); memcpy(p, &v, 2); }
static inline uint64_t get64(const char *p) { uint64_t v; memcpy(&v, p, 8); return __builtin_bswap64(v); }
static inline uint64_t dbits(double d) { uint64_t v; memcpy(&v, &d, 8); return v; }

/* A date for a binary parameter or field: timestamptz microseconds since 2000, or ISO text. */
static inline int pg_date(double t, char *p) {
    if (textDates) return iso_write(t, p);
    be64(p, (uint64_t)(hand_micros(t) - pgEpoch));
    return 8;
}

/* One row's ten binary parameters: fixed-width fields written into one reused
 * buffer, text fields passed in place (libpq copies them into its output buffer). */
static inline void pg_params(const Item *it, char *b, const char *v[10], int l[10]) {
    be64(b, (uint64_t)it->id); v[0] = b; l[0] = 8;
    v[1] = it->title; l[1] = it->titleLen;
    v[2] = it->notes; l[2] = it->notesLen;
    b[8] = it->isCompleted; v[3] = b + 8; l[3] = 1;
    b[9] = it->isFlagged; v[4] = b + 9; l[4] = 1;
    if (it->hasPriority) { be64(b + 16, (uint64_t)it->priority); v[5] = b + 16; l[5] = 8; } else { v[5] = NULL; l[5] = 0; }
    if (it->hasDue) { l[6] = pg_date(it->dueDate, b + 24); v[6] = b + 24; } else { v[6] = NULL; l[6] = 0; }
    be64(b + 64, (uint64_t)it->listID); v[7] = b + 64; l[7] = 8;
    l[8] = pg_date(it->createdAt, b + 72); v[8] = b + 72;
    be64(b + 112, dbits(it->score)); v[9] = b + 112; l[9] = 8;
}

/* insertPerRow: a fresh table, one prepared INSERT executed per row in one transaction. */
static void pg_insert(void) {
    static const int formats[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    Oid date = textDates ? 25 : 1184, types[10] = {20, 25, 25, 16, 16, 20, date, 20, date, 701};
    char name[32], b[128];
    const char *v[10];
    int l[10];
    pg_table();
    pg_prepare(name, "insert", "INSERT INTO items (" PG_COLUMNS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", 10, types);
    pg_exec("BEGIN");
    for (int n = 0; n < rows; n++) {
        pg_params(&items[n], b, v, l);
        PGresult *r = PQexecPrepared(pg, name, 10, v, l, formats, 1);
        bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok) die("insert", PQerrorMessage(pg));
    }
    pg_exec("COMMIT");
}
static void copy_begin(const char *sql) {
    pg_exec("BEGIN");
    PGresult *r = PQexec(pg, sql);
    if (PQresultStatus(r) != PGRES_COPY_IN) die("copy", PQerrorMessage(pg));
    PQclear(r);
}
static void copy_end(size_t used) {
    PQputCopyData(pg, copyBuffer, (int)used);
    PQputCopyEnd(pg, NULL);
    PGresult *r;
    while ((r = PQgetResult(pg))) {
        bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok) die("copy", PQerrorMessage(pg));
    }
    pg_exec("COMMIT");
}

/* insertCopy: binary COPY, each row's fields memcpy'd into the one buffer, sent by the megabyte. */
static void pg_copy_binary(void) {
    char *b = copyBuffer, *p = b;
    memcpy(p, "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0", 19); p += 19; /* signature, flags, extension length */
    copy_begin("COPY items (" PG_COLUMNS ") FROM STDIN (FORMAT binary)");
    for (int n = 0; n < rows; n++) {
        const Item *it = &items[n];
        be16(p, 10); p += 2;
        be32(p, 8); be64(p + 4, (uint64_t)it->id); p += 12;
        be32(p, (uint32_t)it->titleLen); memcpy(p + 4, it->title, (size_t)it->titleLen); p += 4 + it->titleLen;
        be32(p, (uint32_t)it->notesLen); memcpy(p + 4, it->notes, (size_t)it->notesLen); p += 4 + it->notesLen;
        be32(p, 1); p[4] = it->isCompleted; p += 5;
        be32(p, 1); p[4] = it->isFlagged; p += 5;
        if (it->hasPriority) { be32(p, 8); be64(p + 4, (uint64_t)it->priority); p += 12; } else { be32(p, UINT32_MAX); p += 4; }
        if (it->hasDue) { int l = pg_date(it->dueDate, p + 4); be32(p, (uint32_t)l); p += 4 + l; } else { be32(p, UINT32_MAX); p += 4; }
        be32(p, 8); be64(p + 4, (uint64_t)it->listID); p += 12;
        int l = pg_date(it->createdAt, p + 4); be32(p, (uint32_t)l); p += 4 + l;
        be32(p, 8); be64(p + 4, dbits(it->score)); p += 12;
        if (p - b > FLUSH_AT) { PQputCopyData(pg, b, (int)(p - b)); p = b; }
    }
    be16(p, UINT16_MAX); p += 2;
    copy_end((size_t)(p - b));
}

/* The four bytes text COPY escapes. */
static const char escapeOf[256] = {['\\'] = '\\', ['\t'] = 't', ['\n'] = 'n', ['\r'] = 'r'};

/* A text field: scanned for bytes to escape, memcpy'd whole when there are none (always, here). */
static inline char *copy_text(char *p, const char *s, int n) {
    int i = 0;
    while (i < n && !escapeOf[(unsigned char)s[i]]) i++;
    if (i == n) { memcpy(p, s, (size_t)n); return p + n; }
    for (i = 0; i < n; i++) {
        char e = escapeOf[(unsigned char)s[i]];
        if (e) { *p++ = '\\'; *p++ = e; } else *p++ = s[i];
    }
    return p;
}
static inline char *copy_int(char *p, int64_t v) {
    char digits[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do { digits[23 - n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) *p++ = '-';
    memcpy(p, digits + 24 - n, (size_t)n);
    return p + n;
}

/* The shortest of %.15g and %.17g that reads back as the same double. */
static inline char *copy_double(char *p, double d) {
    int n = snprintf(p, 32, "%.15g", d);
    if (strtod(p, NULL) != d) n = snprintf(p, 32, "%.17g", d);
    return p + n;
}
static inline char *copy_date(char *p, double t) {
    p += iso_write(t, p);
    if (!textDates) { memcpy(p, "+00", 3); p += 3; }
    return p;
}

/* insertTextCopy: text COPY (Depot's bulk format), written and escaped by hand into the one buffer. */
static void pg_copy_text(void) {
    char *b = copyBuffer, *p = b;
    copy_begin("COPY items (" PG_COLUMNS ") FROM STDIN");
    for (int n = 0; n < rows; n++) {
        const Item *it = &items[n];
        p = copy_int(p, it->id); *p++ = '\t';
        p = copy_text(p, it->title, it->titleLen); *p++ = '\t';
        p = copy_text(p, it->notes, it->notesLen); *p++ = '\t';
        *p++ = it->isCompleted ? 't' : 'f'; *p++ = '\t';
        *p++ = it->isFlagged ? 't' : 'f'; *p++ = '\t';
        if (it->hasPriority) p = copy_int(p, it->priority); else { *p++ = '\\'; *p++ = 'N'; }
        *p++ = '\t';
        if (it->hasDue) p = copy_date(p, it->dueDate); else { *p++ = '\\'; *p++ = 'N'; }
        *p++ = '\t';
        p = copy_int(p, it->listID); *p++ = '\t';
        p = copy_date(p, it->createdAt); *p++ = '\t';
        p = copy_double(p, it->score); *p++ = '\n';
        if (p - b > FLUSH_AT) { PQputCopyData(pg, b, (int)(p - b)); p = b; }
    }
    copy_end((size_t)(p - b));
}
static inline double pg_read_date(const char *p, int length) {
    if (textDates) return iso_parse((const unsigned char *)p, length);
    return date1970((double)((int64_t)get64(p) + pgEpoch) / 1000000);
}

/* item(result, row): binary fields decoded; PQgetisnull only for the nullable columns;
 * the strings borrowed from the result. */
static inline void pg_row(const PGresult *r, int row, Item *it) {
    it->id = (int64_t)get64(PQgetvalue(r, row, 0));
    it->title = PQgetvalue(r, row, 1); it->titleLen = PQgetlength(r, row, 1);
    it->notes = PQgetvalue(r, row, 2); it->notesLen = PQgetlength(r, row, 2);
    it->isCompleted = *PQgetvalue(r, row, 3) != 0;
    it->isFlagged = *PQgetvalue(r, row, 4) != 0;
    it->hasPriority = !PQgetisnull(r, row, 5);
    it->priority = it->hasPriority ? (int64_t)get64(PQgetvalue(r, row, 5)) : 0;
    it->hasDue = !PQgetisnull(r, row, 6);
    it->dueDate = it->hasDue ? pg_read_date(PQgetvalue(r, row, 6), PQgetlength(r, row, 6)) : 0;
    it->listID = (int64_t)get64(PQgetvalue(r, row, 7));
    it->createdAt = pg_read_date(PQgetvalue(r, row, 8), PQgetlength(r, row, 8));
    uint64_t bits = get64(PQgetvalue(r, row, 9));
    memcpy(&it->score, &bits, 8);
}

/* fetchAll: one binary-format query; an array sized once, each item owning malloc'd copies of its strings. */
static Items pg_fetch(void) {
    PGresult *r = PQexecParams(pg, selectSQL, 0, NULL, NULL, NULL, NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) die("fetch", PQerrorMessage(pg));
    int n = PQntuples(r);
    Items a = {malloc((size_t)(n ? n : 1) * sizeof(Item)), n, n};
    for (int i = 0; i < n; i++) {
        Item *it = &a.items[i];
        pg_row(r, i, it);
        it->title = copy(it->title, it->titleLen);
        it->notes = copy(it->notes, it->notesLen);
    }
    PQclear(r);
    return a;
}

/* fetchEach as PostgresCount's pgaccess runs it: a lookup prepared (fresh name), then one
 * autocommit PQexecPrepared per key, its row folded straight from the result. */
static uint64_t pg_access(const int64_t *ids) {
    static const Oid types[1] = {20};
    char name[32], key[8];
    const char *value = key;
    int length = 8, format = 1;
    uint64_t sum = 0;
    pg_prepare(name, "byid", "SELECT " PG_COLUMNS " FROM items WHERE id = $1", 1, types);
    for (int i = 0; i < lookups; i++) {
        be64(key, (uint64_t)ids[i]);
        PGresult *r = PQexecPrepared(pg, name, 1, &value, &length, &format, 1);
        if (PQresultStatus(r) != PGRES_TUPLES_OK) die("lookup", PQerrorMessage(pg));
        if (PQntuples(r) == 1) { Item it; pg_row(r, 0, &it); sum += checksum(&it); }
        PQclear(r);
    }
    return sum;
}

/* ---- Driver ---- */

int main(int argc, char **argv) {
    const char *scenario = "", *dates = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--count")) scenario = v;
        else if (!strcmp(a, "--dates")) dates = v;
        else if (!strcmp(a, "--rows")) rows = atoi(v);
        else if (!strcmp(a, "--lookups")) lookups = atoi(v);
        else if (!strcmp(a, "--repetitions")) repetitions = atoi(v);
        else die("unknown argument", a);
    }
    static const char *names[] = {"insert", "fetch", "lookup", "access", "stream", "pginsert", "pgbulk", "pgbulktext", "pgfetch", "pgaccess"};
    enum { INSERT, FETCH, LOOKUP, ACCESS, STREAM, PGINSERT, PGBULK, PGBULKTEXT, PGFETCH, PGACCESS, NONE } sc = INSERT;
    while (sc < NONE && strcmp(scenario, names[sc])) sc++;
    if (sc == NONE) die("usage: baselines --count insert|fetch|lookup|access|stream|pginsert|pgbulk|pgbulktext|pgfetch|pgaccess"
                        " [--dates text|native] [--rows N] [--lookups N] [--repetitions R]", scenario);
    if (sc == PGACCESS && lookups > rows) lookups = rows; /* items.prefix(lookups) */
    textDates = dates ? strcmp(dates, "native") != 0 : sc < PGINSERT; /* defaults as the Swift count mode */
    items = workload(rows);
    /* The lookups' keys, as main.swift draws them (SQLite), or the first ids (pgaccess). */
    int64_t *ids = malloc(sizeof(int64_t) * (size_t)(lookups + 1));
    for (int i = 0; i < lookups; i++) ids[i] = sc < PGINSERT ? 1 + (int64_t)(((uint64_t)i * 7919) % (uint64_t)rows) : i + 1;
    uint64_t expected = 0, sum = 0;
    if (sc == LOOKUP || sc == ACCESS || sc == PGACCESS) {
        for (int i = 0; i < lookups; i++) if (ids[i] <= rows) expected += checksum(&items[ids[i] - 1]);
    } else for (int i = 0; i < rows; i++) expected += checksum(&items[i]);
    if (sc == LOOKUP || sc == ACCESS || sc == STREAM || sc == PGACCESS) expected *= (uint64_t)repetitions;
    Items fetched = {0};
    if (sc < PGINSERT) {
        lite_open();
        if (sc != INSERT) lite_insert();
        for (int rep = 0; rep < repetitions; rep++) {
            switch (sc) {
            case INSERT: lite_close(); lite_open(); lite_insert(); break; /* a fresh database each time, as Swift's */
            case FETCH: free_items(&fetched); fetched = lite_fetch(); break;
            case LOOKUP: sum += lite_lookups(ids); break;
            case ACCESS: sum += lite_access(ids); break;
            default: sum += lite_stream();
            }
        }
        /* Checked once, outside what the 3-minus-1 difference counts. */
        if (sc == INSERT) sum = lite_stream();
        if (sc == FETCH) sum = fold_items(&fetched);
        lite_close();
    } else {
        const char *url = getenv("DEPOT_POSTGRES_URL");
        if (!url) die("counting PostgreSQL needs DEPOT_POSTGRES_URL", NULL);
        pg = PQconnectdb(url);
        if (PQstatus(pg) != CONNECTION_OK) die("connect", PQerrorMessage(pg));
        PQsetNoticeProcessor(pg, noticeProcessor, NULL);
        pg_exec("SET TIME ZONE 'UTC'");
        copyBuffer = malloc(FLUSH_AT + 4096); /* a row is at most ~250 bytes past the flush mark */
        pg_table();
        if (sc == PGFETCH || sc == PGACCESS) pg_copy_binary();
        for (int rep = 0; rep < repetitions; rep++) {
            switch (sc) {
            case PGINSERT: pg_insert(); break;
            case PGBULK: pg_table(); pg_copy_binary(); break;
            case PGBULKTEXT: pg_table(); pg_copy_text(); break;
            case PGFETCH: free_items(&fetched); fetched = pg_fetch(); break;
            default: sum += pg_access(ids);
            }
        }
        if (sc != PGACCESS) { /* an insert: the table read back; a fetch: its last rows */
            if (sc != PGFETCH) fetched = pg_fetch();
            sum = fold_items(&fetched);
        }
        PQfinish(pg);
    }
    if (fetched.items && fetched.count != rows) die("fetch", "wrong row count");
    free_items(&fetched);
    printf("checksum %" PRId64 "\n", (int64_t)sum);
    if (sum != expected) { fprintf(stderr, "error: checksum %" PRId64 ", expected %" PRId64 "\n", (int64_t)sum, (int64_t)expected); return 1; }
    return 0;
}
