/* cmd_dump: `diagtop dump PID [-o PATH] [--dump-dir DIR] [--filter MASK] [--full] [--json]`. */
#ifndef DIAGTOP_CMD_DUMP_H
#define DIAGTOP_CMD_DUMP_H
#include <stddef.h>
int cmd_dump(int argc, char **argv);
#endif
