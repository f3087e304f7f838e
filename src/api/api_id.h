/* api_id: random, unguessable identifiers for the resources the API creates (dumps, heap snapshots): 128 bits
 * from the kernel's CSPRNG as 32 lowercase hex digits. An id names an entry of an in-memory table, never a path. */
#ifndef DIAGTOP_API_ID_H
#define DIAGTOP_API_ID_H

#define API_ID_LEN 32

/* Fills out (API_ID_LEN + 1 bytes). Returns 0 or -errno (getrandom failed). */
int api_id_new(char *out);
/* Whether s is exactly API_ID_LEN lowercase hex digits. */
int api_id_valid(const char *s);
#endif
