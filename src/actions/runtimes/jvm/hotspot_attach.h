/* hotspot_attach: one request to a JVM through HotSpot's dynamic attach mechanism (the protocol jcmd and jstack
 * speak; facts in docs/protocols/hotspot.md), made from a forked, single-threaded helper: the helper takes the JVM's
 * effective gid and uid when diagtop runs as root (seteuid changes every thread of a process, and the JVM accepts
 * only root or its own uid and gid), starts the attach listener if needed (a trigger file .attach_pidN owned by
 * the JVM's uid in its working directory or /tmp, then SIGQUIT, sent through a pidfd), connects to
 * /proc/PID/root/tmp/.java_pidN (N: the pid in the JVM's own namespace), sends the five NUL-terminated strings
 * of protocol 1, and pipes the reply back. The monitor process itself never changes credentials.
 *
 * The target is never harmed: SIGQUIT is sent only to a process that maps libjvm.so and catches SIGQUIT (a JVM
 * with -Xrs, or one still starting, would die of it), never to one with the attach mechanism disabled; the
 * trigger file is removed; a helper that overstays the timeout or is cancelled is killed and reaped (the JVM's
 * listener sees its client go). Replies are capped (HOTSPOT_REPLY_MAX). */
#ifndef DIAGTOP_HOTSPOT_ATTACH_H
#define DIAGTOP_HOTSPOT_ATTACH_H
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#define HOTSPOT_REPLY_MAX (64u << 20) /* 2000 threads dump to ~3.4 MB; a histogram of 50,000 classes ~5 MB */

struct hotspot_target {
    int pid;          /* as diagtop sees it */
    unsigned long long start_ticks; /* its identity: a request goes only to the process that was checked */
    int nspid;        /* as the JVM sees itself (last field of NStgid): names .java_pidN and .attach_pidN */
    uid_t uid;        /* the JVM's effective ids */
    gid_t gid;
    int listening;    /* its attach socket is there (owned by uid) */
    int may_trigger;  /* starting the listener is safe: SIGQUIT caught, attach not disabled */
    char why_no_trigger[192]; /* when !may_trigger: why diagtop will not signal it */
    int trigger_checked;      /* may_trigger is known (it is checked only when the socket is not there) */
    unsigned long long sig_caught; /* SigCgt */
};

/* Whether diagtop may attach to pid, from /proc alone (never signals, sends nothing): diagtop is root or has the JVM's
 * uid and gid, and either its attach socket is up (owned by its uid) or the listener can be started safely: a JVM
 * (libjvm.so mapped), SIGQUIT caught, -XX:+DisableAttachMechanism in neither its arguments (as its hsperfdata records
 * them, @argfiles expanded; else the command line and JDK_JAVA_OPTIONS) nor JAVA_TOOL_OPTIONS, _JAVA_OPTIONS (those
 * are read only when the socket is not there; a stale one makes the request check them). Returns 0 with t filled, or
 * -errno with the reason: -ESRCH (no such process), -ENOTSUP (not a JVM; attach disabled; SIGQUIT not caught: -Xrs or
 * still starting), -EPERM (another user). */
int hotspot_attach_check(int pid, struct hotspot_target *t, char *why, size_t whylen);

struct hotspot_reply {
    int status;     /* the JVM's status line: 0 done (the text may still say it failed), -1 refused, ... */
    char *text;     /* what follows the status line, NUL-terminated (the JVM's bytes, unsanitized) */
    size_t len;
    int triggered;  /* this request started the attach listener */
    double ms;      /* from the fork to the end of the reply */
};

/* Sends cmd with arg1 (the whole command line for "jcmd"; NULL for none) to the JVM checked into t and reads the
 * whole reply within timeout seconds, giving up when *cancel becomes set (cancel may be NULL). cmd is at most 16
 * bytes and arg1 at most 1024 (the listener's limits). Returns 0 with r filled (any status), or -errno with a
 * reason: -ETIMEDOUT (the listener never came up, or no complete reply in time), -ECANCELED, -ECONNREFUSED
 * (stale socket), -EACCES/-EPIPE (the JVM refused diagtop's credentials), -EMSGSIZE, -EPROTO (no status line),
 * -ESRCH (the JVM exited). */
int hotspot_attach_request(const struct hotspot_target *t, const char *cmd, const char *arg1, double timeout,
                           const volatile sig_atomic_t *cancel, struct hotspot_reply *r, char *err, size_t errlen);
void hotspot_reply_free(struct hotspot_reply *r);
#endif
