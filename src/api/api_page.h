/* api_page: the process-explorer page at /, from assets embedded in the binary (no CDN, nothing fetched from
 * elsewhere): src/api/assets/explorer.{html,js,css}, turned into build/gen/api_page_data.c by src/api/assets/embed.sh at build time. */
#ifndef DIAGTOP_API_PAGE_H
#define DIAGTOP_API_PAGE_H
#include <stddef.h>

#include "api_reply.h"

/* The routes /, /explorer.js and /explorer.css: the asset, with the page's Content-Security-Policy. */
void api_page_serve_html(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_page_serve_js(struct api_state *s, const struct api_request *rq, struct api_reply *out);
void api_page_serve_css(struct api_state *s, const struct api_request *rq, struct api_reply *out);

/* The embedded bytes (api_page_data.c, generated). */
extern const char api_page_html[], api_page_js[], api_page_css[];
extern const size_t api_page_html_len, api_page_js_len, api_page_css_len;
#endif
