/* api_libs: libmicrohttpd and GnuTLS, opened when a server starts instead of linked into diagtop. They and what
 * they pull in (nettle, hogweed, gmp, p11-kit, idn2, tasn1...) are a third of diagtop's shared libraries; every
 * other command (a stack, a dump) paid for mapping and relocating them at start-up. */
#ifndef DIAGTOP_API_LIBS_H
#define DIAGTOP_API_LIBS_H
#include <stddef.h>
#include <sys/socket.h>

#include <gnutls/crypto.h>
#include <microhttpd.h>

struct api_libs {
    __typeof__(MHD_start_daemon) *start_daemon;
    __typeof__(MHD_stop_daemon) *stop_daemon;
    __typeof__(MHD_quiesce_daemon) *quiesce_daemon;
    __typeof__(MHD_queue_response) *queue_response;
    __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
    __typeof__(MHD_create_response_from_fd_at_offset64) *create_response_from_fd_at_offset64;
    __typeof__(MHD_add_response_header) *add_response_header;
    __typeof__(MHD_destroy_response) *destroy_response;
    __typeof__(MHD_get_connection_info) *get_connection_info;
    __typeof__(MHD_get_connection_values_n) *get_connection_values_n;
    __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
    __typeof__(gnutls_hash_fast) *hash_fast;
};

/* Opens the libraries once (thread-safe) and returns their functions, or NULL with the reason. */
const struct api_libs *api_libs_load(char *err, size_t errlen);
/* The functions, once api_libs_load succeeded (the server's code runs only after it). */
const struct api_libs *api_libs(void);
#endif
