/* api_target: is the {pid} of a request a process the API may look at or act on? It must exist and be a process
 * (not a thread id, which /proc also answers for); to act on it, it must not be a kernel thread (no user space to
 * capture) nor this server. */
#ifndef DIAGTOP_API_TARGET_H
#define DIAGTOP_API_TARGET_H
#include "collect/procstat.h"
#include "api_reply.h"

/* Returns 0 with ps filled, or -1 with a 404 or 422 in r. */
int api_target_check(int pid, int acting, struct procstat *ps, struct api_reply *r);
#endif
