#include "cmd_watch.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/watch.h"
#include "model/watch_spec.h"
#include "render/json_util.h"
#include "util/clock.h"
#include "util/dump_path.h"
#include "util/quit_signals.h"
#include "util/text.h"
#include "config_file.h"

static const char watch_usage[] =
    "usage: diagtop watch PID|--name NAME|--cgroup PATH CONDITION... [--then ACTION]... [OPTIONS]\n"
    "  waits for a condition and captures the evidence when it holds: by default a core file from a snapshot\n"
    "  (the process pauses only while its page tables are copied). One log line per step, or --json, one object\n"
    "  per line. Files are <comm>_<pid>_<trigger>_<UTC time>.<ext>, 0600, in the dump directory.\n"
    "target:\n"
    "  PID                 one process; the watch ends when it exits\n"
    "  --name NAME         every process whose name (or argv[0]'s last part) is NAME, as they start and restart\n"
    "  --cgroup PATH       every process of a cgroup (below /sys/fs/cgroup: a systemd unit, a container)\n"
    "conditions (any that holds fires):\n"
    "  --cpu PCT[:SECONDS]        CPU% at or above PCT (100 = one core) for SECONDS in a row (default: one sample)\n"
    "  --cpu-below PCT[:SECONDS]  CPU% below PCT for SECONDS in a row\n"
    "  --rss SIZE                 resident memory at or above SIZE (512M, 4G)\n"
    "  --rss-growth SIZE/min[:SECONDS]  resident growth at or above SIZE a minute, fitted over SECONDS (60)\n"
    "  --threads N, --fds N       at least N threads, open descriptors\n"
    "  --signal SIG[,SIG...]      the moment the process receives one (SEGV,ABRT,BUS or numbers): it is held\n"
    "                             at the signal's delivery for the dump, then gets the signal as it came\n"
    "  --exit                     the moment the process is about to exit (its memory still there)\n"
    "                             (--signal and --exit attach with ptrace, invisible otherwise: every other\n"
    "                             signal passes untouched; a PID only)\n"
    "actions (in order, each once per firing):\n"
    "  --then dump                a core file gdb loads (the default)\n"
    "  --then stack               every thread's stack, as diagtop stack prints it (.stack.txt)\n"
    "  --then profile[:SECONDS]   a CPU profile (pprof .pb.gz; a runtime's own file when it answers; 10 s)\n"
    "  --then heap                the runtime's heap summary (a JVM's classes, Go's or diagtop's agent's\n"
    "                             allocation sites) as diagtop heap --json writes it (.heap.json): give it\n"
    "                             to diagtop heap PID --diff FILE later to see what grew\n"
    "  --then exec:COMMAND        runs COMMAND with sh -c; DIAGTOP_PID, DIAGTOP_TRIGGER, DIAGTOP_VALUE,\n"
    "                             DIAGTOP_DIR and DIAGTOP_FILE (the file an earlier action wrote) set\n"
    "options:\n"
    "  --count N           firings before the watch ends (default 1)\n"
    "  --every SECONDS     at least this long between two firings (default 10)\n"
    "  --interval SECONDS  between samples (default 1)\n"
    "  --dir DIR           where the files go (default: the dump directory, as diagtop dump; or --dump-dir)\n"
    "  --max-disk SIZE     no capture that would bring what this watch wrote above SIZE; and never one the\n"
    "                      free space cannot hold\n"
    "  --json              one JSON object per event\n"
    "exit status: 0 when the count is reached or on Ctrl-C, 1 when the process exits first, 2 on a bad option\n";

static volatile sig_atomic_t watch_cancel;
static void on_signal(int sig)
{
    (void)sig;
    watch_cancel = 1;
}

struct watch_cli {
    struct watch_config c;
    int json;
    const char *dir_opt;
    char dir[4096];
};

/* ---- the log ---- */

