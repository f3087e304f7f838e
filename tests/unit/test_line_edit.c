/* The prompts' line editor: readline's keys on a line whose cursor is at its end. */
#include <curses.h>

#include "check.h"
#include "ui/line_edit.h"
#include "ui/tui_state.h"

static enum line_edit_result type(char *text, size_t size, const char *keys)
{
    enum line_edit_result r = LINE_EDIT_SAME;
    for (const char *k = keys; *k; k++) r = line_edit_key(text, size, (unsigned char)*k);
    return r;
}

static void ctrl_u_clears_the_line(void)
{
    char text[32] = "old filter";
    CHECK_INT(line_edit_key(text, sizeof text, 0x15), LINE_EDIT_CHANGED);
    CHECK_STR(text, "");
    CHECK_INT(line_edit_key(text, sizeof text, 0x15), LINE_EDIT_SAME);
    type(text, sizeof text, "new");
    CHECK_STR(text, "new");
}

static void ctrl_w_removes_the_last_word_and_its_blanks(void)
{
    char text[32] = "sleeper lined-x";
    CHECK_INT(line_edit_key(text, sizeof text, 0x17), LINE_EDIT_CHANGED);
    CHECK_STR(text, "sleeper ");
    CHECK_INT(line_edit_key(text, sizeof text, 0x17), LINE_EDIT_CHANGED);
    CHECK_STR(text, "");
    snprintf(text, sizeof text, "a  b   ");
    line_edit_key(text, sizeof text, 0x17);
    CHECK_STR(text, "a  ");
    CHECK_INT(line_edit_key(text, sizeof text, 0x17), LINE_EDIT_CHANGED);
    CHECK_INT(line_edit_key(text, sizeof text, 0x17), LINE_EDIT_SAME);
}

static void backspace_removes_one_utf8_character(void)
{
    char text[32] = "caf\xc3\xa9";
    CHECK_INT(line_edit_key(text, sizeof text, 127), LINE_EDIT_CHANGED);
    CHECK_STR(text, "caf");
    CHECK_INT(line_edit_key(text, sizeof text, KEY_FUNC_FLAG | KEY_BACKSPACE), LINE_EDIT_CHANGED);
    CHECK_INT(line_edit_key(text, sizeof text, 8), LINE_EDIT_CHANGED);
    CHECK_STR(text, "c");
    line_edit_key(text, sizeof text, 127);
    CHECK_INT(line_edit_key(text, sizeof text, 127), LINE_EDIT_SAME);
}

static void enter_accepts_esc_and_ctrl_g_cancel(void)
{
    char text[32] = "x";
    CHECK_INT(line_edit_key(text, sizeof text, '\n'), LINE_EDIT_ACCEPT);
    CHECK_INT(line_edit_key(text, sizeof text, '\r'), LINE_EDIT_ACCEPT);
    CHECK_INT(line_edit_key(text, sizeof text, KEY_FUNC_FLAG | KEY_ENTER), LINE_EDIT_ACCEPT);
    CHECK_INT(line_edit_key(text, sizeof text, 27), LINE_EDIT_CANCEL);
    CHECK_INT(line_edit_key(text, sizeof text, 7), LINE_EDIT_CANCEL);
    CHECK_STR(text, "x");
}

static void other_keys_are_the_callers_and_change_nothing(void)
{
    char text[32] = "x";
    CHECK_INT(line_edit_key(text, sizeof text, KEY_FUNC_FLAG | KEY_F(3)), LINE_EDIT_OTHER);
    CHECK_INT(line_edit_key(text, sizeof text, KEY_FUNC_FLAG | KEY_DOWN), LINE_EDIT_OTHER);
    CHECK_INT(line_edit_key(text, sizeof text, 0x01), LINE_EDIT_OTHER); /* no cursor to move to the start */
    CHECK_INT(line_edit_key(text, sizeof text, 0x9b), LINE_EDIT_OTHER); /* a C1 control is no character */
    CHECK_STR(text, "x");
}

static void characters_are_appended_as_utf8_while_they_fit(void)
{
    char text[6] = "";
    CHECK_INT(line_edit_key(text, sizeof text, 0xe9), LINE_EDIT_CHANGED);
    CHECK_INT(line_edit_key(text, sizeof text, 0x65e5), LINE_EDIT_CHANGED);
    CHECK_STR(text, "\xc3\xa9\xe6\x97\xa5");
    CHECK_INT(line_edit_key(text, sizeof text, 'a'), LINE_EDIT_SAME); /* full: 5 bytes and the NUL */
    CHECK_STR(text, "\xc3\xa9\xe6\x97\xa5");
}

int main(void)
{
    check_suite = "line_edit";
    RUN(ctrl_u_clears_the_line);
    RUN(ctrl_w_removes_the_last_word_and_its_blanks);
    RUN(backspace_removes_one_utf8_character);
    RUN(enter_accepts_esc_and_ctrl_g_cancel);
    RUN(other_keys_are_the_callers_and_change_nothing);
    RUN(characters_are_appended_as_utf8_while_they_fit);
    CHECK_EXIT();
}
