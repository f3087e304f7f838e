/* diagtop: entry point. Parses the command line, merges settings, and hands over to a front end. */
#include <locale.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collect/users.h"
#include "ui/tui.h"
#include "batch.h"
#include "cmd_analyze.h"
#include "cmd_dump.h"
#include "cmd_info.h"
#include "cmd_runtime.h"
#include "cmd_serve.h"
#include "cmd_stack.h"
#include "cmd_watch.h"
#include "config_file.h"
#include "options.h"

#ifndef DIAGTOP_VERSION
#define DIAGTOP_VERSION "0.1.0"
#endif

/* The view options both front ends start from. */
static int view_options(const struct options *o, const struct settings *s, struct procview_opts *vo)
{
    memset(vo, 0, sizeof *vo);
    vo->sort = s->sort;
    vo->reverse = s->reverse;
    vo->tree = s->tree;
    vo->show_threads = s->show_threads;
    vo->npids = o->npids;
    memcpy(vo->pids, o->pids, sizeof vo->pids);
    if (o->user_set) {
        if (users_lookup(o->user, &vo->user) < 0) {
            fprintf(stderr, "diagtop: -u: unknown user '%s'\n", o->user);
            return -1;
        }
        vo->user_set = 1;
    }
    return 0;
}

/* Where the monitor persists its settings (the TUI only calls back). */
static char config_path[4096];

static int save_settings(const struct settings *s, char *err, size_t errlen)
{
    return config_file_save(s, config_path, err, errlen);
}

/* Subcommands: each parses its own options. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"stack", cmd_stack},
    {"info", cmd_info},
    {"memstats", cmd_memstats},
    {"dump", cmd_dump},
    {"gc", cmd_gc},
    {"heap", cmd_heap},
    {"profile", cmd_profile},
    {"serve", cmd_serve},
    {"watch", cmd_watch},
    {"analyze", cmd_analyze},
};

int main(int argc, char **argv)
{
    /* Only the character type (UTF-8 for the screen): a comma as decimal point would break JSON and the parsing of
     * /proc, and the other categories cost a file to open each at every start. */
    setlocale(LC_CTYPE, "");
    if (argc > 1 && argv[1][0] != '-') {
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    }
    struct options o;
    char err[512];
    if (options_parse(&o, argc, argv, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop: %s\n", err);
        return 2;
    }
    if (o.help) {
        fputs(options_usage, stdout);
        return 0;
    }
    if (o.version) {
        printf("diagtop %s\n", DIAGTOP_VERSION);
        return 0;
    }

    struct settings s;
    settings_defaults(&s);
    if (config_file_path(config_path, sizeof config_path) == 0 && config_file_load(&s, config_path, err, sizeof err) != 0)
        fprintf(stderr, "diagtop: %s\n", err);
    options_apply(&o, &s);

    struct procview_opts vo;
    if (view_options(&o, &s, &vo) < 0) return 2;
    if (o.batch) return batch_run(&o, &s, &vo);

    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "diagtop: not a terminal; use -b for batch output (or --json)\n");
        return 2;
    }
    struct tui_config tc = {&s, &vo, config_path[0] ? save_settings : NULL,
                            o.no_color || (getenv("NO_COLOR") && *getenv("NO_COLOR"))};
    return tui_run(&tc);
}
