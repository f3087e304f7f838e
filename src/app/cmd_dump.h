/* cmd_dump: `diagtop dump PID [-o PATH] [--dump-dir DIR] [--filter MASK] [--full] [--json]`. */
#ifndef DIAGTOP_CMD_DUMP_H
#define DIAGTOP_CMD_DUMP_H
#include <stddef.h>
int cmd_dump(int argc, char **argv);
/* The dump directory: --dump-dir, else DIAGTOP_DUMP_DIR, else the current directory if writable, else
 * $XDG_STATE_HOME/diagtop/dumps (created 0700). Returns 0 or -1 with a reason. */
int dump_directory(const char *option, char *buf, size_t bufsz, char *err, size_t errlen);
#endif
