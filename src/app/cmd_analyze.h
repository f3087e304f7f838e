/* cmd_analyze: `diagtop analyze FILE.hprof[.gz]`: a JVM heap dump read offline (histogram with retained sizes,
 * dominators, instances, paths from GC roots, suspects, fields, diff). */
#ifndef DIAGTOP_CMD_ANALYZE_H
#define DIAGTOP_CMD_ANALYZE_H
int cmd_analyze(int argc, char **argv);
extern const char cmd_analyze_usage[];
#endif
