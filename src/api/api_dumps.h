/* api_dumps: core dumps the API writes and serves. POST .../dump starts dump_write (actions/dump.h) in a worker
 * thread of its own (the whole ptrace session runs there) into the dump directory under the CLI's default name,
 * and names the result by a random id: the id is the only handle a client has, never a path. While it is
 * written the resource reports progress; once done it can be downloaded (by descriptor, so a DELETE or a rename
 * does not cut a download short) and deleted, which also cancels a dump still running. The process stays busy
 * (api_busy) until its dump ends. The files stay in the dump directory when the server stops (they are evidence);
 * the table of ids does not. */
#ifndef DIAGTOP_API_DUMPS_H
#define DIAGTOP_API_DUMPS_H
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

#include "actions/dump/dump.h"
#include "api_busy.h"
#include "api_id.h"

#define API_DUMPS_MAX 32

enum api_dump_state { API_DUMP_RUNNING, API_DUMP_DONE, API_DUMP_FAILED, API_DUMP_CANCELLED };

struct api_dumps;

struct api_dump {
    char id[API_ID_LEN + 1];
    int pid;
    char comm[64];
    char path[4096];
    char name[256]; /* the file's basename, for Content-Disposition */
    enum api_dump_state state;
    unsigned long long done, total; /* bytes of memory copied so far, of the estimate */
    volatile sig_atomic_t cancel;
    struct dump_options opts;
    struct dump_result result;
    char error[512];
    double created;  /* wall clock */
    double started;  /* monotonic */
    double ended;    /* monotonic, once no longer running */
    pthread_t thread;
    int joinable;
    int adopted;     /* a file another part of the server wrote (a trigger's capture), not a dump job's */
    struct api_dumps *owner;
};

struct api_dumps {
    pthread_mutex_t lock;
    struct api_dump *d[API_DUMPS_MAX];
    char dir[4096];
    struct api_busy *busy;
};

void api_dumps_init(struct api_dumps *ds, const char *dir, struct api_busy *busy);
/* Cancels the dumps still running, waits for them and forgets every id (the finished files stay). */
void api_dumps_shutdown(struct api_dumps *ds);
/* Starts a dump of pid (full: every mapping; filter_set: with this coredump_filter; mode: snapshot or
 * stop-and-copy, as dump.h says). Returns 0 with the id in id (API_ID_LEN + 1 bytes), or an HTTP status with a
 * reason: 409 (pid busy), 503 (too many dumps or actions). */
int api_dumps_start(struct api_dumps *ds, int pid, int full, int filter_set, unsigned filter, enum dump_mode mode,
                    char *id, char *err, size_t errlen);
/* Makes a finished file of pid (a trigger's capture, of any kind: a core, stacks, a profile) downloadable and
 * deletable like a dump. Returns 0 with its id, or 503 when the table is full / 500, with a reason. */
int api_dumps_adopt(struct api_dumps *ds, int pid, const char *comm, const char *path, char *id, char *err,
                    size_t errlen);
/* The status document of a dump (malloc'd), or NULL when there is no such id; *state gets its state. */
char *api_dumps_status(struct api_dumps *ds, const char *id, enum api_dump_state *state);
/* Every dump's status document as {"dumps": [...]} (malloc'd). */
char *api_dumps_list(struct api_dumps *ds);
/* Opens a finished dump for reading. Returns 0 with *fd, *size and the name; or 404 (no such id), or 409 when it is
 * not done (*state says why). */
int api_dumps_open(struct api_dumps *ds, const char *id, int *fd, unsigned long long *size, char *name,
                   size_t namelen, enum api_dump_state *state);
/* Cancels (and waits for) a running dump, removes the file and forgets the id. Returns 0 or 404. */
int api_dumps_delete(struct api_dumps *ds, const char *id);
const char *api_dump_state_name(enum api_dump_state s);
#endif
