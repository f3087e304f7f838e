#include "api_server.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fileio.h"
#include "util/text.h"
#include "api_auth.h"
#include "api_guard.h"
#include "api_sampler.h"
#include "api_libs.h"
#include "api_state.h"

#define MEMORY_LIMIT (32 * 1024) /* request line + headers of one connection */
#define ARGS_MAX 16
#define ARG_VALUE_MAX 1024

struct api_server {
    struct MHD_Daemon *daemon;
    struct api_state state;
    struct api_auth auth;
    int tls;
    char *cert, *key;
    FILE *log;
    pthread_mutex_t log_lock;
    struct api_guard guard;
    struct api_sampler sampler; /* --sample-every: started with the state, stopped before it */
    int have_state, have_dumps, have_guard;
};

/* One request: its query, validated once, and what the handler needs to read headers. */
struct request_ctx {
    struct MHD_Connection *conn;
    struct api_server *server;
    const struct api_route *route;
    int nargs, bad_arg, answered, headers_in;
    int bad_path; /* the raw path has an encoded NUL or separator, or a control byte: 400 */
    double started;
    char bad_name[64];
    char *keys[ARGS_MAX], *values[ARGS_MAX];
};

void api_server_config_default(struct api_server_config *c)
{
    memset(c, 0, sizeof *c);
    c->listen = "127.0.0.1:7070";
    c->agent_timeout = 5;
    c->sample_interval = 1;
    c->max_connections = 64;
    c->client_timeout = 15;
}

/* ---- addresses ---- */

int api_server_parse_listen(const char *text, struct sockaddr_storage *ss, size_t *sslen, char *err, size_t errlen)
{
    char host[256], port[16];
    const char *colon;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof host) goto bad;
        memcpy(host, text + 1, (size_t)(close - text - 1));
        host[close - text - 1] = '\0';
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon || (size_t)(colon - text) >= sizeof host || memchr(text, ':', (size_t)(colon - text))) goto bad;
        memcpy(host, text, (size_t)(colon - text));
        host[colon - text] = '\0';
    }
    long p;
    if (strlen(colon + 1) >= sizeof port || api_param_long(colon + 1, 0, 65535, &p) < 0 || !host[0]) goto bad;
    snprintf(port, sizeof port, "%ld", p);
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res;
    if (getaddrinfo(host, port, &hints, &res) != 0) goto bad;
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sslen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
bad:
    snprintf(err, errlen, "--listen: '%s' is not ADDR:PORT or [ADDR6]:PORT with a numeric address", text);
    return -1;
}

int api_server_is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
    if (ss->ss_family != AF_INET6) return 0;
    const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(a)) return 1;
    return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
}

/* Binds and listens; the URL says where. Returns the socket or -errno. */
static int listen_on(const struct sockaddr_storage *ss, size_t sslen, int tls, char *url, size_t urllen, char *err,
                     size_t errlen)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -errno;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss->ss_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)ss, (socklen_t)sslen) < 0 || listen(fd, 128) < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot listen there: %s", strerror(e));
        close(fd);
        return -e;
    }
    struct sockaddr_storage got;
    socklen_t gl = sizeof got;
    getsockname(fd, (struct sockaddr *)&got, &gl);
    char host[INET6_ADDRSTRLEN];
    int port;
    if (got.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&got)->sin6_addr, host, sizeof host);
        port = ntohs(((struct sockaddr_in6 *)&got)->sin6_port);
        snprintf(url, urllen, "%s://[%s]:%d", tls ? "https" : "http", host, port);
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&got)->sin_addr, host, sizeof host);
        port = ntohs(((struct sockaddr_in *)&got)->sin_port);
        snprintf(url, urllen, "%s://%s:%d", tls ? "https" : "http", host, port);
    }
    return fd;
}

/* ---- logging ---- */

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
    struct api_server *s = cls;
    if (!s->log) return;
    pthread_mutex_lock(&s->log_lock);
    fputs("diagtop serve: libmicrohttpd: ", s->log);
    vfprintf(s->log, fmt, ap);
    if (!*fmt || fmt[strlen(fmt) - 1] != '\n') fputc('\n', s->log);
    fflush(s->log);
    pthread_mutex_unlock(&s->log_lock);
}

