/* api_auth: who may use the HTTP API. Two kinds of credentials, each with a scope (read: GETs; admin: also what
 * changes a process, dumps, secrets):
 * - users: HTTP Basic against a file of "name:crypt-hash[:scope]" lines (yescrypt or another strong crypt(3)
 *   method of libcrypt; legacy methods such as DES and MD5 are refused when loading). A verified name and password
 *   are remembered for 5 minutes as a keyed SHA-256, so a client sending Basic on every request costs one hash;
 * - tokens: "Authorization: Bearer T" against a file of "TOKEN[ scope]" lines (at least 16 characters); the file
 *   must be a regular file of the server's user with mode 0600, and only SHA-256 digests are kept.
 * Scope defaults to read. Comparisons are constant-time and run over every entry; an unknown user costs one hash
 * too. Repeated failures from one address (an IPv4 address, an IPv6 /64) block it: from the 6th failure within 15
 * minutes, 1, 2, 4, ... up to 60 seconds during which it gets 429 without its credentials being looked at.
 * Thread-safe. */
#ifndef DIAGTOP_API_AUTH_H
#define DIAGTOP_API_AUTH_H
#include <pthread.h>
#include <stddef.h>
#include <sys/socket.h>

#include "api_route.h"

#define API_AUTH_NAME_MAX 64
#define API_AUTH_FAIL_SLOTS 256
#define API_AUTH_CACHE_SLOTS 64
#define API_AUTH_FREE_FAILURES 5

struct api_user {
    char name[API_AUTH_NAME_MAX + 1];
    char *hash;
    enum api_scope scope;
};

struct api_token {
    unsigned char digest[32];
    enum api_scope scope;
};

struct api_auth_fail {
    unsigned char key[16];
    int used, failures;
    double last, blocked_until;
};

struct api_auth_cached {
    unsigned char key[32];
    int user;
    double expires;
};

struct api_auth {
    struct api_user *users;
    int nusers;
    struct api_token *tokens;
    int ntokens;
    char *dummy_hash; /* what an unknown user's password is hashed against */
    unsigned char secret[32]; /* keys the cache of verified passwords */
    pthread_mutex_t lock;     /* the tables below */
    struct api_auth_fail fails[API_AUTH_FAIL_SLOTS];
    struct api_auth_cached cache[API_AUTH_CACHE_SLOTS];
};

/* Who a request comes from. */
struct api_principal {
    char name[API_AUTH_NAME_MAX + 8]; /* the user, or "token" */
    enum api_scope scope;
};

enum api_auth_result { API_AUTH_OK, API_AUTH_MISSING, API_AUTH_BAD };

int api_auth_init(struct api_auth *a, char *err, size_t errlen);
void api_auth_free(struct api_auth *a);
/* Each returns 0 (the entries added), or -errno with the reason naming the file and line. */
int api_auth_load_users(struct api_auth *a, const char *path, char *err, size_t errlen);
int api_auth_load_tokens(struct api_auth *a, const char *path, char *err, size_t errlen);
/* Parses the lines of a users or tokens file (exposed for tests; load_* check the file first). */
int api_auth_parse_users(struct api_auth *a, const char *text, const char *what, char *err, size_t errlen);
int api_auth_parse_tokens(struct api_auth *a, const char *text, const char *what, char *err, size_t errlen);

/* Checks an Authorization header (NULL: none): OK with who filled, MISSING, or BAD (wrong, or malformed). */
enum api_auth_result api_auth_check(struct api_auth *a, const char *header, double now, struct api_principal *who);

/* The back-off. addr: the client's address. blocked returns the seconds it must still wait (0: it may try). */
double api_auth_blocked(struct api_auth *a, const struct sockaddr *addr, double now);
void api_auth_failed(struct api_auth *a, const struct sockaddr *addr, double now);
void api_auth_succeeded(struct api_auth *a, const struct sockaddr *addr);

/* A yescrypt hash of password for a users file. Returns 0 or -errno with a reason. */
int api_auth_hash(const char *password, char *out, size_t outlen, char *err, size_t errlen);
/* Constant-time equality of two buffers of the same length. */
int api_auth_equal(const void *a, const void *b, size_t n);
/* Decodes standard base64 (padding required, no spaces) into out. Returns the length or -1. */
long api_auth_base64_decode(const char *in, size_t inlen, unsigned char *out, size_t outsz);
#endif