static void print_json(const struct watch_event *e)
{
    cJSON *o = cJSON_CreateObject();
    char when[32];
    clock_format_iso8601(when, sizeof when, (time_t)e->wall);
    cJSON_AddStringToObject(o, "time", when);
    json_add_fixed(o, "unix_time", e->wall, 3);
    cJSON_AddStringToObject(o, "event", watch_event_name(e->kind));
    if (e->pid) {
        cJSON_AddNumberToObject(o, "pid", e->pid);
        json_add_bytes(o, "comm", e->comm, strlen(e->comm));
    }
    if (e->cond) {
        cJSON_AddStringToObject(o, "trigger", watch_cond_name(e->cond->kind));
        if (e->kind == WATCH_EV_TRIGGER) {
            json_add_fixed(o, "value", e->value, 2);
            json_add_fixed(o, "limit", e->cond->limit, 2);
            json_add_fixed(o, "held_seconds", e->held, 2);
        }
    }
    if (e->action) cJSON_AddStringToObject(o, "action", watch_action_name(e->action->kind));
    if (e->file[0]) json_add_bytes(o, "file", e->file, strlen(e->file));
    if (e->kind == WATCH_EV_CAPTURE) {
        json_add_u64(o, "bytes", e->bytes);
        if (e->pause_ms >= 0) json_add_fixed(o, "pause_ms", e->pause_ms, 2);
        json_add_fixed(o, "took_ms", e->took_ms, 1);
    }
    if (e->kind == WATCH_EV_DONE) cJSON_AddNumberToObject(o, "captures", e->captures);
    if (e->msg[0]) json_add_bytes(o, "message", e->msg, strlen(e->msg));
    char *s = cJSON_PrintUnformatted(o);
    if (s) puts(s);
    free(s);
    cJSON_Delete(o);
}

static void print_text(const struct watch_event *e)
{
    char when[32], who[128] = "", comm[64], msg[1024], file[4200], size[32], v[48], lim[48];
    clock_format_iso8601(when, sizeof when, (time_t)e->wall);
    text_sanitize_display(comm, sizeof comm, e->comm, strlen(e->comm));
    text_sanitize_display(msg, sizeof msg, e->msg, strlen(e->msg));
    text_sanitize_display(file, sizeof file, e->file, strlen(e->file));
    if (e->pid) snprintf(who, sizeof who, "pid %d (%s): ", e->pid, comm);
    const char *act = e->action ? watch_action_name(e->action->kind) : "";
    switch (e->kind) {
    case WATCH_EV_WATCHING: printf("%s %swatched\n", when, who); break;
    case WATCH_EV_WAITING: printf("%s waiting for a process of %s\n", when, msg); break;
    case WATCH_EV_TRIGGER:
        watch_cond_format_value(e->cond, e->value, v, sizeof v);
        if (watch_cond_is_trap(e->cond)) {
            printf("%s %s%s (held)%s%s\n", when, who, v, msg[0] ? ": " : "", msg);
            break;
        }
        watch_cond_describe(e->cond, lim, sizeof lim);
        printf("%s %s%s %s (%s)", when, who, watch_cond_name(e->cond->kind), v, lim);
        if (e->held > 0) printf(", held %.1f s", e->held);
        putchar('\n');
        break;
    case WATCH_EV_CAPTURE:
        if (e->action->kind == WATCH_DO_EXEC) {
            printf("%s %sexec done (%s), %.0f ms\n", when, who, msg, e->took_ms);
            break;
        }
        text_format_bytes(size, sizeof size, (long long)e->bytes);
        printf("%s %s%s %s, %s", when, who, act, file, size);
        if (msg[0]) printf(", %s", msg);
        if (e->pause_ms >= 0) printf("; the process paused %.1f ms", e->pause_ms);
        printf("; %.0f ms\n", e->took_ms);
        break;
    case WATCH_EV_SKIPPED: printf("%s %s%s %s\n", when, who, act, msg); break;
    case WATCH_EV_FAILED: printf("%s %s%s failed: %s\n", when, who, act, msg); break;
    case WATCH_EV_EXITED: printf("%s %s%s\n", when, who, msg); break;
    case WATCH_EV_DONE: printf("%s done: %s\n", when, msg); break;
    }
}

static void on_event(void *arg, const struct watch_event *e)
{
    const struct watch_cli *cli = arg;
    if (cli->json) print_json(e);
    else print_text(e);
    fflush(stdout);
}

/* ---- the command line ---- */

enum { OPT_NAME = 256, OPT_CGROUP, OPT_SPEC, OPT_DIR, OPT_JSON };

static int bad(const char *fmt, const char *v)
{
    fputs("diagtop watch: ", stderr);
    fprintf(stderr, fmt, v);
    fputc('\n', stderr);
    return 2;
}

