/* frame_cache: symbolized frames kept across runs, per module build-id, next to the inflated debug files. A warm
 * `diagtop stack` of a process parked where it was last time (most are) then names its libc frames without
 * opening libc's 9 MB of DWARF: no symbol table, line table or DIE is read. Only answers that came from DWARF are
 * kept (a later debug package must not be hidden by an answer made without it); a build-id names one exact file,
 * so a kept answer stays true. The file is an append-only log of checksummed records: concurrent writers append
 * whole records (one write each), a torn or foreign record ends the reading and the file is then rewritten. */
#ifndef DIAGTOP_FRAME_CACHE_H
#define DIAGTOP_FRAME_CACHE_H
#include "frame.h"

struct frame_cache;

/* The frames kept under name (a module's build-id in hex, and what else tells its answers apart), read now. NULL when the cache is off
 * (DIAGTOP_NO_DEBUG_CACHE), has no directory, or memory is short: then nothing is kept. */
struct frame_cache *frame_cache_open(const char *name);
/* The frames kept for the address off (pc - the module's start) looked up as a return address or not, with or
 * without source: copies into out (strings malloc'd, module and pc left to the caller), returns how many, 0 when
 * none are kept. */
int frame_cache_get(struct frame_cache *fc, unsigned long long off, int return_address, int want_source,
                    struct stack_frame *out, int max);
/* Keeps frames for off, to be written at close. */
void frame_cache_put(struct frame_cache *fc, unsigned long long off, int return_address, int want_source,
                     const struct stack_frame *frames, int n);
/* Writes what was put (appended in one write), frees everything. */
void frame_cache_close(struct frame_cache *fc);
#endif
