#include "api_page.h"

#include <stdlib.h>
#include <string.h>

/* A copy of the embedded bytes: the reply frees its body. */
static void serve(struct api_reply *out, const char *data, size_t len, const char *content_type)
{
    out->body = malloc(len ? len : 1);
    if (!out->body) {
        api_reply_error(out, 500, "out of memory");
        return;
    }
    memcpy(out->body, data, len);
    out->len = len;
    out->status = 200;
    out->content_type = content_type;
    out->page = 1;
}

void api_page_serve_html(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)s;
    (void)rq;
    serve(out, api_page_html, api_page_html_len, "text/html; charset=utf-8");
}

void api_page_serve_js(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)s;
    (void)rq;
    serve(out, api_page_js, api_page_js_len, "text/javascript; charset=utf-8");
}

void api_page_serve_css(struct api_state *s, const struct api_request *rq, struct api_reply *out)
{
    (void)s;
    (void)rq;
    serve(out, api_page_css, api_page_css_len, "text/css; charset=utf-8");
}