static void client_text(struct MHD_Connection *c, char *buf, size_t n)
{
    const union MHD_ConnectionInfo *ci = api_libs()->get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(buf, n, "-");
    if (!ci || !ci->client_addr) return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)n);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)n);
}

static void log_request(struct api_server *s, struct MHD_Connection *c, const char *method, const char *url,
                        const char *who, int status, unsigned long long bytes, double started)
{
    if (!s->log) return;
    char addr[INET6_ADDRSTRLEN + 1], iso[32], clean_url[300], clean_method[16];
    client_text(c, addr, sizeof addr);
    clock_format_iso8601(iso, sizeof iso, time(NULL));
    text_sanitize_display(clean_url, sizeof clean_url, url, strnlen(url, 256));
    text_sanitize_display(clean_method, sizeof clean_method, method, strnlen(method, 12));
    pthread_mutex_lock(&s->log_lock);
    fprintf(s->log, "%s %s %s %s %s %d %llu %.1fms\n", iso, addr, who && *who ? who : "-", clean_method, clean_url,
            status, bytes, (clock_monotonic_seconds() - started) * 1e3);
    fflush(s->log);
    pthread_mutex_unlock(&s->log_lock);
}

/* ---- replies ---- */

static void security_headers(struct api_server *s, struct MHD_Response *resp, int page)
{
    api_libs()->add_response_header(resp, "Cache-Control", "no-store");
    api_libs()->add_response_header(resp, "X-Content-Type-Options", "nosniff");
    api_libs()->add_response_header(resp, "Referrer-Policy", "no-referrer");
    api_libs()->add_response_header(resp, "X-Frame-Options", "DENY");
    api_libs()->add_response_header(resp, "Cross-Origin-Resource-Policy", "same-origin");
    api_libs()->add_response_header(resp, "Content-Security-Policy",
                            page ? "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                                   "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
                                 : "default-src 'none'; frame-ancestors 'none'");
    if (s->tls) api_libs()->add_response_header(resp, "Strict-Transport-Security", "max-age=31536000");
}

/* Sends r (taking its body and descriptor). Returns MHD's result; *bytes gets the body's length. */
static enum MHD_Result send_reply(struct api_server *s, struct MHD_Connection *c, struct api_reply *r,
                                  unsigned long long *bytes)
{
    struct MHD_Response *resp;
    if (r->fd >= 0) {
        resp = api_libs()->create_response_from_fd_at_offset64(r->length, r->fd, r->offset);
        if (resp) r->fd = -1; /* the response owns it now */
        *bytes = r->length;
    } else {
        resp = api_libs()->create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
        if (resp) r->body = NULL;
        *bytes = r->len;
    }
    if (!resp) {
        api_reply_clear(r);
        return MHD_NO;
    }
    if (r->content_type) api_libs()->add_response_header(resp, "Content-Type", r->content_type);
    security_headers(s, resp, r->page);
    if (r->location[0]) api_libs()->add_response_header(resp, "Location", r->location);
    if (r->disposition[0]) api_libs()->add_response_header(resp, "Content-Disposition", r->disposition);
    if (r->content_range[0]) api_libs()->add_response_header(resp, "Content-Range", r->content_range);
    if (r->allow[0]) api_libs()->add_response_header(resp, "Allow", r->allow);
    if (r->etag[0]) api_libs()->add_response_header(resp, "ETag", r->etag);
    if (r->accept_ranges) api_libs()->add_response_header(resp, "Accept-Ranges", "bytes");
    if (r->retry_after > 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", r->retry_after);
        api_libs()->add_response_header(resp, "Retry-After", v);
    }
    if (r->status == 401) {
        if (s->auth.nusers) api_libs()->add_response_header(resp, "WWW-Authenticate", "Basic realm=\"diagtop\", charset=\"UTF-8\"");
        if (s->auth.ntokens) api_libs()->add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"diagtop\"");
    }
    enum MHD_Result ret = api_libs()->queue_response(c, (unsigned)r->status, resp);
    api_libs()->destroy_response(resp);
    api_reply_clear(r);
    return ret;
}

