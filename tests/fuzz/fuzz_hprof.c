/* libFuzzer over the HPROF reader and every question the analysis answers (tests/e2e/fuzz_hprof.sh runs it, with
 * seeds from a real JVM's dump and dumps built byte by byte): an answer or an error, never a crash, a leak or a
 * read out of bounds (ASan and UBSan watch). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "actions/offline/heap_analysis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("hprof", MFD_CLOEXEC);
    if (fd < 0) return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64], err[512];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct heap_analysis_opts o = {.max_memory = 1ull << 30};
    struct heap_analysis *a;
    if (heap_analysis_open(&a, path, &o, err, sizeof err) == 0) {
        static const struct heap_query qs[] = {
            {.histogram = 1},
            {.paths = "Node", .share = 0.01},
            {.cls = "java.lang.String", .object = "0x1000"},
            {.paths = "0x1000"},
        };
        for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
            struct heap_report r;
            if (heap_report_build(a, &qs[i], &r, err, sizeof err) == 0) {
                for (size_t k = 0; r.paths && k < r.paths->nnodes; k++) free(heap_paths_chain(r.paths, (uint32_t)k));
                heap_report_free(&r);
            }
        }
        heap_analysis_close(a);
    }
    struct heap_analysis_opts h = {.histogram_only = 1};
    if (heap_analysis_open(&a, path, &h, err, sizeof err) == 0) heap_analysis_close(a);
    close(fd);
    return 0;
}
