#include "capture.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "actions/runtimes/provider.h"

static void request_for(int pid, double timeout, const volatile sig_atomic_t *cancel, struct provider_request *rq)
{
    provider_request_default(rq, pid);
    if (timeout > 0) rq->timeout = timeout;
    rq->cancel = cancel;
}

/* ---- stacks ---- */

void capture_stack_options_default(struct capture_stack_options *o)
{
    memset(o, 0, sizeof *o);
    stack_options_default(&o->stack);
    o->timeout = 5.0;
}

/* The runtime's provider that gives pid's stacks as o asks, or NULL (why says what is missing, or ""). */
static const struct provider *stack_runtime(int pid, const struct capture_stack_options *o, char *why, size_t whylen)
{
    why[0] = '\0';
    if (o->from == CAPTURE_NATIVE || (o->from == CAPTURE_AUTO && (o->stack.tid || o->stack.no_stop))) return NULL;
    const struct provider *p = provider_choose(pid, OP_STACK, 0, why, whylen);
    return p && p->stack ? p : NULL; /* the native provider leaves stacks to stack_capture */
}

void capture_stack_who(int pid, const struct capture_stack_options *o, struct capture_who *out)
{
    memset(out, 0, sizeof *out);
    const struct provider *p = stack_runtime(pid, o, out->note, sizeof out->note);
    out->from = p ? CAPTURE_RUNTIME : CAPTURE_NATIVE;
    out->by = p ? p->name : native_provider.name;
}

int capture_stack(int pid, const struct capture_stack_options *o, struct capture_stack *out, char *err,
                  size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct provider *p = stack_runtime(pid, o, err, errlen);
    if (!p && o->from == CAPTURE_RUNTIME) {
        if (!err[0]) snprintf(err, errlen, "the runtime cannot tell the stacks of %d", pid);
        return -ENOTSUP;
    }
    if (p) {
        struct provider_request rq;
        request_for(pid, o->timeout, o->cancel, &rq);
        out->by = p->name;
        int rc = p->stack(&rq, &out->rt, err, errlen);
        if (rc == 0) {
            out->runtime = 1;
            return 0;
        }
        rt_stack_free(&out->rt);
        if (o->from == CAPTURE_RUNTIME) return rc;
        /* the runtime could not answer: the OS threads instead */
        snprintf(out->fallback, sizeof out->fallback, "%s: %s", p->name, err);
    }
    struct stack_options so = o->stack;
    so.cancel = o->cancel;
    out->by = native_provider.name;
    int rc = stack_capture(pid, &so, &out->native, err, errlen);
    if (rc < 0) stack_result_free(&out->native);
    return rc;
}

void capture_stack_free(struct capture_stack *c)
{
    rt_stack_free(&c->rt);
    stack_result_free(&c->native);
    c->runtime = 0;
}

/* ---- CPU profiles ---- */

void capture_profile_options_default(struct capture_profile_options *o)
{
    memset(o, 0, sizeof *o);
    o->method = cpu_profile_method_from_env();
    o->timeout = 5.0;
}

/* Who answers pid's profile as o asks: the runtime's provider, else the native one (diagtop's sampler), else NULL;
 * note as capture_who says. */
static const struct provider *profile_provider(int pid, const struct capture_profile_options *o, char *note,
                                               size_t notelen)
{
    return provider_choose(pid, OP_PROFILE, o->from == CAPTURE_NATIVE, note, notelen);
}

/* Whether p's answer is a cpu_report: its own report when it has one and it is wanted (a live one, the JVM's, by
 * a live view only), or when it has nothing else;
 * else diagtop's sampler's when it has no profiler of its own. */
static int gives_report(const struct provider *p, const struct capture_profile_options *o)
{
    if (p->profile_report && (p->live_report ? o->want_live : o->want_report)) return 1; /* a live one: only live */
    if (p->profile_report && !p->profile) return 1;
    return !p->profile;
}

void capture_profile_who(int pid, const struct capture_profile_options *o, struct capture_who *out)
{
    memset(out, 0, sizeof *out);
    const struct provider *p = profile_provider(pid, o, out->note, sizeof out->note);
    out->from = p && p != &native_provider ? CAPTURE_RUNTIME : CAPTURE_NATIVE;
    out->by = p ? p->name : NULL;
    out->is_report = p && gives_report(p, o);
}

/* diagtop's own sampler: any process, never stopped (perf) or for microseconds a sample (ptrace). */
static int run_sampler(int pid, const struct capture_profile_options *o, struct cpu_report *out, char *err,
                       size_t errlen)
{
    struct cpu_profile_options so;
    cpu_profile_options_default(&so, pid);
    if (o->seconds > 0) so.seconds = o->seconds;
    if (o->hz > 0) so.hz = o->hz;
    so.method = o->method;
    so.cancel = o->cancel;
    so.live_seconds = o->live_seconds;
    so.on_report = o->on_report;
    so.report_arg = o->report_arg;
    so.progress = o->progress;
    so.progress_arg = o->progress_arg;
    return cpu_profile_run(&so, out, err, errlen);
}

int capture_profile(int pid, const struct capture_profile_options *o, struct capture_profile *out, char *err,
                    size_t errlen)
{
    memset(out, 0, sizeof *out);
    const struct provider *p = profile_provider(pid, o, err, errlen);
    if (!p) return -ENOTSUP;
    if (p == &native_provider && o->from == CAPTURE_RUNTIME) {
        if (!err[0]) snprintf(err, errlen, "the runtime has no profiler for %d", pid);
        return -ENOTSUP;
    }
    err[0] = '\0';
    out->by = p->name;
    out->is_report = gives_report(p, o);
    int rc;
    if (p->profile_report && out->is_report) {
        struct provider_request rq;
        request_for(pid, o->timeout, o->cancel, &rq);
        rq.seconds = o->seconds > 0 ? o->seconds : 0; /* 0: the report's own default */
        rq.progress = o->progress;
        rq.progress_arg = o->progress_arg;
        rq.save_dir = o->save_dir;
        rq.live_seconds = o->live_seconds;
        rq.on_report = o->on_report;
        rq.report_arg = o->report_arg;
        rc = p->profile_report(&rq, o->hz, &out->report, err, errlen);
    } else if (out->is_report) {
        rc = run_sampler(pid, o, &out->report, err, errlen);
    } else {
        struct provider_request rq;
        request_for(pid, o->timeout, o->cancel, &rq);
        if (o->seconds > 0) rq.seconds = o->seconds;
        rq.save_dir = o->save_dir;
        rq.progress = o->progress;
        rq.progress_arg = o->progress_arg;
        rc = p->profile(&rq, &out->rt, err, errlen);
    }
    if (rc < 0) {
        const char *by = out->by;
        capture_profile_free(out);
        out->by = by;
    }
    return rc;
}

void capture_profile_free(struct capture_profile *c)
{
    rt_profile_free(&c->rt);
    cpu_report_free(&c->report);
    c->is_report = 0;
}
