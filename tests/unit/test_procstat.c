/* Parsers of /proc/PID/stat, statm and /proc/stat, on captured and crafted fixture files. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "collect/procstat.h"
#include "collect/systotals.h"

static void stat_of_init_parses(void)
{
    size_t n;
    char *t = fixture("stat_init.txt", &n);
    struct procstat ps;
    CHECK_INT(procstat_parse(t, n, &ps), 0);
    CHECK_INT(ps.pid, 1);
    CHECK_INT(ps.ppid, 0);
    CHECK(ps.state != 0);
    CHECK(ps.num_threads >= 1);
    CHECK(ps.starttime < 1000000);
    CHECK(!(ps.flags & PROCSTAT_PF_KTHREAD));
    free(t);
}

/* IO%'s source: delayacct_blkio_ticks is field 42; a short line (an old kernel's) leaves it 0. */
static void blkio_delay_is_field_42(void)
{
    char line[512];
    int off = snprintf(line, sizeof line, "77 (a b) S");
    for (int f = 4; f <= 52; f++) off += snprintf(line + off, sizeof line - (size_t)off, " %d", f == 42 ? 12345 : f);
    struct procstat ps;
    CHECK_INT(procstat_parse(line, (size_t)off, &ps), 0);
    CHECK_INT(ps.blkio_ticks, 12345);
    CHECK_INT(ps.policy, 41);
    const char *old = "78 (x) S 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 "
                      "34 35 36 37 38 39 40 41";
    CHECK_INT(procstat_parse(old, strlen(old), &ps), 0);
    CHECK_INT(ps.blkio_ticks, 0);
    CHECK_INT(ps.policy, 41);
}

static void kernel_thread_is_flagged(void)
{
    size_t n;
    char *t = fixture("stat_kthread.txt", &n);
    struct procstat ps;
    CHECK_INT(procstat_parse(t, n, &ps), 0);
    CHECK_INT(ps.pid, 2);
    CHECK_STR(ps.comm, "kthreadd");
    CHECK(ps.flags & PROCSTAT_PF_KTHREAD);
    CHECK_INT(ps.vsize, 0);
    free(t);
}

static void comm_with_parens_spaces_newline_and_escape(void)
{
    size_t n;
    char *t = fixture("stat_odd_comm.txt", &n);
    struct procstat ps;
    CHECK_INT(procstat_parse(t, n, &ps), 0);
    CHECK_INT(ps.pid, 4242);
    CHECK_STR(ps.comm, "a) b\n(\033[31m");
    CHECK_INT(ps.state, 'R');
    CHECK_INT(ps.ppid, 1);
    CHECK_INT(ps.utime, 1234);
    CHECK_INT(ps.stime, 567);
    CHECK_INT(ps.priority, 20);
    CHECK_INT(ps.nice, 0);
    CHECK_INT(ps.num_threads, 3);
    CHECK_INT(ps.starttime, 98765);
    CHECK_INT(ps.vsize, 104857600);
    CHECK_INT(ps.rss, 2560);
    CHECK_INT(ps.startcode, 1);
    CHECK_INT(ps.endcode, 1);
    CHECK_INT(ps.startstack, 0);
    CHECK_INT(ps.processor, 1);
    free(t);
}

static void zombie_with_invalid_utf8_name(void)
{
    size_t n;
    char *t = fixture("stat_zombie_badutf8.txt", &n);
    struct procstat ps;
    CHECK_INT(procstat_parse(t, n, &ps), 0);
    CHECK_INT(ps.state, 'Z');
    CHECK_INT((unsigned char)ps.comm[0], 0xff);
    CHECK_INT(ps.vsize, 0);
    free(t);
}

static void realtime_priority(void)
{
    size_t n;
    char *t = fixture("stat_rt_kthread.txt", &n);
    struct procstat ps;
    CHECK_INT(procstat_parse(t, n, &ps), 0);
    CHECK_INT(ps.priority, -100);
    CHECK_INT(ps.rt_priority, 99);
    CHECK_INT(ps.policy, 1);
    free(t);
}

