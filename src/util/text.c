#include "text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int text_utf8_seqlen(const unsigned char *s, size_t n)
{
    if (n == 0) return 0;
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    int len;
    unsigned int min;
    unsigned int cp;
    if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return 0;
    if ((size_t)len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    /* Overlong forms, surrogates and values past Unicode are invalid. */
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

/* Shared walk: 'display' decides whether control characters are replaced too. */
static size_t sanitize(char *dst, size_t dstsz, const char *src, size_t n, int display)
{
    static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0, i = 0;
    if (dstsz == 0) return 0;
    while (i < n && s[i] != '\0') {
        int len = text_utf8_seqlen(s + i, n - i);
        const char *piece = (const char *)s + i;
        size_t plen = (size_t)len;
        int bad = len == 0;
        if (!bad && display) {
            if (len == 1 && (s[i] < 0x20 || s[i] == 0x7F)) bad = 1;
            if (len == 2 && s[i] == 0xC2 && s[i + 1] < 0xA0) bad = 1; /* C1 controls, e.g. CSI U+009B */
        }
        if (bad) {
            piece = display ? "?" : replacement;
            plen = display ? 1 : 3;
            len = len ? len : 1;
        }
        if (o + plen >= dstsz) break;
        memcpy(dst + o, piece, plen);
        o += plen;
        i += (size_t)len;
    }
    dst[o] = '\0';
    return o;
}

size_t text_sanitize_display(char *dst, size_t dstsz, const char *src, size_t n)
{
    return sanitize(dst, dstsz, src, n, 1);
}

size_t text_sanitize_utf8(char *dst, size_t dstsz, const char *src, size_t n)
{
    return sanitize(dst, dstsz, src, n, 0);
}

int text_contains_nocase(const char *haystack, const char *needle)
{
    size_t nl = strlen(needle);
    if (nl == 0) return 1;
    for (const char *h = haystack; *h; h++) {
        size_t i = 0;
        while (i < nl && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == nl) return 1;
    }
    return 0;
}

void text_format_bytes(char *buf, size_t n, long long bytes)
{
    if (bytes < 0) snprintf(buf, n, "-");
    else if (bytes < 1024) snprintf(buf, n, "%lld B", bytes);
    else if (bytes < 1024LL * 1024) snprintf(buf, n, "%.1f KiB", bytes / 1024.0);
    else if (bytes < 1024LL * 1024 * 1024) snprintf(buf, n, "%.1f MiB", bytes / 1048576.0);
    else snprintf(buf, n, "%.2f GiB", bytes / 1073741824.0);
}

void text_format_kib_scaled(char *buf, size_t bufsz, unsigned long long kib)
{
    static const char units[] = "MGTPE";
    if (kib < 1000) {
        snprintf(buf, bufsz, kib ? "%lluK" : "%llu", kib);
        return;
    }
    double v = (double)kib / 1024.0;
    int u = 0;
    /* a value that would print as 1000 or more moves up a unit; 99.95 prints as "100", not "100.0" */
    for (; v >= 999.5 && units[u + 1]; u++) v /= 1024.0;
    snprintf(buf, bufsz, v < 99.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

int text_parse_u64(const char *s, unsigned long long *out)
{
    if (!s || !isdigit((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end != '\0') return -1;
    *out = v;
    return 0;
}

int text_parse_pid_n(const char *s, size_t n, int *pid)
{
    if (!s || n == 0 || n > 7 || s[0] == '0') return -1; /* 7 digits: TEXT_PID_MAX has 7 */
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v > TEXT_PID_MAX) return -1;
    *pid = v;
    return 0;
}

int text_parse_pid(const char *s, int *pid)
{
    return s ? text_parse_pid_n(s, strlen(s), pid) : -1;
}

int text_status_pid(const char *status, const char *label, int *pid)
{
    size_t ll = strlen(label);
    for (const char *line = status; line; line = strchr(line, '\n')) {
        if (*line == '\n') line++;
        if (strncmp(line, label, ll) == 0) {
            const char *v = line + ll + strspn(line + ll, " \t");
            return text_parse_pid_n(v, strcspn(v, "\n"), pid);
        }
    }
    return -1;
}

int text_parse_seconds(const char *s, double *out)
{
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end != '\0' || !isfinite(v) || v <= 0.0 || v > 86400.0) return -1;
    /* strtod would also take hex and "inf"; only plain decimals are accepted. */
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p) && *p != '.') return -1;
    *out = v;
    return 0;
}

static size_t put_str(char *out, size_t n, size_t o, const char *s)
{
    while (*s && o + 1 < n) out[o++] = *s++;
    return o;
}

void text_snake_key(const char *label, char *out, size_t n)
{
    size_t o = 0;
    int gap = 0;
    for (const unsigned char *p = (const unsigned char *)label; *p; p++) {
        char c[2] = {(char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p), 0};
        if (!((c[0] >= 'a' && c[0] <= 'z') || (c[0] >= '0' && c[0] <= '9'))) {
            gap = 1;
            continue;
        }
        if (o == 0 && c[0] <= '9') o = put_str(out, n, o, "field_");
        else if (gap && o > 0) o = put_str(out, n, o, "_");
        gap = 0;
        o = put_str(out, n, o, c);
    }
    if (o == 0) o = put_str(out, n, o, "field");
    while (o > 0 && out[o - 1] == '_') o--; /* cut short after a '_' */
    out[o] = '\0';
}
