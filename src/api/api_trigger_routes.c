#include "api_trigger_routes.h"

#include <stdio.h>
#include <string.h>

#include "api_target.h"
#include "collect/procstat.h"
#include "model/watch_spec.h"
#include "util/text.h"

/* The conditions a query may give (each the CLI's option: watch_spec). */
static const char *const cond_params[] = {"cpu", "cpu_below", "rss", "rss_growth", "threads", "fds"};

/* Appends "name=value " to the spec shown in listings. */
static void spec_add(char *spec, size_t n, const char *name, const char *value)
{
    size_t used = strlen(spec);
    if (used < n) snprintf(spec + used, n - used, "%s%s=%s", used ? " " : "", name, value);
}

/* The target: exactly one of pid, name and cgroup. Returns 0, or -1 with the reply. */
static int parse_target(const struct api_request *rq, struct watch_config *c, char *spec, size_t n,
                        struct api_reply *out)
{
    const char *pid = NULL, *name = NULL, *cgroup = NULL;
    if (api_arg_text(rq, out, "pid", 16, &pid) < 0 || api_arg_text(rq, out, "name", 255, &name) < 0 ||
        api_arg_text(rq, out, "cgroup", 1000, &cgroup) < 0)
        return -1;
    if ((pid != NULL) + (name != NULL) + (cgroup != NULL) != 1)
        return api_reply_error(out, 400, "one target: pid, name or cgroup");
    if (pid) {
        if (text_parse_pid(pid, &c->pid) < 0) return api_reply_error(out, 400, "pid: '%s' is not a process id", pid);
        struct procstat ps;
        if (api_target_check(c->pid, 1, &ps, out) < 0) return -1;
        spec_add(spec, n, "pid", pid);
    } else if (name) {
        if (!*name) return api_reply_error(out, 400, "name: a name of 1 to 255 bytes");
        c->name = name;
        spec_add(spec, n, "name", name);
    } else {
        /* cgroup.procs is read below /sys/fs/cgroup: a path never climbs out of it */
        if (!*cgroup || strstr(cgroup, "..")) return api_reply_error(out, 400, "cgroup: a path below /sys/fs/cgroup");
        c->cgroup = cgroup;
        spec_add(spec, n, "cgroup", cgroup);
    }
    return 0;
}

/* POST /api/triggers?pid=N&cpu=80:10&then=stack,dump&count=2 (admin, as its route says): 201 with the trigger,
 * Location its resource. */
void api_trigger_routes_arm(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    struct watch_config c;
    memset(&c, 0, sizeof c);
    char spec[1024] = "", err[512];
    if (parse_target(rq, &c, spec, sizeof spec, out) < 0) return;
    for (size_t i = 0; i < sizeof cond_params / sizeof cond_params[0]; i++) {
        const char *v = NULL;
        if (api_arg_text(rq, out, cond_params[i], 64, &v) < 0) return;
        if (!v) continue;
        if (watch_spec_set(&c, cond_params[i], v, err, sizeof err) < 0) {
            api_reply_error(out, 400, "%s", err);
            return;
        }
        spec_add(spec, sizeof spec, cond_params[i], v);
    }
    if (!c.nconds) {
        api_reply_error(out, 400, "no condition: cpu, cpu_below, rss, rss_growth, threads or fds");
        return;
    }
    const char *then = NULL, *max_disk = NULL;
    long count;
    if (api_arg_text(rq, out, "then", 1000, &then) < 0 || api_arg_long(rq, out, "count", 1, 1000, 1, &count) < 0 ||
        api_arg_seconds(rq, out, "every", 86400, 10, &c.every) < 0 ||
        api_arg_seconds(rq, out, "interval", 86400, 1, &c.interval) < 0 ||
        api_arg_text(rq, out, "max_disk", 32, &max_disk) < 0)
        return;
    if ((then && watch_spec_set(&c, "then", then, err, sizeof err) < 0) ||
        (max_disk && watch_spec_set(&c, "max-disk", max_disk, err, sizeof err) < 0)) {
        api_reply_error(out, 400, "%s", err);
        return;
    }
    if (then) spec_add(spec, sizeof spec, "then", then);
    if (c.interval < 0.1) {
        api_reply_error(out, 400, "interval: at least 0.1 s");
        return;
    }
    c.count = (int)count;
    char id[API_ID_LEN + 1];
    int st = api_triggers_arm(&s->triggers, &c, spec, s->dump_dir, id, err, sizeof err);
    if (st) {
        api_reply_error(out, st, "%s", err);
        if (st == 503) out->retry_after = 5;
        return;
    }
    api_reply_json(out, 201, api_triggers_status(&s->triggers, id));
    snprintf(out->location, sizeof out->location, "/api/triggers/%s", id);
}

/* GET /api/triggers: every trigger with its last events. */
void api_trigger_routes_list(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)rq;
    api_reply_json(out, 200, api_triggers_list(&s->triggers));
}

void api_trigger_routes_get(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    char *doc = api_triggers_status(&s->triggers, rq->route->rid);
    if (!doc) {
        api_reply_error(out, 404, "no such trigger");
        return;
    }
    api_reply_json(out, 200, doc);
}

/* DELETE /api/triggers/{id}: disarmed (a capture in flight cancelled); the files it wrote stay as dumps. */
void api_trigger_routes_disarm(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    if (api_triggers_disarm(&s->triggers, rq->route->rid) != 0) {
        api_reply_error(out, 404, "no such trigger");
        return;
    }
    out->status = 204;
}
