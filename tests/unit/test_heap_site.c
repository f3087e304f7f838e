/* Which frame names an allocation site's row: the built-in wrappers, a stripped allocator library's own frames, the
 * user's drop_frames regex (whole names, cut from the outermost frame inward, as pprof's -drop_frames). */
#include "check.h"
#include "actions/runtimes/heap_site.h"

#define F(fn, mod) {fn, mod, 0}
#define LIB(fn, mod) {fn, mod, 1}
#define PICK(d, ...)                                                                                                 \
    heap_site_pick(d, (const struct heap_site_frame[]){__VA_ARGS__},                                                 \
                   sizeof((const struct heap_site_frame[]){__VA_ARGS__}) / sizeof(struct heap_site_frame))

static void stripped_sqlite_goes_to_its_caller(void)
{
    /* Debian's libsqlite3: sqlite3MemMalloc hidden (an offset), internals exported, then the API, then the caller */
    int i = PICK(NULL, LIB("libsqlite3.so.0.8.6+0xa7504", "libsqlite3.so.0.8.6"),
                 F("sqlite3Malloc", "libsqlite3.so.0.8.6"), F("sqlite3StrAccumEnlarge", "libsqlite3.so.0.8.6"),
                 F("libsqlite3.so.0.8.6+0xbe1e1", "libsqlite3.so.0.8.6"), F("sqlite3_mprintf", "libsqlite3.so.0.8.6"),
                 F("remember_names", "sqlleak"), F("main", "sqlleak"), F("_start", "sqlleak"));
    CHECK_INT(i, 5);
}

static void a_library_that_is_no_allocator_keeps_its_frame(void)
{
    /* libfoo exports no allocator entry point: its function is the site (fopen inside libc, say) */
    CHECK_INT(PICK(NULL, F("foo_open", "libfoo.so"), F("foo_helper", "libfoo.so"), F("main", "prog")), 0);
    CHECK_INT(PICK(NULL, F("libfoo.so+0x10", "libfoo.so"), F("main", "prog")), 0);
}

static void named_wrappers_are_dropped_whole(void)
{
    /* sqlite with symbols, in a program linking it statically: the names, not the library, say it */
    CHECK_INT(PICK(NULL, F("sqlite3MemMalloc", "prog"), F("mallocWithAlarm", "prog"), F("sqlite3Malloc", "prog"),
                   F("sqlite3DbMallocRawNN", "prog"), F("sqlite3VdbeCreate", "prog"), F("main", "prog")),
              4);
    CHECK_INT(PICK(NULL, F("g_malloc0", "libglib-2.0.so.0"), F("make_thing", "prog"), F("main", "prog")), 1);
    CHECK_INT(PICK(NULL, F("xmalloc", "prog"), F("xstrdup", "prog"), F("parse", "prog")), 2);
    CHECK_INT(PICK(NULL, F("operator new(unsigned long)", "libstdc++.so.6"), F("grow", "prog")), 1);
    CHECK_INT(PICK(NULL, F("_Znam", "libstdc++.so.6"), F("grow", "prog")), 1);
    CHECK_INT(PICK(NULL, F("PyMem_Malloc", "python3"), F("list_resize", "python3"), F("main", "python3")), 1);
    CHECK_INT(PICK(NULL, F("malloc", "libdiagtop-agent.so"), F("hook_helper", "libdiagtop-agent.so"),
                   F("leak_block", "prog")),
              2);
}

static void names_must_match_whole(void)
{
    CHECK(heap_drop_matches(NULL, "g_malloc_n"));
    CHECK(!heap_drop_matches(NULL, "my_g_malloc"));
    CHECK(!heap_drop_matches(NULL, "xmalloc_stats"));
    CHECK(!heap_drop_matches(NULL, NULL));
}

static void the_users_regex(void)
{
    struct heap_drop d;
    char err[256];
    CHECK_INT(heap_drop_init(&d, "my_alloc|pool_.*", err, sizeof err), 0);
    CHECK(heap_drop_matches(&d, "my_alloc"));
    CHECK(heap_drop_matches(&d, "pool_get"));
    CHECK(!heap_drop_matches(&d, "my_alloc2")); /* anchored: the whole name */
    CHECK(!heap_drop_matches(&d, "a_pool_get"));
    CHECK_INT(PICK(&d, F("pool_grow", "prog"), F("pool_get", "prog"), F("handler", "prog"), F("main", "prog")), 2);
    /* a dropped frame far out cuts there, as pprof does: the frame that calls it */
    CHECK_INT(PICK(&d, F("leaf", "prog"), F("my_alloc", "prog"), F("a", "prog"), F("pool_run", "prog"),
                   F("main", "prog")),
              4);
    /* dropped frames at the root are not a cut: nothing above them is kept */
    CHECK_INT(PICK(&d, F("leaf", "prog"), F("pool_run", "prog")), 0);
    /* all dropped: the innermost stays */
    CHECK_INT(PICK(&d, F("my_alloc", "prog"), F("pool_run", "prog")), 0);
    heap_drop_free(&d);
    CHECK_INT(heap_drop_init(&d, "a(", err, sizeof err), -22);
    CHECK(strstr(err, "not an extended regular expression") != NULL);
    CHECK_INT(heap_drop_init(&d, "", err, sizeof err), 0);
    CHECK(!d.has_regex);
    heap_drop_free(&d);
}

int main(void)
{
    check_suite = "heap_site";
    RUN(stripped_sqlite_goes_to_its_caller);
    RUN(a_library_that_is_no_allocator_keeps_its_frame);
    RUN(named_wrappers_are_dropped_whole);
    RUN(names_must_match_whole);
    RUN(the_users_regex);
    CHECK_EXIT();
}
