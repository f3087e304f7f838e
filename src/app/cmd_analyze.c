/* cmd_analyze: parse the options, open the dump, ask it what the options name (heap_report_build, which opens the
 * older dump for --diff), and print the report as text or JSON. */
#include "cmd_analyze.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actions/offline/heap_analysis.h"
#include "cmd_analyze_core.h"
#include "model/watch_rule.h"
#include "output_file.h"
#include "render/hprof_json.h"
#include "render/hprof_text.h"
#include "util/text.h"

const char cmd_analyze_usage[] =
    "usage: diagtop analyze FILE.hprof[.gz] [options]   (a core: diagtop analyze CORE --help)\n"
    "  A JVM heap dump (HPROF, as `diagtop dump --heap`, jcmd GC.heap_dump or jmap -dump write it), read offline.\n"
    "  Without options: a summary, the class histogram with retained sizes, and the biggest dominators.\n"
    "  --class NAME        a class's instances with shallow and retained size (NAME: full, or a unique suffix)\n"
    "  --paths NAME|0xID   the shortest paths from GC roots to a class's instances (or one object), merged\n"
    "  --count N           instances listed, or followed by --paths (default 20 listed, every instance followed)\n"
    "  --suspects[=SHARE]  objects retaining SHARE of the heap or more (default 0.1), with path and accumulation\n"
    "  --object 0xID       an object's fields and values (an array's first --count elements)\n"
    "  --diff OLD.hprof    the histogram's change since an older dump of the same JVM\n"
    "  --limit N           histogram and diff rows shown (default 30; 0: all; JSON has all)\n"
    "  --histogram         counts and shallow sizes only: no reference graph (fast, little memory)\n"
    "  --max-memory SIZE   refuse when the index would need more (default: half of the memory available)\n"
    "  --layout L          object layout when the dump's addresses do not tell: compressed, uncompressed-class,\n"
    "                      uncompressed (default: inferred)\n"
    "  --tmpdir DIR        where a .gz is inflated (default $TMPDIR, else /tmp)\n"
    "  --json              one JSON document (docs/json.md)\n"
    "  -o, --output FILE   write to a new file (0600) instead of stdout\n";

struct analyze_cli {
    const char *path, *cls, *paths, *object, *diff, *output;
    size_t count, limit;
    int count_set, json, histogram_only;
    double share;
    struct heap_analysis_opts opts;
};

