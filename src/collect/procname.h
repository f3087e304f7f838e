/* procname: a short name for a process, for titles. Most programs are named by their comm; an interpreter is
 * named by what it runs, since every Python or Java program is otherwise "python3" or "java": `python3 leak.py`,
 * `python3 -m http.server`, `java -jar app.jar`, `java Main`, `node server.js`, `bash run.sh`. */
#ifndef DIAGTOP_PROCNAME_H
#define DIAGTOP_PROCNAME_H
#include <stddef.h>

/* The short name from a command line (raw bytes, arguments separated by NUL, len bytes; may be NULL) and the
 * comm (raw), into buf (size n, always NUL-terminated, sanitized for display). An interpreter (python*, pypy*,
 * java, node, ruby*, perl*, and shells running a script) gives its own name and its script's base name, its
 * module (-m), its jar (-jar) or its main class (its last dotted part, as jps does), or `-c`/`-e` for a one-line
 * program; anything else, or an interpreter with nothing to run (an interactive shell), gives comm. */
void procname_short(const char *cmdline, size_t len, const char *comm, char *buf, size_t n);

/* The same for a running process, from /proc/PID/cmdline and comm; "" when both are unreadable (it is gone). */
void procname_of_pid(int pid, char *buf, size_t n);
#endif
