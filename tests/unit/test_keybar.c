/* Bottom bars fitted to the width: labels shorten (brief forms, then bare keys) before any key is left out. */
#include "check.h"
#include "ui/keybar.h"

static const char *fit(const char *spec, const char *right, int width)
{
    static char out[256];
    struct keybar kb;
    keybar_fit(&kb, spec, right, width);
    keybar_format(&kb, right, width, out, sizeof out);
    CHECK((int)strlen(out) <= width);
    return out;
}

#define SPEC "Esc close|Esc  n next|n  t tabs 1-7|1-7 tabs  m secrets"

static void wide_shows_everything(void)
{
    CHECK_STR(fit(SPEC, "[1/9]", 60), "Esc close  n next  t tabs 1-7  m secrets" "               [1/9]");
}

static void labelled_briefs_come_first(void)
{
    CHECK_STR(fit(SPEC, "[1/9]", 45), "Esc close  n next  1-7 tabs  m secrets  [1/9]");
    CHECK_STR(fit(SPEC, NULL, 38), "Esc close  n next  1-7 tabs  m secrets");
}

static void then_bare_keys_from_the_end_then_the_position(void)
{
    CHECK_STR(fit(SPEC, NULL, 33), "Esc close  n  1-7 tabs  m secrets");
    CHECK_STR(fit(SPEC, "[1/9]", 40), "Esc close  n  1-7 tabs  m secrets  [1/9]");
    CHECK_STR(fit(SPEC, "[1/9]", 34), "Esc  n  1-7 tabs  m secrets  [1/9]");
    CHECK_STR(fit(SPEC, "[1/9]", 27), "Esc  n  1-7 tabs  m secrets");
}

static void then_one_space_then_no_labels_then_keys_go(void)
{
    CHECK_STR(fit(SPEC, "[1/9]", 24), "Esc n 1-7 tabs m secrets");
    CHECK_STR(fit(SPEC, "[1/9]", 16), "Esc n 1-7 tabs m");
    CHECK_STR(fit(SPEC, "[1/9]", 11), "Esc n 1-7 m");
    CHECK_STR(fit(SPEC, "[1/9]", 8), "Esc n");
    CHECK_STR(fit(SPEC, "[1/9]", 0), "");
}

static void empty_and_odd_specs(void)
{
    CHECK_STR(fit("", "[0/0]", 20), "               [0/0]");
    CHECK_STR(fit(NULL, NULL, 20), "");
    CHECK_STR(fit("  a one    b two  ", NULL, 20), "a one  b two");
}

int main(void)
{
    check_suite = "keybar";
    RUN(wide_shows_everything);
    RUN(labelled_briefs_come_first);
    RUN(then_bare_keys_from_the_end_then_the_position);
    RUN(then_one_space_then_no_labels_then_keys_go);
    RUN(empty_and_odd_specs);
    CHECK_EXIT();
}
