#include "api_sampler.h"

static void sample(void *arg)
{
    struct api_sampler *s = arg;
    const struct procview_opts o = {.sort = COL_CPU};
    char err[256];
    if (api_monitor_acquire(s->mon, &o, err, sizeof err) == 0) api_monitor_release(s->mon);
}

int api_sampler_start(struct api_sampler *s, struct api_monitor *mon, double every)
{
    s->mon = mon;
    return ticker_start(&s->ticker, every, sample, s);
}

void api_sampler_stop(struct api_sampler *s) { ticker_stop(&s->ticker); }
