/* runtime: what a process is (Go, JVM, plain native) and whether it exposes a diagnostics agent. Cheap checks
 * only: it reads the ELF image, /proc/PID/maps and the agent's rendezvous files, and never connects to an agent. */
#ifndef DIAGTOP_RUNTIME_H
#define DIAGTOP_RUNTIME_H
#include <stddef.h>
#include <sys/types.h>

#include "sockets.h"

enum runtime_kind { RUNTIME_UNKNOWN = 0, RUNTIME_NATIVE, RUNTIME_GO, RUNTIME_JAVA };

/* "go", "java", "native", or NULL for unknown. */
const char *runtime_name(enum runtime_kind k);

/* Searches an ELF data region for Go's build-info blob ("\xff Go buildinf:" on a 16-byte boundary). Writes the Go
 * version (e.g. "go1.19.8") when the 1.18+ inline layout holds it, else an empty string. Returns 1 if found. */
int runtime_find_go_buildinfo(const unsigned char *data, size_t n, char *version, size_t versionsz);

/* Classifies the ELF file open at fd: Go when it carries build info. Returns RUNTIME_GO, RUNTIME_NATIVE, or
 * RUNTIME_UNKNOWN when it is not a readable ELF64 file. */
enum runtime_kind runtime_classify_elf(int fd);

/* Does /proc/PID/maps text map libjvm.so? */
int runtime_maps_has_jvm(const char *maps);

/* Finds the inode of a LISTEN socket on the given local TCP port in /proc/net/tcp (v6: tcp6) text, and the address
 * it is bound to in *local when not NULL; 0 if none. */
unsigned long runtime_tcp_listen_inode(const char *net_tcp, int v6, unsigned port, struct inet_endpoint *local);

/* The port of pid's gops agent: the port file <dir>/<pid>, dir resolved from the target's own environment
 * (GOPS_CONFIG_DIR, XDG_CONFIG_HOME/gops, HOME/.config/gops, the passwd home of uid), read in the target's mount
 * namespace, and only when that port is a LISTEN socket in the target's net/tcp{,6} whose inode the process
 * itself holds. Never connects. Returns 0 with the address to dial in *agent (the one the socket is bound to; the
 * loopback of its family when bound to all addresses), or -errno with why saying what is missing: -EACCES (the
 * environment of another user's process), -ENOENT (no port file), -EINVAL (no port in it), -ESTALE (the port is
 * not listened on by this process: stale file or reused pid). */
int runtime_gops_port(int procfd, int pid, uid_t uid, struct inet_endpoint *agent, char *why, size_t whylen);

/* Finds the inode of a listening stream socket bound at path in /proc/net/unix text; 0 if none. */
unsigned long runtime_unix_listen_inode(const char *net_unix, const char *path);

/* The socket of pid's diagtop agent (libdiagtop-agent.so), found as the agent names it (include/diagtop-agent.h):
 * agent.NSPID.sock in the directory the target's own environment chooses (DIAGTOP_AGENT_DIR, else
 * XDG_RUNTIME_DIR/diagtop, then /tmp/diagtop-UID), in the target's mount namespace, and trusted only while it is
 * a socket owned by uid that the process itself holds listening (its net/unix and fds). Never connects. Returns 0
 * with the path to connect to ("/proc/PID/root/...") in path, or -errno with why: -EACCES (the environment of
 * another user's process), -ENOENT (no socket: no agent), -ESTALE (a socket this process does not listen on:
 * left by a process that died, or the pid was reused), -ENAMETOOLONG. */
int runtime_agent_socket(int procfd, int pid, uid_t uid, char *path, size_t pathsz, char *why, size_t whylen);

/* Full detection for one process (procfd: an open descriptor of /proc). agent is set to 1 when an endpoint is
 * present: a gops port file whose port is a LISTEN socket held by that very process, a HotSpot .java_pidN
 * socket owned by the process's uid, or (native programs) a diagtop agent's socket (runtime_agent_socket). *elf_kind is what the executable alone says (RUNTIME_GO or RUNTIME_NATIVE):
 * pass it back in for processes of the same executable (RUNTIME_UNKNOWN: read the ELF) -- a box with 500
 * workers of one binary parses it once. */
enum runtime_kind runtime_detect(int procfd, int pid, uid_t uid, enum runtime_kind *elf_kind, int *agent);
/* Re-checks only the agent endpoint of a process already classified as kind. */
int runtime_agent_present(int procfd, int pid, uid_t uid, enum runtime_kind kind);
#endif
