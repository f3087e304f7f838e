/* header_text: the summary above the table as text lines (batch output), and small formatters the TUI header
 * shares. */
#ifndef DIAGTOP_HEADER_TEXT_H
#define DIAGTOP_HEADER_TEXT_H
#include <stdio.h>

#include "collect/proctable.h"
#include "collect/systotals.h"

/* "3 days, 02:01" / "02:01:07" */
void header_format_uptime(char *buf, size_t bufsz, double seconds);
/* Stall pressure over the last 10 s in percent, "cpu 2.1 io 0.3/0.1 mem 0.0/0.0" (some, and some/full for io and
 * memory), or "" (returns 0) on a kernel without PSI. */
size_t header_format_pressure(char *buf, size_t bufsz, const struct systotals *st);
/* Writes the five summary lines (time/uptime/load, tasks, CPU, memory, swap). */
void header_text_write(FILE *out, const struct systotals *st, const struct task_counts *tc);
#endif
