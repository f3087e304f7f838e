/* Columns, sorting, filtering and the tree on synthetic rows; settings round trip; growth. */
#include <sys/stat.h>
#include <unistd.h>

#include "app/config_file.h"
#include "model/settings.h"
#include "check.h"
#include "collect/growth.h"
#include "render/columns.h"
#include "render/procview.h"
#include "render/table_text.h"

static struct proc_row make_row(int pid, int ppid, double cpu, unsigned long long rss, const char *comm,
                                const char *cmdline, size_t cmdlen)
{
    struct proc_row r;
    memset(&r, 0, sizeof r);
    r.pid = r.tgid = pid;
    r.ppid = ppid;
    r.cpu_percent = cpu;
    r.rss_bytes = rss;
    r.uid_known = 1;
    r.uid = (uid_t)(pid % 2 ? 0 : 1000);
    r.state = 'S';
    snprintf(r.comm, sizeof r.comm, "%s", comm);
    r.cmdline = cmdline;
    r.cmdline_len = cmdlen;
    r.shared_bytes = -1;
    return r;
}

struct fixture_rows {
    struct proc_row r[5];
    struct proc_row *p[5];
};

static void rows_init(struct fixture_rows *f)
{
    static const char c1[] = "/sbin/init\0splash", c10[] = "/usr/bin/python3\0-m\0http.server",
                      c11[] = "./sleeper\0with space\0caf\xc3\xa9\0\033[31mred", c12[] = "/bin/bash";
    f->r[0] = make_row(1, 0, 0.0, 1000, "init", c1, sizeof c1 - 1);
    f->r[1] = make_row(10, 1, 50.0, 5000, "python3", c10, sizeof c10 - 1);
    f->r[2] = make_row(11, 10, 99.0, 100, "sleeper", c11, sizeof c11 - 1);
    f->r[3] = make_row(12, 1, 1.0, 90000, "bash", c12, sizeof c12 - 1);
    f->r[4] = make_row(2, 0, 0.0, 0, "kthreadd", NULL, 0);
    f->r[4].is_kernel = 1;
    for (int i = 0; i < 5; i++) f->p[i] = &f->r[i];
}

static struct column_ctx ctx_make(void) { return (struct column_ctx){users_new(), 100}; }

static void sort_by_cpu_and_memory(void)
{
    struct fixture_rows f;
    rows_init(&f);
    struct column_ctx ctx = ctx_make();
    struct procview v = {0};
    struct procview_opts o = {.sort = COL_CPU};
    CHECK_INT(procview_build(&v, f.p, 5, &o, &ctx), 0);
    CHECK_INT(v.n, 5);
    CHECK_INT(v.rows[0].row->pid, 11);
    CHECK_INT(v.rows[1].row->pid, 10);
    o.sort = COL_RES;
    procview_build(&v, f.p, 5, &o, &ctx);
    CHECK_INT(v.rows[0].row->pid, 12);
    o.reverse = 1;
    procview_build(&v, f.p, 5, &o, &ctx);
    CHECK_INT(v.rows[0].row->pid, 2);
    o.sort = COL_PID;
    o.reverse = 0;
    procview_build(&v, f.p, 5, &o, &ctx);
    CHECK_INT(v.rows[0].row->pid, 1); /* PID sorts ascending by nature */
    CHECK_INT(procview_find(&v, 12), 4);
    CHECK_INT(procview_find(&v, 999), -1);
    procview_free(&v);
    users_free(ctx.users);
}

