/* cmd_info: `diagtop info PID [--json] [--section LIST] [--show-secrets]`. */
#ifndef DIAGTOP_CMD_INFO_H
#define DIAGTOP_CMD_INFO_H
int cmd_info(int argc, char **argv);
#endif
