/* test_quote.c - common/quote.c: what a name the agent chose looks like on
 * a terminal (readable text as it is; control characters, bytes that are
 * not UTF-8 and the format characters that reorder or hide text quoted
 * with C escapes), and in JSON (always UTF-8, the bytes recoverable). */
#include "common/quote.h"
#include "tap.h"
#include "utf8.h"

#include <cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Shows LEN bytes at S and compares with WANT. */
static void shows(const char *s, size_t len, const char *want, const char *what)
{
	char *got = quote_mem(s, len);

	if (!ok(got && strcmp(got, want) == 0, "%s: shown as %s", what, want))
		printf("#   got: %s\n", got ? got : "(null)");
	free(got);
}

#define SHOWS(lit, want, what) shows(lit, sizeof(lit) - 1, want, what)

static void test_readable(void)
{
	SHOWS("src/main.c", "src/main.c", "a plain path");
	SHOWS("", "", "the empty string");
	SHOWS("caf\xc3\xa9/na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac.txt",
	      "caf\xc3\xa9/na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac.txt", "accents and CJK");
	SHOWS("\xf0\x9f\x98\x80 \xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a",
	      "\xf0\x9f\x98\x80 \xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a", "an emoji and Arabic letters");
	SHOWS("it's a (b) [c] $d ~e", "it's a (b) [c] $d ~e", "punctuation");
	/* The neighbours of the ranges that are quoted. */
	SHOWS("\xe2\x80\x8a\xe2\x80\x90\xe2\x80\xaf\xe2\x81\x9f\xe2\x81\xaa\xef\xbb\xbe",
	      "\xe2\x80\x8a\xe2\x80\x90\xe2\x80\xaf\xe2\x81\x9f\xe2\x81\xaa\xef\xbb\xbe",
	      "U+200A, U+2010, U+202F, U+205F, U+206A, U+FEFE");
	SHOWS("\xc2\xa0\xd8\x9b\xd8\x9d", "\xc2\xa0\xd8\x9b\xd8\x9d", "U+00A0, U+061B, U+061D");
	ok(!quote_needed("src/x.c", 7), "a plain path needs no quoting");
	char *none = quote_str(NULL);
	ok(none && !strcmp(none, ""), "no string is shown as the empty one");
	free(none);
}

static void test_controls(void)
{
	SHOWS("A  notes\033]52;c;aGVsbG8=\a\033[1A\033[2K",
	      "\"A  notes\\033]52;c;aGVsbG8=\\a\\033[1A\\033[2K\"", "OSC 52 and CSI");
	SHOWS("a\tb\nc\rd\be\vf\fg", "\"a\\tb\\nc\\rd\\be\\vf\\fg\"", "C escapes");
	SHOWS("x\001y\037z\177", "\"x\\001y\\037z\\177\"", "C0 and DEL in octal");
	SHOWS("x\0y", "\"x\\000y\"", "a NUL byte");
	SHOWS("csi\xc2\x9b"
	      "2J osc\xc2\x9d",
	      "\"csi\\302\\2332J osc\\302\\235\"", "C1 controls as UTF-8 (U+009B, U+009D)");
	SHOWS("\xc2\x80\xc2\x9f", "\"\\302\\200\\302\\237\"", "U+0080 and U+009F");
	SHOWS("say \"hi\"", "\"say \\\"hi\\\"\"", "a double quote");
	SHOWS("a\\b", "\"a\\\\b\"", "a backslash");
	ok(quote_needed("\"x\"", 3), "a name that looks quoted is quoted");
}

static void test_invalid(void)
{
	SHOWS("src/bad\377name", "\"src/bad\\377name\"", "a 0xff byte");
	SHOWS("\xc0\xaf", "\"\\300\\257\"", "an overlong '/'");
	SHOWS("\xe0\x80\xaf", "\"\\340\\200\\257\"", "an overlong three-byte form");
	SHOWS("\xed\xa0\x80", "\"\\355\\240\\200\"", "a surrogate");
	SHOWS("\xf4\x90\x80\x80", "\"\\364\\220\\200\\200\"", "above U+10FFFF");
	SHOWS("ok\xe2\x80", "\"ok\\342\\200\"", "a sequence cut short");
	SHOWS("\x80x", "\"\\200x\"", "a stray continuation byte");
	SHOWS("\xe9t\xc3\xa9", "\"\\351t\xc3\xa9\"",
	      "Latin-1 beside UTF-8: the UTF-8 stays readable");
}

