/* procinfo_text: one section of a process's details as text lines (the Enter pane's tabs, `diagtop info`). */
#ifndef DIAGTOP_PROCINFO_TEXT_H
#define DIAGTOP_PROCINFO_TEXT_H
#include "collect/procinfo.h"
#include "text_lines.h"

struct procinfo_text_opts {
    int show_secrets; /* environment values of names like SECRET, TOKEN, PASSWORD, KEY are masked unless set */
    const char *env_filter; /* case-insensitive substring of NAME=VALUE, NULL for all */
};

int procinfo_text_section(const struct proc_info *pi, enum procinfo_section s, const struct procinfo_text_opts *o,
                          struct text_lines *out);
#endif
