#include "demangle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *demangler(const char *mangled, char *buf, size_t *len, int *status);

/* libstdc++'s __cxa_demangle, opened on the first mangled name: linking libstdc++ cost every start of diagtop a
 * millisecond or two of mapping and relocation, for C programs that never need it. One handle per process, so
 * the pointer is the only state, set once. */
static demangler *cxa_demangle;
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void open_libstdcxx(void)
{
    void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (lib) cxa_demangle = (demangler *)dlsym(lib, "__cxa_demangle");
}

char *demangle_dup(const char *name)
{
    if (!name) return NULL;
    if (name[0] == '_' && name[1] == 'Z') {
        pthread_once(&cxa_once, open_libstdcxx);
        int status = -1;
        char *d = cxa_demangle ? cxa_demangle(name, NULL, NULL, &status) : NULL;
        if (d && status == 0) return d;
        free(d);
    }
    return strdup(name);
}
