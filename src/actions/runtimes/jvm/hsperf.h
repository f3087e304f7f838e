/* hsperf: HotSpot's performance data file, /tmp/hsperfdata_<user>/<pid> in the JVM's filesystem (what jps and
 * jstat read, absent with -XX:-UsePerfData). Read here for the JVM's own record of its arguments after the
 * launcher expanded @argfiles and JDK_JAVA_OPTIONS (java.rt.vmArgs), which /proc/PID/cmdline does not show, and
 * for the heap's size without attaching (a full GC's cost, said before it runs). The
 * JVM writes the file: its bytes are untrusted, every offset is checked. */
#ifndef DIAGTOP_HSPERF_H
#define DIAGTOP_HSPERF_H
#include <stddef.h>
#include <sys/types.h>

/* The string counter called name in a performance data file's bytes, into out (NUL-terminated, truncated to fit).
 * Returns its length, -ENOENT when there is no such counter, -EINVAL when the bytes are not a performance data
 * file (bad magic, offsets outside it). */
int hsperf_string(const unsigned char *data, size_t n, const char *name, char *out, size_t outsz);

/* The Java heap from the counters jstat -gc reads: the young and old generations' spaces, bytes in use into *used
 * and committed into *committed. Returns 0, -ENOENT when the file has no such counters, -EINVAL when the bytes are
 * not a performance data file. */
int hsperf_heap(const unsigned char *data, size_t n, long long *used, long long *committed);

/* The performance data file of pid (nspid: its pid as it sees itself), owned by uid, found through
 * /proc/PID/root/tmp; malloc'd bytes with *n, or NULL (no such file: -XX:-UsePerfData, not readable). */
unsigned char *hsperf_read(int pid, int nspid, uid_t uid, size_t *n);
#endif
