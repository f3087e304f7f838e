/* output_file: where a command's output goes: stdout, or with -o a new file (0600, O_EXCL|O_NOFOLLOW: never
 * replacing one, since heap snapshots, stacks and profiles name what a program holds). A file left half written
 * by an error is removed. */
#ifndef DIAGTOP_OUTPUT_FILE_H
#define DIAGTOP_OUTPUT_FILE_H
#include <stddef.h>
#include <stdio.h>

/* stdout when path is NULL. NULL with the reason printed (prefixed "diagtop CMD: ") when it cannot be created. */
FILE *output_open(const char *cmd, const char *path);
/* Closes (or flushes stdout); bad: a write already failed. Returns the exit status (0 or 1). */
int output_close(const char *cmd, const char *path, FILE *f, int bad);
/* Writes len bytes (or a NUL-terminated text when len is 0) to a new output; returns the exit status. */
int output_write(const char *cmd, const char *path, const void *data, size_t len);
#endif
