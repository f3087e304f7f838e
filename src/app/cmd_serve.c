#include "cmd_serve.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "util/dump_path.h"
#include "api/api_auth.h"
#include "api/api_server.h"
#include "actions/runtimes/heap_site.h"
#include "util/text.h"
#include "config_file.h"

static const char serve_usage[] =
    "usage: diagtop serve [--listen ADDR:PORT] [--users FILE] [--tokens FILE] [--tls-cert PEM --tls-key PEM]\n"
    "                     [--read-only] [--dump-dir DIR] [--allow-plaintext] [--max-connections N]\n"
    "                     [--client-timeout SECONDS] [--sample-interval SECONDS] [--sample-every SECONDS]\n"
    "                     [--drop-frames REGEX] [--quiet]\n"
    "       diagtop serve --hash-password   (reads a password on stdin, prints the hash for a users file)\n"
    "  the HTTP/JSON API: processes, details, stacks, memstats, heap, GC, CPU profiles (pprof), core dumps to\n"
    "  download, signals, Prometheus /metrics and a process-explorer page at /. Until SIGINT, SIGTERM or SIGHUP.\n"
    "      --listen A:P      address and port (default 127.0.0.1:7070; [::1]:7070 for IPv6; port 0: any free)\n"
    "      --users FILE      HTTP Basic: lines name:crypt-hash[:read|admin] (yescrypt: --hash-password)\n"
    "      --tokens FILE     bearer tokens: lines TOKEN[ read|admin], the file 0600 and the server user's\n"
    "                        (at least one of --users and --tokens; the scope defaults to read)\n"
    "      --tls-cert PEM, --tls-key PEM\n"
    "                        serve HTTPS (required on an address other than loopback)\n"
    "      --allow-plaintext serve plain HTTP on a non-loopback address anyway (a trusted network only)\n"
    "      --read-only       refuse everything that needs the admin scope (signals, GC, profiles, dumps,\n"
    "                        secrets), whoever asks\n"
    "      --dump-dir DIR    where core dumps go (default as for diagtop dump)\n"
    "      --drop-frames RE  heap: more allocation wrappers to skip when naming a row (as diagtop heap)\n"
    "      --max-connections N   at most N connections (default 64; a quarter of them per client address);\n"
    "                        when few are left, the oldest ones still sending a request are closed\n"
    "      --client-timeout S    a request's line and headers must arrive within S seconds, and a connection\n"
    "                        idle for S seconds is closed (default 15)\n"
    "      --sample-interval S   reuse a process-table sample younger than S seconds (default 1)\n"
    "      --sample-every S  also sample every S seconds (at least 1) when no request comes, so each\n"
    "                        process's history has no gaps (default: only for requests)\n"
    "      --quiet           no access log on stderr\n";

/* Reads one line from stdin without echo on a terminal. */
static int read_password(char *buf, size_t n)
{
    struct termios old, quiet;
    int tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &old) == 0;
    if (tty) {
        fputs("password: ", stderr);
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
    }
    int ok = fgets(buf, (int)n, stdin) != NULL;
    if (tty) {
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
        fputc('\n', stderr);
    }
    if (!ok) return -1;
    buf[strcspn(buf, "\r\n")] = '\0';
    return buf[0] ? 0 : -1;
}

static int hash_password(void)
{
    char pw[1024], hash[512], err[256];
    if (read_password(pw, sizeof pw) < 0) {
        fprintf(stderr, "diagtop serve: no password on stdin\n");
        return 2;
    }
    int rc = api_auth_hash(pw, hash, sizeof hash, err, sizeof err);
    explicit_bzero(pw, sizeof pw);
    if (rc < 0) {
        fprintf(stderr, "diagtop serve: %s\n", err);
        return 1;
    }
    printf("%s\n", hash);
    return 0;
}

static int seconds_arg(const char *name, const char *v, double max, double *out)
{
    if (text_parse_seconds(v, out) < 0 || *out > max) {
        fprintf(stderr, "diagtop serve: %s: '%s' is not a number of seconds up to %g\n", name, v, max);
        return -1;
    }
    return 0;
}

static int max_connections_arg(const char *v, int *out)
{
    unsigned long long n;
    if (text_parse_u64(v, &n) < 0 || n < 1 || n > 1024) {
        fprintf(stderr, "diagtop serve: --max-connections: '%s' is not a number from 1 to 1024\n", v);
        return -1;
    }
    *out = (int)n;
    return 0;
}

#define SERVE_RUN (-1) /* serve_options: the options are good, start the server */

/* The options into c (and *dump_opt, resolved later against the config file). Returns SERVE_RUN, or the exit
 * status when there is nothing to serve: --help, --hash-password, or a bad option. */
