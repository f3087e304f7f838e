/* The hotspot provider (JVMs, through the HotSpot attach mechanism): being written; until then it offers nothing. */
#include <errno.h>
#include <stdio.h>

#include "provider.h"

static int hotspot_probe(int pid, char *why, size_t whylen)
{
    (void)pid;
    snprintf(why, whylen, "the HotSpot attach client is not written yet");
    return -ENOSYS;
}

const struct provider hotspot_provider = {
    .name = "hotspot",
    .speaks = "Java",
    .probe = hotspot_probe,
};
