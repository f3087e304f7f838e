/* cmd_analyze_core: parse the options, read the core (core_report_read), or two and their difference
 * (core_diff_build), and print the report as text or JSON. */
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
    "       diagtop analyze OLD.core NEW.core [options]   what changed: heap by size, stacks, threads\n"
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
    const char *path, *older, *output; /* older: the first of two cores */
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
    if (optind == argc || argc - optind > 2) {
        fprintf(stderr, "diagtop analyze: %s\n%s", optind == argc ? "which core?" : "one core, or two to compare",
                cmd_analyze_core_usage);
        return -1;
    }
    c->path = argv[argc - 1];
    c->older = argc - optind == 2 ? argv[optind] : NULL;
    return 0;
}

/* Prints the text lines, or the JSON document, to stdout or the output file. */
static int print(const struct core_cli *c, char *doc, struct text_lines *tl, int rendered)
{
    int status = 1;
    if (c->json) {
        status = doc ? output_write("analyze", c->output, doc, 0) : 1;
    } else if (rendered == 0) {
        FILE *f = output_open("analyze", c->output);
        status = f ? output_close("analyze", c->output, f, text_lines_write(tl, f) < 0) : 1;
    }
    free(doc);
    text_lines_free(tl);
    return status;
}

static int analyze_two(const struct core_cli *c, const struct core_text_opts *to)
{
    char err[1024];
    struct core_report older, newer;
    struct core_diff d;
    if (core_report_read(c->older, &c->opts, &older, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop analyze: %s\n", err);
        return 1;
    }
    int status = 1;
    if (core_report_read(c->path, &c->opts, &newer, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop analyze: %s\n", err);
    } else {
        if (core_diff_build(&older, &newer, &d) < 0) {
            fprintf(stderr, "diagtop analyze: out of memory\n");
        } else {
            struct text_lines tl = {0};
            char *doc = c->json ? core_json_diff(&d, c->older, c->path, c->opts.source) : NULL;
            status = print(c, doc, &tl, c->json ? 0 : core_text_diff(&d, c->older, c->path, to, &tl));
            core_diff_free(&d);
        }
        core_report_free(&newer);
    }
    core_report_free(&older);
    return status;
}

int cmd_analyze_core(int argc, char **argv)
{
    struct core_cli c;
    int rc = parse(&c, argc, argv);
    if (rc) return rc > 0 ? 0 : 2;
    struct core_text_opts to = {c.path, c.group, c.opts.source, c.all_files, c.all_goroutines, (int)c.heap_rows};
    if (c.older) return analyze_two(&c, &to);
    char err[1024];
    struct core_report r;
    if (core_report_read(c.path, &c.opts, &r, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop analyze: %s\n", err);
        return 1;
    }
    struct text_lines tl = {0};
    char *doc = c.json ? core_json(&r, c.path, c.opts.source) : NULL;
    int status = print(&c, doc, &tl, c.json ? 0 : core_text_render(&r, &to, &tl));
    core_report_free(&r);
    return status;
}
