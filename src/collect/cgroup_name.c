#include "cgroup_name.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CONTAINER_ID_SHOWN 12 /* as docker ps shows an id */
#define POD_UID_SHOWN 8

static int is_hex_id(const char *s, size_t n)
{
    if (n < 12 || n > 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

static int has_prefix(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* systemd escapes '-' in unit names as \x2d: "machine-debian\x2dtest.scope" is the machine "debian-test". */
static void unescape_unit(char *out, size_t n, const char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < n; i++) {
        unsigned c;
        if (s[i] == '\\' && i + 3 < len && s[i + 1] == 'x' && sscanf(s + i + 2, "%2x", &c) == 1) {
            out[o++] = (char)c;
            i += 3;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
}

/* "kubepods-burstable-pod0f3b1c2d_4e5f_....slice" (systemd driver) or "pod0f3b1c2d-4e5f-..." (cgroupfs). */
static void kube_pod_uid(const char *c, size_t n, struct cgroup_container *out)
{
    const char *p = has_prefix(c, "pod") ? c : strstr(c, "-pod");
    if (!p || (size_t)(p - c) >= n) return;
    p += *p == '-' ? 4 : 3;
    size_t len = (size_t)(c + n - p);
    if (len > 6 && memcmp(p + len - 6, ".slice", 6) == 0) len -= 6;
    if (len == 0 || len >= sizeof out->pod_uid) return;
    for (size_t i = 0; i < len; i++) out->pod_uid[i] = p[i] == '_' ? '-' : p[i];
    out->pod_uid[len] = '\0';
}

/* A unit a runtime made for one container: "docker-ID.scope", "libpod-ID.scope", "cri-containerd-ID.scope",
 * "crio-ID.scope", "machine-NAME.scope" (systemd-nspawn or a VM); podman's cgroupfs "libpod-ID" too. */
static int scope_container(const char *c, size_t n, struct cgroup_container *out)
{
    static const struct { const char *prefix, *runtime; } units[] = {
        {"docker-", "docker"}, {"libpod-conmon-", "podman"}, {"libpod-", "podman"}, {"cri-containerd-", "containerd"},
        {"nerdctl-", "containerd"}, {"crio-conmon-", "cri-o"}, {"crio-", "cri-o"}};
    if (n > 6 && memcmp(c + n - 6, ".scope", 6) == 0) n -= 6;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t pl = strlen(units[i].prefix);
        if (n > pl && strncmp(c, units[i].prefix, pl) == 0 && is_hex_id(c + pl, n - pl)) {
            snprintf(out->runtime, sizeof out->runtime, "%s", units[i].runtime);
            snprintf(out->id, sizeof out->id, "%.*s", (int)(n - pl), c + pl);
            return 1;
        }
    }
    if (n > 8 && has_prefix(c, "machine-")) {
        snprintf(out->runtime, sizeof out->runtime, "systemd-machine");
        unescape_unit(out->id, sizeof out->id, c + 8, n - 8);
        return 1;
    }
    return 0;
}

/* One path component c (n bytes, not terminated), prev the one above it ("" at the top). */
static void container_component(const char *prev, const char *c, size_t n, int *kube, struct cgroup_container *out)
{
    if (has_prefix(c, "kubepods")) {
        *kube = 1;
        kube_pod_uid(c, n, out);
    } else if (*kube && has_prefix(c, "pod")) {
        kube_pod_uid(c, n, out);
    } else if (scope_container(c, n, out)) {
    } else if ((strcmp(prev, "docker") == 0 || *kube) && is_hex_id(c, n)) { /* cgroupfs: /docker/ID, .../podUID/ID */
        snprintf(out->runtime, sizeof out->runtime, "docker");
        snprintf(out->id, sizeof out->id, "%.*s", (int)n, c);
    } else if (strcmp(prev, "lxc") == 0 || has_prefix(c, "lxc.payload.") || has_prefix(c, "lxc.monitor.")) {
        size_t skip = strcmp(prev, "lxc") == 0 ? 0 : 12;
        snprintf(out->runtime, sizeof out->runtime, "lxc");
        snprintf(out->id, sizeof out->id, "%.*s", (int)(n - skip), c + skip);
    }
}

int cgroup_container_of(const char *cgroup, struct cgroup_container *out)
{
    memset(out, 0, sizeof *out);
    if (!cgroup) return 0;
    int kube = 0;
    char prev[128] = "";
    for (const char *c = cgroup; *c;) {
        size_t n = strcspn(c, "/\n");
        /* The outermost container wins: podman's ".../libpod-ID.scope/container" names nothing more inside. */
        if (n && !out->id[0]) container_component(prev, c, n, &kube, out);
        if (n) snprintf(prev, sizeof prev, "%.*s", (int)n, c);
        c += n;
        if (*c == '\n') break;
        if (*c) c++;
    }
    if (kube) snprintf(out->runtime, sizeof out->runtime, "kubernetes");
    if (!out->runtime[0]) memset(out, 0, sizeof *out);
    return out->runtime[0] != 0;
}

/* One line of /proc/PID/cgroup, "ID:CONTROLLERS:PATH", at line (len bytes without its newline). */
struct cgroup_line {
    const char *line, *controllers, *path;
    size_t controllers_len, path_len;
};

static int line_split(const char *line, size_t len, struct cgroup_line *out)
{
    const char *c1 = memchr(line, ':', len);
    const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
    if (!c2) return -1;
    *out = (struct cgroup_line){line, c1 + 1, c2 + 1, (size_t)(c2 - c1 - 1), len - (size_t)(c2 + 1 - line)};
    return 0;
}

/* Calls fn on each line until it returns nonzero; returns that. */
static int each_line(const char *text, int (*fn)(const struct cgroup_line *l, void *arg), void *arg)
{
    for (const char *line = text; *line;) {
        size_t len = strcspn(line, "\n");
        struct cgroup_line l;
        int r = line_split(line, len, &l) == 0 ? fn(&l, arg) : 0;
        if (r) return r;
        line += len + (line[len] == '\n');
    }
    return 0;
}

/* "0::PATH": hierarchy 0 with no controllers (line_split keeps where the line starts for the id) */
static int is_v2(const struct cgroup_line *l)
{
    return l->controllers_len == 0 && l->controllers - l->line == 2 && l->line[0] == '0';
}

static int v2_line(const struct cgroup_line *l, void *arg)
{
    if (!is_v2(l)) return 0;
    *(struct cgroup_line *)arg = *l;
    return 1;
}

const char *cgroup_file_v2_path(const char *text, size_t *len)
{
    struct cgroup_line v2;
    if (!each_line(text, v2_line, &v2)) return NULL;
    *len = v2.path_len;
    return v2.path;
}

static int line_container(const struct cgroup_line *l, void *arg) { return cgroup_container_of(l->path, arg); }

int cgroup_file_container(const char *text, struct cgroup_container *out)
{
    size_t len;
    const char *v2 = cgroup_file_v2_path(text, &len);
    if (v2 && cgroup_container_of(v2, out)) return 1;
    if (each_line(text, line_container, out)) return 1;
    memset(out, 0, sizeof *out);
    return 0;
}

/* The path the unit is named from: v2's, else systemd's named hierarchy's, else the first v1 one off the root. */
struct unit_pick {
    const char *path[3];
    size_t len[3];
};

static int pick_path(const struct cgroup_line *l, void *arg)
{
    struct unit_pick *p = arg;
    static const char systemd[] = "name=systemd";
    int kind = is_v2(l) ? 0
               : l->controllers_len == sizeof systemd - 1 && memcmp(l->controllers, systemd, sizeof systemd - 1) == 0
                   ? 1
                   : 2;
    int at_root = l->path_len == 0 || (l->path_len == 1 && l->path[0] == '/');
    if (!p->path[kind] && !at_root) {
        p->path[kind] = l->path;
        p->len[kind] = l->path_len;
    }
    return 0;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* snprintf into out, returning the length written (cut at outsz - 1). */
__attribute__((format(printf, 3, 4))) static size_t put(char *out, size_t outsz, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out, outsz, fmt, ap);
    va_end(ap);
    return w < 0 ? 0 : (size_t)w < outsz ? (size_t)w : outsz - 1;
}

/* systemd's deepest service or scope, else the deepest slice, else the last component of path. */
static size_t systemd_unit(const char *path, size_t len, char *out, size_t outsz)
{
    const char *best = NULL, *slice = NULL, *last = NULL;
    size_t best_n = 0, slice_n = 0, last_n = 0;
    for (size_t i = 0; i < len;) {
        size_t k = i;
        while (k < len && path[k] != '/') k++;
        const char *c = path + i;
        size_t n = k - i;
        if (n) {
            last = c, last_n = n;
            if (ends_with(c, n, ".service") || ends_with(c, n, ".scope")) best = c, best_n = n;
            else if (ends_with(c, n, ".slice")) slice = c, slice_n = n;
        }
        i = k + 1;
    }
    if (!best) best = slice, best_n = slice_n;
    if (!best) best = last, best_n = last_n;
    return best ? put(out, outsz, "%.*s", (int)best_n, best) : 0;
}

size_t cgroup_unit(const char *text, char *out, size_t outsz)
{
    if (outsz == 0) return 0;
    out[0] = '\0';
    struct cgroup_container c;
    if (cgroup_file_container(text, &c)) {
        if (strcmp(c.runtime, "kubernetes") == 0)
            return c.id[0] ? put(out, outsz, "pod:%.*s/%.*s", POD_UID_SHOWN, c.pod_uid, CONTAINER_ID_SHOWN, c.id)
                           : put(out, outsz, "pod:%.*s", POD_UID_SHOWN, c.pod_uid);
        int id_shown = strcmp(c.runtime, "lxc") == 0 || strcmp(c.runtime, "systemd-machine") == 0
                           ? (int)strlen(c.id)
                           : CONTAINER_ID_SHOWN;
        const char *kind = strcmp(c.runtime, "systemd-machine") == 0 ? "machine" : c.runtime;
        return put(out, outsz, "%s:%.*s", kind, id_shown, c.id);
    }
    struct unit_pick p = {{NULL, NULL, NULL}, {0, 0, 0}};
    each_line(text, pick_path, &p);
    for (int k = 0; k < 3; k++)
        if (p.path[k]) return systemd_unit(p.path[k], p.len[k], out, outsz);
    return 0;
}
