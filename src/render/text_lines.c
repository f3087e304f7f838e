#include "text_lines.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "util/grow.h"

int text_lines_add(struct text_lines *tl, const char *fmt, ...)
{
    if (GROW(tl->lines, tl->cap, tl->n, 64) < 0) return -ENOMEM;
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
