/* api_page: the process-explorer page at /, from assets embedded in the binary (no CDN, nothing fetched from
 * elsewhere): src/api/assets/explorer.{html,js,css}, turned into build/gen/api_page_data.c by src/api/assets/embed.sh at build time. */
#ifndef DIAGTOP_API_PAGE_H
#define DIAGTOP_API_PAGE_H
#include <stddef.h>

#include "api_route.h"

struct api_asset {
    const char *data;
    size_t len;
    const char *content_type;
};

/* The asset a page route serves into out. Returns 0, or -1 for other routes. */
int api_page_asset(enum api_route_id id, struct api_asset *out);

/* The embedded bytes (api_page_data.c, generated). */
extern const char api_page_html[], api_page_js[], api_page_css[];
extern const size_t api_page_html_len, api_page_js_len, api_page_css_len;
#endif
