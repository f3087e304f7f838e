/* cmd_watch: `diagtop watch TARGET CONDITION... [--then ACTION]...`: captures when a condition holds. */
#ifndef DIAGTOP_CMD_WATCH_H
#define DIAGTOP_CMD_WATCH_H
int cmd_watch(int argc, char **argv);
#endif
