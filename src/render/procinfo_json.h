/* procinfo_json: a process's details as JSON: Kudu's process fields mapped onto Linux (working_set = RSS, ...)
 * next to the Linux-native ones, per section (docs/json.md, "diagtop info"). */
#ifndef DIAGTOP_PROCINFO_JSON_H
#define DIAGTOP_PROCINFO_JSON_H
#include "collect/procinfo.h"

char *procinfo_json(const struct proc_info *pi, int show_secrets);
#endif
