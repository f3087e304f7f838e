/* tui: the interactive monitor. The only module (with its ui/ siblings) that calls curses. */
#ifndef DIAGTOP_TUI_H
#define DIAGTOP_TUI_H
#include <stddef.h>

#include "model/settings.h"
#include "render/procview.h"

struct tui_config {
    struct settings *settings;  /* changed by keys */
    struct procview_opts *view; /* initial filters from the command line */
    /* Called after a key changed the settings, to persist them; NULL: not persisted. Returns 0 or -1 with a
     * reason in err (shown in the status line). */
    int (*save_settings)(const struct settings *s, char *err, size_t errlen);
    int no_color;
};

/* Runs until q/F10 or SIGINT/SIGTERM/SIGHUP; the terminal is restored on every exit. Returns the exit status. */
int tui_run(const struct tui_config *cfg);
#endif
