/* A process's history: the 16-bit codings, the ring as it grows and wraps, the shared clock's step, and the
 * sparklines drawn from it. */
#include <math.h>

#include "check.h"
#include "collect/history.h"
#include "render/history_text.h"
#include "ui/header_graph.h"
#include "render/sparkline.h"
#include <string.h>

static int near(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b) + 1e-9; }

static void codings_round_trip(void)
{
    struct history_sample s;
    history_set(&s, HIST_CPU, 12.34);
    CHECK(near(history_get(&s, HIST_CPU), 12.3, 0));
    history_set(&s, HIST_CPU, 99999);            /* beyond 16 bits: the top code, not a wrap */
    CHECK(near(history_get(&s, HIST_CPU), 6553.4, 0));
    history_set(&s, HIST_CPU, -3);
    CHECK(history_get(&s, HIST_CPU) == 0);
    history_set(&s, HIST_WAIT, NAN);
    CHECK(isnan(history_get(&s, HIST_WAIT)));
    static const double sizes[] = {1, 2, 1000, 4096, 1.5 * (1 << 30), 3e12, 1.8e19};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        history_set(&s, HIST_RES, sizes[i]);
        CHECK(near(history_get(&s, HIST_RES), sizes[i], 0.0004));
    }
    history_set(&s, HIST_DISK_WRITE, 0.4); /* under a byte a second is nothing */
    CHECK(history_get(&s, HIST_DISK_WRITE) == 0);
    history_set(&s, HIST_NET_SENT, 3 * 1048576.0);
    CHECK(near(history_get(&s, HIST_NET_SENT), 3 * 1048576.0, 0.0004));
    CHECK_INT(sizeof s, 14);
    CHECK_STR(history_field_key(HIST_DISK_READ), "disk_read_bytes_per_second");
    CHECK_STR(history_field_label(HIST_WAIT), "WAIT%");
}

static void clock_keeps_a_step(void)
{
    struct history_clock c = {0};
    struct history h = {0};
    static const double at[] = {10.0, 10.5, 10.96, 11.2, 12.0};
    static const int stores[] = {1, 0, 1, 0, 1};
    for (int i = 0; i < 5; i++) {
        history_clock_tick(&c, at[i]);
        CHECK_INT(c.storing, stores[i]);
        struct history_sample *s = history_add(&h, &c);
        CHECK((s != NULL) == stores[i]);
        if (s) history_set(s, HIST_CPU, i);
        CHECK((history_current(&h, &c) != NULL) == stores[i]);
    }
    struct history_point p[8];
    CHECK_INT(history_read(&h, &c, 0, p, 8), 3);
    CHECK(p[0].t == 10.0 && p[1].t == 10.96 && p[2].t == 12.0);
    CHECK(p[1].v[HIST_CPU] == 2 && isnan(p[1].v[HIST_RES]));
    CHECK_INT(history_read(&h, &c, 10.5, p, 8), 2);
    history_free(&h);
}

/* A process that appears late grows its ring in order, then wraps at HISTORY_SLOTS keeping the newest. */
static void ring_grows_then_wraps(void)
{
    struct history_clock c = {0};
    struct history h = {0};
    static struct history_point p[HISTORY_SLOTS + 10];
    for (int i = 0; i < 1000; i++) {
        history_clock_tick(&c, 100.0 + i);
        if (i < 37) continue; /* not born yet */
        struct history_sample *s = history_add(&h, &c);
        CHECK(s != NULL);
        if (!s) break;
        history_set(s, HIST_CPU, i % 97);
        history_set(s, HIST_RES, 4096.0 * (i + 1));
        if (i == 100) { /* before the wrap: every sample since birth, in order */
            size_t n = history_read(&h, &c, 0, p, HISTORY_SLOTS + 10);
            CHECK_INT(n, 64);
            CHECK(p[0].t == 137.0 && p[63].t == 200.0 && p[63].v[HIST_CPU] == 100 % 97);
        }
        struct history_sample *cur = history_current(&h, &c);
        CHECK(cur == s);
        if (cur) history_set(cur, HIST_WAIT, 50);
    }
    CHECK_INT(h.cap, HISTORY_SLOTS);
    size_t n = history_read(&h, &c, 0, p, HISTORY_SLOTS + 10);
    CHECK_INT(n, HISTORY_SLOTS);
    int ordered = 1;
    for (size_t k = 0; k < n; k++) {
        int i = 1000 - HISTORY_SLOTS + (int)k;
        ordered &= p[k].t == 100.0 + i && p[k].v[HIST_CPU] == i % 97 && p[k].v[HIST_WAIT] == 50 &&
                   near(p[k].v[HIST_RES], 4096.0 * (i + 1), 0.0004);
    }
    CHECK(ordered);
    CHECK_INT(history_read(&h, &c, 1099.0 - 9, p, HISTORY_SLOTS), 10); /* the last ten seconds */
    CHECK_INT(history_read(&h, &c, 0, p, 5), 5);
    history_free(&h);
    CHECK_INT(history_read(&h, &c, 0, p, 5), 0);
}