static int serve_options(struct api_server_config *c, const char **dump_opt, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"listen", required_argument, 0, 'l'},        {"users", required_argument, 0, 'u'},
        {"tokens", required_argument, 0, 't'},        {"tls-cert", required_argument, 0, 'c'},
        {"tls-key", required_argument, 0, 'k'},       {"read-only", no_argument, 0, 'r'},
        {"dump-dir", required_argument, 0, 'D'},      {"allow-plaintext", no_argument, 0, 'P'},
        {"max-connections", required_argument, 0, 'm'}, {"client-timeout", required_argument, 0, 'T'},
        {"sample-interval", required_argument, 0, 'i'}, {"quiet", no_argument, 0, 'q'},
        {"hash-password", no_argument, 0, 'H'},       {"help", no_argument, 0, 'h'},
        {"drop-frames", required_argument, 0, 'F'},   {"sample-every", required_argument, 0, 'e'},
        {0, 0, 0, 0}};
    int opt;
    double secs;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'l': c->listen = optarg; break;
        case 'u': c->users_file = optarg; break;
        case 't': c->tokens_file = optarg; break;
        case 'c': c->tls_cert = optarg; break;
        case 'k': c->tls_key = optarg; break;
        case 'r': c->read_only = 1; break;
        case 'D': *dump_opt = optarg; break;
        case 'F': c->drop_frames = optarg; break;
        case 'P': c->allow_plaintext = 1; break;
        case 'q': c->log = NULL; break;
        case 'H': return hash_password();
        case 'm':
            if (max_connections_arg(optarg, &c->max_connections) < 0) return 2;
            break;
        case 'T':
            if (seconds_arg("--client-timeout", optarg, 3600, &secs) < 0) return 2;
            c->client_timeout = secs < 1 ? 1 : (int)secs;
            break;
        case 'i':
            if (!strcmp(optarg, "0")) c->sample_interval = 0;
            else if (seconds_arg("--sample-interval", optarg, 3600, &c->sample_interval) < 0) return 2;
            break;
        case 'e':
            if (seconds_arg("--sample-every", optarg, 3600, &c->sample_every) < 0) return 2;
            if (c->sample_every < 1) {
                fprintf(stderr, "diagtop serve: --sample-every needs at least 1 second (got %s)\n", optarg);
                return 2;
            }
            break;
        case 'h': fputs(serve_usage, stdout); return 0;
        case ':': fprintf(stderr, "diagtop serve: %s needs a value\n", argv[optind - 1]); return 2;
        default: fprintf(stderr, "diagtop serve: unknown option %s\n%s", argv[optind - 1], serve_usage); return 2;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "diagtop serve: unexpected argument '%s'\n%s", argv[optind], serve_usage);
        return 2;
    }
    return SERVE_RUN;
}

/* What the config file adds (agent timeout, dump directory, drop_frames unless --drop-frames), and a dump directory checked writable now: a dump
 * asked for over HTTP should not be the first to find out. dir is where c->dump_dir points. */
static int serve_settings(struct api_server_config *c, const char *dump_opt, char *dir, size_t dirlen,
                          char *drop, size_t droplen)
{
    struct settings s;
    char err[1024];
    config_file_settings(&s);
    if (!c->drop_frames && s.drop_frames[0]) {
        snprintf(drop, droplen, "%s", s.drop_frames);
        c->drop_frames = drop;
    }
    struct heap_drop d;
    if (heap_drop_init(&d, c->drop_frames, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop serve: drop frames: %s\n", err);
        return -1;
    }
    heap_drop_free(&d);
    if (dump_directory(dump_opt, s.dump_dir, dir, dirlen, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop serve: %s\n", err);
        return -1;
    }
    if (access(dir, W_OK | X_OK) < 0) {
        fprintf(stderr, "diagtop serve: the dump directory %s is not writable: %s\n", dir, strerror(errno));
        return -1;
    }
    c->dump_dir = dir;
    c->agent_timeout = s.agent_timeout;
    return 0;
}

/* The quit signals are taken by sigwait here, never by a handler: every thread the server starts inherits them
 * blocked (so this runs before the server starts). A closed connection is an error code, not a death. */
static void block_quit_signals(sigset_t *quit)
{
    sigemptyset(quit);
    sigaddset(quit, SIGINT);
    sigaddset(quit, SIGTERM);
    sigaddset(quit, SIGHUP);
    pthread_sigmask(SIG_BLOCK, quit, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Serves until a quit signal, then stops the server (its connections and workers) before returning. */
static int serve_until_signal(const struct api_server_config *c, const sigset_t *quit)
{
    struct api_server *srv;
    char url[128], err[1024];
    if (api_server_start(c, &srv, url, sizeof url, err, sizeof err) < 0) {
        fprintf(stderr, "diagtop serve: %s\n", err);
        return 1;
    }
    printf("diagtop serve: listening on %s (dumps in %s%s)\n", url, c->dump_dir, c->read_only ? "; read-only" : "");
    fflush(stdout);
    int sig = 0;
    while (sigwait(quit, &sig) != 0) {}
    if (c->log) fprintf(c->log, "diagtop serve: %s: stopping\n", sigabbrev_np(sig) ? sigabbrev_np(sig) : "signal");
    api_server_stop(srv);
    return 0;
}

int cmd_serve(int argc, char **argv)
{
    struct api_server_config c;
    api_server_config_default(&c);
    c.log = stderr;
    const char *dump_opt = NULL;
    int rc = serve_options(&c, &dump_opt, argc, argv);
    if (rc != SERVE_RUN) return rc;
    char dir[4096], drop[512] = "";
    if (serve_settings(&c, dump_opt, dir, sizeof dir, drop, sizeof drop) < 0) return 1;
    sigset_t quit;
    block_quit_signals(&quit);
    return serve_until_signal(&c, &quit);
}
