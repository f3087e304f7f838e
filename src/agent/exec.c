/* exec: the exec functions a program calls directly go through here first, so that a CPU profile running at that
 * moment leaves no SIGPROF pending for the new image (where SIGPROF is fatal by default). exec from a fork's child
 * or posix_spawn needs nothing: a new task has no timers and no pending signals. The listening socket is
 * close-on-exec; a preloaded agent starts again in the new image. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "agent.h"

enum { EXEC_execve, EXEC_execv, EXEC_execvp, EXEC_execvpe, EXEC_fexecve };

void exec_resolve(void)
{
    static const char *const names[] = {"execve", "execv", "execvp", "execvpe", "fexecve"};
    for (int i = 0; i < 5; i++) agent_g.exec_fn[i] = dlsym(RTLD_NEXT, names[i]);
}

/* Resolved by agent_init_late (exec_resolve): a vfork child must not go into the dynamic loader. */
#define NEXT(name, fn)                                                                                              \
    __typeof__(&fn) real = (__typeof__(&fn))agent_g.exec_fn[EXEC_##fn];                                          \
    if (!real) real = (__typeof__(&fn))dlsym(RTLD_NEXT, name);                                                     \
    if (!real) {                                                                                                    \
        errno = ENOSYS;                                                                                             \
        return -1;                                                                                                  \
    }

AGENT_API int execve(const char *path, char *const argv[], char *const envp[])
{
    cpuprof_before_exec();
    NEXT("execve", execve);
    return real(path, argv, envp);
}

AGENT_API int execv(const char *path, char *const argv[])
{
    cpuprof_before_exec();
    NEXT("execv", execv);
    return real(path, argv);
}

AGENT_API int execvp(const char *file, char *const argv[])
{
    cpuprof_before_exec();
    NEXT("execvp", execvp);
    return real(file, argv);
}

AGENT_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    cpuprof_before_exec();
    NEXT("execvpe", execvpe);
    return real(file, argv, envp);
}

AGENT_API int fexecve(int fd, char *const argv[], char *const envp[])
{
    cpuprof_before_exec();
    NEXT("fexecve", fexecve);
    return real(fd, argv, envp);
}

/* The variadic forms: the arguments into an array on the stack (as glibc does), then the vector form. */
#define COLLECT(first, ap, args, withenv, envp)                                                                     \
    size_t n = 1;                                                                                                   \
    va_start(ap, first);                                                                                            \
    while (va_arg(ap, const char *)) n++;                                                                           \
    va_end(ap);                                                                                                     \
    if (n > 1 << 16) {                                                                                              \
        errno = E2BIG;                                                                                              \
        return -1;                                                                                                  \
    }                                                                                                               \
    const char *args[n + 1];                                                                                        \
    args[0] = first;                                                                                                \
    va_start(ap, first);                                                                                            \
    for (size_t i = 1; i <= n; i++) args[i] = i < n ? va_arg(ap, const char *) : NULL;                              \
    if (withenv) envp = va_arg(ap, char *const *);                                                                  \
    va_end(ap);

AGENT_API int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    char *const *envp = NULL;
    COLLECT(arg, ap, args, 0, envp);
    (void)envp;
    return execv(path, (char *const *)args);
}

AGENT_API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    char *const *envp = NULL;
    COLLECT(arg, ap, args, 0, envp);
    (void)envp;
    return execvp(file, (char *const *)args);
}

AGENT_API int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char *const *envp = NULL;
    COLLECT(arg, ap, args, 1, envp);
    return execve(path, (char *const *)args, envp);
}
