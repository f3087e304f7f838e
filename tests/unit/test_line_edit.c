/* The prompts' line editor: readline's keys, with the cursor at the end of the line (NULL) or anywhere in it. */
#include <curses.h>
#include <string.h>

#include "check.h"
#include "ui/line_edit.h"
#include "ui/tui_state.h"

static enum line_edit_result type(char *text, size_t size, const char *keys)
{
    enum line_edit_result r = LINE_EDIT_SAME;
    for (const char *k = keys; *k; k++) r = line_edit_key(text, size, NULL, (unsigned char)*k);
    return r;
}

static void ctrl_u_clears_the_line(void)
{
    char text[32] = "old filter";
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0x15), LINE_EDIT_CHANGED);
    CHECK_STR(text, "");
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0x15), LINE_EDIT_SAME);
    type(text, sizeof text, "new");
    CHECK_STR(text, "new");
}

static void ctrl_w_removes_the_last_word_and_its_blanks(void)
{
    char text[32] = "sleeper lined-x";
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0x17), LINE_EDIT_CHANGED);
    CHECK_STR(text, "sleeper ");
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0x17), LINE_EDIT_CHANGED);
    CHECK_STR(text, "");
    snprintf(text, sizeof text, "a  b   ");
    line_edit_key(text, sizeof text, NULL, 0x17);
    CHECK_STR(text, "a  ");
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0x17), LINE_EDIT_CHANGED);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0x17), LINE_EDIT_SAME);
}

static void backspace_removes_one_utf8_character(void)
{
    char text[32] = "caf\xc3\xa9";
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 127), LINE_EDIT_CHANGED);
    CHECK_STR(text, "caf");
    CHECK_INT(line_edit_key(text, sizeof text, NULL, KEY_FUNC_FLAG | KEY_BACKSPACE), LINE_EDIT_CHANGED);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 8), LINE_EDIT_CHANGED);
    CHECK_STR(text, "c");
    line_edit_key(text, sizeof text, NULL, 127);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 127), LINE_EDIT_SAME);
}

static void enter_accepts_esc_and_ctrl_g_cancel(void)
{
    char text[32] = "x";
    CHECK_INT(line_edit_key(text, sizeof text, NULL, '\n'), LINE_EDIT_ACCEPT);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, '\r'), LINE_EDIT_ACCEPT);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, KEY_FUNC_FLAG | KEY_ENTER), LINE_EDIT_ACCEPT);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 27), LINE_EDIT_CANCEL);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 7), LINE_EDIT_CANCEL);
    CHECK_STR(text, "x");
}

static void other_keys_are_the_callers_and_change_nothing(void)
{
    char text[32] = "x";
    CHECK_INT(line_edit_key(text, sizeof text, NULL, KEY_FUNC_FLAG | KEY_F(3)), LINE_EDIT_OTHER);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, KEY_FUNC_FLAG | KEY_DOWN), LINE_EDIT_OTHER);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0x0e), LINE_EDIT_OTHER); /* Ctrl-N is no editing key */
    CHECK_INT(line_edit_key(text, sizeof text, NULL, LINE_EDIT_ALT | 'x'), LINE_EDIT_OTHER);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0x9b), LINE_EDIT_OTHER); /* a C1 control is no character */
    CHECK_STR(text, "x");
}

static void characters_are_appended_as_utf8_while_they_fit(void)
{
    char text[6] = "";
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0xe9), LINE_EDIT_CHANGED);
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 0x65e5), LINE_EDIT_CHANGED);
    CHECK_STR(text, "\xc3\xa9\xe6\x97\xa5");
    CHECK_INT(line_edit_key(text, sizeof text, NULL, 'a'), LINE_EDIT_SAME); /* full: 5 bytes and the NUL */
    CHECK_STR(text, "\xc3\xa9\xe6\x97\xa5");
}

/* keys typed at cursor *c: each a character, or one of the codes below */
static void keys(char *text, size_t size, size_t *c, const int *k)
{
    for (; *k; k++) line_edit_key(text, size, c, *k);
}
#define K(k) (KEY_FUNC_FLAG | (k))

