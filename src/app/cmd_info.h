/* cmd_info: `diagtop info PID [--json] [--section LIST] [--show-secrets]` and `diagtop memstats PID [--json]`. */
#ifndef DIAGTOP_CMD_INFO_H
#define DIAGTOP_CMD_INFO_H
int cmd_info(int argc, char **argv);
int cmd_memstats(int argc, char **argv);
#endif
