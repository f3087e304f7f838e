/* cmd_analyze_core: parse the options, read the core (core_report_read), print the report as text or JSON. */
#include "cmd_analyze_core.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/offline/core_report.h"
#include "output_file.h"
#include "render/core_json.h"
#include "render/core_text.h"
#include "util/text.h"

const char cmd_analyze_core_usage[] =
    "usage: diagtop analyze CORE [options]\n"
    "  An ELF core (diagtop dump, gcore, or the kernel's), read offline: the process, the signal and the thread\n"
    "  that took it (first), a Go program's goroutines, every thread's stack, the native heap (glibc's malloc:\n"
    "  totals, chunks in use by size), the mapped files with their build-ids.\n"
    "  --exe PATH          the program, when the path the core names is wrong here (moved, rebuilt, another box)\n"
    "  --sysroot DIR       look for the core's files under DIR first (a container's root, a copy of the box's)\n"
    "  --no-source         no file:line or inlined calls (no debug information read)\n"
    "  --no-group          one block per thread, even when stacks are identical\n"
    "  --all-files         list every mapped file (default: those with frames, and the missing)\n"
    "  --all-goroutines    a Go program's runtime goroutines too (default: hidden, as Go's tracebacks do)\n"
    "  --no-heap           do not walk the native heap\n"
    "  --heap-rows N       sizes of the heap's histogram shown (default 20; 0: all; JSON has all)\n"
    "  --json              one JSON document (docs/json.md)\n"
    "  -o, --output FILE   write to a new file (0600) instead of stdout\n";

struct core_cli {
    struct core_options opts;
    const char *path, *output;
    int json, group, all_files, all_goroutines;
    unsigned long long heap_rows;
};

static int parse(struct core_cli *c, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"exe", required_argument, 0, 'e'},     {"sysroot", required_argument, 0, 'r'},
        {"no-source", no_argument, 0, 's'},     {"no-group", no_argument, 0, 'g'},
        {"all-files", no_argument, 0, 'a'},     {"all-goroutines", no_argument, 0, 'G'},
        {"no-heap", no_argument, 0, 'H'},       {"heap-rows", required_argument, 0, 'R'},
        {"json", no_argument, 0, 'j'},
        {"output", required_argument, 0, 'o'},  {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    memset(c, 0, sizeof *c);
    c->opts.source = 1;
    c->opts.heap = 1;
    c->group = 1;
    c->heap_rows = 20;
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h': fputs(cmd_analyze_core_usage, stdout); return 1;
        case 'e': c->opts.exe = optarg; break;
        case 'r': c->opts.sysroot = optarg; break;
        case 's': c->opts.source = 0; break;
        case 'g': c->group = 0; break;
        case 'a': c->all_files = 1; break;
        case 'G': c->all_goroutines = 1; break;
        case 'H': c->opts.heap = 0; break;
        case 'R':
            if (text_parse_u64(optarg, &c->heap_rows) < 0 || c->heap_rows > 1000000) {
                fprintf(stderr, "diagtop analyze: --heap-rows: '%s' is not a count\n", optarg);
                return -1;
            }
            break;
        case 'j': c->json = 1; break;
        case 'o': c->output = optarg; break;
        case ':': fprintf(stderr, "diagtop analyze: %s needs a value\n", argv[optind - 1]); return -1;
        default:
            fprintf(stderr, "diagtop analyze: unknown option %s for a core\n%s", argv[optind - 1],
                    cmd_analyze_core_usage);
            return -1;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "diagtop analyze: %s\n%s", optind == argc ? "which core?" : "one core at a time",
                cmd_analyze_core_usage);
        return -1;
    }
    c->path = argv[optind];
    return 0;
}

int cmd_analyze_core(int argc, char **argv)
{
    struct core_cli c;
    int rc = parse(&c, argc, argv);
    if (rc) return rc > 0 ? 0 : 2;
    char err[1024];
    struct core_report r;
    if (core_report_read(c.path, &c.opts, &r, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop analyze: %s\n", err);
        return 1;
    }
    int status = 1;
    if (c.json) {
        char *doc = core_json(&r, c.path, c.opts.source);
        status = doc ? output_write("analyze", c.output, doc, 0) : 1;
        free(doc);
    } else {
        struct text_lines tl = {0};
        struct core_text_opts to = {c.path, c.group, c.opts.source, c.all_files, c.all_goroutines, (int)c.heap_rows};
        if (core_text_render(&r, &to, &tl) == 0) {
            FILE *f = output_open("analyze", c.output);
            status = f ? output_close("analyze", c.output, f, text_lines_write(&tl, f) < 0) : 1;
        }
        text_lines_free(&tl);
    }
    core_report_free(&r);
    return status;
}
