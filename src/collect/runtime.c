#include "runtime.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/text.h"

#define GO_MAGIC "\xff Go buildinf:"
#define GO_MAGIC_LEN 14
#define GO_SCAN_BYTES (64 * 1024)

const char *runtime_name(enum runtime_kind k)
{
    switch (k) {
    case RUNTIME_GO: return "go";
    case RUNTIME_JAVA: return "java";
    case RUNTIME_NATIVE: return "native";
    default: return NULL;
    }
}

static size_t read_uvarint(const unsigned char *p, size_t n, unsigned long long *out)
{
    unsigned long long v = 0;
    for (size_t i = 0; i < n && i < 10; i++) {
        v |= (unsigned long long)(p[i] & 0x7F) << (7 * i);
        if (!(p[i] & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return 0;
}

int runtime_find_go_buildinfo(const unsigned char *data, size_t n, char *version, size_t versionsz)
{
    if (versionsz) version[0] = '\0';
    for (size_t off = 0; off + 32 <= n; off += 16) {
        if (memcmp(data + off, GO_MAGIC, GO_MAGIC_LEN) != 0) continue;
        unsigned char flags = data[off + 15];
        if (flags & 2) { /* Go 1.18+: version string inline at offset 32 */
            unsigned long long len = 0;
            size_t used = read_uvarint(data + off + 32, n - off - 32, &len);
            if (used && len < versionsz && off + 32 + used + len <= n) {
                memcpy(version, data + off + 32 + used, len);
                version[len] = '\0';
            }
        }
        return 1;
    }
    return 0;
}

/* Reads [off, off+len) of the file, bounded to GO_SCAN_BYTES, and looks for the build info. */
static int scan_region(int fd, unsigned long long off, unsigned long long len)
{
    if (len > GO_SCAN_BYTES) len = GO_SCAN_BYTES;
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) return 0;
    ssize_t r = pread(fd, buf, len, (off_t)off);
    char version[64];
    int found = r > 0 && runtime_find_go_buildinfo(buf, (size_t)r, version, sizeof version);
    free(buf);
    return found;
}

enum runtime_kind runtime_classify_elf(int fd)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64)
        return RUNTIME_UNKNOWN;

    /* With section headers: the .go.buildinfo section. */
    if (eh.e_shoff && eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shnum > 0 && eh.e_shnum < 4096 &&
        eh.e_shstrndx < eh.e_shnum) {
        size_t sz = (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
        Elf64_Shdr *sh = malloc(sz);
        if (sh && pread(fd, sh, sz, (off_t)eh.e_shoff) == (ssize_t)sz) {
            Elf64_Shdr *strtab = &sh[eh.e_shstrndx];
            char *names = strtab->sh_size < (1u << 20) ? malloc(strtab->sh_size + 1) : NULL;
            if (names && pread(fd, names, strtab->sh_size, (off_t)strtab->sh_offset) == (ssize_t)strtab->sh_size) {
                names[strtab->sh_size] = '\0';
                for (int i = 0; i < eh.e_shnum; i++) {
                    if (sh[i].sh_name >= strtab->sh_size) continue;
                    if (strcmp(names + sh[i].sh_name, ".go.buildinfo") == 0) {
                        int found = scan_region(fd, sh[i].sh_offset, sh[i].sh_size);
                        free(names);
                        free(sh);
                        return found ? RUNTIME_GO : RUNTIME_NATIVE;
                    }
                }
            }
            free(names);
        }
        free(sh);
    }

    /* Without one (stripped section headers): the first writable, non-executable PT_LOAD segment. */
    if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 && eh.e_phnum < 1024) {
        size_t sz = (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
        Elf64_Phdr *ph = malloc(sz);
        if (ph && pread(fd, ph, sz, (off_t)eh.e_phoff) == (ssize_t)sz) {
            for (int i = 0; i < eh.e_phnum; i++) {
                if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W) && !(ph[i].p_flags & PF_X)) {
                    int found = scan_region(fd, ph[i].p_offset, ph[i].p_filesz);
                    free(ph);
                    return found ? RUNTIME_GO : RUNTIME_NATIVE;
                }
            }
        }
        free(ph);
    }
    return RUNTIME_NATIVE;
}

int runtime_maps_has_jvm(const char *maps)
{
    for (const char *p = strstr(maps, "/libjvm.so"); p; p = strstr(p + 1, "/libjvm.so")) {
        char after = p[10];
        if (after == '\n' || after == '\0' || after == ' ') return 1;
    }
    return 0;
}

