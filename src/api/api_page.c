#include "api_page.h"

int api_page_asset(enum api_route_id id, struct api_asset *out)
{
    switch (id) {
    case API_ROUTE_PAGE: *out = (struct api_asset){api_page_html, api_page_html_len, "text/html; charset=utf-8"}; break;
    case API_ROUTE_PAGE_JS:
        *out = (struct api_asset){api_page_js, api_page_js_len, "text/javascript; charset=utf-8"};
        break;
    case API_ROUTE_PAGE_CSS: *out = (struct api_asset){api_page_css, api_page_css_len, "text/css; charset=utf-8"}; break;
    default: return -1;
    }
    return 0;
}
