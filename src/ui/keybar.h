/* keybar: a bottom bar of keys fitted to the screen's width. Labels shorten before keys go: first to each item's
 * brief form, then to the bare key, and only when even the bare keys do not fit are the last ones left out.
 *
 * A spec lists items separated by two spaces; an item is "KEY label" or "KEY label|brief", where brief is the
 * whole short item ("1-7/Left/Right tabs|1-7 tabs") or the bare key ("n next|n"). Briefs that keep a label are
 * taken first, in order; then briefs that are a bare key, from the last item back; then the right-hand text (no
 * key) goes; then the items are parted by one space instead of two; then the remaining labels go, from the last
 * item back. */
#ifndef DIAGTOP_KEYBAR_H
#define DIAGTOP_KEYBAR_H
#include <stddef.h>

#define KEYBAR_MAX 24

struct keybar_item {
    char text[64]; /* as shown */
    int keylen;    /* the key at the start of text */
};

struct keybar {
    struct keybar_item items[KEYBAR_MAX];
    int n;          /* items shown */
    int sep;        /* spaces between items */
    int show_right; /* the right-hand text (a position, say) fits after the items */
};

/* Fits spec, and right (NULL or "") at the right edge, into width columns (ASCII text). */
void keybar_fit(struct keybar *kb, const char *spec, const char *right, int width);
/* The bar as drawn, as one line of width columns at most: the items from the left, right at the right edge. */
void keybar_format(const struct keybar *kb, const char *right, int width, char *out, size_t n);
#endif
