/* A program that leaks through libsqlite3 from one known caller, for the leak view's row naming.
 *   sqlleak
 * remember_names() keeps every string sqlite3_mprintf() returns (never sqlite3_free()d): 20,000 of ~240 bytes at
 * each SIGUSR1, after which it prints "leaked N" (the strings' total length so far). Between bursts it runs queries
 * on an in-memory database, whose allocations sqlite frees again. The allocations go through sqlite's own malloc
 * wrapper, hidden inside Debian's stripped libsqlite3 (only the sqlite3_* API is in its .dynsym). Prints "ready";
 * SIGTERM ends it. */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t bursts, stop;
static void on_usr1(int s) { (void)s; bursts++; }
static void on_term(int s) { (void)s; stop = 1; }

static char **names;
static size_t nnames, cap;
static unsigned long long leaked;

__attribute__((noinline)) static void remember_names(int n)
{
    for (int i = 0; i < n; i++) {
        char *s = sqlite3_mprintf("name-%lld-%0220d", (long long)nnames, i); /* the leak: never sqlite3_free()d */
        if (!s) abort();
        if (nnames == cap) {
            cap = cap ? cap * 2 : 4096;
            if (!(names = realloc(names, cap * sizeof *names))) abort();
        }
        names[nnames++] = s;
        leaked += strlen(s) + 1;
    }
}

__attribute__((noinline)) static void churn(sqlite3 *db)
{
    if (sqlite3_exec(db, "INSERT INTO t SELECT value, printf('%0300d', value) FROM generate_series(1, 200);"
                         "SELECT count(*), sum(length(v)) FROM t; DELETE FROM t;", NULL, NULL, NULL) != SQLITE_OK) {
        /* generate_series is an extension the Debian shell has but the library may not: a recursive CTE */
        sqlite3_exec(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200) "
                         "INSERT INTO t SELECT x, printf('%0300d', x) FROM c; DELETE FROM t;", NULL, NULL, NULL);
    }
}

int main(void)
{
    signal(SIGUSR1, on_usr1);
    signal(SIGTERM, on_term);
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK ||
        sqlite3_exec(db, "CREATE TABLE t(id INTEGER, v TEXT)", NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(db));
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    int done = 0;
    while (!stop) {
        if (done < bursts) {
            remember_names(20000);
            done++;
            printf("leaked %llu\n", leaked);
            fflush(stdout);
        }
        churn(db);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    sqlite3_close(db);
    return 0;
}