static void the_cursor_moves_and_characters_go_in_at_it(void)
{
    char text[32] = "lined-bbb";
    size_t c = strlen(text);
    CHECK_INT(line_edit_key(text, sizeof text, &c, K(KEY_LEFT)), LINE_EDIT_SAME);
    CHECK_INT((int)c, 8);
    keys(text, sizeof text, &c, (const int[]){K(KEY_HOME), 'x', K(KEY_RIGHT), 0x06, 'y', 0});
    CHECK_STR(text, "xliyned-bbb");
    CHECK_INT((int)c, 4);
    keys(text, sizeof text, &c, (const int[]){0x05, 'E', 0x01, 'A', 0x02, 0x02, 'B', 0});
    CHECK_STR(text, "BAxliyned-bbbE");
    keys(text, sizeof text, &c, (const int[]){K(KEY_END), K(KEY_RIGHT), 'z', 0});
    CHECK_STR(text, "BAxliyned-bbbEz");
    CHECK_INT((int)c, 15);
}

static void delete_and_ctrl_d_remove_under_the_cursor_backspace_before_it(void)
{
    char text[32] = "abcd";
    size_t c = 2;
    CHECK_INT(line_edit_key(text, sizeof text, &c, K(KEY_DC)), LINE_EDIT_CHANGED);
    CHECK_STR(text, "abd");
    CHECK_INT(line_edit_key(text, sizeof text, &c, 0x04), LINE_EDIT_CHANGED);
    CHECK_STR(text, "ab");
    CHECK_INT(line_edit_key(text, sizeof text, &c, 0x04), LINE_EDIT_SAME); /* at the end */
    c = 1;
    CHECK_INT(line_edit_key(text, sizeof text, &c, 127), LINE_EDIT_CHANGED);
    CHECK_STR(text, "b");
    CHECK_INT((int)c, 0);
    CHECK_INT(line_edit_key(text, sizeof text, &c, 127), LINE_EDIT_SAME);
}

static void alt_b_and_alt_f_move_by_words_alt_d_removes_one(void)
{
    char text[40] = "sleeper lined-aaa x";
    size_t c = strlen(text);
    line_edit_key(text, sizeof text, &c, LINE_EDIT_ALT | 'b');
    CHECK_INT((int)c, 18);
    line_edit_key(text, sizeof text, &c, LINE_EDIT_ALT | 'b');
    CHECK_INT((int)c, 14); /* "aaa": words are letters and digits, as readline's */
    line_edit_key(text, sizeof text, &c, LINE_EDIT_ALT | 'B');
    CHECK_INT((int)c, 8);
    line_edit_key(text, sizeof text, &c, LINE_EDIT_ALT | 'f');
    CHECK_INT((int)c, 13);
    CHECK_INT(line_edit_key(text, sizeof text, &c, LINE_EDIT_ALT | 'd'), LINE_EDIT_CHANGED);
    CHECK_STR(text, "sleeper lined x");
}

static void ctrl_u_ctrl_k_and_ctrl_w_cut_at_the_cursor(void)
{
    char text[32] = "one two three";
    size_t c = 7;
    CHECK_INT(line_edit_key(text, sizeof text, &c, 0x17), LINE_EDIT_CHANGED);
    CHECK_STR(text, "one  three");
    CHECK_INT((int)c, 4);
    CHECK_INT(line_edit_key(text, sizeof text, &c, 0x0b), LINE_EDIT_CHANGED);
    CHECK_STR(text, "one ");
    c = 2;
    CHECK_INT(line_edit_key(text, sizeof text, &c, 0x15), LINE_EDIT_CHANGED);
    CHECK_STR(text, "e ");
    CHECK_INT((int)c, 0);
}

static void the_cursor_steps_over_whole_utf8_characters(void)
{
    char text[32] = "a\xc3\xa9z";
    size_t c = 4;
    line_edit_key(text, sizeof text, &c, K(KEY_LEFT));
    line_edit_key(text, sizeof text, &c, K(KEY_LEFT));
    CHECK_INT((int)c, 1);
    CHECK_INT(line_edit_columns(text, 3), 2);
    line_edit_key(text, sizeof text, &c, 0x04);
    CHECK_STR(text, "az");
    c = 99; /* set beyond the text: back to its end */
    line_edit_key(text, sizeof text, &c, 'q');
    CHECK_STR(text, "azq");
    snprintf(text, sizeof text, "a\xc3\xa9");
    c = 2; /* inside a character: back to its start */
    line_edit_key(text, sizeof text, &c, 'b');
    CHECK_STR(text, "ab\xc3\xa9");
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
    RUN(the_cursor_moves_and_characters_go_in_at_it);
    RUN(delete_and_ctrl_d_remove_under_the_cursor_backspace_before_it);
    RUN(alt_b_and_alt_f_move_by_words_alt_d_removes_one);
    RUN(ctrl_u_ctrl_k_and_ctrl_w_cut_at_the_cursor);
    RUN(the_cursor_steps_over_whole_utf8_characters);
    CHECK_EXIT();
}
