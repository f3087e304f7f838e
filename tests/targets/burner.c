/* Test target: burns one CPU until killed. */
#include <signal.h>
#include <unistd.h>

int main(void)
{
    volatile unsigned long long n = 0;
    for (;;) n++;
}