static void garbage_and_truncated_are_rejected(void)
{
    size_t n;
    struct procstat ps;
    char *t = fixture("stat_garbage.txt", &n);
    CHECK_INT(procstat_parse(t, n, &ps), -1);
    free(t);
    t = fixture("stat_truncated.txt", &n);
    CHECK_INT(procstat_parse(t, n, &ps), -1);
    free(t);
    CHECK_INT(procstat_parse("1 (x) S 0 1", 11, &ps), -1); /* too few fields */
}

static void statm_parses(void)
{
    struct procstatm sm;
    char *t = fixture("statm_self.txt", NULL);
    CHECK_INT(procstat_parse_statm(t, &sm), 0);
    CHECK(sm.size >= sm.resident);
    CHECK(sm.resident >= sm.shared);
    free(t);
    CHECK_INT(procstat_parse_statm("1 2 3", &sm), -1);
}

static void proc_stat_parses_cpus_and_btime(void)
{
    char *t = fixture("proc_stat.txt", NULL);
    struct procstat_sys *s = malloc(sizeof *s);
    CHECK_INT(systotals_parse_stat(t, s), 0);
    CHECK_INT(s->ncpu, 2);
    CHECK_INT(s->total.user, 2910);
    CHECK_INT(s->cpu[1].user, 2149);
    CHECK_INT(s->cpu[1].steal, 200);
    CHECK(s->btime > 1700000000ULL);
    CHECK_INT(systotals_parse_stat("intr 1 2 3\n", s), -1);
    free(s);
    free(t);
}

static void cpu_usage_from_deltas(void)
{
    struct cpu_ticks a = {100, 0, 50, 1000, 10, 0, 0, 0}, b = {160, 0, 70, 1100, 20, 0, 0, 10};
    struct cpu_usage u = systotals_usage(&a, &b);
    /* deltas: user 60, system 20, iowait 10, steal 10, idle 100: total 200 */
    CHECK(u.user > 29.9 && u.user < 30.1);
    CHECK(u.system > 9.9 && u.system < 10.1);
    CHECK(u.iowait > 4.9 && u.iowait < 5.1);
    CHECK(u.steal > 4.9 && u.steal < 5.1);
    CHECK(u.idle > 49.9 && u.idle < 50.1);
    /* counters going back (CPU hot-unplug) clamp at zero rather than wrapping */
    u = systotals_usage(&b, &a);
    CHECK(u.user >= 0 && u.user <= 100);
    u = systotals_usage(&a, &a);
    CHECK(u.idle == 100.0);
}

/* /proc/pressure files: io and memory with a full line, cpu on kernels before 5.13 without one, and garbage. */
static void pressure_parses(void)
{
    struct pressure p;
    CHECK_INT(systotals_parse_pressure("some avg10=1.25 avg60=0.50 avg300=0.10 total=123456\n"
                                       "full avg10=0.75 avg60=0.25 avg300=0.05 total=65432\n", &p), 0);
    CHECK(p.known && p.some[0] == 1.25 && p.some[2] == 0.10 && p.full[0] == 0.75 && p.full[1] == 0.25);
    CHECK(p.some_total_us == 123456 && p.full_total_us == 65432);
    CHECK_INT(systotals_parse_pressure("some avg10=9.00 avg60=8.00 avg300=7.00 total=5\n", &p), 0);
    CHECK(p.known && p.some[0] == 9.0 && p.full[0] == 0 && p.full_total_us == 0);
    CHECK_INT(systotals_parse_pressure("some avg10=x\n", &p), -1);
    CHECK_INT(systotals_parse_pressure("", &p), -1);
    CHECK(!p.known);
    CHECK_STR(systotals_pressure_name(PRESSURE_MEMORY), "memory");
}

int main(void)
{
    check_suite = "procstat";
    RUN(pressure_parses);
    RUN(stat_of_init_parses);
    RUN(blkio_delay_is_field_42);
    RUN(kernel_thread_is_flagged);
    RUN(comm_with_parens_spaces_newline_and_escape);
    RUN(zombie_with_invalid_utf8_name);
    RUN(realtime_priority);
    RUN(garbage_and_truncated_are_rejected);
    RUN(statm_parses);
    RUN(proc_stat_parses_cpus_and_btime);
    RUN(cpu_usage_from_deltas);
    CHECK_EXIT();
}
