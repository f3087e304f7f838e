/* gops_parse: the gops agent's text replies into result structs (docs/protocols/gops.md: Commands), and the one request
 * with an argument. Replies are untrusted: each parser takes a length (the bytes need no terminator), keeps every
 * string it copies to a bounded length, parses numbers strictly and skips lines it does not understand; text is
 * kept as it came (sanitized where it is shown). */
#ifndef DIAGTOP_GOPS_PARSE_H
#define DIAGTOP_GOPS_PARSE_H
#include <stddef.h>

#include "actions/runtimes/results.h"

/* The goroutine dump (0x01, runtime/pprof's goroutine profile at debug=2) into out->threads: id, state (what the
 * brackets say, less the wait: "chan receive", "syscall, locked to thread"), wait_seconds (from ", N minutes";
 * -1 when Go did not say, i.e. under a minute), frames (function without its arguments, file and line) and
 * created_by ("main.main in /src/main.go:12", with " (goroutine 1)" when Go names the creator). Returns 0, or
 * -EBADMSG when the text has no goroutine at all, -ENOMEM. */
int gops_parse_stack(const char *text, size_t len, struct rt_stack *out, char *err, size_t errlen);

/* The memstats reply (0x03) into fields of section "memstats", labelled by the current names (the names of agents
 * <= v0.3.28, stack-mspan-inuse and the like, are renamed to mspan-in-use ...): byte sizes exact (the integer in
 * "(N bytes)" or "N bytes", also after next-gc's "when heap-alloc >="), counts, nanoseconds (gc-pause,
 * gc-pause-end, and gc-pause-total converted from a Go duration such as "5.249509ms"), gc-cpu-fraction as a
 * double, enable-gc/debug-gc as bools, last-gc as text. A value that does not have its field's form is kept as
 * text; unknown keys are kept too (bytes, count or text by their form). Returns 0, or -EBADMSG when no line is a
 * "key: value" line, -ENOMEM. The labels are gops' own; the keys are their snake_case (heap_alloc, os_threads). */
int gops_parse_memstats(const char *text, size_t len, struct rt_fields *out, char *err, size_t errlen);

/* The stats reply (0x07: goroutines, OS threads, GOMAXPROCS, num CPU) as counts in section "runtime". */
int gops_parse_stats(const char *text, size_t len, struct rt_fields *out, char *err, size_t errlen);

/* The version reply (0x04, "go1.19.8\n") as text field "version" of section "runtime". */
int gops_parse_version(const char *text, size_t len, struct rt_fields *out, char *err, size_t errlen);

/* A Go duration as time.Duration.String writes it ("1h2m3.5s", "5.249509ms", "43.722µs", "0s") into
 * nanoseconds, exactly. Returns 0, or -1 when it is not one. */
int gops_parse_duration(const char *s, size_t len, unsigned long long *ns);

/* setgc's reply ("New GC percent set to 50. Previous value was 100.\n") as one line in a malloc'd *message.
 * Returns 0, or -EBADMSG when the reply is not that sentence. */
int gops_parse_setgc(const char *text, size_t len, char **message, char *err, size_t errlen);

/* The setgc request: 0x10 and the percent as a signed (zigzag) varint, as Go's binary.PutVarint writes it
 * (50 -> 10 64; -1 -> 10 01; 100 -> 10 c8 01). buf holds at least 11 bytes; returns the length. */
size_t gops_encode_setgc(long long percent, unsigned char *buf);
#endif
