#include "api_auth.h"

#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_libs.h"

#define CACHE_SECONDS 300.0
#define FAIL_WINDOW 900.0
#define BLOCK_MAX 60.0
#define TOKEN_MIN 16
#define TOKEN_MAX 512
#define FILE_MAX (1 << 20)
#define ENTRIES_MAX 4096

int api_auth_equal(const void *a, const void *b, size_t n)
{
    const volatile unsigned char *x = a, *y = b;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++) d |= x[i] ^ y[i];
    return d == 0;
}

/* Strings of possibly different lengths, in time that depends only on the longer one's length. */
static int equal_strings(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n = la > lb ? la : lb;
    unsigned char d = la != lb;
    for (size_t i = 0; i < n; i++) d |= (unsigned char)((i < la ? a[i] : 0) ^ (i < lb ? b[i] : 0));
    return d == 0;
}

/* GnuTLS is loaded before any credential is read (cmd_serve); without it there is no server to protect, and no
 * digest may ever be left unset (two unset digests would compare equal). */
static void sha256(const void *data, size_t len, unsigned char out[32])
{
    char err[256];
    const struct api_libs *L = api_libs_load(err, sizeof err);
    if (!L || L->hash_fast(GNUTLS_DIG_SHA256, data, len, out) != 0) {
        fprintf(stderr, "diagtop serve: SHA-256: %s\n", L ? "gnutls_hash_fast failed" : err);
        abort();
    }
}

static int hash_with(const char *password, const char *setting, char *out, size_t outlen)
{
    struct crypt_data *cd = calloc(1, sizeof *cd);
    if (!cd) return -ENOMEM;
    const char *h = crypt_rn(password, setting, cd, (int)sizeof *cd);
    int rc = h && strlen(h) < outlen ? 0 : -EINVAL;
    if (!rc) strcpy(out, h);
    explicit_bzero(cd, sizeof *cd);
    free(cd);
    return rc;
}

int api_auth_hash(const char *password, char *out, size_t outlen, char *err, size_t errlen)
{
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    if (!crypt_gensalt_rn("$y$", 0, NULL, 0, setting, sizeof setting)) {
        snprintf(err, errlen, "libcrypt cannot make a yescrypt salt: %s", strerror(errno));
        return -EINVAL;
    }
    if (hash_with(password, setting, out, outlen) < 0) {
        snprintf(err, errlen, "libcrypt cannot hash with yescrypt");
        return -EINVAL;
    }
    return 0;
}

int api_auth_init(struct api_auth *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (getrandom(a->secret, sizeof a->secret, 0) != (ssize_t)sizeof a->secret) {
        snprintf(err, errlen, "getrandom: %s", strerror(errno));
        return -EIO;
    }
    char dummy[CRYPT_OUTPUT_SIZE];
    int rc = api_auth_hash("diagtop: no such user", dummy, sizeof dummy, err, errlen);
    if (rc < 0) return rc;
    a->dummy_hash = strdup(dummy);
    if (!a->dummy_hash) return -ENOMEM;
    pthread_mutex_init(&a->lock, NULL);
    return 0;
}

void api_auth_free(struct api_auth *a)
{
    for (int i = 0; i < a->nusers; i++) free(a->users[i].hash);
    free(a->users);
    free(a->tokens);
    free(a->dummy_hash);
    if (a->dummy_hash) pthread_mutex_destroy(&a->lock);
    explicit_bzero(a, sizeof *a);
}

static int parse_scope(const char *s, enum api_scope *out)
{
    if (!strcmp(s, "read")) *out = API_SCOPE_READ;
    else if (!strcmp(s, "admin")) *out = API_SCOPE_ADMIN;
    else return -1;
    return 0;
}

static int valid_name(const char *s, size_t n)
{
    if (n == 0 || n > API_AUTH_NAME_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-' || c == '@'))
            return 0;
    }
    return 1;
}

