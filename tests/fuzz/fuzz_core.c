/* libFuzzer over the core reader's header, program header and note walk (tests/e2e/fuzz_core.sh runs it, seeded with
 * the heads of real cores): notes read or one error, never a crash, a leak or a read out of bounds (ASan and UBSan
 * watch). Each signal the notes name is described too, as the report would. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "actions/offline/core_notes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("core", MFD_CLOEXEC);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    struct core_notes n;
    char err[256], text[256];
    if (core_notes_read(fd, &n, err, sizeof err) == 0) {
        core_notes_signal_describe(&n.signal, text, sizeof text);
        for (int i = 0; i < n.nthreads; i++) core_notes_signal_name(n.threads[i].cursig, text, sizeof text);
        core_notes_free(&n);
    }
    close(fd);
    return 0;
}
