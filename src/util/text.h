/* text: turning untrusted bytes (command lines, names) into text that is safe to show or serialize. */
#ifndef DIAGTOP_TEXT_H
#define DIAGTOP_TEXT_H
#include <stddef.h>

/* Copies src[0..n) into dst (size dstsz, always NUL-terminated) keeping valid UTF-8 sequences and replacing
 * control bytes (C0, DEL, C1 as UTF-8) and invalid bytes: for the terminal each becomes '?', so an escape sequence
 * can never reach it raw. Returns the length written. */
size_t text_sanitize_display(char *dst, size_t dstsz, const char *src, size_t n);

/* Same, for JSON: valid UTF-8 and control characters are kept (the JSON encoder escapes them), invalid bytes
 * become U+FFFD, so the document stays valid UTF-8. */
size_t text_sanitize_utf8(char *dst, size_t dstsz, const char *src, size_t n);

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there are not one. */
int text_utf8_seqlen(const unsigned char *s, size_t n);

/* Case-insensitive (ASCII) substring test. */
int text_contains_nocase(const char *haystack, const char *needle);

/* Bytes for a person: "512 B", "1.5 KiB", "62.4 MiB", "1.25 GiB"; "-" when negative (unknown). */
void text_format_bytes(char *buf, size_t n, long long bytes);
/* A KiB count always with its unit, as htop's columns: "0", "512K", "65.2M", "652M", "1.2G"; at most three
 * integer digits per unit (1000K reads as "1.0M"), so never more than 5 characters. */
void text_format_kib_scaled(char *buf, size_t bufsz, unsigned long long kib);

/* Parses a strictly decimal unsigned integer; returns 0 on success, -1 on anything else. */
/* A label as a JSON key, into out (n > 1): lower case; every run of characters other than a-z and 0-9 becomes one
 * '_', none at either end; "field" leads a key that would start with a digit or be empty. "OS threads" ->
 * "os_threads", "GOMAXPROCS" -> "gomaxprocs", "garbage-first-heap.used" -> "garbage_first_heap_used". */
void text_snake_key(const char *label, char *out, size_t n);

int text_parse_u64(const char *s, unsigned long long *out);

/* The kernel's ceiling for pid_max (PID_MAX_LIMIT on 64-bit): no process or thread id is larger. */
#define TEXT_PID_MAX 4194304
/* Parses a process or thread id as the kernel writes one: decimal digits only (no sign, space, leading zero or
 * trailing byte), 1 to TEXT_PID_MAX. Returns 0, or -1 leaving *pid alone. */
int text_parse_pid(const char *s, int *pid);
/* Same for the n bytes at s (a field inside a longer text). */
int text_parse_pid_n(const char *s, size_t n, int *pid);
/* The pid after label ("Tgid:", "TracerPid:") in a /proc/PID/status text: the label starts a line, blanks
 * follow, the value runs to the end of the line. Returns 0, or -1 when the label is missing or its value is not
 * a pid (TracerPid's 0 included). */
int text_status_pid(const char *status, const char *label, int *pid);

/* Parses decimal seconds ("1", "0.5", "2.25"); returns 0 and the value, or -1 if not a positive finite number. */
int text_parse_seconds(const char *s, double *out);
#endif
