// C++ under the agent: new and delete reach it through libstdc++'s operator new and delete. grow_cache() keeps a
// Node array allocated with new[] at each SIGUSR1 (16 MiB in all per burst, then "leaked N"); churn() news and
// deletes std::strings and vectors without end, from another thread. Prints "ready"; SIGTERM ends it.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

struct Node {
    char payload[200];
    Node *next;
};

static volatile std::sig_atomic_t bursts, stop;
static std::vector<Node *> kept;
static unsigned long long leaked;

__attribute__((noinline)) static void grow_cache(size_t count)
{
    Node *n = new Node[count]; // the leak site
    n[0].next = nullptr;
    kept.push_back(n);
    leaked += count * sizeof(Node);
}

static void churn()
{
    std::vector<std::string *> ring(2048, nullptr);
    unsigned long x = 12345;
    for (unsigned long i = 0; !stop; i++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        size_t slot = (x >> 33) % ring.size();
        delete ring[slot];
        ring[slot] = new std::string(16 + (x >> 40) % 3000, 'x');
        if (i % 2000 == 0) usleep(10000);
    }
    for (auto *s : ring) delete s;
}

int main()
{
    std::signal(SIGUSR1, [](int) { bursts++; });
    std::signal(SIGTERM, [](int) { stop = 1; });
    std::thread t(churn);
    std::printf("ready %d\n", (int)getpid());
    std::fflush(stdout);
    int seen = 0;
    while (!stop) {
        while (seen < bursts) {
            for (unsigned long long done = 0; done < (16ull << 20); done += 64 * sizeof(Node)) grow_cache(64);
            seen++;
            std::printf("leaked %llu\n", leaked);
            std::fflush(stdout);
        }
        usleep(10000);
    }
    t.join();
    return 0;
}
