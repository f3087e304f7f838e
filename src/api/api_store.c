#include "api_store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void api_store_init(struct api_store *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
}

void api_store_destroy(struct api_store *s)
{
    for (int i = 0; i < API_STORE_MAX; i++) free(s->e[i].doc);
    pthread_mutex_destroy(&s->lock);
}

int api_store_put(struct api_store *s, int pid, const char *doc, char *id)
{
    size_t n = strlen(doc);
    if (n > API_STORE_DOC_MAX) return -E2BIG;
    char *copy = malloc(n + 1);
    if (!copy) return -ENOMEM;
    memcpy(copy, doc, n + 1);
    int rc = api_id_new(id);
    if (rc < 0) {
        free(copy);
        return rc;
    }
    pthread_mutex_lock(&s->lock);
    int slot = 0;
    for (int i = 0; i < API_STORE_MAX; i++) {
        if (!s->e[i].doc) {
            slot = i;
            break;
        }
        if (s->e[i].seq < s->e[slot].seq) slot = i;
    }
    free(s->e[slot].doc);
    s->e[slot].doc = copy;
    s->e[slot].pid = pid;
    s->e[slot].seq = ++s->seq;
    memcpy(s->e[slot].id, id, API_ID_LEN + 1);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

char *api_store_get(struct api_store *s, const char *id, int pid)
{
    char *copy = NULL;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < API_STORE_MAX; i++)
        if (s->e[i].doc && s->e[i].pid == pid && !strcmp(s->e[i].id, id)) copy = strdup(s->e[i].doc);
    pthread_mutex_unlock(&s->lock);
    return copy;
}
