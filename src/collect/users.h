/* users: uid -> user name, cached (the passwd database can be slow: NSS, LDAP). */
#ifndef DIAGTOP_USERS_H
#define DIAGTOP_USERS_H
#include <sys/types.h>

struct users;
struct users *users_new(void);
void users_free(struct users *u);
/* The name of uid, or its decimal form when it has none. The string lives as long as u. */
const char *users_name(struct users *u, uid_t uid);
/* Resolves a user name or a decimal uid; returns 0 or -1 if unknown. */
int users_lookup(const char *name, uid_t *uid);
#endif