/* Calls fn on every line that is neither blank nor a comment; stops at the first failure. */
static int each_line(struct api_auth *a, const char *text, const char *what, char *err, size_t errlen,
                     int (*fn)(struct api_auth *, char *, const char *, int, char *, size_t))
{
    int lineno = 0;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        lineno++;
        char line[1024];
        if (n >= sizeof line) {
            snprintf(err, errlen, "%s:%d: line too long", what, lineno);
            return -EINVAL;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        if (n && line[n - 1] == '\r') line[--n] = '\0';
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        int rc = 0;
        if (*s && *s != '#') rc = fn(a, s, what, lineno, err, errlen);
        explicit_bzero(line, sizeof line);
        if (rc < 0) return rc;
        p = e ? e + 1 : p + n;
    }
    return 0;
}

static int add_user(struct api_auth *a, char *line, const char *what, int lineno, char *err, size_t errlen)
{
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !valid_name(line, (size_t)(c1 - line))) {
        snprintf(err, errlen, "%s:%d: not name:hash[:read|admin] (a name of letters, digits, . _ - @)", what, lineno);
        return -EINVAL;
    }
    enum api_scope scope = API_SCOPE_READ;
    if (c2) {
        *c2 = '\0';
        if (parse_scope(c2 + 1, &scope) < 0) {
            snprintf(err, errlen, "%s:%d: the scope is read or admin", what, lineno);
            return -EINVAL;
        }
    }
    *c1 = '\0';
    const char *hash = c1 + 1;
    if (crypt_checksalt(hash) != CRYPT_SALT_OK || hash[0] != '$') {
        snprintf(err, errlen, "%s:%d: not a crypt(3) hash of a method libcrypt deems strong (make one with "
                 "diagtop serve --hash-password)", what, lineno);
        return -EINVAL;
    }
    for (int i = 0; i < a->nusers; i++)
        if (!strcmp(a->users[i].name, line)) {
            snprintf(err, errlen, "%s:%d: user %s appears twice", what, lineno, line);
            return -EINVAL;
        }
    if (a->nusers >= ENTRIES_MAX) {
        snprintf(err, errlen, "%s: more than %d users", what, ENTRIES_MAX);
        return -E2BIG;
    }
    struct api_user *u = realloc(a->users, (size_t)(a->nusers + 1) * sizeof *u);
    if (!u) return -ENOMEM;
    a->users = u;
    u += a->nusers;
    snprintf(u->name, sizeof u->name, "%s", line);
    u->scope = scope;
    u->hash = strdup(hash);
    if (!u->hash) return -ENOMEM;
    a->nusers++;
    return 0;
}

static int add_token(struct api_auth *a, char *line, const char *what, int lineno, char *err, size_t errlen)
{
    char *sp = strpbrk(line, " \t");
    enum api_scope scope = API_SCOPE_READ;
    if (sp) {
        *sp++ = '\0';
        while (*sp == ' ' || *sp == '\t') sp++;
        char *end = sp + strlen(sp);
        while (end > sp && (end[-1] == ' ' || end[-1] == '\t')) *--end = '\0';
        if (parse_scope(sp, &scope) < 0) {
            snprintf(err, errlen, "%s:%d: after the token comes read or admin, or nothing", what, lineno);
            return -EINVAL;
        }
    }
    size_t n = strlen(line);
    int printable = 1;
    for (size_t i = 0; i < n; i++) printable &= line[i] > ' ' && line[i] < 127;
    if (n < TOKEN_MIN || n > TOKEN_MAX || !printable) {
        snprintf(err, errlen, "%s:%d: a token is %d to %d printable characters without spaces", what, lineno,
                 TOKEN_MIN, TOKEN_MAX);
        return -EINVAL;
    }
    if (a->ntokens >= ENTRIES_MAX) {
        snprintf(err, errlen, "%s: more than %d tokens", what, ENTRIES_MAX);
        return -E2BIG;
    }
    struct api_token *t = realloc(a->tokens, (size_t)(a->ntokens + 1) * sizeof *t);
    if (!t) return -ENOMEM;
    a->tokens = t;
    sha256(line, n, t[a->ntokens].digest);
    t[a->ntokens++].scope = scope;
    return 0;
}

