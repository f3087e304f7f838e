// C++ test target: threads that throw and catch in a loop (a capture may stop them anywhere inside the C++
// runtime's unwinder), and one parked in a member function of a namespaced class, for demangled names.
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace diag {
struct Parker {
    volatile int rounds = 0;
    __attribute__((noinline)) void wait_forever()
    {
        while (rounds >= 0) { /* always: rounds only grows (a loop the compiler cannot prove endless) */
            pause();
            rounds++;
        }
    }
    __attribute__((noinline)) void park(int depth)
    {
        if (depth > 0) park(depth - 1);
        else wait_forever();
        rounds++; /* not a tail call */
    }
};

__attribute__((noinline)) void thrower(int n)
{
    if (n % 2) throw std::runtime_error("odd " + std::to_string(n));
    throw n;
}
}  // namespace diag

static volatile long caught;

static void *throw_loop(void *)
{
    for (long i = 0;; i++) {
        try {
            diag::thrower((int)i);
        } catch (const std::exception &e) {
            caught += (long)e.what()[0];
        } catch (int v) {
            caught += v;
        }
    }
    return nullptr;
}

static void *parked(void *)
{
    diag::Parker p;
    p.park(3);
    return nullptr;
}

int main()
{
    pthread_t a, b;
    pthread_create(&a, nullptr, throw_loop, nullptr);
    pthread_setname_np(a, "thrower");
    pthread_create(&b, nullptr, parked, nullptr);
    pthread_setname_np(b, "parked");
    usleep(100000);
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;) pause();
}
