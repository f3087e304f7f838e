/* cmd_stack: `diagtop stack PID [--json] [-t TID] [--no-source]`. */
#ifndef DIAGTOP_CMD_STACK_H
#define DIAGTOP_CMD_STACK_H
int cmd_stack(int argc, char **argv);
extern const char cmd_stack_usage[];
#endif