/* One option into cli: -1 to go on, else the exit status. name: a watch word's option (OPT_SPEC). */
static int parse_option(int opt, const char *name, char **argv, struct watch_cli *cli)
{
    struct watch_config *c = &cli->c;
    char err[256];
    switch (opt) {
    case OPT_NAME: c->name = optarg; break;
    case OPT_CGROUP: c->cgroup = optarg; break;
    case OPT_SPEC:
        if (watch_spec_set(c, name, optarg, err, sizeof err) < 0) return bad("%s", err);
        break;
    case OPT_DIR: cli->dir_opt = optarg; break;
    case OPT_JSON: cli->json = 1; break;
    case 'h': fputs(watch_usage, stdout); return 0;
    case ':': return bad("%s needs a value", argv[optind - 1]);
    default: fprintf(stderr, "diagtop watch: unknown option %s\n%s", argv[optind - 1], watch_usage); return 2;
    }
    return -1;
}

static int parse_args(int argc, char **argv, struct watch_cli *cli)
{
    static const struct option longopts[] = {
        {"name", required_argument, 0, OPT_NAME},       {"cgroup", required_argument, 0, OPT_CGROUP},
        {"cpu", required_argument, 0, OPT_SPEC},        {"cpu-below", required_argument, 0, OPT_SPEC},
        {"rss", required_argument, 0, OPT_SPEC},        {"rss-growth", required_argument, 0, OPT_SPEC},
        {"threads", required_argument, 0, OPT_SPEC},    {"fds", required_argument, 0, OPT_SPEC},
        {"then", required_argument, 0, OPT_SPEC},       {"count", required_argument, 0, OPT_SPEC},
        {"every", required_argument, 0, OPT_SPEC},      {"interval", required_argument, 0, OPT_SPEC},
        {"dump-dir", required_argument, 0, OPT_DIR},    {"max-disk", required_argument, 0, OPT_SPEC},
        {"json", no_argument, 0, OPT_JSON},             {"help", no_argument, 0, 'h'},
        {"signal", required_argument, 0, OPT_SPEC},     {"exit", no_argument, 0, OPT_SPEC},
        {"dir", required_argument, 0, OPT_DIR},         {0, 0, 0, 0}};
    struct watch_config *c = &cli->c;
    watch_spec_defaults(c);
    optind = 1;
    opterr = 0;
    int opt, status, at = 0;
    while ((opt = getopt_long(argc, argv, ":h", longopts, &at)) != -1)
        if ((status = parse_option(opt, longopts[at].name, argv, cli)) >= 0) return status;
    int targets = (c->name != NULL) + (c->cgroup != NULL) + (optind < argc);
    if (targets != 1 || argc - optind > 1)
        return bad("%s", targets ? "one target: a PID, --name or --cgroup" : "which process? a PID, --name or --cgroup");
    if (optind < argc && text_parse_pid(argv[optind], &c->pid) < 0) return bad("'%s' is not a process id", argv[optind]);
    if (c->nconds == 0)
        return bad("%s", "no condition: --cpu, --cpu-below, --rss, --rss-growth, --threads, --fds, --signal or --exit");
    for (int i = 0; i < c->nconds; i++)
        if (watch_cond_is_trap(&c->conds[i]) && (c->name || c->cgroup))
            return bad("%s", "--signal and --exit watch one PID (not --name or --cgroup)");
    if (c->name && (!*c->name || strlen(c->name) > 255)) return bad("%s", "--name: a name of 1 to 255 bytes");
    return -1;
}

int cmd_watch(int argc, char **argv)
{
    struct watch_cli cli;
    memset(&cli, 0, sizeof cli);
    int status = parse_args(argc, argv, &cli);
    if (status >= 0) return status;
    struct settings s;
    char err[512];
    config_file_settings(&s);
    if (dump_directory(cli.dir_opt, s.dump_dir, cli.dir, sizeof cli.dir, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop watch: %s\n", err);
        return 2;
    }
    cli.c.dir = cli.dir;
    cli.c.cancel = &watch_cancel;
    cli.c.on_event = on_event;
    cli.c.arg = &cli;
    quit_signals_install(on_signal);
    int rc = watch_run(&cli.c, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "diagtop watch: %s\n", err);
        return 1;
    }
    return rc;
}