/* ---- the request ---- */

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                   const char *value, size_t value_size)
{
    (void)kind;
    struct request_ctx *x = cls;
    if (x->bad_arg) return MHD_NO;
    snprintf(x->bad_name, sizeof x->bad_name, "%.*s", (int)(key_size < 60 ? key_size : 60), key);
    if (x->nargs == ARGS_MAX) x->bad_arg = 1;             /* too many */
    else if (strlen(key) != key_size || !api_route_takes(x->route, key)) x->bad_arg = 2; /* not one it takes */
    else if (value && (strlen(value) != value_size || value_size > ARG_VALUE_MAX)) x->bad_arg = 3;
    for (int i = 0; !x->bad_arg && i < x->nargs; i++)
        if (!strcmp(x->keys[i], key)) x->bad_arg = 4; /* twice */
    if (x->bad_arg) return MHD_NO;
    x->keys[x->nargs] = strdup(key);
    x->values[x->nargs] = strdup(value ? value : "");
    if (!x->keys[x->nargs] || !x->values[x->nargs]) {
        free(x->keys[x->nargs]);
        free(x->values[x->nargs]);
        x->bad_arg = 5;
        return MHD_NO;
    }
    x->nargs++;
    return MHD_YES;
}

static const char *arg_of(void *cookie, const char *name)
{
    struct request_ctx *x = cookie;
    for (int i = 0; i < x->nargs; i++)
        if (!strcmp(x->keys[i], name)) return x->values[i];
    return NULL;
}

static const char *header_of(void *cookie, const char *name)
{
    struct request_ctx *x = cookie;
    return api_libs()->lookup_connection_value(x->conn, MHD_HEADER_KIND, name);
}

/* Whether a header naming a page (Origin, or Referer) names this server: its scheme and Host, then the end or a
 * path. */
static int same_origin(struct api_server *s, struct MHD_Connection *c, const char *url, int whole)
{
    const char *host = api_libs()->lookup_connection_value(c, MHD_HEADER_KIND, "Host");
    char expect[320];
    int n = snprintf(expect, sizeof expect, "%s://%s", s->tls ? "https" : "http", host ? host : "");
    if (n < 0 || (size_t)n >= sizeof expect || strncmp(url, expect, (size_t)n)) return 0;
    return url[n] == '\0' || (!whole && url[n] == '/');
}

/* A request from a page of another site: refused, whatever its credentials (CORS is off). A foreign Origin, else
 * a foreign Referer, is refused; a request that changes something and carries neither is taken only with a bearer
 * token, which a browser never adds by itself (it does replay Basic credentials). */
static int cross_site(struct api_server *s, struct MHD_Connection *c, const char *method)
{
    const char *site = api_libs()->lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (site && (!strcmp(site, "cross-site") || !strcmp(site, "same-site"))) return 1;
    const char *origin = api_libs()->lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    if (origin) return !same_origin(s, c, origin, 1);
    const char *referer = api_libs()->lookup_connection_value(c, MHD_HEADER_KIND, "Referer");
    if (referer) return !same_origin(s, c, referer, 0);
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) return 0;
    const char *authz = api_libs()->lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    return !authz || strncasecmp(authz, "Bearer ", 7) != 0;
}

static const struct sockaddr *client_addr(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = api_libs()->get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return ci ? ci->client_addr : NULL;
}

/* Who asks: 0 with the principal (its name in who), or -1 with the 429, 401 or 403 in r. */
static int authenticate(struct api_server *s, struct MHD_Connection *c, const char *method, struct api_reply *r,
                        struct api_principal *p, char *who, size_t wholen)
{
    const struct sockaddr *addr = client_addr(c);
    double now = clock_monotonic_seconds();
    double wait = api_auth_blocked(&s->auth, addr, now);
    if (wait > 0) {
        api_reply_error(r, 429, "too many failed logins from this address: try again in %.0f s", ceil(wait));
        r->retry_after = (int)ceil(wait);
        return -1;
    }
    enum api_auth_result ar =
        api_auth_check(&s->auth, api_libs()->lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"), now, p);
    if (ar != API_AUTH_OK) {
        if (ar == API_AUTH_BAD) api_auth_failed(&s->auth, addr, now);
        return api_reply_error(r, 401, ar == API_AUTH_BAD ? "wrong credentials" : "credentials needed");
    }
    api_auth_succeeded(&s->auth, addr);
    snprintf(who, wholen, "%s", p->name);
    if (cross_site(s, c, method))
        return api_reply_error(r, 403, "a request from another site (CORS is off), or one that changes something "
                               "with neither Origin nor Referer nor a bearer token");
    return 0;
}

/* Authenticates, routes, checks the scope and the query, and runs the route's handler into r. who gets the name. */
static int handle(struct api_server *s, struct MHD_Connection *c, const char *url, const char *method,
                  struct request_ctx *x, struct api_reply *r, char *who, size_t wholen)
{
    if (x->bad_path) return api_reply_error(r, 400, "an encoded NUL or path separator, or a control byte, in the path");
    struct api_principal p;
    if (authenticate(s, c, method, r, &p, who, wholen) < 0) return -1;

