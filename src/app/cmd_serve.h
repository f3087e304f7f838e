/* cmd_serve: `diagtop serve`, the HTTP/JSON API (api_server) until SIGINT, SIGTERM or SIGHUP; and
 * `diagtop serve --hash-password`, a yescrypt line for its users file. */
#ifndef DIAGTOP_CMD_SERVE_H
#define DIAGTOP_CMD_SERVE_H
int cmd_serve(int argc, char **argv);
#endif