static void sparkline_from_history(void)
{
    struct history_point p[20];
    for (int i = 0; i < 20; i++) {
        p[i].t = i;
        for (int f = 0; f < HIST_FIELDS; f++) p[i].v[f] = NAN;
        p[i].v[HIST_CPU] = (i / 5) % 2 ? 100 : 0; /* five busy seconds, five idle */
    }
    p[7].v[HIST_CPU] = NAN;
    double col[10];
    sparkline_buckets(p, 20, HIST_CPU, 0, 20, col, 10);
    for (int i = 0; i < 10; i++) CHECK(col[i] == 0 || col[i] == 100); /* every column known, idle or busy */
    char line[64];
    sparkline_draw(col, 10, 0, 100, 1, line, sizeof line);
    CHECK_STR(line, "__@@@__@@@"); /* column 2 holds seconds 4 and 5: its peak */
    sparkline_buckets(p, 20, HIST_RES, 0, 20, col, 10);
    for (int i = 0; i < 10; i++) CHECK(isnan(col[i])); /* a field never read: no column known */
    sparkline_draw(col, 4, 0, 1, 0, line, sizeof line);
    CHECK_STR(line, "    ");
    double v[3] = {0, 50, 100};
    sparkline_draw(v, 3, 0, 100, 0, line, sizeof line);
    CHECK_STR(line, "▁▄█");
    sparkline_draw(v, 3, 0, 100, 0, line, 7); /* a short buffer: whole characters only */
    CHECK_STR(line, "▁");
}

/* The History tab's lines: CPU% from 0 to 100 (busy and idle alternate), RES from its lowest to its highest (a
 * climb), rates never read shown as such, and 600 samples squeezed into 20 columns keep their peak. */
static void text_lines_per_field(void)
{
    struct history_point p[600];
    for (int i = 0; i < 600; i++) {
        p[i].t = i;
        for (int f = 0; f < HIST_FIELDS; f++) p[i].v[f] = NAN;
        p[i].v[HIST_CPU] = (i / 2) % 2 ? 100 : 0;
        p[i].v[HIST_RES] = 1e6 + i * 1000.0;
    }
    char out[512];
    CHECK(history_text_field(p, 8, HIST_CPU, 40, 1, out, sizeof out));
    CHECK_STR(out, "__@@__@@  last 100.0%  min 0.0%  max 100.0%");
    CHECK(history_text_field(p, 8, HIST_RES, 40, 1, out, sizeof out));
    CHECK(strncmp(out, "_.-=+*#@  last ", 15) == 0);
    CHECK(!history_text_field(p, 8, HIST_NET_SENT, 40, 1, out, sizeof out));
    p[300].v[HIST_NET_SENT] = 5000; /* one read among 600: its column shows it */
    CHECK(history_text_field(p, 600, HIST_NET_SENT, 20, 1, out, sizeof out));
    CHECK_STR(out, "          @           last 4.9 KiB/s  min 4.9 KiB/s  max 4.9 KiB/s");
    struct text_lines tl = {0};
    history_text(p, 600, 600, 100, 1, &tl);
    CHECK(tl.n == 2 + HIST_FIELDS + 3);
    CHECK(strncmp(tl.lines[0], "The last 10m00s: 600 samples, one every 1.0 s", 45) == 0);
    CHECK(strstr(tl.lines[2 + HIST_DISK_READ], "(not read yet)") != NULL);
    text_lines_free(&tl);
}

/* The header meters' graph: the newest value at the right, NAN before the first, the ring wrapping after 256. */
static void header_graph_newest_right(void)
{
    struct cpu_usage cpus[2];
    struct systotals st = {.per_cpu = cpus};
    st.cur.ncpu = 2;
    st.mem.total = 1000;
    struct header_graph g = {0};
    double v[4];
    header_graph_series(&g, 0, v, 4);
    CHECK(isnan(v[0]) && isnan(v[3]));
    for (int i = 0; i < 300; i++) {
        cpus[0].idle = 100 - i % 100;
        cpus[1].idle = 100;
        st.mem.used = (unsigned long long)i;
        CHECK_INT(header_graph_add(&g, &st), 0);
        if (i == 1) {
            header_graph_series(&g, 0, v, 4);
            CHECK(isnan(v[0]) && isnan(v[1]) && v[2] == 0 && v[3] == 1);
        }
    }
    header_graph_series(&g, 0, v, 4);
    CHECK(v[0] == 96 && v[3] == 99); /* i = 296..299 */
    header_graph_series(&g, HEADER_GRAPH_MEM, v, 4);
    CHECK(near(v[3], 29.9, 1e-6));
    double wide[HEADER_GRAPH_LEN + 4];
    header_graph_series(&g, 1, wide, HEADER_GRAPH_LEN + 4);
    CHECK(isnan(wide[3]) && wide[4] == 0); /* only 256 kept */
    header_graph_series(&g, 7, v, 4); /* a CPU the first refresh did not have */
    CHECK(isnan(v[3]));
    header_graph_free(&g);
}

int main(void)
{
    check_suite = "history";
    RUN(text_lines_per_field);
    RUN(header_graph_newest_right);
    RUN(codings_round_trip);
    RUN(clock_keeps_a_step);
    RUN(ring_grows_then_wraps);
    RUN(sparkline_from_history);
    CHECK_EXIT();
}
