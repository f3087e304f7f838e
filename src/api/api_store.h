/* api_store: heap snapshots the server keeps so that a later GET .../heap?diff=ID can show what grew: each the
 * JSON document rt_json_heap wrote (what `diagtop heap --diff` reads back), under a random id, for one process.
 * Bounded: API_STORE_MAX documents of at most API_STORE_DOC_MAX bytes; the oldest goes first. */
#ifndef DIAGTOP_API_STORE_H
#define DIAGTOP_API_STORE_H
#include <pthread.h>
#include <stddef.h>

#include "api_id.h"

#define API_STORE_MAX 16
#define API_STORE_DOC_MAX (16u << 20)

struct api_store_entry {
    char id[API_ID_LEN + 1];
    int pid;
    char *doc;
    unsigned long long seq;
};

struct api_store {
    pthread_mutex_t lock;
    struct api_store_entry e[API_STORE_MAX];
    unsigned long long seq;
};

void api_store_init(struct api_store *s);
void api_store_destroy(struct api_store *s);
/* Keeps a copy of doc for pid; id (API_ID_LEN + 1 bytes) gets its name. Returns 0, -E2BIG or -ENOMEM. */
int api_store_put(struct api_store *s, int pid, const char *doc, char *id);
/* A malloc'd copy of the document id of pid, or NULL (no such snapshot of that process). */
char *api_store_get(struct api_store *s, const char *id, int pid);
#endif
