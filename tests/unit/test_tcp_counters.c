/* The socket table's owner search between dumps: a socket that moves bytes with no owner found makes the table
 * search (descriptor counts checked at every refresh) until a process claims it or the search times out; what a
 * scan claimed stays claimed in the next dumps; silent and listening sockets never start a search; a new
 * connection on a listener's port marks that listener as having accepted. */
#include "check.h"
#include "collect/tcp_counters.h"

static struct tcp_socket_bytes sock(unsigned long inode, unsigned long long received, unsigned short port)
{
    return (struct tcp_socket_bytes){.inode = inode, .received = received, .port = port};
}

/* One dump: the sockets given, settled at time now. */
static void dump(struct tcp_counters *t, double now, const struct tcp_socket_bytes *socks, size_t n)
{
    tcp_counters_begin(t);
    for (size_t i = 0; i < n; i++) CHECK_INT(tcp_counters_add(t, socks[i]), 0);
    tcp_counters_settle(t, now, 1);
}

static void search_until_claimed(void)
{
    struct tcp_counters t = {0};
    struct tcp_socket_bytes listener = {.inode = 10, .port = 8080, .listening = 1};
    struct tcp_socket_bytes quiet[] = {listener, sock(11, 0, 40000)};
    dump(&t, 100, quiet, 2);
    CHECK_INT((int)t.searching, 0); /* nothing moves bytes: nobody to look for */
    CHECK(tcp_counters_claim(&t, 10) != NULL);

    struct tcp_socket_bytes busy[] = {listener, sock(11, 0, 40000), sock(12, 5000, 8080)};
    dump(&t, 101, busy, 3);
    CHECK_INT((int)t.searching, 1);
    CHECK(tcp_counters_find(&t, 10)->accepted); /* 12 came in on the listener's port */
    CHECK(tcp_counters_find(&t, 10)->owned);    /* the claim of the previous dump holds */
    CHECK(tcp_counters_find(&t, 12)->fresh);    /* made since the previous dump: all its bytes are new */
    CHECK(!tcp_counters_find(&t, 11)->fresh);
    dump(&t, 102, busy, 3);
    CHECK_INT((int)t.searching, 1);
    CHECK(!tcp_counters_find(&t, 10)->accepted); /* only in the dump where 12 was new */
    CHECK(!tcp_counters_find(&t, 12)->fresh);
    CHECK(tcp_counters_claim(&t, 12) != NULL);
    CHECK(tcp_counters_claim(&t, 99) == NULL); /* not a TCP socket of this namespace */
    dump(&t, 103, busy, 3);
    CHECK_INT((int)t.searching, 0);
    tcp_counters_free(&t);
}

static void search_gives_up(void)
{
    struct tcp_counters t = {0};
    struct tcp_socket_bytes orphan[] = {sock(20, 1, 5000)};
    dump(&t, 10, orphan, 1);
    CHECK_INT((int)t.searching, 1);
    dump(&t, 10 + TCP_OWNER_SEARCH_SECONDS - 0.5, orphan, 1);
    CHECK_INT((int)t.searching, 1);
    dump(&t, 10 + TCP_OWNER_SEARCH_SECONDS + 0.5, orphan, 1); /* another user's, or the kernel's: stop */
    CHECK_INT((int)t.searching, 0);
    struct tcp_socket_bytes another[] = {sock(20, 1, 5000), sock(21, 7, 5001)};
    dump(&t, 30, another, 2); /* a newcomer starts its own search */
    CHECK_INT((int)t.searching, 1);
    CHECK(!tcp_counters_find(&t, 21)->fresh); /* the previous dump is too old to say when it was made */
    dump(&t, 31, another, 2);
    struct tcp_socket_bytes third[] = {sock(20, 1, 5000), sock(21, 7, 5001), sock(22, 9, 5002)};
    tcp_counters_begin(&t);
    for (size_t i = 0; i < 3; i++) CHECK_INT(tcp_counters_add(&t, third[i]), 0);
    tcp_counters_settle(&t, 32, 0); /* an incomplete dump: what follows it cannot be called new */
    struct tcp_socket_bytes fourth[] = {sock(20, 1, 5000), sock(23, 4, 5003)};
    dump(&t, 33, fourth, 2);
    CHECK(!tcp_counters_find(&t, 23)->fresh);
    dump(&t, 34, third, 3);
    CHECK(tcp_counters_find(&t, 22)->fresh); /* after a complete one, it can again */
    tcp_counters_free(&t);
}

static void many_sockets(void)
{
    struct tcp_counters t = {0};
    tcp_counters_begin(&t);
    for (unsigned long i = 1; i <= 5000; i++) CHECK_INT(tcp_counters_add(&t, sock(i, i, 1)), 0);
    tcp_counters_settle(&t, 1, 1);
    CHECK_INT((int)t.n, 5000);
    CHECK_INT((int)t.searching, 5000);
    int found = 1;
    for (unsigned long i = 1; i <= 5000; i++) {
        const struct tcp_socket_bytes *b = tcp_counters_find(&t, i);
        found &= b && b->received == i;
    }
    CHECK(found);
    tcp_counters_free(&t);
}

int main(void)
{
    check_suite = "tcp_counters";
    RUN(search_until_claimed);
    RUN(search_gives_up);
    RUN(many_sockets);
    CHECK_EXIT();
}
