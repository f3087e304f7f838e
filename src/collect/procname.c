#include "procname.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fileio.h"
#include "util/text.h"

#define ARGS_MAX 64 /* an interpreter's options and its script come first; the rest is the script's own */

enum interp { INTERP_NONE, INTERP_PYTHON, INTERP_JAVA, INTERP_NODE, INTERP_RUBY, INTERP_PERL, INTERP_SHELL };

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* name is stem followed by a version only ("python3.11", "perl5.36"), or stem itself. */
static int versioned(const char *name, const char *stem)
{
    size_t n = strlen(stem);
    if (strncmp(name, stem, n) != 0) return 0;
    return strspn(name + n, "0123456789.") == strlen(name + n);
}

static enum interp interp_of(const char *name)
{
    static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"};
    if (versioned(name, "python") || versioned(name, "pypy")) return INTERP_PYTHON;
    if (!strcmp(name, "java")) return INTERP_JAVA;
    if (!strcmp(name, "node") || !strcmp(name, "nodejs")) return INTERP_NODE;
    if (versioned(name, "ruby")) return INTERP_RUBY;
    if (versioned(name, "perl")) return INTERP_PERL;
    for (size_t i = 0; i < sizeof shells / sizeof shells[0]; i++)
        if (!strcmp(name, shells[i])) return INTERP_SHELL;
    return INTERP_NONE;
}

static int one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list)) return 1;
    return 0;
}

/* The options of each interpreter that take the next argument as their value. */
static const char *const python_valued[] = {"--check-hash-based-pycs", NULL}; /* long ones; short: below */
static const char *const java_valued[] = {"-cp", "-classpath", "--class-path", "-p", "--module-path",
                                          "--upgrade-module-path", "--add-modules", "--limit-modules", "--add-reads",
                                          "--add-exports", "--add-opens", "--patch-module", "--source", NULL};
static const char *const node_valued[] = {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C",
                                          "--conditions", "--title", NULL};
static const char *const ruby_valued[] = {"-I", "-r", "-C", "-E", "--encoding", NULL};
static const char *const perl_valued[] = {"-I", NULL};
static const char *const shell_valued[] = {"-o", "+o", "-O", "+O", "--rcfile", "--init-file", NULL};

/* Ruby's and Perl's flags that take no value, bundled before -e ("-ne"); "-rtime" is not a one-liner. */
#define PLAIN_FLAGS "nplaswcvWTtSU"

/* Python's short options, possibly bundled ("-uc"): sets *what to "-c", "-m" (with *arg the module) or "" (an
 * option only). Returns how many arguments the option used (1 or 2). */
static int python_option(char **argv, int i, int argc, const char **what, const char **arg)
{
    *what = "";
    for (const char *c = argv[i] + 1; *c; c++) {
        if (*c == 'c') {
            *what = "-c";
            return 1;
        }
        if (*c == 'm' || *c == 'W' || *c == 'X') {
            const char *v = c[1] ? c + 1 : i + 1 < argc ? argv[i + 1] : "";
            if (*c == 'm') {
                *what = "-m";
                *arg = v;
            }
            return c[1] ? 1 : 2;
        }
    }
    return 1;
}

/* What an interpreter runs, from its arguments after argv[0], into out: "leak.py", "-m http.server", "-jar
 * app.jar", "Main", "-c". "" when it runs nothing we can name. */
