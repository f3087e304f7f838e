#include "cmd_stack.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/capture/capture.h"
#include "render/stack_json.h"
#include "render/rt_json.h"
#include "render/rt_text.h"
#include "render/stack_text.h"
#include "util/quit_signals.h"
#include "util/text.h"
#include "config_file.h"

const char cmd_stack_usage[] =
    "usage: diagtop stack PID [--json] [--native] [--no-stop] [-t TID] [--no-source] [--no-group]\n"
    "                         [--no-wait] [--cpu-sample SECONDS] [--timeout SECONDS]\n"
    "  every thread's stack, symbolized; the threads are stopped together only while registers are read.\n"
    "  A Go program with the gops agent answers with its goroutines, a JVM with its Java threads (HotSpot\n"
    "  attach); --native asks ptrace for the OS threads instead\n"
    "      --native      OS threads through ptrace, even when the runtime could answer\n"
    "      --no-stop     stop nothing: threads blocked in a system call are unwound from a copy of their stack\n"
    "                    (/proc/PID/task/TID/syscall); running threads are listed as running\n"
    "      --timeout S   seconds allowed for the runtime's agent (default 5)\n"
    "  -t, --tid TID     only this thread\n"
    "      --json        JSON: per-thread frames, addresses as hex strings, the stop duration\n"
    "      --no-source   no file:line (faster without debug information)\n"
    "      --no-group    one block per thread, even when stacks are identical\n"
    "      --no-wait     leave out what blocked threads wait on (the system call, the descriptor and what it\n"
    "                    is, futex fellows, the kernel stack of a thread in D)\n"
    "      --cpu-sample SECONDS\n"
    "                    per-thread CPU% over this interval, which starts before the stop and spans the capture\n"
    "                    (default 0.02: the capture itself, at least 20 ms; 0: none)\n";

/* A signal during the capture becomes a cancel request: the capture detaches and returns. */
static volatile sig_atomic_t stack_cancel;

static void on_signal(int sig)
{
    (void)sig;
    stack_cancel = 1;
}

struct stack_args {
    struct capture_stack_options co;
    int json, group, pid;
};

/* One option into a: -1 to go on, else the exit status (0 for --help, 2 for a bad value). */
static int parse_option(int c, char **argv, struct stack_args *a)
{
    struct stack_options *o = &a->co.stack;
    switch (c) {
    case 'j': a->json = 1; break;
    case 's': o->source = 0; break;
    case 'g': a->group = 0; break;
    case 't':
        if (text_parse_pid(optarg, &o->tid) < 0) {
            fprintf(stderr, "diagtop stack: -t: '%s' is not a thread id\n", optarg);
            return 2;
        }
        break;
    case 'c':
        if (strcmp(optarg, "0") == 0) o->cpu_sample = 0;
        else if (text_parse_seconds(optarg, &o->cpu_sample) < 0 || o->cpu_sample > 10) {
            fprintf(stderr, "diagtop stack: --cpu-sample: '%s' is not a number of seconds up to 10\n", optarg);
            return 2;
        }
        break;
    case 'n': a->co.from = CAPTURE_NATIVE; break;
    case 'N': o->no_stop = 1; break;
    case 'W': o->waits = 0; break;
    case 'T':
        if (text_parse_seconds(optarg, &a->co.timeout) < 0 || a->co.timeout <= 0 || a->co.timeout > 3600) {
            fprintf(stderr, "diagtop stack: --timeout: '%s' is not a number of seconds up to 3600\n", optarg);
            return 2;
        }
        break;
    case 'h': fputs(cmd_stack_usage, stdout); return 0;
    case ':': fprintf(stderr, "diagtop stack: %s needs a value\n", argv[optind - 1]); return 2;
    default: fprintf(stderr, "diagtop stack: unknown option %s\n%s", argv[optind - 1], cmd_stack_usage); return 2;
    }
    return -1;
}

/* The command line into a, over the config file's agent timeout. Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct stack_args *a)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'},      {"tid", required_argument, 0, 't'},
                                             {"no-source", no_argument, 0, 's'}, {"no-group", no_argument, 0, 'g'},
                                             {"cpu-sample", required_argument, 0, 'c'},
                                             {"native", no_argument, 0, 'n'}, {"timeout", required_argument, 0, 'T'},
                                             {"no-stop", no_argument, 0, 'N'}, {"no-wait", no_argument, 0, 'W'},
                                             {"help", no_argument, 0, 'h'},      {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->group = 1;
    capture_stack_options_default(&a->co);
    struct settings settings;
    config_file_settings(&settings);
    a->co.timeout = settings.agent_timeout;
    optind = 1;
    opterr = 0;
    int c, status;
    while ((c = getopt_long(argc, argv, ":t:h", longopts, NULL)) != -1)
        if ((status = parse_option(c, argv, a)) >= 0) return status;
    if (optind != argc - 1 || text_parse_pid(argv[optind], &a->pid) < 0) {
        fprintf(stderr, "diagtop stack: %s\n%s", optind < argc ? "not a process id" : "which process?",
                cmd_stack_usage);
        return 2;
    }
    return -1;
}

/* The stacks as text or JSON on stdout: the runtime's view or the OS threads. Returns the exit status. */
static int print_stacks(const struct stack_args *a, const struct capture_stack *r)
{
    int status;
    int source = a->co.stack.source;
    if (a->json) {
        char *doc = r->runtime ? rt_json_stack(&r->rt) : stack_json(&r->native, source);
        status = !doc || puts(doc) == EOF;
        free(doc);
    } else {
        struct text_lines tl = {0};
        struct stack_text_opts to = {a->group, source};
        status = (r->runtime ? rt_text_stack(&r->rt, a->group, &tl) : stack_text_render(&r->native, &to, &tl)) < 0 ||
                 text_lines_write(&tl, stdout) < 0;
        text_lines_free(&tl);
    }
    return status;
}

int cmd_stack(int argc, char **argv)
{
    struct stack_args a;
    int status = parse_args(argc, argv, &a);
    if (status >= 0) return status;
    quit_signals_install(on_signal);
    a.co.cancel = &stack_cancel;
    struct capture_stack r;
    char err[512];
    int rc = capture_stack(a.pid, &a.co, &r, err, sizeof err);
    if (r.fallback[0]) fprintf(stderr, "diagtop stack: %s; showing the OS threads (ptrace) instead\n", r.fallback);
    if (rc < 0) {
        if (a.json) {
            char *doc = stack_json_error(a.pid, err);
            if (doc) puts(doc);
            free(doc);
        }
        fprintf(stderr, "diagtop stack: %s\n", err);
        return 1;
    }
    status = print_stacks(&a, &r);
    capture_stack_free(&r);
    return status;
}