    struct api_route route;
    char allow[64], err[256];
    int st = api_route_parse(method, url, &route, allow, sizeof allow, err, sizeof err);
    if (st) {
        if (st == 405) snprintf(r->allow, sizeof r->allow, "%s", allow); /* what the path takes (RFC 9110) */
        return api_reply_error(r, st, "%s", err);
    }
    x->route = &route;
    api_libs()->get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect_arg, x);
    if (x->bad_arg) {
        static const char *const why[] = {"", "more than 16 parameters", "a parameter this route does not take",
                                          "a malformed or overlong value", "a parameter given twice", "out of memory"};
        return api_reply_error(r, x->bad_arg == 5 ? 500 : 400, "%s: %s", x->bad_name, why[x->bad_arg]);
    }
    if (route.scope == API_SCOPE_ADMIN && (s->state.read_only || p.scope < API_SCOPE_ADMIN))
        return api_reply_error(r, 403, s->state.read_only ? "this server is read-only" : "this needs the admin scope");

    struct api_request rq = {&route, arg_of, header_of, x, p, s->state.read_only};
    route.handle(&s->state, &rq, r);
    x->route = NULL; /* it lived on this stack */
    if (!r->status) api_reply_error(r, 500, "no reply");
    return 0;
}

/* The guard's record of a connection, kept as libmicrohttpd's socket context. */
static struct api_guard_conn *guard_conn(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = api_libs()->get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct api_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = api_libs()->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? api_guard_open(&s->guard, ci->connect_fd) : NULL;
    } else {
        api_guard_close(&s->guard, *socket_context);
        *socket_context = NULL;
    }
}

/* Whether a raw path (before '?') may be routed: libmicrohttpd decodes it before we see it, so an encoded NUL
 * would cut it short and an encoded '/' would make two segments of one. */
static int raw_path_ok(const char *uri)
{
    for (const char *p = uri; *p && *p != '?'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) return 0;
        if (*p == '%' && p[1] && p[2]) {
            char hex[3] = {p[1], p[2], 0};
            long v = strtol(hex, NULL, 16);
            if (isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2]) && (v < 0x20 || v == 0x7f || v == '/' || v == '\\'))
                return 0;
        }
    }
    return 1;
}

/* The request line is in, still undecoded: its context starts here (it becomes the request's con_cls). */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct request_ctx *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->conn = c;
    x->server = cls;
    x->started = clock_monotonic_seconds();
    x->bad_path = !raw_path_ok(uri);
    return x;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    (void)upload_data;
    struct api_server *s = cls;
    struct request_ctx *x = *con_cls;
    struct api_reply r;
    api_reply_init(&r);
    char who[API_AUTH_NAME_MAX + 8] = "";
    if (!x) return MHD_NO; /* out of memory when its request line came */
    if (!x->headers_in) {
        /* The headers are in. A body is refused at once (and never read: MHD closes the connection); otherwise
         * the answer comes on the next call, when MHD knows the request is complete and can keep the
         * connection alive. */
        x->headers_in = 1;
        x->conn = c;
        api_guard_request_in(&s->guard, guard_conn(c));
        const char *cl = api_libs()->lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        const char *te = api_libs()->lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
        if ((cl && strcmp(cl, "0")) || te) {
            x->answered = 1;
            api_reply_error(&r, 413, "this API takes no request body");
        } else {
            return MHD_YES;
        }
    } else if (*upload_data_size) { /* a body after the 413: dropped */
        *upload_data_size = 0;
        return MHD_YES;
    } else if (x->answered) {
        return MHD_YES;
    } else {
        x->answered = 1;
        handle(s, c, url, method, x, &r, who, sizeof who);
    }
    int status = r.status;
    unsigned long long bytes = 0;
    enum MHD_Result ret = send_reply(s, c, &r, &bytes);
    log_request(s, c, method, url, who, status, bytes, x->started);
    return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode code)
{
    (void)code;
    struct api_server *s = cls;
    api_guard_request_done(&s->guard, guard_conn(c));
    struct request_ctx *x = *con_cls;
    if (!x) return;
    for (int i = 0; i < x->nargs; i++) {
        free(x->keys[i]);
        free(x->values[i]);
    }
    free(x);
    *con_cls = NULL;
}