static void runs(enum interp k, char **argv, int argc, char *out, size_t n)
{
    const char *const *valued = k == INTERP_PYTHON ? python_valued : k == INTERP_JAVA ? java_valued
                              : k == INTERP_NODE ? node_valued : k == INTERP_RUBY ? ruby_valued
                              : k == INTERP_PERL ? perl_valued : shell_valued;
    out[0] = '\0';
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int option = (a[0] == '-' && a[1]) || (k == INTERP_SHELL && a[0] == '+' && a[1]);
        if (!strcmp(a, "--")) {
            if (i + 1 < argc) snprintf(out, n, "%s", base_name(argv[i + 1]));
            return;
        }
        if (!option) {
            if (k != INTERP_JAVA) snprintf(out, n, "%s", base_name(a));
            else if (strlen(a) > 5 && !strcmp(a + strlen(a) - 5, ".java")) snprintf(out, n, "%s", base_name(a));
            else snprintf(out, n, "%s", strrchr(a, '.') ? strrchr(a, '.') + 1 : a); /* com.example.Main: Main */
            return;
        }
        if (k == INTERP_PYTHON && a[1] != '-') {
            const char *what, *arg = "";
            int used = python_option(argv, i, argc, &what, &arg);
            if (what[0]) {
                snprintf(out, n, "%s%s%s", what, arg[0] ? " " : "", arg);
                return;
            }
            i += used - 1;
            continue;
        }
        size_t len = strlen(a);
        int one_liner = (k == INTERP_NODE && one_of(a, (const char *const[]){"-e", "--eval", "-p", "--print", NULL})) ||
                        (k == INTERP_SHELL && a[1] != '-' && strchr(a + 1, 'c')) ||
                        ((k == INTERP_RUBY || k == INTERP_PERL) && a[1] != '-' && strspn(a + 1, PLAIN_FLAGS) == len - 2 &&
                         (a[len - 1] == 'e' || (k == INTERP_PERL && a[len - 1] == 'E')));
        if (one_liner) {
            /* bundled flags ("-ne", "-xc") are named by the one that takes the program */
            const char *flag = k == INTERP_NODE ? a : k == INTERP_SHELL ? "-c" : a[len - 1] == 'E' ? "-E" : "-e";
            snprintf(out, n, "%s", flag);
            return;
        }
        if (k == INTERP_JAVA && (!strcmp(a, "-jar") || !strcmp(a, "-m") || !strcmp(a, "--module"))) {
            if (i + 1 >= argc) return;
            const char *v = argv[i + 1];
            if (a[1] == 'j') snprintf(out, n, "-jar %s", base_name(v));
            else snprintf(out, n, "-m %.*s", (int)strcspn(v, "/"), v); /* module/class: the module */
            return;
        }
        if (k == INTERP_SHELL && !strcmp(a, "-s")) return; /* the script comes on stdin */
        if (one_of(a, valued)) i++;
    }
}

void procname_short(const char *cmdline, size_t len, const char *comm, char *buf, size_t n)
{
    char raw[512] = "";
    char *copy = cmdline && len ? malloc(len + 1) : NULL;
    char *argv[ARGS_MAX];
    int argc = 0;
    if (copy) {
        memcpy(copy, cmdline, len);
        copy[len] = '\0';
        for (size_t at = 0; at < len && argc < ARGS_MAX; at += strlen(copy + at) + 1) argv[argc++] = copy + at;
    }
    enum interp k = argc > 0 ? interp_of(base_name(argv[0])) : INTERP_NONE;
    char what[400];
    if (k != INTERP_NONE) runs(k, argv, argc, what, sizeof what);
    if (k != INTERP_NONE && what[0]) snprintf(raw, sizeof raw, "%s %s", base_name(argv[0]), what);
    else if (comm && comm[0]) snprintf(raw, sizeof raw, "%s", comm);
    else if (argc > 0) snprintf(raw, sizeof raw, "%s", base_name(argv[0]));
    free(copy);
    text_sanitize_display(buf, n, raw, strlen(raw));
}

void procname_of_pid(int pid, char *buf, size_t n)
{
    ssize_t len = 0, comm_len = 0;
    char *cmdline = fileio_read_proc(AT_FDCWD, pid, "cmdline", 4096, &len);
    char *comm = fileio_read_proc(AT_FDCWD, pid, "comm", 64, &comm_len);
    if (comm) comm[strcspn(comm, "\n")] = '\0';
    procname_short(cmdline, cmdline ? (size_t)len : 0, comm, buf, n);
    free(cmdline);
    free(comm);
}
