/* Runtime classification: Go build info, libjvm.so in maps, gops LISTEN sockets in /proc/net/tcp. */
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include <sys/socket.h>
#include "collect/runtime.h"

static void go_buildinfo_with_inline_version(void)
{
    size_t n;
    char *blob = fixture("go_buildinfo.bin", &n);
    char version[32];
    CHECK_INT(runtime_find_go_buildinfo((unsigned char *)blob, n, version, sizeof version), 1);
    CHECK_STR(version, "go1.19.8");
    free(blob);
}

static void misaligned_magic_is_not_build_info(void)
{
    size_t n;
    char *blob = fixture("go_buildinfo_misaligned.bin", &n);
    char version[32];
    CHECK_INT(runtime_find_go_buildinfo((unsigned char *)blob, n, version, sizeof version), 0);
    free(blob);
}

static void version_longer_than_buffer_is_dropped(void)
{
    size_t n;
    char *blob = fixture("go_buildinfo.bin", &n);
    char version[4];
    CHECK_INT(runtime_find_go_buildinfo((unsigned char *)blob, n, version, sizeof version), 1);
    CHECK_STR(version, "");
    free(blob);
}

static void a_c_binary_is_native(void)
{
    int fd = open("/bin/sh", O_RDONLY);
    CHECK(fd >= 0);
    CHECK_INT(runtime_classify_elf(fd), RUNTIME_NATIVE);
    close(fd);
    fd = open(FIXTURES_DIR "/maps_jvm.txt", O_RDONLY); /* not ELF */
    CHECK_INT(runtime_classify_elf(fd), RUNTIME_UNKNOWN);
    close(fd);
}

static void jvm_is_found_in_maps(void)
{
    char *maps = fixture("maps_jvm.txt", NULL);
    CHECK(runtime_maps_has_jvm(maps));
    free(maps);
    maps = fixture("maps_native.txt", NULL);
    CHECK(!runtime_maps_has_jvm(maps));
    free(maps);
}

static void tcp_listen_inode_by_port(void)
{
    char *tcp = fixture("net_tcp_listen.txt", NULL);
    struct inet_endpoint at;
    CHECK_INT(runtime_tcp_listen_inode(tcp, 0, 8080, &at), 424242); /* 0x1F90 */
    CHECK_INT(at.family, AF_INET);
    CHECK(memcmp(at.addr, (const unsigned char[]){127, 0, 0, 1}, 4) == 0 && at.port == 8080);
    CHECK_INT(runtime_tcp_listen_inode(tcp, 0, 9000, NULL), 0); /* 0x2328 is ESTABLISHED, not LISTEN */
    CHECK_INT(runtime_tcp_listen_inode(tcp, 0, 22, &at), 17171);
    CHECK(memcmp(at.addr, (const unsigned char[]){0, 0, 0, 0}, 4) == 0);
    CHECK_INT(runtime_tcp_listen_inode(tcp, 0, 1, NULL), 0);
    free(tcp);
    tcp = fixture("net_tcp_real.txt", NULL); /* a real capture parses without matching nonsense */
    CHECK_INT(runtime_tcp_listen_inode(tcp, 0, 0, NULL), 0);
    free(tcp);
    CHECK_INT(runtime_tcp_listen_inode("", 0, 80, NULL), 0);
    tcp = fixture("net_tcp6_listen.txt", NULL); /* [::1]:4321 and [::]:8081 */
    char text[64];
    CHECK_INT(runtime_tcp_listen_inode(tcp, 1, 4321, &at), 606060);
    sockets_format_endpoint(&at, text, sizeof text);
    CHECK_STR(text, "[::1]:4321");
    CHECK_INT(runtime_tcp_listen_inode(tcp, 1, 8081, &at), 707070);
    sockets_format_endpoint(&at, text, sizeof text);
    CHECK_STR(text, "[::]:8081");
    free(tcp);
}

static void names(void)
{
    CHECK_STR(runtime_name(RUNTIME_GO), "go");
    CHECK_STR(runtime_name(RUNTIME_JAVA), "java");
    CHECK_STR(runtime_name(RUNTIME_NATIVE), "native");
    CHECK(runtime_name(RUNTIME_UNKNOWN) == NULL);
}

int main(void)
{
    check_suite = "runtime";
    RUN(go_buildinfo_with_inline_version);
    RUN(misaligned_magic_is_not_build_info);
    RUN(version_longer_than_buffer_is_dropped);
    RUN(a_c_binary_is_native);
    RUN(jvm_is_found_in_maps);
    RUN(tcp_listen_inode_by_port);
    RUN(names);
    CHECK_EXIT();
}