/* ---- start and stop ---- */

static char *read_pem(const char *path, int secret, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    close(fd);
    if (secret && (st.st_mode & 077)) {
        snprintf(err, errlen, "%s: a private key others can read (mode %04o): chmod 0600 it", path,
                 (unsigned)(st.st_mode & 07777));
        return NULL;
    }
    char *text = fileio_read_file(AT_FDCWD, path, 1 << 20, NULL);
    if (!text) snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return text;
}

static void free_server(struct api_server *s)
{
    if (s->have_guard) api_guard_stop(&s->guard); /* after the daemon: no connection is left to guard */
    if (s->have_dumps) { /* the triggers first: their captures become dumps */
        api_triggers_shutdown(&s->state.triggers);
        api_dumps_shutdown(&s->state.dumps);
    }
    if (s->have_state) {
        api_sampler_stop(&s->sampler);
        api_store_destroy(&s->state.heaps);
        api_busy_destroy(&s->state.busy);
        api_monitor_destroy(&s->state.mon);
    }
    api_auth_free(&s->auth);
    free(s->cert);
    if (s->key) explicit_bzero(s->key, strlen(s->key));
    free(s->key);
    pthread_mutex_destroy(&s->log_lock);
    free(s);
}

/* The configuration's own checks, before anything is read or bound; ss gets the address. */
static int check_config(const struct api_server_config *c, struct sockaddr_storage *ss, size_t *sslen, char *err,
                        size_t errlen)
{
    if (!c->users_file && !c->tokens_file) {
        snprintf(err, errlen, "no credentials: give --users FILE (HTTP Basic) and/or --tokens FILE (bearer tokens); "
                 "the API never serves without them");
        return -EINVAL;
    }
    if (!c->tls_cert != !c->tls_key) {
        snprintf(err, errlen, "TLS needs both --tls-cert and --tls-key");
        return -EINVAL;
    }
    if (api_server_parse_listen(c->listen, ss, sslen, err, errlen) < 0) return -EINVAL;
    if (!c->tls_cert && !api_server_is_loopback(ss) && !c->allow_plaintext) {
        snprintf(err, errlen, "%s is not a loopback address: serving it without TLS would send credentials and dumps "
                 "in the clear; give --tls-cert and --tls-key, or --allow-plaintext if the network is trusted", c->listen);
        return -EINVAL;
    }
    return 0;
}

/* The users, the tokens, and the TLS certificate and key. */
static int load_credentials(struct api_server *s, const struct api_server_config *c, char *err, size_t errlen)
{
    int rc = api_auth_init(&s->auth, err, errlen);
    if (rc == 0 && c->users_file) rc = api_auth_load_users(&s->auth, c->users_file, err, errlen);
    if (rc == 0 && c->tokens_file) rc = api_auth_load_tokens(&s->auth, c->tokens_file, err, errlen);
    if (rc == 0 && c->tls_cert) {
        s->tls = 1;
        if (!(s->cert = read_pem(c->tls_cert, 0, err, errlen)) || !(s->key = read_pem(c->tls_key, 1, err, errlen)))
            rc = -EINVAL;
    }
    return rc;
}

