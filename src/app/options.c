#include "options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

const char options_usage[] =
    "usage: diagtop [options]            interactive monitor (needs a terminal)\n"
    "       diagtop -b [options]         batch output, like top -b\n"
    "       diagtop stack PID [--json] [--native] [--no-stop] [-t TID] [--no-source] [--no-group] [--no-wait]\n"
    "                                    every thread's stack of PID, or its goroutines / Java threads, and\n"
    "                                    what each blocked thread waits on\n"
    "       diagtop info PID [--json] [--section LIST] [--show-secrets]\n"
    "                                    details of PID: general, memory, modules, fds, threads, env, io\n"
    "       diagtop memstats PID [--json] [--native]\n"
    "                                    the kernel's memory accounting, and the runtime's (Go, Java)\n"
    "       diagtop gc PID [--percent N] a GC by the runtime (Go's gops agent, a JVM)\n"
    "       diagtop heap PID [--json] [--live] [--diff OLD.json]\n"
    "                                    the heap by class (Java) or allocation site (Go), and its growth\n"
    "       diagtop profile PID [-d SECONDS] [-f pprof|folded|svg|json|text] [-o FILE]\n"
    "                                    a CPU profile: any process by diagtop's sampler, or the runtime's\n"
    "       diagtop dump PID [-o PATH] [--dump-dir DIR] [--filter MASK] [--full] [--heap] [--json]\n"
    "                                    a core file of PID for gdb, or a JVM's heap dump (--heap)\n"
    "       diagtop analyze FILE.hprof[.gz] [--class NAME] [--paths NAME|0xID] [--suspects] [--object 0xID]\n"
    "                       [--diff OLD.hprof] [--histogram] [--json]\n"
    "                                    a JVM heap dump offline: retained sizes, why objects are alive\n"
    "       diagtop analyze CORE [--exe PATH] [--sysroot DIR] [--no-source] [--no-group] [--all-files] [--json]\n"
    "                                    a core offline: the signal and its thread, every stack, goroutines,\n"
    "                                    the native heap by size, the files\n"
    "       diagtop analyze OLD.core NEW.core [--json]\n"
    "                                    what changed: the heap by size, stacks, threads\n"
    "       diagtop watch PID|--name NAME|--cgroup PATH [--cpu PCT[:S]] [--rss SIZE] [--rss-growth SIZE/min]\n"
    "                    [--threads N] [--fds N] [--signal SIG,...] [--exit]\n"
    "                    [--then dump|stack|profile|heap|exec:CMD] [--count N] [--json]\n"
    "                                    captures when a condition holds (a core by default)\n"
    "       diagtop serve [--listen ADDR:PORT] [--users FILE] [--tokens FILE] [--read-only]\n"
    "                                    the HTTP/JSON API of these commands, Prometheus /metrics, a page\n"
    "       (each command's --help says more)\n"
    "\n"
    "options:\n"
    "  -b, --batch             print snapshots instead of the interactive screen\n"
    "  -n, --iterations N      stop after N snapshots (batch; default: until interrupted)\n"
    "  -d, --delay SECONDS     refresh interval in decimal seconds (default 1.5)\n"
    "  -s, --sort KEY          sort by a column: pid user pri ni virt res shr s cpu mem time thr\n"
    "                          growth runtime diskr diskw netr netw wait io csw oom unit command\n"
    "                          (diskr to unit are hidden until chosen: disk and TCP bytes per\n"
    "                          second, time waiting for a CPU or blocked on I/O, context\n"
    "                          switches, OOM score, unit)\n"
    "  -r, --reverse           invert the sort order\n"
    "  -p, --pid PID[,PID...]  show only these processes (and their threads)\n"
    "  -u, --user USER         show only processes of USER (name or uid)\n"
    "  -t, --tree              tree view\n"
    "  -H, --threads           show threads\n"
    "      --columns LIST      columns to show, comma-separated keys as for --sort\n"
    "      --json              batch output as one JSON document per line (implies -b)\n"
    "      --no-color          no colours (also when NO_COLOR is set)\n"
    "  -h, --help              this help\n"
    "  -V, --version           version\n"
    "\n"
    "Settings changed in the interactive screen persist in $XDG_CONFIG_HOME/diagtop/config.\n"
    "Keys of the interactive screen: press F1 or ? inside it; see also diagtop(1).\n";

