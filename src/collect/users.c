#include "users.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

#define USERS_BUCKETS 256

struct user_entry {
    uid_t uid;
    char *name;
    struct user_entry *next;
};

struct users {
    struct user_entry *buckets[USERS_BUCKETS];
};

struct users *users_new(void) { return calloc(1, sizeof(struct users)); }

void users_free(struct users *u)
{
    if (!u) return;
    for (int i = 0; i < USERS_BUCKETS; i++) {
        for (struct user_entry *e = u->buckets[i], *next; e; e = next) {
            next = e->next;
            free(e->name);
            free(e);
        }
    }
    free(u);
}

const char *users_name(struct users *u, uid_t uid)
{
    struct user_entry **b = &u->buckets[uid % USERS_BUCKETS];
    for (struct user_entry *e = *b; e; e = e->next)
        if (e->uid == uid) return e->name;
    struct passwd pw, *res = NULL;
    char buf[4096], name[64];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res)
        text_sanitize_display(name, sizeof name, pw.pw_name, strlen(pw.pw_name));
    else
        snprintf(name, sizeof name, "%u", (unsigned)uid);
    struct user_entry *e = malloc(sizeof *e);
    char *copy = strdup(name);
    if (!e || !copy) {
        free(e);
        free(copy);
        return "?";
    }
    e->uid = uid;
    e->name = copy;
    e->next = *b;
    *b = e;
    return e->name;
}

int users_lookup(const char *name, uid_t *uid)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    if (getpwnam_r(name, &pw, buf, sizeof buf, &res) == 0 && res) {
        *uid = res->pw_uid;
        return 0;
    }
    unsigned long long v;
    if (text_parse_u64(name, &v) == 0 && v < 0xFFFFFFFFull) {
        *uid = (uid_t)v;
        return 0;
    }
    return -1;
}
