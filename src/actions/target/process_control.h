/* process_control: signals and nice values for processes the user picked. Each call checks the process is still
 * the one that was shown (same start time), so a PID reused since the last refresh is never hit. */
#ifndef DIAGTOP_PROCESS_CONTROL_H
#define DIAGTOP_PROCESS_CONTROL_H
#include <stddef.h>

/* Sends sig to pid if its start time (clock ticks after boot, from /proc/PID/stat) is still start_ticks.
 * Uses a pidfd, so the check and the signal concern the same process. Returns 0 or -errno with a reason. */
int process_signal(int pid, unsigned long long start_ticks, int sig, char *err, size_t errlen);
/* Changes the nice value by delta (negative: higher priority, needs CAP_SYS_NICE). Returns 0 or -errno. */
int process_renice(int pid, unsigned long long start_ticks, int delta, char *err, size_t errlen);
#endif
