/* hotspot_parse: the replies of a JVM's attach listener (HotSpot), parsed defensively. A reply is a decimal status
 * line and then text; every byte comes from an untrusted peer, so the parsers read by length (NUL bytes inside are
 * just bytes), bound every line, name and count, skip what they do not recognize and never fail on odd input
 * other than by returning -EPROTO or -ENOMEM. Strings in the results are kept as the JVM wrote them (sanitized
 * where they are shown). Formats are those of OpenJDK 17 (also 11, 21 and 25 where they differ: nid in decimal,
 * the OS thread id in brackets). */
#ifndef DIAGTOP_HOTSPOT_PARSE_H
#define DIAGTOP_HOTSPOT_PARSE_H
#include <stddef.h>

#include "actions/runtimes/results.h"

/* The status line at the start of a reply: an optional '-', 1 to 9 digits, '\n' (or the end of the reply). Returns
 * 0 with the status and the offset of the text after it, or -EPROTO when the bytes are not a status line. */
int hotspot_parse_status(const char *buf, size_t n, int *status, size_t *text_off);

/* The first line of text that reads as a failure although the status said 0 ("Unable to create ...: File exists",
 * "Could not find ...", "Native memory tracking is not enabled", an exception), copied into line (at most
 * linesz-1 bytes, trimmed). Returns 1 when there is one, else 0 with line empty. */
int hotspot_parse_error(const char *text, size_t n, char *line, size_t linesz);

/* A `threaddump` reply (the text of jstack/Thread.print) into out->threads: every thread with a header line, Java
 * threads with their #id, daemon flag, state ("TIMED_WAITING (sleeping)") and frames ("\tat pkg.Class.method(
 * module@version/File.java:123)": function, file, line; "Native Method" and "Unknown Source" have no file); VM
 * threads (GC, compiler) without frames, their state taken from the header ("runnable"), with its cpu= and
 * elapsed=. Lock lines: the first "- waiting to lock / parking to wait for / waiting on <0x..> (a X)" is what the
 * thread waits for; "- locked <0x..>" and the "Locked ownable synchronizers:" list (-l) what it holds; each
 * waiter is linked to the holder (held_by). The deadlock report after the threads ("Found one Java-level
 * deadlock") gives out->deadlocks. Appends to out (provider, pid and ms are the caller's). Returns 0, -EPROTO if it
 * is not a thread dump, -ENOMEM. */
int hotspot_parse_threaddump(const char *text, size_t n, struct rt_stack *out);

/* A class histogram (GC.class_histogram, inspectheap) into out->rows: name as printed without the module in
 * parentheses ("java.util.HashMap$Node", "[B", "LeakedThing"), instances and bytes; alloc counts -1. Rows are
 * appended unsorted (rt_heap_finish sorts and sums). Returns 0, -EPROTO without the histogram's header, -ENOMEM. */
int hotspot_parse_histogram(const char *text, size_t n, struct rt_heap *out);

/* GC.heap_info (any collector: G1, Serial, Parallel, Z, Shenandoah) into fields of section "heap": first the sums
 * over the heap's spaces "heap-used" and "heap-committed" (bytes) and "collector" (G1, Serial, Parallel, Z,
 * Shenandoah, or the heap's own name), then every figure labelled "<space>.<name>" ("garbage-first-heap.used", key garbage_first_heap_used;
 * "metaspace.committed", "class-space.reserved", "garbage-first-heap.region-size", "eden-space.used-ratio"), sizes
 * converted from K/M/G to bytes. *used and *committed (may be NULL) get the sums, -1 when absent. Returns 0,
 * -EPROTO when nothing in the text is a heap figure, -ENOMEM. */
int hotspot_parse_heap_info(const char *text, size_t n, struct rt_fields *out, long long *used, long long *committed);
#endif
