/* cmd_analyze_core: `diagtop analyze CORE`: an ELF core read away from the process (who it was, the signal and the
 * thread that took it, every thread's stack, the mapped files with their build-ids). cmd_analyze hands an ELF file
 * here. */
#ifndef DIAGTOP_CMD_ANALYZE_CORE_H
#define DIAGTOP_CMD_ANALYZE_CORE_H
int cmd_analyze_core(int argc, char **argv);
extern const char cmd_analyze_core_usage[];
#endif
