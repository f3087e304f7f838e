/* quit_signals: SIGINT, SIGTERM and SIGHUP turned into a request the program polls (no SA_RESTART, so a blocking
 * poll or sleep returns), and SIGPIPE ignored so a closed pipe is an error code, not a death. */
#ifndef DIAGTOP_QUIT_SIGNALS_H
#define DIAGTOP_QUIT_SIGNALS_H
void quit_signals_install(void (*handler)(int));
#endif
