#include "cmd_info.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procinfo.h"
#include "render/procinfo_json.h"
#include "render/procinfo_text.h"
#include "util/text.h"

static const char info_usage[] =
    "usage: diagtop info PID [--json] [--section LIST] [--show-secrets]\n"
    "  details of one process (nothing is stopped or attached):\n"
    "      --section LIST  general,memory,modules,fds,threads,env,io (default: all)\n"
    "      --json          JSON with Kudu's field names mapped onto Linux and the Linux-native ones\n"
    "      --show-secrets  show environment values of names like SECRET, TOKEN, PASSWORD, KEY (masked by default)\n";

static int run(int argc, char **argv, const char *cmd, unsigned default_sections)
{
    static const struct option longopts[] = {{"json", no_argument, 0, 'j'}, {"section", required_argument, 0, 's'},
                                             {"show-secrets", no_argument, 0, 'S'}, {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    int json = 0, secrets = 0, c;
    unsigned sections = default_sections;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'S': secrets = 1; break;
        case 's': {
            int m = procinfo_parse_sections(optarg);
            if (m < 0 || default_sections != PI_ALL) {
                fprintf(stderr, "diagtop %s: --section: '%s' is not a list of general,memory,modules,fds,threads,"
                        "env,io\n", cmd, optarg);
                return 2;
            }
            sections = (unsigned)m;
            break;
        }
        case 'h': fputs(info_usage, stdout); return 0;
        case ':': fprintf(stderr, "diagtop %s: %s needs a value\n", cmd, argv[optind - 1]); return 2;
        default: fprintf(stderr, "diagtop %s: unknown option %s\n%s", cmd, argv[optind - 1], info_usage); return 2;
        }
    }
    int pid;
    if (optind != argc - 1 || text_parse_pid(argv[optind], &pid) < 0) {
        fprintf(stderr, "diagtop %s: %s\n%s", cmd, optind < argc ? "not a process id" : "which process?", info_usage);
        return 2;
    }
    struct proc_info pi;
    char err[256];
    if (procinfo_collect(pid, sections, 0.1, &pi, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop %s: %s\n", cmd, err);
        return 1;
    }
    int status = 0;
    if (json) {
        char *doc = procinfo_json(&pi, secrets);
        status = !doc || puts(doc) == EOF;
        free(doc);
    } else {
        struct text_lines tl = {0};
        struct procinfo_text_opts o = {secrets, NULL};
        char comm[96];
        text_sanitize_display(comm, sizeof comm, pi.general.comm, strlen(pi.general.comm));
        text_lines_add(&tl, "Process %d (%s)", pi.pid, comm);
        for (int i = 0; i < 7; i++) {
            enum procinfo_section s = (enum procinfo_section)(1 << i);
            if (!(sections & s)) continue;
            text_lines_add(&tl, "%s", "");
            text_lines_add(&tl, "== %s", procinfo_section_name(s));
            procinfo_text_section(&pi, s, &o, &tl);
        }
        status = text_lines_write(&tl, stdout) < 0;
        text_lines_free(&tl);
    }
    procinfo_free(&pi);
    return status;
}

int cmd_info(int argc, char **argv) { return run(argc, argv, "info", PI_ALL); }
