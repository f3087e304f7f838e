/* saved_file: files diagtop keeps for the user (heap and CPU profiles): named <kind>.<comm>.<pid>.<YYYYmmdd-HHMMSS>
 * <suffix> in a directory, like core files (dump_default_name). They hold secrets: created 0600 with
 * O_CREAT|O_EXCL|O_NOFOLLOW under a temporary name, renamed without ever replacing a file (a name taken gets
 * "-2", "-3", ... before the suffix), given to the user who asked when diagtop runs through sudo, and no partial
 * file is left behind. */
#ifndef DIAGTOP_SAVED_FILE_H
#define DIAGTOP_SAVED_FILE_H
#include <stddef.h>

/* The name for pid's file of this kind ("heap", "cpu") in dir, e.g. dir/heap.gopsy.1234.20261202-142251.pb.gz:
 * comm from /proc/PID/comm with every byte but letters, digits and . _ - + made '_'. */
void saved_file_name(int pid, const char *dir, const char *kind, const char *suffix, char *buf, size_t bufsz);

/* Gives the written temporary file fd (at tmp) to the user who asked (diagtop run through sudo: SUDO_UID) and renames it, never replacing a file, to
 * exact when not NULL, else to the first free name of pid's file of this kind in dir. Returns 0 with the name in
 * name (absolute), or -errno (the temporary file is left to the caller). */
int saved_file_place(int fd, const char *tmp, const char *exact, int pid, const char *dir, const char *kind,
                     const char *suffix, char *name, size_t namesz);

/* Writes data as pid's new file of this kind in dir (NULL: the current directory). Returns 0 with the absolute
 * path in a malloc'd *path, or -errno with a reason. */
int saved_file_write(int pid, const char *dir, const char *kind, const char *suffix, const void *data, size_t len,
                     char **path, char *err, size_t errlen);
/* Same, named base+suffix (base a path in dir: "DIR/burner_42_cpu_20261205T061502Z"), else base-2+suffix, ... */
int saved_file_write_named(int pid, const char *dir, const char *base, const char *suffix, const void *data,
                           size_t len, char **path, char *err, size_t errlen);
/* pid's command name as it may stand in a file name: every byte but letters, digits and . _ - + made '_'. */
void saved_file_comm(int pid, char *buf, size_t bufsz);
#endif
