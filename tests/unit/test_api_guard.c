/* api_guard on a clock of its own: a request past its deadline is closed, one being answered never is, a
 * finished request restarts its clock, and when slots run short the oldest readers go first, never the young. */
#include "check.h"
#include "api/api_guard.h"

static double fake_now;
static int closed[16], nclosed;

static double now(void) { return fake_now; }
static int record_close(int fd)
{
    if (nclosed < 16) closed[nclosed++] = fd;
    return 0;
}

static void start(struct api_guard *g, unsigned max, double deadline)
{
    CHECK_INT(api_guard_start(g, max, deadline), 0);
    g->now = now;
    g->close_fd = record_close;
    fake_now = 100;
    nclosed = 0;
}

static void deadline_per_request(void)
{
    struct api_guard g;
    start(&g, 64, 2);
    struct api_guard_conn *slow = api_guard_open(&g, 10), *busy = api_guard_open(&g, 11), *kept = api_guard_open(&g, 12);
    api_guard_request_in(&g, busy); /* its headers came at once: it is being answered */
    fake_now = 101.5;
    api_guard_request_in(&g, kept);
    api_guard_request_done(&g, kept); /* answered at 101.5: the next request's clock starts there */
    CHECK_INT(api_guard_sweep(&g), 0);
    fake_now = 102.1;
    CHECK_INT(api_guard_sweep(&g), 1);
    CHECK(nclosed == 1 && closed[0] == 10);
    fake_now = 130; /* a long answer is never cut */
    CHECK_INT(api_guard_sweep(&g), 1);
    CHECK(nclosed == 2 && closed[1] == 12);
    CHECK_INT(api_guard_sweep(&g), 0); /* each is closed once */
    api_guard_close(&g, slow);
    api_guard_close(&g, busy);
    api_guard_close(&g, kept);
    CHECK_INT(g.open, 0);
    api_guard_stop(&g);
}

static void crowded_oldest_first(void)
{
    struct api_guard g;
    start(&g, 8, 15);
    struct api_guard_conn *c[8];
    for (int i = 0; i < 8; i++) {
        c[i] = api_guard_open(&g, 20 + i);
        fake_now += 0.1;
    }
    api_guard_request_in(&g, c[0]); /* the oldest is being answered: it stays */
    fake_now = 100.6;               /* c[1] is 0.5 s old, c[2] 0.4 s: only the ones past the grace may go */
    CHECK_INT(api_guard_sweep(&g), 0);
    fake_now = 100.75;
    CHECK_INT(api_guard_sweep(&g), 1);
    CHECK(nclosed == 1 && closed[0] == 21);
    CHECK_INT(api_guard_sweep(&g), 0); /* 7 live and one slot free: enough */
    for (int i = 0; i < 8; i++) api_guard_close(&g, c[i]);
    api_guard_stop(&g);
}

int main(void)
{
    check_suite = "api_guard";
    RUN(deadline_per_request);
    RUN(crowded_oldest_first);
    CHECK_EXIT();
}