int api_auth_parse_users(struct api_auth *a, const char *text, const char *what, char *err, size_t errlen)
{
    return each_line(a, text, what, err, errlen, add_user);
}

int api_auth_parse_tokens(struct api_auth *a, const char *text, const char *what, char *err, size_t errlen)
{
    return each_line(a, text, what, err, errlen, add_token);
}

/* Reads a credentials file after checking, on the open descriptor, that nobody else can change it (and for
 * tokens, read it). */
static char *read_checked(const char *path, int secret, char *err, size_t errlen, int *rc)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    *rc = -errno;
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    *rc = -EPERM;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
    } else if (secret && (st.st_uid != geteuid() || (st.st_mode & 077))) {
        snprintf(err, errlen, "%s: a tokens file must belong to the server's user (uid %u) and have mode 0600 "
                 "(it is uid %u, mode %04o)", path, (unsigned)geteuid(), (unsigned)st.st_uid,
                 (unsigned)(st.st_mode & 07777));
    } else if (!secret && ((st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022))) {
        snprintf(err, errlen, "%s: a users file must belong to the server's user or root and not be writable by "
                 "others (it is uid %u, mode %04o)", path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    } else if (st.st_size > FILE_MAX) {
        snprintf(err, errlen, "%s: larger than %d bytes", path, FILE_MAX);
    } else {
        char *text = malloc((size_t)st.st_size + 1);
        size_t got = 0;
        ssize_t n = 0;
        while (text && got < (size_t)st.st_size && (n = read(fd, text + got, (size_t)st.st_size - got)) > 0)
            got += (size_t)n;
        if (text && n >= 0) {
            text[got] = '\0';
            close(fd);
            *rc = 0;
            return text;
        }
        *rc = text ? -EIO : -ENOMEM;
        snprintf(err, errlen, "%s: cannot read", path);
        free(text);
    }
    close(fd);
    return NULL;
}

static int load(struct api_auth *a, const char *path, int tokens, char *err, size_t errlen)
{
    int rc;
    char *text = read_checked(path, tokens, err, errlen, &rc);
    if (!text) return rc;
    int before = tokens ? a->ntokens : a->nusers;
    rc = tokens ? api_auth_parse_tokens(a, text, path, err, errlen) : api_auth_parse_users(a, text, path, err, errlen);
    explicit_bzero(text, strlen(text));
    free(text);
    if (rc == 0 && (tokens ? a->ntokens : a->nusers) == before) {
        snprintf(err, errlen, "%s: no %s in it", path, tokens ? "tokens" : "users");
        return -EINVAL;
    }
    return rc;
}

int api_auth_load_users(struct api_auth *a, const char *path, char *err, size_t errlen)
{
    return load(a, path, 0, err, errlen);
}

int api_auth_load_tokens(struct api_auth *a, const char *path, char *err, size_t errlen)
{
    return load(a, path, 1, err, errlen);
}

