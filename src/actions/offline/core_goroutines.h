/* core_goroutines: a Go program's goroutines from its core: the runtime's list read through its DWARF
 * (lang/go_runtime), each stack walked with the program's own tables (stack/go_frames), the frames named by the
 * caller's symbolizer. Where the DWARF or the runtime's structures are missing, it says why and the thread stacks
 * stand alone. */
#ifndef DIAGTOP_CORE_GOROUTINES_H
#define DIAGTOP_CORE_GOROUTINES_H
#include "core_memory.h"
#include "core_report.h"

struct modules;
struct symbolizer;

/* Finds the Go program among the core's modules and reads its goroutines with their PCs into out (out->go 0: not
 * Go). Nothing is named yet: the caller tells the modules every address first (modules_expect). */
void core_goroutines_read(struct modules *m, struct core_memory *cm, struct core_goroutines *out);
/* The addresses the goroutines' frames, creation sites and start functions will be looked up at, appended to
 * *addrs (grown; *n counts them). */
int core_goroutines_addresses(const struct core_goroutines *gs, unsigned long long **addrs, size_t *n, size_t *cap);
/* Names every goroutine's frames, creation site and start function (system goroutines marked). */
void core_goroutines_name(struct symbolizer *sy, struct core_goroutines *gs, int source);
void core_goroutines_free(struct core_goroutines *gs);
#endif