static int parse_count(const char *opt, const char *arg, size_t *out)
{
    unsigned long long v;
    if (text_parse_u64(arg, &v) < 0 || v > 100000000ULL) {
        fprintf(stderr, "diagtop analyze: %s: '%s' is not a count\n", opt, arg);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

static int parse(struct analyze_cli *c, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"class", required_argument, 0, 'c'},  {"paths", required_argument, 0, 'p'},
        {"count", required_argument, 0, 'n'},  {"suspects", optional_argument, 0, 's'},
        {"object", required_argument, 0, 'O'}, {"diff", required_argument, 0, 'D'},
        {"limit", required_argument, 0, 'l'},  {"histogram", no_argument, 0, 'H'},
        {"max-memory", required_argument, 0, 'm'}, {"layout", required_argument, 0, 'L'},
        {"tmpdir", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    memset(c, 0, sizeof *c);
    c->limit = 30;
    optind = 1;
    opterr = 0;
    int opt;
    unsigned long long bytes;
    while ((opt = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h': fputs(cmd_analyze_usage, stdout); return 1;
        case 'c': c->cls = optarg; break;
        case 'p': c->paths = optarg; break;
        case 'n':
            if (parse_count("--count", optarg, &c->count) < 0) return -1;
            c->count_set = 1;
            break;
        case 's':
            c->share = optarg ? strtod(optarg, NULL) : 0.1;
            if (!(c->share > 0 && c->share <= 1)) {
                fprintf(stderr, "diagtop analyze: --suspects: '%s' is not a share between 0 and 1\n", optarg);
                return -1;
            }
            break;
        case 'O': c->object = optarg; break;
        case 'D': c->diff = optarg; break;
        case 'l':
            if (parse_count("--limit", optarg, &c->limit) < 0) return -1;
            break;
        case 'H': c->histogram_only = 1; break;
        case 'm':
            if (watch_parse_size(optarg, &bytes) < 0 || bytes == 0) {
                fprintf(stderr, "diagtop analyze: --max-memory: '%s' is not a size (4G, 512M)\n", optarg);
                return -1;
            }
            c->opts.max_memory = bytes;
            break;
        case 'L': c->opts.layout = optarg; break;
        case 't': c->opts.tmpdir = optarg; break;
        case 'j': c->json = 1; break;
        case 'o': c->output = optarg; break;
        case ':': fprintf(stderr, "diagtop analyze: %s needs a value\n", argv[optind - 1]); return -1;
        default: fprintf(stderr, "diagtop analyze: unknown option %s\n%s", argv[optind - 1], cmd_analyze_usage); return -1;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "diagtop analyze: %s\n%s", optind == argc ? "which file?" : "one file at a time",
                cmd_analyze_usage);
        return -1;
    }
    c->path = argv[optind];
    if (c->histogram_only && (c->paths || c->share > 0)) {
        fprintf(stderr, "diagtop analyze: --histogram has no reference graph: --paths and --suspects need it\n");
        return -1;
    }
    c->opts.histogram_only = c->histogram_only;
    return 0;
}

/* Whether path starts as an ELF file does: a core, read by cmd_analyze_core. */
static int is_elf(const char *path)
{
    FILE *f = fopen(path, "rbe");
    unsigned char m[4] = {0};
    if (!f) return 0;
    size_t n = fread(m, 1, 4, f);
    fclose(f);
    return n == 4 && memcmp(m, "\177ELF", 4) == 0;
}

/* Whether an option (without "=value") takes the next argument as its value, for a heap dump or a core. */
static int takes_value(const char *opt)
{
    static const char *const with_value[] = {"-o",        "--output", "--class",   "--paths", "--count",
                                             "--object",  "--diff",   "--limit",   "--max-memory",
                                             "--layout",  "--tmpdir", "--exe",     "--sysroot"};
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++)
        if (strcmp(opt, with_value[i]) == 0) return 1;
    return 0;
}

/* Whether the file argument (the first that is neither an option nor an option's value) is an ELF file. */
static int names_core(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) return i + 1 < argc && is_elf(argv[i + 1]);
        if (argv[i][0] != '-') return is_elf(argv[i]);
        if (takes_value(argv[i])) i++;
    }
    return 0;
}

int cmd_analyze(int argc, char **argv)
{
    if (names_core(argc, argv)) return cmd_analyze_core(argc, argv);
    struct analyze_cli c;
    int rc = parse(&c, argc, argv);
    if (rc) return rc > 0 ? 0 : 2;
    char err[1024];
    struct heap_analysis *a;
    if (heap_analysis_open(&a, c.path, &c.opts, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop analyze: %s\n", err);
        return 1;
    }
    struct heap_query q = {c.cls, c.paths, c.object, c.diff, c.count_set ? c.count : 0, c.share, c.json, &c.opts};
    struct heap_report r;
    int status = 1;
    if (heap_report_build(a, &q, &r, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop analyze: %s\n", err);
    } else {
        r.path = c.path;
        r.limit = c.limit;
        if (c.json) {
            char *doc = hprof_json_report(&r);
            status = doc ? output_write("analyze", c.output, doc, 0) : 1;
            free(doc);
        } else {
            struct text_lines tl = {0};
            if (hprof_text_report(&r, &tl) == 0) {
                FILE *f = output_open("analyze", c.output);
                status = f ? output_close("analyze", c.output, f, text_lines_write(&tl, f) < 0) : 1;
            }
            text_lines_free(&tl);
        }
        heap_report_free(&r);
    }
    heap_analysis_close(a);
    return status;
}
