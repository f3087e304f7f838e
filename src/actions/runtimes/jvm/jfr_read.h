/* jfr_read: a JFR recording (the file JFR.dump writes: one or more chunks, format 2.x of JDK 11 and later) into a
 * CPU report of its jdk.ExecutionSample events: each sample's stack trace, resolved through the chunk's metadata
 * (the classes and their fields) and constant pools (StackTrace, Method, Class, Symbol, FrameType, Thread), as
 * frames named "package.Class.method" with their line, and counted per distinct stack and thread.
 *
 * The bytes come from the JVM and are untrusted: every read is bounds-checked, sizes and counts are checked
 * against what is left, nesting and the number of values decoded are capped; a recording that breaks a rule is
 * refused with the offset and what was wrong, never half-read into a report. */
#ifndef DIAGTOP_JFR_READ_H
#define DIAGTOP_JFR_READ_H
#include <stddef.h>

#include "actions/profile/cpu_report.h"

/* Fills out (zeroed first): method "jfr", frames and stacks innermost first (a frame JFR says was inlined is
 * marked so; file is NULL, JFR records no source file), threads by OS thread id with their Java names, samples,
 * seconds (the chunks' durations) and period_ns / hz from period_ns (the sampling period the recording was asked
 * for; each sample's cpu_ns is one period). pid and comm are left for the caller. Returns 0, or -EBADMSG (not JFR,
 * or corrupt/truncated: err says where), -ENOTSUP (another format version), -ENOMEM. */
int jfr_read_report(const void *data, size_t len, long long period_ns, struct cpu_report *out, char *err,
                    size_t errlen);
#endif
