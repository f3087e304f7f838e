/* cmd_runtime: the commands that ask the runtime inside a process, through the provider that answers for it:
 * `diagtop memstats`, `gc`, `heap`, `profile` (usage in cmd_runtime.c). */
#ifndef DIAGTOP_CMD_RUNTIME_H
#define DIAGTOP_CMD_RUNTIME_H
int cmd_memstats(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_heap(int argc, char **argv);
int cmd_profile(int argc, char **argv);
#endif