static void filter_user_and_pids(void)
{
    struct fixture_rows f;
    rows_init(&f);
    struct column_ctx ctx = ctx_make();
    struct procview v = {0};
    struct procview_opts o = {.sort = COL_PID, .filter = "HTTP.server"};
    procview_build(&v, f.p, 5, &o, &ctx);
    CHECK_INT(v.n, 1);
    CHECK_INT(v.rows[0].row->pid, 10);
    o.filter = "with space caf"; /* arguments match as a space-joined line */
    procview_build(&v, f.p, 5, &o, &ctx);
    CHECK_INT(v.n, 1);
    o.filter = NULL;
    o.user_set = 1;
    o.user = 1000;
    procview_build(&v, f.p, 5, &o, &ctx);
    CHECK_INT(v.n, 3); /* pids 10, 12 and 2 */
    o.user_set = 0;
    o.npids = 2;
    o.pids[0] = 11;
    o.pids[1] = 1;
    procview_build(&v, f.p, 5, &o, &ctx);
    CHECK_INT(v.n, 2);
    procview_free(&v);
    users_free(ctx.users);
}

static void tree_puts_children_under_parents(void)
{
    struct fixture_rows f;
    rows_init(&f);
    struct column_ctx ctx = ctx_make();
    struct procview v = {0};
    struct procview_opts o = {.sort = COL_PID, .tree = 1, .ascii = 1};
    procview_build(&v, f.p, 5, &o, &ctx);
    CHECK_INT(v.n, 5);
    int order[] = {1, 10, 11, 12, 2};
    for (int i = 0; i < 5; i++) CHECK_INT(v.rows[i].row->pid, order[i]);
    CHECK_STR(v.rows[0].prefix, "");
    CHECK_STR(v.rows[1].prefix, "|- ");
    CHECK_STR(v.rows[2].prefix, "|  `- ");
    CHECK_STR(v.rows[3].prefix, "`- ");
    o.ascii = 0;
    procview_build(&v, f.p, 5, &o, &ctx);
    CHECK_STR(v.rows[2].prefix, "│  └─ ");
    procview_free(&v);
    users_free(ctx.users);
}

static void command_cell_is_sanitized_with_basename(void)
{
    struct fixture_rows f;
    rows_init(&f);
    char buf[256];
    size_t off, len;
    columns_format_command(buf, sizeof buf, &f.r[2], &off, &len);
    CHECK_STR(buf, "./sleeper with space caf\xc3\xa9 ?[31mred");
    CHECK_INT(off, 2);
    CHECK_INT(len, 7); /* "sleeper" */
    columns_format_command(buf, sizeof buf, &f.r[4], &off, &len);
    CHECK_STR(buf, "[kthreadd]");
    columns_format_command(buf, sizeof buf, &f.r[1], &off, &len);
    CHECK_INT(off, 9);
    CHECK_INT(len, 7); /* "python3" */
}

static void cells_and_lines(void)
{
    struct fixture_rows f;
    rows_init(&f);
    struct column_ctx ctx = ctx_make();
    f.r[1].utime = 6123;
    f.r[1].stime = 100; /* 62.23 s */
    struct procview_row vr = {&f.r[1], ""};
    char buf[256];
    table_text_cell(buf, sizeof buf, &columns_table[COL_TIME], &vr, &ctx);
    CHECK_STR(buf, "  1:02.23");
    table_text_cell(buf, sizeof buf, &columns_table[COL_CPU], &vr, &ctx);
    CHECK_STR(buf, " 50.0");
    table_text_cell(buf, sizeof buf, &columns_table[COL_SHR], &vr, &ctx);
    CHECK_STR(buf, "     -");
    f.r[1].growth_known = 1;
    f.r[1].growth_bytes_per_min = 3.0 * 1024 * 1024;
    table_text_cell(buf, sizeof buf, &columns_table[COL_GROWTH], &vr, &ctx);
    CHECK_STR(buf, "  +3.0M");
    f.r[1].growth_bytes_per_min = -512.0 * 1024;
    table_text_cell(buf, sizeof buf, &columns_table[COL_GROWTH], &vr, &ctx);
    CHECK_STR(buf, "  -512K");
    f.r[1].rss_bytes = 66800ULL * 1024;
    table_text_cell(buf, sizeof buf, &columns_table[COL_RES], &vr, &ctx);
    CHECK_STR(buf, " 65.2M");
    f.r[1].runtime = RUNTIME_GO;
    f.r[1].agent = 1;
    table_text_cell(buf, sizeof buf, &columns_table[COL_RUNTIME], &vr, &ctx);
    CHECK_STR(buf, "go*    ");
    enum column_id cols[] = {COL_PID, COL_COMMAND};
    table_text_line(buf, sizeof buf, cols, 2, &vr, &ctx, 12);
    CHECK_STR(buf, "     10 /usr");
    users_free(ctx.users);
}

