/* netns_socket: a socket made in another process's network namespace (a container's), for reaching a peer on
 * its loopback. The socket keeps the namespace it was made in, so only a short-lived thread of diagtop enters it
 * (setns), makes the socket and ends: no other thread ever changes namespace, and nothing needs restoring. */
#ifndef DIAGTOP_NETNS_SOCKET_H
#define DIAGTOP_NETNS_SOCKET_H

/* Whether pid's network namespace is diagtop's: 1 yes, 0 no, -errno when it cannot be told. */
int netns_same(int pid);

/* socket(family, type, 0) in pid's network namespace. Returns the descriptor or -errno: -EPERM without
 * CAP_SYS_ADMIN over that namespace, -ESRCH/-ENOENT when the process is gone. */
int netns_socket(int pid, int family, int type);
#endif
