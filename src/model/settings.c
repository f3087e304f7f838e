#include "settings.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

void settings_defaults(struct settings *s)
{
    memset(s, 0, sizeof *s);
    s->ncols = columns_default(s->cols, COL_COUNT);
    s->sort = COL_CPU;
    s->delay = 1.5;
    s->agent_timeout = 5.0;
}

static int parse_bool(const char *v, int *out)
{
    if (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0) *out = 1;
    else if (strcmp(v, "0") == 0 || strcmp(v, "false") == 0 || strcmp(v, "no") == 0) *out = 0;
    else return -1;
    return 0;
}

int settings_apply_line(struct settings *s, const char *line)
{
    char key[32], value[512];
    if (line[0] == '#' || line[0] == '\0') return 0;
    if (sscanf(line, " %31[a-z_] = %511[^\n]", key, value) != 2) return -1;
    char err[128];
    if (strcmp(key, "sort") == 0) {
        const struct column *c = columns_find(value);
        if (!c) return -1;
        s->sort = c->id;
    } else if (strcmp(key, "reverse") == 0) {
        return parse_bool(value, &s->reverse);
    } else if (strcmp(key, "tree") == 0) {
        return parse_bool(value, &s->tree);
    } else if (strcmp(key, "threads") == 0) {
        return parse_bool(value, &s->show_threads);
    } else if (strcmp(key, "meters") == 0) {
        if (strcmp(value, "graph") && strcmp(value, "bar")) return -1;
        s->meters_graph = value[0] == 'g';
    } else if (strcmp(key, "delay") == 0) {
        return text_parse_seconds(value, &s->delay);
    } else if (strcmp(key, "agent_timeout") == 0) {
        double t;
        if (text_parse_seconds(value, &t) < 0 || t <= 0 || t > 3600) return -1;
        s->agent_timeout = t;
    } else if (strcmp(key, "dump_dir") == 0) {
        if (value[0] != '/') return -1;
        snprintf(s->dump_dir, sizeof s->dump_dir, "%s", value);
    } else if (strcmp(key, "drop_frames") == 0) {
        regex_t re; /* refused here when it does not compile, as --drop-frames is */
        if (regcomp(&re, value, REG_EXTENDED | REG_NOSUB) != 0) return -1;
        regfree(&re);
        snprintf(s->drop_frames, sizeof s->drop_frames, "%s", value);
    } else if (strcmp(key, "columns") == 0) {
        enum column_id cols[COL_COUNT];
        int n = columns_parse_list(value, cols, COL_COUNT, err, sizeof err);
        if (n < 0) return -1;
        memcpy(s->cols, cols, sizeof cols);
        s->ncols = n;
    } else {
        return -1;
    }
    return 0;
}

void settings_format(const struct settings *s, char *buf, size_t bufsz)
{
    char cols[512] = "";
    size_t off = 0;
    for (int i = 0; i < s->ncols && off < sizeof cols; i++)
        off += (size_t)snprintf(cols + off, sizeof cols - off, "%s%s", i ? "," : "", columns_table[s->cols[i]].key);
    snprintf(buf, bufsz,
             "# diagtop settings, written by diagtop\n"
             "sort=%s\nreverse=%d\ncolumns=%s\ndelay=%g\ntree=%d\nthreads=%d\nmeters=%s\nagent_timeout=%g\n%s%s%s%s%s%s",
             columns_table[s->sort].key, s->reverse, cols, s->delay, s->tree, s->show_threads,
             s->meters_graph ? "graph" : "bar", s->agent_timeout,
             s->dump_dir[0] ? "dump_dir=" : "", s->dump_dir, s->dump_dir[0] ? "\n" : "",
             s->drop_frames[0] ? "drop_frames=" : "", s->drop_frames, s->drop_frames[0] ? "\n" : "");
}
