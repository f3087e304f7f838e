/* agent: the global state, the environment switches, start and stop, fork handlers, and the public API of
 * include/diagtop-agent.h. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../../include/diagtop-agent.h"
#include "agent.h"

/* The agent's one global state (agent.h documents each field). */
struct agent agent_g = {.lock = PTHREAD_MUTEX_INITIALIZER, .listen_fd = -1};
/* Per-thread state, zero in every new thread. */
__thread struct agent_thread agent_tls __attribute__((tls_model("initial-exec")));

int64_t agent_now_ns(int clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void agent_flush(struct agent_thread *t)
{
    /* Bytes are not counted on the fast path: each allocation takes its size off left, so what left went down by
     * since it was set is what was allocated. */
    int64_t used = t->drawn - t->left;
    if (used > 0) t->bytes += (uint64_t)used;
    t->drawn = t->left;
    if (t->mallocs) __atomic_fetch_add(&agent_g.mallocs, t->mallocs, __ATOMIC_RELAXED);
    if (t->frees) __atomic_fetch_add(&agent_g.frees, t->frees, __ATOMIC_RELAXED);
    if (t->bytes) __atomic_fetch_add(&agent_g.bytes, t->bytes, __ATOMIC_RELAXED);
    t->mallocs = t->frees = t->bytes = 0;
    if (!t->key_set && agent_g.flush_key_made) {
        t->key_set = 1;
        t->guard++; /* pthread_setspecific may allocate its second-level array */
        pthread_setspecific(agent_g.flush_key, t);
        t->guard--;
    }
}

static void flush_at_exit(void *arg)
{
    struct agent_thread *t = arg;
    t->key_set = 2; /* never registered again in this thread */
    agent_flush(t);
}

void agent_say(const char *a, const char *b, const char *c)
{
    char line[512];
    size_t n = 0;
    const char *parts[] = {"libdiagtop-agent: ", a, b, c, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        for (const char *s = parts[i]; s && *s && n < sizeof line - 1; s++) line[n++] = *s;
    if (n && line[n - 1] != '\n') line[n - 1] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}

void *agent_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void agent_unmap(void *p, size_t bytes)
{
    if (p) munmap(p, bytes);
}

ssize_t agent_read_file(const char *path, char *buf, size_t bufsz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t n = 0;
    while (n + 1 < bufsz) {
        ssize_t r = read(fd, buf + n, bufsz - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* getenv without surprises: only during init, in the thread that runs it. */
static int env_off(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no") || !strcasecmp(v, "false"));
}

static uint64_t env_u64(const char *name, uint64_t def, uint64_t lo, uint64_t hi)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    uint64_t x = 0;
    for (const char *s = v; *s; s++) {
        if (*s < '0' || *s > '9' || x > hi) {
            agent_say(name, " is not a number in range: ignored", "");
            return def;
        }
        x = x * 10 + (uint64_t)(*s - '0');
    }
    if (x < lo || x > hi) {
        agent_say(name, " is out of range: ignored", "");
        return def;
    }
    return x;
}

/* Fork: the forking thread takes the heap lock, so that the child inherits it held by the only thread it has,
 * which releases it. The child has no listener (threads do not survive fork) and no CPU timers. */
static void fork_prepare(void)
{
    agent_tls.guard++;
    pthread_mutex_lock(&agent_g.lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&agent_g.lock);
    agent_tls.guard--;
}

static void fork_child(void)
{
    pthread_mutex_unlock(&agent_g.lock);
    heapprof_after_fork_child();
    cpuprof_after_fork_child();
    if (agent_g.listen_fd >= 0) close(agent_g.listen_fd); /* the parent's socket: never accepted on here */
    agent_g.listen_fd = -1;
    agent_g.listening = 0;
    agent_tls.guard--;
}

/* Our own mapping: frames in it are the agent's, left out of allocation stacks. */
static void find_self(void)
{
    struct dl_find_object o;
    if (_dl_find_object((void *)find_self, &o) == 0) {
        agent_g.self_lo = (uintptr_t)o.dlfo_map_start;
        agent_g.self_hi = (uintptr_t)o.dlfo_map_end;
    }
}

void agent_init(void)
{
    /* Several threads may race here on the first allocations: the work is idempotent, the flag set last. */
    if (__atomic_load_n(&agent_g.initialized, __ATOMIC_ACQUIRE)) return;
    struct agent_thread *t = &agent_tls;
    t->guard++;
    agent_resolve();
    agent_g.disabled = env_off("DIAGTOP_AGENT") || getauxval(AT_SECURE);
    agent_g.heap_on = !agent_g.disabled && !env_off("DIAGTOP_AGENT_HEAP");
    agent_g.interval = env_u64("DIAGTOP_AGENT_SAMPLE_INTERVAL", AGENT_DEFAULT_INTERVAL, 4096, 1ull << 30);
    agent_g.max_bytes = (size_t)env_u64("DIAGTOP_AGENT_MAX_MB", AGENT_DEFAULT_MAX_MB, 1, 4096) << 20;
    agent_g.start_ns = agent_now_ns(CLOCK_MONOTONIC);
    agent_g.prev_ns = agent_g.start_ns;
    find_self();
    unwind_scratch_init();
    if (agent_g.heap_on && heapprof_init() < 0) {
        agent_say("cannot reserve memory for the heap profile: heap sampling off", "", "");
        agent_g.heap_on = 0;
    }
    __atomic_add_fetch(&agent_g.gen, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&agent_g.initialized, 1, __ATOMIC_RELEASE);
    t->guard--;
}

/* What must not run inside an allocation (a hook may call agent_init from anywhere, even from pthread_atfork's own
 * allocation): fork handlers, the exit flush, and staying loaded (a dlclose would unmap hooks in use). Run by the
 * constructor and diagtop_agent_start. */
static void agent_init_late(void)
{
    agent_init();
    if (agent_g.atfork_done) return;
    agent_g.atfork_done = 1;
    agent_tls.guard++;
    if (pthread_key_create(&agent_g.flush_key, flush_at_exit) == 0) agent_g.flush_key_made = 1;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    Dl_info info;
    if (dladdr((void *)agent_init_late, &info) && info.dli_fname) dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    agent_tls.guard--;
}

/* Whether the library was preloaded on purpose (the listener then starts by itself), rather than linked. */
static int preloaded(void)
{
    const char *v = getenv("LD_PRELOAD");
    if (!v) return 0;
    for (const char *p = strstr(v, "libdiagtop-agent"); p; p = strstr(p + 1, "libdiagtop-agent"))
        if (p == v || p[-1] == '/' || p[-1] == ' ' || p[-1] == ':') return 1;
    return 0;
}

/* Another copy of the library (preloaded and linked under two paths) already owns this process's endpoint. */
static int another_copy(void)
{
    void *first = dlsym(RTLD_DEFAULT, "diagtop_agent_start");
    return first && first != (void *)diagtop_agent_start;
}

AGENT_API int diagtop_agent_start(void)
{
    agent_init_late();
    if (agent_g.disabled) return -ECANCELED;
    if (agent_g.listening && agent_g.owner == getpid()) return 0;
    struct agent_thread *t = &agent_tls;
    t->guard++;
    char why[256];
    int rc = listener_start(why, sizeof why);
    if (rc < 0 && !agent_g.said_why) {
        agent_g.said_why = 1;
        agent_say("not started: ", why, "; the program runs on without it");
    }
    t->guard--;
    return rc;
}

AGENT_API void diagtop_agent_stop(void)
{
    agent_tls.guard++;
    listener_stop();
    agent_tls.guard--;
}

AGENT_API int diagtop_agent_socket_path(char *buf, size_t len)
{
    if (!agent_g.listening || agent_g.owner != getpid()) return -ENOTCONN;
    size_t n = strlen(agent_g.path);
    if (n + 1 > len) return -ERANGE;
    memcpy(buf, agent_g.path, n + 1);
    return 0;
}

__attribute__((constructor)) static void agent_constructor(void)
{
    agent_init_late();
    if (agent_g.disabled || another_copy()) return;
    const char *force = getenv("DIAGTOP_AGENT");
    if (preloaded() || (force && !strcmp(force, "1"))) diagtop_agent_start();
}

/* At exit the socket goes; the listener thread dies with the process (it holds nothing the exit path needs). */
__attribute__((destructor)) static void agent_destructor(void)
{
    if (agent_g.listening && agent_g.owner == getpid() && agent_g.path[0]) unlink(agent_g.path);
}