unsigned long runtime_tcp_listen_inode(const char *net_tcp, int v6, unsigned port, struct inet_endpoint *local)
{
    for (const char *line = strchr(net_tcp, '\n'); line && *++line; line = strchr(line, '\n')) { /* after the header */
        struct inet_line in;
        if (sockets_parse_inet_line(line, v6, &in) == 0 && in.local.port == port && in.state == 0x0A) {
            if (local) *local = in.local;
            return in.inode;
        }
    }
    return 0;
}

/* Where to dial a socket bound to e: there, or the loopback of its family when bound to every address. */
static void dialable(struct inet_endpoint *e)
{
    static const unsigned char any[16];
    if (memcmp(e->addr, any, e->family == AF_INET6 ? 16 : 4) != 0) return;
    if (e->family == AF_INET6) e->addr[15] = 1;              /* :: -> ::1 */
    else memcpy(e->addr, (const unsigned char[]){127, 0, 0, 1}, 4); /* 0.0.0.0 -> 127.0.0.1 */
}

/* Value of NAME in a NUL-separated environ block, or NULL. */
static const char *environ_get(const char *env, size_t len, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < len; i += strlen(env + i) + 1)
        if (strncmp(env + i, name, nl) == 0 && env[i + nl] == '=') return env + i + nl + 1;
    return NULL;
}

/* The gops config directory as the target resolves it (docs/protocols/gops.md: the port file). 0, or -errno with a
 * reason. */
static int gops_dir(int procfd, int pid, uid_t uid, char *dir, size_t dirsz, char *why, size_t whylen)
{
    ssize_t n;
    char *env = fileio_read_proc(procfd, pid, "environ", 256 * 1024, &n);
    if (!env) {
        int e = errno;
        if (e == ENOENT || e == ESRCH) snprintf(why, whylen, "no process %d", pid);
        else if (e == EACCES || e == EPERM)
            snprintf(why, whylen, "cannot read the environment of process %d, where its gops directory is set "
                     "(another user's process: needs the same uid or root)", pid);
        else snprintf(why, whylen, "cannot read the environment of process %d: %s", pid, strerror(e));
        return -e;
    }
    const char *v;
    int rc = 0;
    if ((v = environ_get(env, (size_t)n, "GOPS_CONFIG_DIR")) && *v) snprintf(dir, dirsz, "%s", v);
    else if ((v = environ_get(env, (size_t)n, "XDG_CONFIG_HOME")) && *v) snprintf(dir, dirsz, "%s/gops", v);
    else if ((v = environ_get(env, (size_t)n, "HOME")) && *v) snprintf(dir, dirsz, "%s/.config/gops", v);
    else {
        struct passwd pw, *res = NULL;
        char pwbuf[4096];
        if (getpwuid_r(uid, &pw, pwbuf, sizeof pwbuf, &res) == 0 && res) {
            snprintf(dir, dirsz, "%s/.config/gops", pw.pw_dir);
        } else {
            snprintf(why, whylen, "process %d has no GOPS_CONFIG_DIR, XDG_CONFIG_HOME or HOME and uid %u has no "
                     "home directory: no gops directory", pid, (unsigned)uid);
            rc = -ENOENT;
        }
    }
    free(env);
    return rc;
}

/* Does /proc/PID/fd hold socket:[inode]? */
static int process_holds_socket(int procfd, int pid, unsigned long inode)
{
    char path[64], want[64], link[64];
    snprintf(path, sizeof path, "%d/fd", pid);
    snprintf(want, sizeof want, "socket:[%lu]", inode);
    int dfd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return 0;
    int found = 0;
    /* Walk the fd names with getdents through a FILE-less DIR to stay within one descriptor. */
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return 0;
    }
    struct dirent *de;
    while (!found && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        ssize_t l = readlinkat(dfd, de->d_name, link, sizeof link - 1);
        if (l <= 0) continue;
        link[l] = '\0';
        found = strcmp(link, want) == 0;
    }
    closedir(d);
    return found;
}

/* A directory named by the target's environment, fit to be shown (it is the target's text, not ours). */
static void shown_dir(const char *dir, char *buf, size_t bufsz)
{
    text_sanitize_display(buf, bufsz, dir, strlen(dir));
}