long api_auth_base64_decode(const char *in, size_t inlen, unsigned char *out, size_t outsz)
{
    if (inlen % 4) return -1;
    size_t o = 0;
    for (size_t i = 0; i < inlen; i += 4) {
        unsigned v = 0;
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            char c = in[i + k];
            unsigned d;
            if (c >= 'A' && c <= 'Z') d = (unsigned)(c - 'A');
            else if (c >= 'a' && c <= 'z') d = (unsigned)(c - 'a' + 26);
            else if (c >= '0' && c <= '9') d = (unsigned)(c - '0' + 52);
            else if (c == '+') d = 62;
            else if (c == '/') d = 63;
            else if (c == '=' && i + 4 == inlen && k >= 2) {
                d = 0;
                pad++;
            } else return -1;
            if (pad && c != '=') return -1; /* data after padding */
            v = v << 6 | d;
        }
        unsigned char b[3] = {(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
        for (int k = 0; k < 3 - pad; k++) {
            if (o >= outsz) return -1;
            out[o++] = b[k];
        }
    }
    return (long)o;
}

/* The cache key of a verified name and password. */
static void cache_key(const struct api_auth *a, const char *user, const char *password, unsigned char out[32])
{
    size_t lu = strlen(user), lp = strlen(password);
    unsigned char buf[32 + API_AUTH_NAME_MAX + 1 + 1024];
    memcpy(buf, a->secret, 32);
    memcpy(buf + 32, user, lu);
    buf[32 + lu] = '\0';
    memcpy(buf + 33 + lu, password, lp);
    sha256(buf, 33 + lu + lp, out);
    explicit_bzero(buf, sizeof buf);
}

static enum api_auth_result check_basic(struct api_auth *a, const char *b64, double now, struct api_principal *who)
{
    unsigned char raw[API_AUTH_NAME_MAX + 1 + 1024 + 1];
    size_t inlen = strlen(b64);
    while (inlen && (b64[inlen - 1] == ' ' || b64[inlen - 1] == '\t')) inlen--;
    long n = api_auth_base64_decode(b64, inlen, raw, sizeof raw - 1);
    if (n < 0) return API_AUTH_BAD;
    raw[n] = '\0';
    char *colon = memchr(raw, ':', (size_t)n);
    if (!colon || memchr(raw, '\0', (size_t)n) || colon - (char *)raw > API_AUTH_NAME_MAX) {
        explicit_bzero(raw, sizeof raw);
        return API_AUTH_BAD;
    }
    *colon = '\0';
    const char *user = (const char *)raw, *password = colon + 1;
    int idx = -1;
    for (int i = 0; i < a->nusers; i++)
        if (equal_strings(a->users[i].name, user) && idx < 0) idx = i;

    unsigned char key[32];
    cache_key(a, user, password, key);
    int cached = 0;
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < API_AUTH_CACHE_SLOTS; i++)
        if (api_auth_equal(a->cache[i].key, key, 32) && a->cache[i].expires > now && a->cache[i].user == idx)
            cached = 1;
    pthread_mutex_unlock(&a->lock);

    int ok = cached;
    if (!cached) {
        const char *hash = idx >= 0 ? a->users[idx].hash : a->dummy_hash;
        char out[CRYPT_OUTPUT_SIZE];
        size_t hl = strlen(hash);
        ok = hash_with(password, hash, out, sizeof out) == 0 && strlen(out) == hl && api_auth_equal(out, hash, hl) &&
             idx >= 0;
        explicit_bzero(out, sizeof out);
        if (ok) { /* remember it in the slot that expires first */
            pthread_mutex_lock(&a->lock);
            int slot = 0;
            for (int i = 1; i < API_AUTH_CACHE_SLOTS; i++)
                if (a->cache[i].expires < a->cache[slot].expires) slot = i;
            memcpy(a->cache[slot].key, key, 32);
            a->cache[slot].user = idx;
            a->cache[slot].expires = now + CACHE_SECONDS;
            pthread_mutex_unlock(&a->lock);
        }
    }
    explicit_bzero(raw, sizeof raw);
    explicit_bzero(key, sizeof key);
    if (!ok) return API_AUTH_BAD;
    snprintf(who->name, sizeof who->name, "%s", a->users[idx].name);
    who->scope = a->users[idx].scope;
    return API_AUTH_OK;
}

static enum api_auth_result check_bearer(struct api_auth *a, const char *token, struct api_principal *who)
{
    size_t n = strlen(token);
    while (n && (token[n - 1] == ' ' || token[n - 1] == '\t')) n--;
    if (n < TOKEN_MIN || n > TOKEN_MAX) return API_AUTH_BAD;
    unsigned char d[32];
    sha256(token, n, d);
    int hit = -1;
    for (int i = 0; i < a->ntokens; i++)
        if (api_auth_equal(a->tokens[i].digest, d, 32) && hit < 0) hit = i;
    if (hit < 0) return API_AUTH_BAD;
    snprintf(who->name, sizeof who->name, "token");
    who->scope = a->tokens[hit].scope;
    return API_AUTH_OK;
}