static int parse_pids(const char *arg, struct options *o, char *err, size_t errlen)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int pid;
        if (text_parse_pid(tok, &pid) < 0) {
            snprintf(err, errlen, "-p: '%s' is not a process id", tok);
            return -1;
        }
        if (o->npids == PROCVIEW_MAX_PIDS) {
            snprintf(err, errlen, "-p: at most %d process ids", PROCVIEW_MAX_PIDS);
            return -1;
        }
        o->pids[o->npids++] = pid;
    }
    if (o->npids == 0) {
        snprintf(err, errlen, "-p: no process id given");
        return -1;
    }
    return 0;
}

int options_parse(struct options *o, int argc, char **argv, char *err, size_t errlen)
{
    enum { OPT_JSON = 1000, OPT_NO_COLOR, OPT_COLUMNS };
    static const struct option longopts[] = {
        {"batch", no_argument, 0, 'b'},          {"iterations", required_argument, 0, 'n'},
        {"delay", required_argument, 0, 'd'},    {"sort", required_argument, 0, 's'},
        {"reverse", no_argument, 0, 'r'},        {"pid", required_argument, 0, 'p'},
        {"user", required_argument, 0, 'u'},     {"tree", no_argument, 0, 't'},
        {"threads", no_argument, 0, 'H'},        {"columns", required_argument, 0, OPT_COLUMNS},
        {"json", no_argument, 0, OPT_JSON},      {"no-color", no_argument, 0, OPT_NO_COLOR},
        {"no-colour", no_argument, 0, OPT_NO_COLOR}, {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},        {0, 0, 0, 0},
    };
    memset(o, 0, sizeof *o);
    settings_defaults(&o->cli);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":bn:d:s:rp:u:tHhV", longopts, NULL)) != -1) {
        unsigned long long v;
        const struct column *col;
        switch (c) {
        case 'b': o->batch = 1; break;
        case 'n':
            if (text_parse_u64(optarg, &v) < 0 || v == 0 || v > 1000000000) {
                snprintf(err, errlen, "-n: '%s' is not a positive count", optarg);
                return -1;
            }
            o->iterations = (int)v;
            break;
        case 'd':
            if (text_parse_seconds(optarg, &o->cli.delay) < 0) {
                snprintf(err, errlen, "-d: '%s' is not a number of seconds (decimal, e.g. 0.5)", optarg);
                return -1;
            }
            o->delay_set = 1;
            break;
        case 's':
            if (!(col = columns_find(optarg))) {
                snprintf(err, errlen,
                         "-s: unknown sort key '%s' (pid user pri ni virt res shr s cpu mem time thr growth runtime "
                         "command)",
                         optarg);
                return -1;
            }
            o->cli.sort = col->id;
            o->sort_set = 1;
            break;
        case 'r': o->cli.reverse = 1; o->sort_set = 1; break;
        case 'p':
            if (parse_pids(optarg, o, err, errlen) < 0) return -1;
            break;
        case 'u':
            snprintf(o->user, sizeof o->user, "%s", optarg);
            o->user_set = 1;
            break;
        case 't': o->cli.tree = 1; o->tree_set = 1; break;
        case 'H': o->cli.show_threads = 1; o->threads_set = 1; break;
        case OPT_COLUMNS: {
            int n = columns_parse_list(optarg, o->cli.cols, COL_COUNT, err, errlen);
            if (n < 0) return -1;
            o->cli.ncols = n;
            o->columns_set = 1;
            break;
        }
        case OPT_JSON: o->json = 1; o->batch = 1; break;
        case OPT_NO_COLOR: o->no_color = 1; break;
        case 'h': o->help = 1; break;
        case 'V': o->version = 1; break;
        case ':': snprintf(err, errlen, "option %s needs a value", argv[optind - 1]); return -1;
        default: snprintf(err, errlen, "unknown option %s (try --help)", argv[optind - 1]); return -1;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (try --help)", argv[optind]);
        return -1;
    }
    return 0;
}

void options_apply(const struct options *o, struct settings *s)
{
    if (o->delay_set) s->delay = o->cli.delay;
    if (o->sort_set) {
        s->sort = o->cli.sort;
        s->reverse = o->cli.reverse;
    }
    if (o->columns_set) {
        memcpy(s->cols, o->cli.cols, sizeof s->cols);
        s->ncols = o->cli.ncols;
    }
    if (o->tree_set) s->tree = 1;
    if (o->threads_set) s->show_threads = 1;
}
