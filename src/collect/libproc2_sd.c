/* libproc2_sd: the sd-login functions that the static libproc2 (Makefile) refers to, forwarded to libsystemd,
 * opened on first use. libproc2.so links libsystemd, and with it gcrypt, gpg-error, lz4, zstd, lzma and cap: seven
 * shared libraries mapped and relocated at every start of diagtop (a third of a one-shot `diagtop stack`'s start-up
 * time), for the PIDS_SD_* items, which diagtop never asks for. If an item ever does, these behave as libsystemd's
 * own, or say -ENOSYS where libsystemd is missing. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/types.h>

#include "libproc2_sd.h"

/* One handle per process, set once: the only state. */
static void *libsystemd;
static pthread_once_t libsystemd_once = PTHREAD_ONCE_INIT;

static void open_libsystemd(void)
{
    libsystemd = dlopen("libsystemd.so.0", RTLD_LAZY | RTLD_LOCAL);
}

static void *sd_function(const char *name)
{
    pthread_once(&libsystemd_once, open_libsystemd);
    return libsystemd ? dlsym(libsystemd, name) : NULL;
}

/* Each takes an id and returns a string or a uid through its second argument, as in <systemd/sd-login.h>. */
#define SD_FORWARD(name, id_type, out_type)                                                                     \
    int name(id_type id, out_type out)                                                                          \
    {                                                                                                           \
        int (*real)(id_type, out_type) = (int (*)(id_type, out_type))sd_function(#name);                        \
        return real ? real(id, out) : -ENOSYS;                                                                  \
    }

SD_FORWARD(sd_pid_get_machine_name, pid_t, char **)
SD_FORWARD(sd_pid_get_owner_uid, pid_t, uid_t *)
SD_FORWARD(sd_pid_get_session, pid_t, char **)
SD_FORWARD(sd_pid_get_slice, pid_t, char **)
SD_FORWARD(sd_pid_get_unit, pid_t, char **)
SD_FORWARD(sd_pid_get_user_unit, pid_t, char **)
SD_FORWARD(sd_session_get_seat, const char *, char **)
