/* Test target: sleeps until killed. Its command line (spaces, UTF-8, escape sequences) is the test's choice. */
#include <unistd.h>

int main(void)
{
    for (;;) pause();
}
