#include "keybar.h"

#include <stdio.h>
#include <string.h>

enum form { FULL, BRIEF, KEY };

struct spec_item {
    char full[64], brief[64];
    int keylen;  /* of the brief form, the one the bare key is taken from */
    enum form form;
};

static int spec_parse(const char *spec, struct spec_item *items, int max)
{
    int n = 0;
    while (spec && *spec && n < max) {
        while (*spec == ' ') spec++;
        if (!*spec) break;
        const char *end = strstr(spec, "  ");
        size_t len = end ? (size_t)(end - spec) : strlen(spec);
        struct spec_item *it = &items[n++];
        const char *bar = memchr(spec, '|', len);
        size_t full_len = bar ? (size_t)(bar - spec) : len;
        snprintf(it->full, sizeof it->full, "%.*s", (int)full_len, spec);
        if (bar) snprintf(it->brief, sizeof it->brief, "%.*s", (int)(len - full_len - 1), bar + 1);
        else snprintf(it->brief, sizeof it->brief, "%s", it->full);
        it->keylen = (int)strcspn(it->brief, " ");
        it->form = FULL;
        spec += len;
    }
    return n;
}

static int item_width(const struct spec_item *it)
{
    return it->form == FULL ? (int)strlen(it->full) : it->form == BRIEF ? (int)strlen(it->brief) : it->keylen;
}

static int bar_width(const struct spec_item *items, int n, int sep, int right)
{
    int w = 0;
    for (int i = 0; i < n; i++) w += item_width(&items[i]) + (i ? sep : 0);
    return right > 0 ? w + 2 + right : w;
}

static int labelled(const char *text) { return strchr(text, ' ') != NULL; }

void keybar_fit(struct keybar *kb, const char *spec, const char *right, int width)
{
    struct spec_item items[KEYBAR_MAX] = {0};
    int n = spec_parse(spec, items, KEYBAR_MAX);
    int rw = right ? (int)strlen(right) : 0;
    int sep = 2;
#define FITS() (bar_width(items, n, sep, rw) <= width)
    for (int i = 0; i < n && !FITS(); i++) /* briefs that keep a label */
        if (labelled(items[i].brief) && strcmp(items[i].brief, items[i].full)) items[i].form = BRIEF;
    for (int i = n - 1; i >= 0 && !FITS(); i--) /* briefs that are the bare key */
        if (!labelled(items[i].brief)) items[i].form = BRIEF;
    if (!FITS()) rw = 0; /* the right-hand text is no key: it goes first */
    if (!FITS()) sep = 1;
    for (int i = n - 1; i >= 0 && !FITS(); i--) items[i].form = KEY;
    while (n > 0 && !FITS()) n--;
#undef FITS
    kb->n = n;
    kb->sep = sep;
    kb->show_right = rw > 0;
    for (int i = 0; i < n; i++) {
        const struct spec_item *it = &items[i];
        struct keybar_item *out = &kb->items[i];
        if (it->form == KEY) snprintf(out->text, sizeof out->text, "%.*s", it->keylen, it->brief);
        else snprintf(out->text, sizeof out->text, "%s", it->form == FULL ? it->full : it->brief);
        out->keylen = (int)strcspn(out->text, " ");
    }
}

void keybar_format(const struct keybar *kb, const char *right, int width, char *out, size_t n)
{
    size_t off = 0;
    out[0] = '\0';
    for (int i = 0; i < kb->n && off < n; i++)
        off += (size_t)snprintf(out + off, n - off, "%*s%s", i ? kb->sep : 0, "", kb->items[i].text);
    if (kb->show_right && off < n) {
        int pad = width - (int)off - (int)strlen(right);
        snprintf(out + off, n - off, "%*s%s", pad > 2 ? pad : 2, "", right);
    }
}
