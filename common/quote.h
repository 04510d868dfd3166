/* quote.h - how a string someone else chose (a file name the agent made,
 * a branch, a commit subject, a field of the audit log) leaves sandy and
 * sandyfs: on a terminal, and in JSON.
 *
 * On a terminal, in the spirit of git's core.quotePath: a string that a
 * terminal or a reader would take for something else is shown in double
 * quotes with C escapes; any other string, readable UTF-8 included, is
 * shown as it is. Quoted are strings that hold
 *   - a control character: C0, DEL, and C1 (U+0080..U+009F) also as
 *     UTF-8, since terminals take both for escape sequences (OSC 52 sets
 *     the clipboard, CSI moves the cursor and erases lines);
 *   - bytes that are not UTF-8 (overlong forms and surrogates included);
 *   - a Unicode format character that reorders or hides text: U+061C,
 *     U+200B..U+200F, U+2028, U+2029, U+202A..U+202E, U+2060..U+2069,
 *     U+FEFF, the interlinear annotations U+FFF9..U+FFFB and the tags
 *     U+E0000..U+E007F;
 *   - a double quote or a backslash, so that a quoted form is never
 *     taken for a name that looks like one.
 * Inside the quotes: \a \b \t \n \v \f \r \" \\, and \ooo (three octal
 * digits) for every other byte of a control, a format character or an
 * invalid sequence; readable characters stay as they are.
 *
 * In JSON, which must be UTF-8: the text with U+FFFD in place of each
 * byte that belongs to no UTF-8 sequence, and, only when that changed
 * it, the string's bytes in hex under KEY_hex beside KEY, so that a
 * reader gets the very bytes back (quote_json_get). */
#ifndef SANDY_COMMON_QUOTE_H
#define SANDY_COMMON_QUOTE_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Whether LEN bytes at S must be quoted to be shown. */
bool quote_needed(const char *s, size_t len);

/* What to show for LEN bytes at S (or the string S, NULL as ""): a copy
 * of S when it needs no quoting, else its quoted form. malloc'ed; NULL
 * out of memory. */
char *quote_mem(const char *s, size_t len);
char *quote_str(const char *s);

/* A printf argument for the result of quote_str(): Q, or a stand-in when
 * quoting ran out of memory. */
static inline const char *quoted(const char *q)
{
	return q ? q : "(out of memory)";
}

/* Adds KEY with the string S to OBJ as described above (KEY_hex as well
 * when S is not UTF-8); nothing for S NULL. Negative errno. */
int quote_json_add(cJSON *obj, const char *key, const char *s);

/* The bytes of KEY in OBJ as quote_json_add() wrote them: KEY_hex's when
 * present, else KEY's text. *OUT is malloc'ed and NUL-terminated, *LEN
 * (when LEN is not NULL) its length, which counts any NUL that KEY_hex
 * holds. -ENOENT when OBJ has no string KEY, -EINVAL when KEY_hex is
 * not hex, -ENOMEM. */
int quote_json_get(const cJSON *obj, const char *key, char **out, size_t *len);

#endif
