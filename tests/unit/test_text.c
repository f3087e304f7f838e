/* Sanitizing untrusted bytes and formatting numbers. */
#include "check.h"
#include "util/text.h"

static void escape_sequences_never_reach_the_terminal(void)
{
    char out[128];
    const char in[] = "evil\033]0;title\007\033[2J\r\nend\x9b";
    text_sanitize_display(out, sizeof out, in, sizeof in - 1);
    CHECK(strchr(out, '\033') == NULL);
    CHECK(strchr(out, '\007') == NULL);
    CHECK(strchr(out, '\n') == NULL);
    CHECK(strchr(out, '\r') == NULL);
    CHECK_STR(out, "evil?]0;title??[2J??end?");
}

static void utf8_is_kept_and_c1_controls_are_not(void)
{
    char out[64];
    const char in[] = "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xc2\x9b" "x";
    text_sanitize_display(out, sizeof out, in, sizeof in - 1);
    CHECK_STR(out, "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac ?x");
}

static void invalid_utf8_becomes_replacement_for_json(void)
{
    char out[64];
    const char in[] = "a\xff" "b\xc0\xaf" "c\xed\xa0\x80" "d\033";
    text_sanitize_utf8(out, sizeof out, in, sizeof in - 1);
    /* overlong (c0 af) and surrogate (ed a0 80) forms are invalid too; ESC stays for the JSON encoder to escape */
    CHECK_STR(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "d\033");
}

static void output_is_bounded(void)
{
    char out[5];
    text_sanitize_display(out, sizeof out, "abcdefgh", 8);
    CHECK_STR(out, "abcd");
    text_sanitize_display(out, sizeof out, "ab\xe6\x97\xa5", 5); /* a multi-byte char that does not fit is dropped */
    CHECK_STR(out, "ab");
}

static void kib_formatting(void)
{
    /* always a unit, at most three integer digits, never wider than 5 */
    static const struct { unsigned long long kib; const char *text; } cases[] = {
        {0, "0"}, {1, "1K"}, {999, "999K"}, {1000, "1.0M"}, {1024, "1.0M"}, {66800, "65.2M"},
        {102348, "99.9M"}, {102349, "100M"}, {1022976, "999M"}, {1023488, "1.0G"}, {1234567, "1.2G"},
        {12345678, "11.8G"}, {5ULL << 30, "5.0T"}, {~0ULL / 1024, "16.0E"},
    };
    char b[16];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        text_format_kib_scaled(b, sizeof b, cases[i].kib);
        CHECK_STR(b, cases[i].text);
    }
}

static void seconds_and_integers(void)
{
    double d;
    unsigned long long v;
    CHECK_INT(text_parse_seconds("0.5", &d), 0);
    CHECK(d == 0.5);
    CHECK_INT(text_parse_seconds("2", &d), 0);
    CHECK_INT(text_parse_seconds("-1", &d), -1);
    CHECK_INT(text_parse_seconds("0", &d), -1);
    CHECK_INT(text_parse_seconds("1e3", &d), -1);
    CHECK_INT(text_parse_seconds("inf", &d), -1);
    CHECK_INT(text_parse_seconds("0x10", &d), -1);
    CHECK_INT(text_parse_seconds("", &d), -1);
    CHECK_INT(text_parse_u64("42", &v), 0);
    CHECK_INT(v, 42);
    CHECK_INT(text_parse_u64("42x", &v), -1);
    CHECK_INT(text_parse_u64("-1", &v), -1);
    CHECK_INT(text_parse_u64("99999999999999999999999", &v), -1);
}

