#include "api_id.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

int api_id_new(char *out)
{
    unsigned char raw[API_ID_LEN / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        got += (size_t)n;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof raw; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[API_ID_LEN] = '\0';
    return 0;
}

int api_id_valid(const char *s)
{
    for (int i = 0; i < API_ID_LEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return s[API_ID_LEN] == '\0';
}