static void test_format_characters(void)
{
	static const struct {
		const char *s, *want, *what;
	} cases[] = {
		{"\xd8\x9c", "\"\\330\\234\"", "U+061C"},
		{"\xe2\x80\x8b", "\"\\342\\200\\213\"", "U+200B"},
		{"\xe2\x80\x8f", "\"\\342\\200\\217\"", "U+200F"},
		{"\xe2\x80\xa8", "\"\\342\\200\\250\"", "U+2028"},
		{"\xe2\x80\xa9", "\"\\342\\200\\251\"", "U+2029"},
		{"\xe2\x80\xaa", "\"\\342\\200\\252\"", "U+202A"},
		{"\xe2\x80\xae", "\"\\342\\200\\256\"", "U+202E"},
		{"\xe2\x81\xa0", "\"\\342\\201\\240\"", "U+2060"},
		{"\xe2\x81\xa9", "\"\\342\\201\\251\"", "U+2069"},
		{"\xef\xbb\xbf", "\"\\357\\273\\277\"", "U+FEFF"},
		{"\xef\xbf\xb9", "\"\\357\\277\\271\"", "U+FFF9"},
		{"\xf3\xa0\x80\x81", "\"\\363\\240\\200\\201\"", "U+E0001"},
		{"\xf3\xa0\x81\xbf", "\"\\363\\240\\201\\277\"", "U+E007F"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		shows(cases[i].s, strlen(cases[i].s), cases[i].want, cases[i].what);
	/* A right-to-left override that makes "exe.txt" of "txt.exe". */
	SHOWS("doc\xe2\x80\xae"
	      "exe.txt",
	      "\"doc\\342\\200\\256exe.txt\"", "U+202E in a name");
	SHOWS(".en\xe2\x80\x8bvrc", "\".en\\342\\200\\213vrc\"", "a zero-width space");
	SHOWS("\xc3\xa9\xe2\x80\x8b", "\"\xc3\xa9\\342\\200\\213\"",
	      "beside a format character, readable text stays readable");
}

static void test_json(void)
{
	const char *bad = "src/\xff\xfe"
			  "a\033[2K\xc3\xa9";
	cJSON *o = cJSON_CreateObject();
	char *text, *back = NULL;
	size_t len = 0;

	ok(quote_json_add(o, "path", bad) == 0, "a name that is not UTF-8 is added");
	ok(quote_json_add(o, "target", "plain \xc3\xa9") == 0, "a UTF-8 name is added");
	ok(quote_json_add(o, "none", NULL) == 0 && !cJSON_GetObjectItem(o, "none"),
	   "no string adds no field");
	text = cJSON_PrintUnformatted(o);
	ok(text && utf8_ok((const unsigned char *)text, strlen(text)), "the JSON is UTF-8: %s",
	   text ? text : "");
	ok(text && strstr(text, "\"path\":\"src/\xef\xbf\xbd\xef\xbf\xbd"
				"a\\u001b[2K\xc3\xa9\""),
	   "the text has U+FFFD for each stray byte, the rest as it was");
	ok(text && strstr(text, "\"path_hex\":\"7372632ffffe611b5b324bc3a9\""),
	   "path_hex holds the bytes");
	ok(text && !strstr(text, "target_hex"), "no _hex for a name that is UTF-8");

	cJSON *p = text ? cJSON_Parse(text) : NULL;
	ok(p && quote_json_get(p, "path", &back, &len) == 0 && len == strlen(bad) &&
		   memcmp(back, bad, len) == 0,
	   "the very bytes come back from path_hex");
	free(back);
	back = NULL;
	ok(p && quote_json_get(p, "target", &back, &len) == 0 && !strcmp(back, "plain \xc3\xa9") &&
		   len == 8,
	   "a UTF-8 name comes back from its text");
	free(back);
	back = NULL;
	ok(p && quote_json_get(p, "rule", &back, NULL) == -ENOENT && !back,
	   "a missing key is -ENOENT");
	cJSON_Delete(p);

	p = cJSON_Parse("{\"path\":\"x\",\"path_hex\":\"61zz\"}");
	ok(quote_json_get(p, "path", &back, NULL) == -EINVAL,
	   "a path_hex that is not hex is refused");
	cJSON_Delete(p);
	p = cJSON_Parse("{\"path\":\"x\",\"path_hex\":\"610062\"}");
	ok(quote_json_get(p, "path", &back, &len) == 0 && len == 3 && back[1] == '\0',
	   "a NUL in path_hex is kept, and counted");
	char *shown = back ? quote_mem(back, len) : NULL;
	ok(shown && !strcmp(shown, "\"a\\000b\""), "and shown escaped");
	free(shown);
	free(back);
	cJSON_Delete(p);
	free(text);
	cJSON_Delete(o);
}

int main(void)
{
	test_readable();
	test_controls();
	test_invalid();
	test_format_characters();
	test_json();
	return tap_done();
}