static void column_lists(void)
{
    enum column_id cols[COL_COUNT];
    char err[128];
    CHECK_INT(columns_parse_list("pid,CPU,%MEM,command", cols, COL_COUNT, err, sizeof err), 4);
    CHECK_INT(cols[1], COL_CPU);
    CHECK_INT(cols[2], COL_MEM);
    CHECK_INT(columns_parse_list("pid,bogus", cols, COL_COUNT, err, sizeof err), -1);
    CHECK(strstr(err, "bogus") != NULL);
    CHECK_INT(columns_parse_list("", cols, COL_COUNT, err, sizeof err), -1);
    CHECK(columns_find("growth") == &columns_table[COL_GROWTH]);
}

static void settings_round_trip_and_atomic_save(void)
{
    struct settings s, back;
    settings_defaults(&s);
    s.sort = COL_RES;
    s.reverse = 1;
    s.delay = 0.25;
    s.tree = 1;
    s.meters_graph = 1;
    s.ncols = 3;
    s.cols[0] = COL_COMMAND;
    s.cols[1] = COL_PID;
    s.cols[2] = COL_GROWTH;
    char dir[] = "/tmp/diagtop-settings.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/sub/config", dir);
    CHECK_INT(config_file_save(&s, path, err, sizeof err), 0);
    settings_defaults(&back);
    CHECK_INT(config_file_load(&back, path, err, sizeof err), 0);
    CHECK_INT(back.sort, COL_RES);
    CHECK_INT(back.reverse, 1);
    CHECK(back.delay == 0.25);
    CHECK_INT(back.tree, 1);
    CHECK_INT(back.meters_graph, 1);
    CHECK_INT(back.ncols, 3);
    CHECK_INT(back.cols[0], COL_COMMAND);
    CHECK_INT(back.cols[2], COL_GROWTH);
    CHECK_INT(settings_apply_line(&back, "sort=nonsense"), -1);
    CHECK_INT(settings_apply_line(&back, "delay=-3"), -1);
    CHECK_INT(settings_apply_line(&back, "meters=pie"), -1);
    CHECK_INT(settings_apply_line(&back, "meters=bar"), 0);
    CHECK_INT(back.meters_graph, 0);
    CHECK_INT(settings_apply_line(&back, "# comment"), 0);
    /* No temporary file is left beside it. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test $(ls -A %s/sub | wc -l) -eq 1", dir);
    CHECK_INT(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_INT(system(cmd), 0);
}

static void growth_per_minute(void)
{
    struct growth g;
    memset(&g, 0, sizeof g);
    double per;
    CHECK_INT(growth_add(&g, 100.0, 1000000, &per), 0); /* no history yet */
    CHECK_INT(growth_add(&g, 100.5, 1000000, &per), 0); /* less than a second */
    CHECK_INT(growth_add(&g, 130.0, 2000000, &per), 1);
    CHECK(per > 1999999.0 && per < 2000001.0); /* 1 MB in 30 s */
    /* samples older than the window are not used: after 10 minutes of flat memory, growth is 0 */
    for (double t = 140; t <= 800; t += 10) growth_add(&g, t, 2000000, &per);
    CHECK(per == 0.0);
}

int main(void)
{
    check_suite = "view";
    RUN(sort_by_cpu_and_memory);
    RUN(filter_user_and_pids);
    RUN(tree_puts_children_under_parents);
    RUN(command_cell_is_sanitized_with_basename);
    RUN(cells_and_lines);
    RUN(column_lists);
    RUN(settings_round_trip_and_atomic_save);
    RUN(growth_per_minute);
    CHECK_EXIT();
}