int runtime_gops_port(int procfd, int pid, uid_t uid, struct inet_endpoint *agent, char *why, size_t whylen)
{
    char dir[2048], shown[2048], portfile[4200], text[32];
    memset(agent, 0, sizeof *agent);
    int rc = gops_dir(procfd, pid, uid, dir, sizeof dir, why, whylen);
    if (rc < 0) return rc;
    shown_dir(dir, shown, sizeof shown);
    /* The directory is in the target's mount namespace. */
    snprintf(portfile, sizeof portfile, "%d/root%s/%d", pid, dir, pid);
    ssize_t n = fileio_read_at(procfd, portfile, text, sizeof text);
    if (n < 0) {
        if (n == -ENOENT || n == -ENOTDIR)
            snprintf(why, whylen, "no gops port file in %s (no gops agent, or one with its own ConfigDir)", shown);
        else snprintf(why, whylen, "cannot read the gops port file %s/%d: %s", shown, pid, strerror((int)-n));
        return n == -ENOTDIR ? -ENOENT : (int)n;
    }
    /* The agent writes the port in ASCII decimal, without a newline; whitespace is trimmed anyway. */
    char *s = text, *e = text + n;
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) e--;
    *e = '\0';
    unsigned long long p = 0;
    if (text_parse_u64(s, &p) < 0 || p == 0 || p > 65535) {
        snprintf(why, whylen, "the gops port file %s/%d does not hold a port number", shown, pid);
        return -EINVAL;
    }
    const char *tables[] = {"net/tcp", "net/tcp6"};
    for (size_t i = 0; i < 2; i++) {
        char *tcp = fileio_read_proc(procfd, pid, tables[i], 4 << 20, NULL);
        struct inet_endpoint bound;
        unsigned long inode = tcp ? runtime_tcp_listen_inode(tcp, (int)i, (unsigned)p, &bound) : 0;
        free(tcp);
        if (inode && process_holds_socket(procfd, pid, inode)) {
            dialable(&bound);
            *agent = bound;
            return 0;
        }
    }
    snprintf(why, whylen, "the gops port file %s/%d names port %llu, which this process does not LISTEN on (stale: "
             "left by an agent that died, or the pid was reused)", shown, pid, p);
    return -ESTALE;
}

static int gops_agent_present(int procfd, int pid, uid_t uid)
{
    struct inet_endpoint agent;
    char why[256];
    return runtime_gops_port(procfd, pid, uid, &agent, why, sizeof why) == 0;
}

/* The pid as the target's own namespace sees it: last field of NStgid in status. */
static int namespace_pid(int procfd, int pid)
{
    char *status = fileio_read_proc(procfd, pid, "status", 16384, NULL);
    int nspid = pid;
    const char *p = status ? strstr(status, "\nNStgid:") : NULL;
    if (p) {
        p += 8;
        const char *eol = strchr(p, '\n');
        const char *last = p;
        for (const char *q = p; *q && q != eol; q++)
            if ((*q == '\t' || *q == ' ') && q[1] >= '0' && q[1] <= '9') last = q + 1;
        text_parse_pid_n(last, eol ? (size_t)(eol - last) : strlen(last), &nspid); /* else it stays pid */
    }
    free(status);
    return nspid;
}

