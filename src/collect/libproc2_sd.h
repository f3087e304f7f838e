/* libproc2_sd: sd-login for the static libproc2, loaded only if ever called (see libproc2_sd.c). */
#ifndef DIAGTOP_LIBPROC2_SD_H
#define DIAGTOP_LIBPROC2_SD_H
#include <sys/types.h>

int sd_pid_get_machine_name(pid_t pid, char **machine);
int sd_pid_get_owner_uid(pid_t pid, uid_t *uid);
int sd_pid_get_session(pid_t pid, char **session);
int sd_pid_get_slice(pid_t pid, char **slice);
int sd_pid_get_unit(pid_t pid, char **unit);
int sd_pid_get_user_unit(pid_t pid, char **unit);
int sd_session_get_seat(const char *session, char **seat);
#endif
