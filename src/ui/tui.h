/* tui: the interactive monitor. The only module (with its ui/ siblings) that calls curses. */
#ifndef DIAGTOP_TUI_H
#define DIAGTOP_TUI_H
#include "../app/settings.h"
#include "../render/procview.h"

struct tui_config {
    struct settings *settings;   /* changed by keys; saved to config_path on change */
    struct procview_opts *view;  /* initial filters from the command line */
    const char *config_path;     /* NULL: settings are not persisted */
    int no_color;
};

/* Runs until q/F10 or SIGINT/SIGTERM/SIGHUP; the terminal is restored on every exit. Returns the exit status. */
int tui_run(const struct tui_config *cfg);
#endif
