/* cmd_analyze: `diagtop analyze FILE...`, evidence read with the process gone. The file's first bytes say which
 * reader answers: an HPROF heap dump (cmd_analyze_hprof.c) or an ELF core (cmd_analyze_core.c). */
#ifndef DIAGTOP_CMD_ANALYZE_H
#define DIAGTOP_CMD_ANALYZE_H
int cmd_analyze(int argc, char **argv);
/* The readers' front ends; argv[0] is "analyze", as for cmd_analyze. */
int cmd_analyze_hprof(int argc, char **argv);
int cmd_analyze_core(int argc, char **argv);
extern const char cmd_analyze_usage[];
#endif
