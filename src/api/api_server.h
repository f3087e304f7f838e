/* api_server: `diagtop serve`, the HTTP/JSON API over libmicrohttpd (GnuTLS for TLS). One thread per connection
 * (a stack capture or a profile runs whole in the connection's thread, as ptrace wants), at most max_connections
 * of them, half of those per client address; a connection idle for client_timeout seconds is closed; headers and
 * the request line together fit in 32 KiB (431 beyond); a request body is never read (413). Every request must
 * authenticate (api_auth: 401 without, 429 while an address is blocked), carries no parameter its route does not
 * take (400), and gets 403 on an admin route with a read-scope credential or on a read-only server. Requests from
 * another site (an Origin that is not this server, Sec-Fetch-Site: cross-site) get 403: CORS is off, so a page
 * elsewhere can neither read answers nor trigger actions with the browser's stored credentials. Replies are never
 * cached; the page has a Content-Security-Policy that allows only its own script and style. One access-log line
 * per request. */
#ifndef DIAGTOP_API_SERVER_H
#define DIAGTOP_API_SERVER_H
#include <stddef.h>
#include <stdio.h>

struct api_server_config {
    const char *listen;           /* "ADDR:PORT", "[ADDR6]:PORT"; port 0 picks a free one */
    const char *users_file, *tokens_file; /* at least one */
    const char *tls_cert, *tls_key;        /* both or neither */
    int read_only;
    int allow_plaintext;          /* serve plain HTTP on an address other than loopback */
    const char *dump_dir;         /* where dumps (and runtimes' profiles, until sent) go */
    double agent_timeout;         /* seconds per exchange with a runtime's agent */
    const char *drop_frames;      /* heap profiles: more allocation wrappers to skip (regex), NULL: none */
    double sample_interval;       /* a process-table sample younger than this is reused */
    double sample_every;          /* also sample this often without requests (0: only for requests) */
    int max_connections;
    int client_timeout;           /* seconds */
    FILE *log;                    /* access log and libmicrohttpd's errors; NULL: none */
};

void api_server_config_default(struct api_server_config *c);

struct api_server;

/* Checks the configuration (credentials, TLS, the address), binds and starts serving. Returns 0 with the
 * server and the URL it serves on in url ("http://127.0.0.1:40123"), or -errno with a reason. */
int api_server_start(const struct api_server_config *c, struct api_server **out, char *url, size_t urllen, char *err,
                     size_t errlen);
/* Cancels every action in flight, waits for them and the connections, and frees the server. */
void api_server_stop(struct api_server *s);

/* Parses "ADDR:PORT" / "[ADDR6]:PORT" into a socket address. Returns 0 or -1 with a reason. Exposed for tests. */
struct sockaddr_storage;
int api_server_parse_listen(const char *text, struct sockaddr_storage *ss, size_t *sslen, char *err, size_t errlen);
/* Whether the address is a loopback address (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104). */
int api_server_is_loopback(const struct sockaddr_storage *ss);
#endif
