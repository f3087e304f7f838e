/* Parsers of the details pane: status, smaps_rollup, limits, io, sockets; secret-looking names. */
#include "check.h"
#include "collect/procinfo.h"
#include "collect/sockets.h"

static void status_memory_and_ids(void)
{
    char *t = fixture("status_self.txt", NULL);
    struct pi_general g;
    struct pi_memory m;
    memset(&g, 0, sizeof g);
    procinfo_parse_status(t, &g, &m);
    CHECK(g.ruid >= 0 && g.euid >= 0 && g.egid >= 0);
    CHECK(m.rss > 0 && m.hwm >= m.rss);
    CHECK(m.rss == m.rss_anon + m.rss_file + m.rss_shmem);
    CHECK(m.vm_size >= m.rss && m.vm_peak >= m.vm_size);
    CHECK(m.rss % 1024 == 0); /* kB turned into bytes */
    free(t);
}

static void status_of_kernel_thread_has_no_memory(void)
{
    char *t = fixture("status_kthread.txt", NULL);
    struct pi_general g;
    struct pi_memory m;
    procinfo_parse_status(t, &g, &m);
    CHECK_INT(g.ruid, 0);
    CHECK_INT(m.rss, -1);
    CHECK_INT(m.vm_size, -1);
    free(t);
}

static void smaps_rollup_gives_pss_and_uss(void)
{
    char *t = fixture("smaps_rollup_self.txt", NULL);
    struct pi_memory m;
    procinfo_parse_smaps_rollup(t, &m);
    CHECK(m.pss > 0);
    CHECK(m.uss == m.private_clean + m.private_dirty);
    CHECK(m.swap >= 0 && m.swap_pss >= 0);
    free(t);
}

static void limits_table(void)
{
    char *t = fixture("limits_self.txt", NULL);
    struct pi_limit l[20];
    int n = procinfo_parse_limits(t, l, 20);
    CHECK_INT(n, 16);
    CHECK_STR(l[0].name, "Max cpu time");
    CHECK_STR(l[7].name, "Max open files");
    CHECK(atoll(l[7].soft) > 0);
    CHECK_STR(l[7].units, "files");
    free(t);
}

static void io_counters(void)
{
    char *t = fixture("io_self.txt", NULL);
    struct pi_io io;
    procinfo_parse_io(t, &io);
    CHECK(io.rchar > 0 && io.syscr > 0 && io.cancelled_write_bytes >= 0);
    free(t);
    procinfo_parse_io("", &io);
    CHECK_INT(io.rchar, -1);
}

static void sockets_lines(void)
{
    unsigned long inode;
    char d[160];
    CHECK_INT(sockets_parse_inet("   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000 "
                                 "       0 424242 1 0000000000000000 100 0 0 10 0",
                                 "tcp", 0, &inode, d, sizeof d), 0);
    CHECK_INT(inode, 424242);
    CHECK_STR(d, "tcp 127.0.0.1:8080 LISTEN");
    CHECK_INT(sockets_parse_inet("   1: 0100007F:2328 0100007F:A3B2 01 00000000:00000000 00:00000000 00000000  1000 "
                                 "       0 515151 1 0000000000000000 20 4 30 10 -1",
                                 "tcp", 0, &inode, d, sizeof d), 0);
    CHECK_STR(d, "tcp 127.0.0.1:9000 -> 127.0.0.1:41906 ESTABLISHED");
    CHECK_INT(sockets_parse_inet("   0: 00000000000000000000000001000000:0016 00000000000000000000000000000000:0000 0A "
                                 "00000000:00000000 00:00000000 00000000     0        0 17171 1",
                                 "tcp6", 1, &inode, d, sizeof d), 0);
    CHECK_STR(d, "tcp6 [::1]:22 LISTEN");
    CHECK_INT(sockets_parse_inet("  12: 00000000:14E9 00000000:0000 07 00000000:00000000 00:00000000 00000000   104 "
                                 "       0 31337 2 0000000000000000 0",
                                 "udp", 0, &inode, d, sizeof d), 0);
    CHECK_STR(d, "udp 0.0.0.0:5353");
    CHECK_INT(sockets_parse_unix("0000000000000000: 00000002 00000000 00010000 0001 01 12345 /run/x.sock", &inode, d,
                                 sizeof d), 0);
    CHECK_INT(inode, 12345);
    CHECK_STR(d, "unix stream /run/x.sock");
    CHECK_INT(sockets_parse_unix("0000000000000000: 00000003 00000000 00000000 0002 01 777", &inode, d, sizeof d), 0);
    CHECK_STR(d, "unix dgram (unnamed)");
    CHECK_INT(sockets_parse_inet("garbage", "tcp", 0, &inode, d, sizeof d), -1);
}

static void nspid_from_status(void)
{
    struct pi_general g;
    memset(&g, 0, sizeof g);
    procinfo_parse_status("Name:\tsleep\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nNSpid:\t17763\t1\nNSpgid:\t17763\t1\n",
                          &g, NULL);
    CHECK_INT(g.nnspid, 2);
    CHECK_INT(g.nspid[0], 17763);
    CHECK_INT(g.nspid[1], 1);
    char *t = fixture("status_self.txt", NULL); /* NSpid:\t18345, one namespace */
    memset(&g, 0, sizeof g);
    procinfo_parse_status(t, &g, NULL);
    CHECK_INT(g.nnspid, 1);
    CHECK_INT(g.nspid[0], 18345);
    free(t);
    memset(&g, 0, sizeof g);
    procinfo_parse_status("Name:\told\nUid:\t0\t0\t0\t0\n", &g, NULL); /* before Linux 4.1: no NSpid */
    CHECK_INT(g.nnspid, 0);
}

static void secret_names(void)
{
    CHECK(procinfo_env_is_secret("SECRET_TOKEN"));
    CHECK(procinfo_env_is_secret("aws_secret_access_key"));
    CHECK(procinfo_env_is_secret("DB_PASSWORD"));
    CHECK(procinfo_env_is_secret("GITHUB_TOKEN"));
    CHECK(procinfo_env_is_secret("API_KEY"));
    CHECK(procinfo_env_is_secret("GOOGLE_APPLICATION_CREDENTIALS"));
    CHECK(!procinfo_env_is_secret("PATH"));
    CHECK(!procinfo_env_is_secret("HOME"));
}

static void section_lists(void)
{
    CHECK_INT(procinfo_parse_sections("general,memory"), PI_GENERAL | PI_MEMORY);
    CHECK_INT(procinfo_parse_sections("io"), PI_IO);
    CHECK_INT(procinfo_parse_sections("nope"), -1);
    CHECK_INT(procinfo_parse_sections(""), -1);
    CHECK_STR(procinfo_section_name(PI_ENV), "env");
}

int main(void)
{
    check_suite = "procinfo";
    RUN(status_memory_and_ids);
    RUN(status_of_kernel_thread_has_no_memory);
    RUN(smaps_rollup_gives_pss_and_uss);
    RUN(limits_table);
    RUN(io_counters);
    RUN(sockets_lines);
    RUN(nspid_from_status);
    RUN(secret_names);
    RUN(section_lists);
    CHECK_EXIT();
}