enum api_auth_result api_auth_check(struct api_auth *a, const char *header, double now, struct api_principal *who)
{
    who->name[0] = '\0';
    who->scope = API_SCOPE_NONE;
    if (!header || !*header) return API_AUTH_MISSING;
    while (*header == ' ') header++;
    if (!strncasecmp(header, "Basic ", 6) && a->nusers) {
        const char *p = header + 6;
        while (*p == ' ') p++;
        return check_basic(a, p, now, who);
    }
    if (!strncasecmp(header, "Bearer ", 7) && a->ntokens) {
        const char *p = header + 7;
        while (*p == ' ') p++;
        return check_bearer(a, p, who);
    }
    return API_AUTH_BAD;
}

/* ---- back-off ---- */

static void addr_key(const struct sockaddr *sa, unsigned char key[16])
{
    memset(key, 0, 16);
    if (!sa) return;
    if (sa->sa_family == AF_INET) {
        key[0] = 4;
        memcpy(key + 1, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        const unsigned char *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (!memcmp(b, mapped, 12)) { /* an IPv4 client of a dual-stack socket is its IPv4 address */
            key[0] = 4;
            memcpy(key + 1, b + 12, 4);
        } else {
            key[0] = 6;
            memcpy(key + 1, b, 8); /* a /64: one host can have many addresses in it */
        }
    }
}

static struct api_auth_fail *find_slot(struct api_auth *a, const unsigned char key[16], double now, int create)
{
    struct api_auth_fail *free_slot = NULL, *oldest = NULL;
    for (int i = 0; i < API_AUTH_FAIL_SLOTS; i++) {
        struct api_auth_fail *f = &a->fails[i];
        if (f->used && now - f->last > FAIL_WINDOW && now >= f->blocked_until) f->used = 0; /* forgotten */
        if (f->used && !memcmp(f->key, key, 16)) return f;
        if (!f->used && !free_slot) free_slot = f;
        if (f->used && (!oldest || f->last < oldest->last)) oldest = f;
    }
    if (!create) return NULL;
    struct api_auth_fail *f = free_slot ? free_slot : oldest;
    memset(f, 0, sizeof *f);
    memcpy(f->key, key, 16);
    f->used = 1;
    return f;
}

double api_auth_blocked(struct api_auth *a, const struct sockaddr *addr, double now)
{
    unsigned char key[16];
    addr_key(addr, key);
    pthread_mutex_lock(&a->lock);
    struct api_auth_fail *f = find_slot(a, key, now, 0);
    double left = f && f->blocked_until > now ? f->blocked_until - now : 0;
    pthread_mutex_unlock(&a->lock);
    return left;
}

void api_auth_failed(struct api_auth *a, const struct sockaddr *addr, double now)
{
    unsigned char key[16];
    addr_key(addr, key);
    pthread_mutex_lock(&a->lock);
    struct api_auth_fail *f = find_slot(a, key, now, 1);
    f->failures++;
    f->last = now;
    if (f->failures > API_AUTH_FREE_FAILURES) {
        int k = f->failures - API_AUTH_FREE_FAILURES - 1;
        double wait = k >= 6 ? BLOCK_MAX : (double)(1 << k);
        f->blocked_until = now + (wait < BLOCK_MAX ? wait : BLOCK_MAX);
    }
    pthread_mutex_unlock(&a->lock);
}

void api_auth_succeeded(struct api_auth *a, const struct sockaddr *addr)
{
    unsigned char key[16];
    addr_key(addr, key);
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < API_AUTH_FAIL_SLOTS; i++)
        if (a->fails[i].used && !memcmp(a->fails[i].key, key, 16) && a->fails[i].failures) {
            /* A success resets the count, but not a block in force (the success came through it only because
             * the caller checked before; a blocked client never gets here). */
            a->fails[i].failures = 0;
        }
    pthread_mutex_unlock(&a->lock);
}
