/* The gops provider (Go programs with the gops agent): being written; until then it offers nothing. */
#include <errno.h>
#include <stdio.h>

#include "provider.h"

static int gops_probe(int pid, char *why, size_t whylen)
{
    (void)pid;
    snprintf(why, whylen, "the gops client is not written yet");
    return -ENOSYS;
}

const struct provider gops_provider = {
    .name = "gops",
    .speaks = "Go",
    .probe = gops_probe,
};