static int hotspot_agent_present(int procfd, int pid, uid_t uid)
{
    char path[96];
    snprintf(path, sizeof path, "%d/root/tmp/.java_pid%d", pid, namespace_pid(procfd, pid));
    struct stat st;
    return fstatat(procfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == uid;
}

unsigned long runtime_unix_listen_inode(const char *net_unix, const char *path)
{
    size_t plen = strlen(path);
    const char *line = strchr(net_unix, '\n'); /* skip the header */
    while (line && *++line) {
        /* "0000000000000000: 00000002 00000000 00010000 0001 01 23456 /run/user/1000/diagtop/agent.1.sock" */
        unsigned flags = 0, type = 0, st = 0;
        unsigned long inode = 0;
        int at = 0;
        if (sscanf(line, "%*x: %*x %*x %x %x %x %lu %n", &flags, &type, &st, &inode, &at) == 4 && at > 0 &&
            (flags & 0x10000) && type == 1 && strncmp(line + at, path, plen) == 0 &&
            (line[at + plen] == '\n' || line[at + plen] == '\0'))
            return inode;
        line = strchr(line, '\n');
    }
    return 0;
}

/* The agent's candidate directories as the target resolves them (include/diagtop-agent.h). Returns how many. */
static int agent_dirs(const char *env, size_t envlen, uid_t uid, char dirs[2][2048])
{
    const char *v = env ? environ_get(env, envlen, "DIAGTOP_AGENT_DIR") : NULL;
    if (v && v[0] == '/') {
        snprintf(dirs[0], sizeof dirs[0], "%s", v);
        return 1;
    }
    int n = 0;
    v = env ? environ_get(env, envlen, "XDG_RUNTIME_DIR") : NULL;
    if (v && v[0] == '/') snprintf(dirs[n++], sizeof dirs[0], "%s/diagtop", v);
    snprintf(dirs[n++], sizeof dirs[0], "/tmp/diagtop-%u", (unsigned)uid);
    return n;
}

int runtime_agent_socket(int procfd, int pid, uid_t uid, char *path, size_t pathsz, char *why, size_t whylen)
{
    ssize_t n = 0;
    char *env = fileio_read_proc(procfd, pid, "environ", 256 * 1024, &n);
    if (!env) {
        int e = errno;
        if (e == ENOENT || e == ESRCH) snprintf(why, whylen, "no process %d", pid);
        else if (e == EACCES || e == EPERM)
            snprintf(why, whylen, "cannot read the environment of process %d, where its agent's directory is set "
                     "(another user's process: needs the same uid or root)", pid);
        else snprintf(why, whylen, "cannot read the environment of process %d: %s", pid, strerror(e));
        return -e;
    }
    char dirs[2][2048], inner[4200], outer[4300], shown[2048];
    int ndirs = agent_dirs(env, (size_t)n, uid, dirs), nspid = namespace_pid(procfd, pid), rc = -ENOENT;
    free(env);
    for (int i = 0; i < ndirs; i++) {
        struct stat st;
        snprintf(inner, sizeof inner, "%s/agent.%d.sock", dirs[i], nspid);
        snprintf(outer, sizeof outer, "%d/root%s", pid, inner);
        if (fstatat(procfd, outer, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != uid)
            continue;
        char *unx = fileio_read_proc(procfd, pid, "net/unix", 16 << 20, NULL);
        unsigned long inode = unx ? runtime_unix_listen_inode(unx, inner) : 0;
        free(unx);
        if (inode && process_holds_socket(procfd, pid, inode)) {
            if ((size_t)snprintf(path, pathsz, "/proc/%d/root%s", pid, inner) >= pathsz) {
                snprintf(why, whylen, "the agent's socket path is too long");
                return -ENAMETOOLONG;
            }
            return 0;
        }
        shown_dir(inner, shown, sizeof shown);
        snprintf(why, whylen, "the agent socket %s is not listened on by process %d (stale: left by a process "
                 "that died, or the pid was reused)", shown, pid);
        rc = -ESTALE;
    }
    if (rc == -ENOENT) {
        char shown2[2048] = "";
        shown_dir(dirs[0], shown, sizeof shown);
        if (ndirs > 1) shown_dir(dirs[1], shown2, sizeof shown2);
        snprintf(why, whylen, "no diagtop agent socket for process %d in %s%s%s (not started with "
                 "libdiagtop-agent.so)", pid, shown, ndirs > 1 ? " or " : "", shown2);
    }
    return rc;
}

static int native_agent_present(int procfd, int pid, uid_t uid)
{
    char path[4400], why[512];
    return runtime_agent_socket(procfd, pid, uid, path, sizeof path, why, sizeof why) == 0;
}

int runtime_agent_present(int procfd, int pid, uid_t uid, enum runtime_kind kind)
{
    if (kind == RUNTIME_GO) return gops_agent_present(procfd, pid, uid);
    if (kind == RUNTIME_JAVA) return hotspot_agent_present(procfd, pid, uid);
    if (kind == RUNTIME_NATIVE) return native_agent_present(procfd, pid, uid);
    return 0;
}

enum runtime_kind runtime_detect(int procfd, int pid, uid_t uid, enum runtime_kind *elf_kind, int *agent)
{
    char path[64];
    *agent = 0;
    if (*elf_kind == RUNTIME_UNKNOWN) {
        snprintf(path, sizeof path, "%d/exe", pid);
        int fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return RUNTIME_UNKNOWN; /* kernel thread, or another user's process */
        *elf_kind = runtime_classify_elf(fd);
        close(fd);
    }
    enum runtime_kind kind = *elf_kind;
    if (kind == RUNTIME_NATIVE) {
        char *maps = fileio_read_proc(procfd, pid, "maps", 8 << 20, NULL);
        if (maps && runtime_maps_has_jvm(maps)) kind = RUNTIME_JAVA;
        free(maps);
    }
    *agent = runtime_agent_present(procfd, pid, uid, kind);
    return kind;
}
