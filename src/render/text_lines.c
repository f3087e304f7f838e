#include "text_lines.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

int text_lines_add(struct text_lines *tl, const char *fmt, ...)
{
    if (tl->n == tl->cap) {
        size_t cap = tl->cap ? tl->cap * 2 : 64;
        char **nl = realloc(tl->lines, cap * sizeof *nl);
        if (!nl) return -ENOMEM;
        tl->lines = nl;
        tl->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    char *line = NULL;
    int rc = vasprintf(&line, fmt, ap);
    va_end(ap);
    if (rc < 0) return -ENOMEM;
    tl->lines[tl->n++] = line;
    return 0;
}

int text_lines_write(const struct text_lines *tl, FILE *out)
{
    for (size_t i = 0; i < tl->n; i++)
        if (fputs(tl->lines[i], out) == EOF || fputc('\n', out) == EOF) return -1;
    return fflush(out) == EOF ? -1 : 0;
}

void text_lines_free(struct text_lines *tl)
{
    for (size_t i = 0; i < tl->n; i++) free(tl->lines[i]);
    free(tl->lines);
    tl->lines = NULL;
    tl->n = tl->cap = 0;
}