/* What the handlers share (api_state.h). */
static int init_state(struct api_server *s, const struct api_server_config *c, char *err, size_t errlen)
{
    struct api_state *st = &s->state;
    int rc = api_monitor_init(&st->mon, c->sample_interval, err, errlen);
    if (rc < 0) return rc;
    if (c->sample_every > 0 && (rc = api_sampler_start(&s->sampler, &st->mon, c->sample_every)) < 0) {
        snprintf(err, errlen, "cannot start the sampler: %s", strerror(-rc));
        api_monitor_destroy(&st->mon);
        return rc;
    }
    api_busy_init(&st->busy);
    api_store_init(&st->heaps);
    s->have_state = 1;
    snprintf(st->dump_dir, sizeof st->dump_dir, "%s", c->dump_dir ? c->dump_dir : ".");
    api_dumps_init(&st->dumps, st->dump_dir, &st->busy);
    api_triggers_init(&st->triggers, &st->dumps);
    s->have_dumps = 1;
    st->agent_timeout = c->agent_timeout > 0 ? c->agent_timeout : 5;
    snprintf(st->drop_frames, sizeof st->drop_frames, "%s", c->drop_frames ? c->drop_frames : "");
    st->read_only = c->read_only;
    return 0;
}

/* libmicrohttpd on the listening socket fd (closed if it will not start). */
static int start_daemon(struct api_server *s, const struct api_server_config *c, int family, int fd, char *err,
                        size_t errlen)
{
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG |
                     MHD_USE_ITC;
    if (family == AF_INET6) flags |= MHD_USE_IPv6;
    if (s->tls) flags |= MHD_USE_TLS;
    unsigned max = c->max_connections > 0 ? (unsigned)c->max_connections : 64;
    /* A quarter per address, and the guard (api_guard.h) frees slots held by slow requests: no address, nor a
     * few of them, can starve the rest. */
    unsigned per_ip = max >= 8 ? max / 4 : 2;
    int rc = api_guard_start(&s->guard, max, c->client_timeout > 0 ? c->client_timeout : 15);
    if (rc < 0) {
        close(fd);
        snprintf(err, errlen, "cannot start the connection guard: %s", strerror(-rc));
        return rc;
    }
    s->have_guard = 1;
    struct MHD_OptionItem tls_opts[] = {
        {MHD_OPTION_HTTPS_MEM_KEY, 0, s->key},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, s->cert},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"},
        {MHD_OPTION_END, 0, NULL},
    };
    s->daemon = api_libs()->start_daemon(
        flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, log_mhd, s, MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_CONNECTION_LIMIT, max,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_URI_LOG_CALLBACK, on_request_line, s, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(c->client_timeout > 0 ? c->client_timeout : 15), MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)MEMORY_LIMIT, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_STRICT_FOR_CLIENT, 1, MHD_OPTION_ARRAY, s->tls ? tls_opts : tls_opts + 3, MHD_OPTION_END);
    if (!s->daemon) {
        close(fd);
        snprintf(err, errlen, "libmicrohttpd would not start%s", s->tls ? " (is the certificate and key a pair of PEM "
                 "files?)" : "");
        return -EINVAL;
    }
    return 0;
}

int api_server_start(const struct api_server_config *c, struct api_server **out, char *url, size_t urllen, char *err,
                     size_t errlen)
{
    *out = NULL;
    if (!api_libs_load(err, errlen)) return -ENOENT; /* before any credential is read: they are hashed with it */
    struct sockaddr_storage ss;
    size_t sslen;
    int rc = check_config(c, &ss, &sslen, err, errlen);
    if (rc < 0) return rc;
    struct api_server *s = calloc(1, sizeof *s);
    if (!s) return -ENOMEM;
    pthread_mutex_init(&s->log_lock, NULL);
    s->log = c->log;
    int fd = -1;
    if ((rc = load_credentials(s, c, err, errlen)) < 0 || (rc = init_state(s, c, err, errlen)) < 0 ||
        (rc = fd = listen_on(&ss, sslen, s->tls, url, urllen, err, errlen)) < 0 ||
        (rc = start_daemon(s, c, ss.ss_family, fd, err, errlen)) < 0) {
        free_server(s);
        return rc;
    }
    *out = s;
    return 0;
}

void api_server_stop(struct api_server *s)
{
    if (!s) return;
    /* No new connections (quiesce hands the listening socket back, so we close it, not MHD); actions in
     * connection threads give up; then the threads end. */
    MHD_socket fd = api_libs()->quiesce_daemon(s->daemon);
    s->state.cancel = 1;
    api_libs()->stop_daemon(s->daemon);
    if (fd != MHD_INVALID_SOCKET) close(fd);
    free_server(s);
}