static void process_ids_are_strict(void)
{
    int pid = -7;
    CHECK_INT(text_parse_pid("1", &pid), 0);
    CHECK_INT(pid, 1);
    CHECK_INT(text_parse_pid("4194304", &pid), 0); /* TEXT_PID_MAX, the kernel's ceiling */
    CHECK_INT(pid, TEXT_PID_MAX);
    pid = -7;
    const char *bad[] = {"0", "4194305", "+1", "-1", " 1", "1 ", "1x", "x1", "", "01", "0x10", "1.0",
                         "99999999999999999999", "2147483648", "4294967297"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (text_parse_pid(bad[i], &pid) != -1) printf("  accepted '%s'\n", bad[i]);
        CHECK_INT(text_parse_pid(bad[i], &pid), -1);
    }
    CHECK_INT(text_parse_pid(NULL, &pid), -1);
    CHECK_INT(pid, -7); /* untouched on failure */
    CHECK_INT(text_parse_pid_n("123\t1\n", 3, &pid), 0);
    CHECK_INT(pid, 123);
    CHECK_INT(text_parse_pid_n("123", 0, &pid), -1);
}

static void status_fields_give_pids(void)
{
    const char *st = "Name:\tcat\nUmask:\t0022\nTgid:\t4242\nNgid:\t0\nPid:\t4243\nPPid:\t1\nTracerPid:\t0\n"
                     "NStgid:\t4242\t7\n";
    int pid = -1;
    CHECK_INT(text_status_pid(st, "Tgid:", &pid), 0);
    CHECK_INT(pid, 4242);
    CHECK_INT(text_status_pid(st, "Pid:", &pid), 0); /* a label starts a line: not the end of "PPid:" or "Tgid:" */
    CHECK_INT(pid, 4243);
    CHECK_INT(text_status_pid(st, "PPid:", &pid), 0);
    CHECK_INT(pid, 1);
    pid = -1;
    CHECK_INT(text_status_pid(st, "TracerPid:", &pid), -1); /* 0: not traced */
    CHECK_INT(text_status_pid(st, "NStgid:", &pid), -1);    /* two values: not one pid */
    CHECK_INT(text_status_pid(st, "Missing:", &pid), -1);
    CHECK_INT(pid, -1);
    CHECK_INT(text_status_pid("TracerPid:  77", "TracerPid:", &pid), 0); /* first line, no newline at the end */
    CHECK_INT(pid, 77);
    CHECK_INT(text_status_pid("", "Tgid:", &pid), -1);
}

static void case_insensitive_contains(void)
{
    CHECK(text_contains_nocase("/usr/bin/Python3 -m http", "python"));
    CHECK(!text_contains_nocase("sleep", "sleeper"));
    CHECK(text_contains_nocase("x", ""));
}

/* JSON keys from labels: gops', HotSpot's, the kernel's (limits). */
static void labels_become_snake_case_keys(void)
{
    static const char *const cases[][2] = {
        {"heap-alloc", "heap_alloc"}, {"OS threads", "os_threads"}, {"GOMAXPROCS", "gomaxprocs"},
        {"num CPU", "num_cpu"}, {"garbage-first-heap.used", "garbage_first_heap_used"},
        {"eden-space.used-ratio", "eden_space_used_ratio"}, {"Max open files", "max_open_files"},
        {"  --a  b--", "a_b"}, {"2nd", "field_2nd"}, {"", "field"}, {"-.-", "field"}, {"x\x1b[2Jy", "x_2jy"},
        {"caf\xc3\xa9 latte", "caf_latte"}, {"in_use", "in_use"},
    };
    char key[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        text_snake_key(cases[i][0], key, sizeof key);
        CHECK_STR(key, cases[i][1]);
    }
    text_snake_key("abc-def", key, 5); /* cut short: no '_' at the end */
    CHECK_STR(key, "abc");
    text_snake_key("9", key, 4);
    CHECK_STR(key, "fie");
}

int main(void)
{
    check_suite = "text";
    RUN(escape_sequences_never_reach_the_terminal);
    RUN(utf8_is_kept_and_c1_controls_are_not);
    RUN(invalid_utf8_becomes_replacement_for_json);
    RUN(output_is_bounded);
    RUN(kib_formatting);
    RUN(seconds_and_integers);
    RUN(process_ids_are_strict);
    RUN(status_fields_give_pids);
    RUN(case_insensitive_contains);
    RUN(labels_become_snake_case_keys);
    CHECK_EXIT();
}
