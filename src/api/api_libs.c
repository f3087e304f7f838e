#include "api_libs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
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

#define SYM(lib, field, name) {lib, name, offsetof(struct api_libs, field)}
static const struct sym {
    int lib; /* 0: libmicrohttpd, 1: GnuTLS */
    const char *name;
    size_t offset; /* of its pointer in struct api_libs */
} syms[] = {
    SYM(0, start_daemon, "MHD_start_daemon"),
    SYM(0, stop_daemon, "MHD_stop_daemon"),
    SYM(0, quiesce_daemon, "MHD_quiesce_daemon"),
    SYM(0, queue_response, "MHD_queue_response"),
    SYM(0, create_response_from_buffer, "MHD_create_response_from_buffer"),
    SYM(0, create_response_from_fd_at_offset64, "MHD_create_response_from_fd_at_offset64"),
    SYM(0, add_response_header, "MHD_add_response_header"),
    SYM(0, destroy_response, "MHD_destroy_response"),
    SYM(0, get_connection_info, "MHD_get_connection_info"),
    SYM(0, get_connection_values_n, "MHD_get_connection_values_n"),
    SYM(0, lookup_connection_value, "MHD_lookup_connection_value"),
    SYM(1, hash_fast, "gnutls_hash_fast"),
};

static void load_once(void)
{
    static const char *const sonames[] = {MHD_SONAME, GNUTLS_SONAME};
    void *libs[2];
    for (int i = 0; i < 2; i++)
        if (!(libs[i] = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL))) {
            snprintf(loaded.why, sizeof loaded.why, "cannot load %s: %s (Debian: libmicrohttpd12, libgnutls30)",
                     sonames[i], dlerror());
            return;
        }
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(libs[syms[i].lib], syms[i].name);
        if (!p) {
            snprintf(loaded.why, sizeof loaded.why, "%s has no %s", sonames[syms[i].lib], syms[i].name);
            return;
        }
        memcpy((char *)&loaded.f + syms[i].offset, &p, sizeof p); /* POSIX: dlsym's pointer is the function's */
    }
    loaded.ok = 1;
}

const struct api_libs *api_libs_load(char *err, size_t errlen)
{
    pthread_once(&loaded.once, load_once);
    if (loaded.ok) return &loaded.f;
    snprintf(err, errlen, "%s", loaded.why);
    return NULL;
}

const struct api_libs *api_libs(void) { return loaded.ok ? &loaded.f : NULL; }
