/* diagtop-agent.h: libdiagtop-agent.so, what only the inside of a native process knows, for diagtop.
 *
 * Start it with no code change:   LD_PRELOAD=/usr/local/lib/libdiagtop-agent.so program
 * or link it (-ldiagtop-agent) and call diagtop_agent_start() once, early in main().
 *
 * It interposes malloc, free, calloc, realloc, reallocarray, memalign, posix_memalign, aligned_alloc, valloc,
 * pvalloc and malloc_usable_size (C++ new and delete reach it through libstdc++'s calls to malloc and free) and
 * keeps a byte-sampled heap profile: each allocation is sampled with probability 1 - exp(-size / interval), the
 * interval exponentially distributed with mean 512 KiB, and counted back as 1 / that probability objects. Live
 * sampled blocks are kept in a table of pointers (free finds them there), their stacks in a table of distinct
 * stacks; both come from mmap, never from the program's heap, and never exceed DIAGTOP_AGENT_MAX_MB together
 * (samples beyond are dropped and counted). Stacks are raw program counters taken by the agent's own unwinder
 * (.eh_frame through _dl_find_object: no lock, no allocation); diagtop names them from /proc/PID/maps.
 *
 * Idle, the agent is one thread blocked in accept(2) on a Unix socket, and the sampler's fast path on each
 * allocation (a per-thread counter; no lock). The socket is
 *     $DIAGTOP_AGENT_DIR/agent.PID.sock            when DIAGTOP_AGENT_DIR is set (an absolute path), else
 *     $XDG_RUNTIME_DIR/diagtop/agent.PID.sock      when XDG_RUNTIME_DIR is set and the directory can be made,
 *     /tmp/diagtop-UID/agent.PID.sock              otherwise,
 * the directory 0700, owned by the process's effective uid and not a symlink (else the agent does not start), the
 * socket 0600; a peer is served only when SO_PEERCRED says it has the same uid, or is root. Sockets left by
 * processes that died are removed when an agent starts in the same directory.
 *
 * Environment: DIAGTOP_AGENT=0 turns everything off (the hooks pass straight through); DIAGTOP_AGENT=1 starts the
 * listener even when the library was linked rather than preloaded; DIAGTOP_AGENT_HEAP=0 turns heap sampling off;
 * DIAGTOP_AGENT_SAMPLE_INTERVAL=BYTES sets the mean interval (4096 .. 1 GiB); DIAGTOP_AGENT_MAX_MB=N caps the
 * heap profile's tables (1 .. 4096, default 32). If the agent cannot start (the directory is not private, the path
 * is too long for a socket) it says why once on stderr and the program runs on untouched.
 *
 * Forks: the child keeps sampling (its tables are the parent's, as its heap is) but has no listener; it may call
 * diagtop_agent_start() for one of its own. Exec: the listening socket is close-on-exec; a preloaded agent starts
 * again in the new image. The CPU profiler uses SIGPROF only while a profile runs, and refuses when the program
 * has a SIGPROF handler of its own; it leaves its (then idle) handler installed afterwards, so that a timer signal
 * still queued can never kill the program.
 *
 * ---- Protocol (version 1) ----
 * One request per connection. The client sends one line of at most 255 bytes ending in '\n' within 2 s:
 *     hello | memstats | trim | heap | profile SECONDS HZ
 * The agent answers with text lines and closes:
 *     "diagtop-agent 1 ok\n"  or  "diagtop-agent 1 error ERRNO REASON\n" (and nothing more),
 *     then "KEY VALUE" lines (decimal integers, or decimals with a '.'), then "end\n".
 * A reply without its "end" line is incomplete. Replies are capped (64 KiB for hello, memstats and trim, 32 MiB
 * for heap and profile: past the cap rows are left out and "truncated 1" says so); the agent gives up on a client
 * that does not read within 5 s. One request is served at a time: while a CPU profile runs, other connections get
 * "error 16 busy". Numbers are unsigned unless they are estimates (decimals).
 *   hello:    pid, protocol, heap_profile (0|1), interval (bytes), uptime_ns.
 *   memstats: mallinfo2 (heap_system, in_use, free, free_chunks, fastbin_free, fastbin_chunks, mmapped,
 *             mmapped_blocks, releasable_top), malloc_info's totals (arenas, system_max, aspace), the agent's
 *             counters since start (mallocs, frees, allocated_bytes, uptime_ns) and rates since the previous
 *             memstats request (rate_seconds, mallocs_per_second, frees_per_second, bytes_per_second), and the
 *             heap profile's state (heap_profile, interval, samples_live, samples_dropped, stacks_dropped,
 *             table_bytes, table_cap). "allocator NAME" names the real allocator (glibc, or the library found).
 *   trim:     malloc_trim(0): released (0|1), rss_before, rss_after, free_before, free_after, in_use_before,
 *             in_use_after (bytes), trim_ns.
 *   heap:     time_ns (CLOCK_REALTIME), interval, samples_live, samples_total, samples_dropped, stacks_dropped,
 *             then one line per allocation stack:
 *               site INUSE_OBJECTS INUSE_BYTES ALLOC_OBJECTS ALLOC_BYTES PC...
 *             (estimates, scaled back from the samples; PCs in hex, innermost first, each a return address: the
 *             first is in the caller of the allocation function).
 *   profile:  hz, seconds, period_ns, samples, lost, then "thread TID NAME" lines and one line per distinct stack
 *             of a thread:
 *               sample TID COUNT PC...
 *             (COUNT timer expirations of 1/hz s of that thread's CPU time; the first PC is exact, the others
 *             return addresses). A client that hangs up ends the profile early.
 */
#ifndef DIAGTOP_AGENT_H
#define DIAGTOP_AGENT_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts the listener (and, unless DIAGTOP_AGENT_HEAP=0, heap sampling). Idempotent. Returns 0, or -errno:
 * -ECANCELED when DIAGTOP_AGENT=0, -EPERM when the socket directory is not private, -ENAMETOOLONG when the socket
 * path does not fit, or what socket(2)/bind(2) said. The reason is also written once on stderr. */
int diagtop_agent_start(void);
/* Stops the listener and removes the socket (heap sampling goes on). Idempotent. */
void diagtop_agent_stop(void);
/* The socket's path into buf (NUL-terminated). Returns 0, or -ENOTCONN when not listening, -ERANGE when buf is
 * too small. */
int diagtop_agent_socket_path(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
