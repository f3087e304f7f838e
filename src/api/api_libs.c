#include "api_libs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The one table of the process, like the dynamic linker's own: filled once under pthread_once. */
static struct {
    pthread_once_t once;
    struct api_libs f;
    int ok;
    char why[256];
} loaded = {PTHREAD_ONCE_INIT, {0}, 0, ""};

/* Debian's sonames (libmicrohttpd12, libgnutls30): the ABI the headers describe. */
#define MHD_SONAME "libmicrohttpd.so.12"
#define GNUTLS_SONAME "libgnutls.so.30"

static int find(void *lib, const char *soname, const char *name, void **out)
{
    *out = dlsym(lib, name);
    if (*out) return 0;
    snprintf(loaded.why, sizeof loaded.why, "%s has no %s", soname, name);
    return -1;
}

static void load_once(void)
{
    void *mhd = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL), *tls = dlopen(GNUTLS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!mhd || !tls) {
        snprintf(loaded.why, sizeof loaded.why, "cannot load %s: %s (Debian: libmicrohttpd12, libgnutls30)",
                 mhd ? GNUTLS_SONAME : MHD_SONAME, dlerror());
        return;
    }
    struct api_libs *f = &loaded.f;
    loaded.ok = find(mhd, MHD_SONAME, "MHD_start_daemon", (void **)&f->start_daemon) == 0 &&
                find(mhd, MHD_SONAME, "MHD_stop_daemon", (void **)&f->stop_daemon) == 0 &&
                find(mhd, MHD_SONAME, "MHD_quiesce_daemon", (void **)&f->quiesce_daemon) == 0 &&
                find(mhd, MHD_SONAME, "MHD_queue_response", (void **)&f->queue_response) == 0 &&
                find(mhd, MHD_SONAME, "MHD_create_response_from_buffer", (void **)&f->create_response_from_buffer) == 0 &&
                find(mhd, MHD_SONAME, "MHD_create_response_from_fd_at_offset64",
                     (void **)&f->create_response_from_fd_at_offset64) == 0 &&
                find(mhd, MHD_SONAME, "MHD_add_response_header", (void **)&f->add_response_header) == 0 &&
                find(mhd, MHD_SONAME, "MHD_destroy_response", (void **)&f->destroy_response) == 0 &&
                find(mhd, MHD_SONAME, "MHD_get_connection_info", (void **)&f->get_connection_info) == 0 &&
                find(mhd, MHD_SONAME, "MHD_get_connection_values_n", (void **)&f->get_connection_values_n) == 0 &&
                find(mhd, MHD_SONAME, "MHD_lookup_connection_value", (void **)&f->lookup_connection_value) == 0 &&
                find(tls, GNUTLS_SONAME, "gnutls_hash_fast", (void **)&f->hash_fast) == 0;
}

const struct api_libs *api_libs_load(char *err, size_t errlen)
{
    pthread_once(&loaded.once, load_once);
    if (loaded.ok) return &loaded.f;
    snprintf(err, errlen, "%s", loaded.why);
    return NULL;
}

const struct api_libs *api_libs(void) { return loaded.ok ? &loaded.f : NULL; }
