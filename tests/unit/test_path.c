/* test_path.c - paths as strings: append, lexical steps and normalisation,
 * "is below", the directory part. */
#include <errno.h>
#include <string.h>

#include "common/path.h"
#include "tap.h"

static bool normalises_to(const char *in, const char *want)
{
	char out[64];
	int n = path_normalise(in, out, sizeof(out));

	if (n < 0 || strcmp(out, want) != 0 || (size_t)n != strlen(want)) {
		printf("#   '%s' -> %d '%s', expected '%s'\n", in, n, n < 0 ? "" : out, want);
		return false;
	}
	return true;
}

static void test_append(void)
{
	char buf[8] = "";
	size_t len = 0;

	ok(path_append(buf, sizeof(buf), &len, "ab", 2) == 0 && !strcmp(buf, "ab") && len == 2,
	   "append to the empty path adds no separator");
	ok(path_append(buf, sizeof(buf), &len, "cd", 2) == 0 && !strcmp(buf, "ab/cd") &&
		   len == 5,
	   "append adds one separator");
	ok(path_append(buf, sizeof(buf), &len, "ef", 2) == -ENAMETOOLONG &&
		   !strcmp(buf, "ab/cd") && len == 5,
	   "append that does not fit leaves the path as it was");
	strcpy(buf, "/");
	len = 1;
	ok(path_append(buf, sizeof(buf), &len, "x", 1) == 0 && !strcmp(buf, "/x"),
	   "append to '/' adds no second slash");
}

static void test_normalise(void)
{
	char out[8];

	ok(normalises_to("a/./b//c/", "a/b/c"), "slashes folded, '.' dropped");
	ok(normalises_to("a/b/../c", "a/c"), "'..' drops a component");
	ok(normalises_to("a/..", ""), "back to the top is the empty path");
	ok(normalises_to("", ""), "the empty path stays empty");
	ok(normalises_to("/", "/"), "the root stays the root");
	ok(normalises_to("/a/../../b", "/b"), "'..' at the root stays there");
	ok(normalises_to("//x/./y/..", "/x"), "an absolute path stays absolute");
	ok(path_normalise("a/../..", out, sizeof(out)) == -EXDEV,
	   "a relative path leaving its top is -EXDEV");
	ok(path_normalise("abcdefgh", out, sizeof(out)) == -ENAMETOOLONG,
	   "a result without room is -ENAMETOOLONG");
	ok(normalises_to("a/b/../../c/.", "c"), "several steps in a row");
}

static void test_step(void)
{
	char buf[16] = "a";
	size_t len = 1;

	ok(path_step(buf, sizeof(buf), &len, "b", 1) == 1 && !strcmp(buf, "a/b"),
	   "a name is appended (1)");
	ok(path_step(buf, sizeof(buf), &len, ".", 1) == 0 && !strcmp(buf, "a/b"),
	   "'.' does nothing (0)");
	ok(path_step(buf, sizeof(buf), &len, "..", 2) == 0 && !strcmp(buf, "a") && len == 1,
	   "'..' steps back (0)");
	ok(path_step(buf, sizeof(buf), &len, "..", 2) == 0 && !strcmp(buf, "") && len == 0,
	   "'..' to the top");
	ok(path_step(buf, sizeof(buf), &len, "..", 2) == -EXDEV && len == 0,
	   "'..' above the top is -EXDEV");
}

static void test_below(void)
{
	const char *r;

	r = path_below("/src/a/b", "/src");
	ok(r && !strcmp(r, "a/b"), "below gives the rest");
	r = path_below("/src", "/src");
	ok(r && !strcmp(r, ""), "a directory is below itself, with nothing left");
	ok(!path_below("/srcx/a", "/src"), "a sibling with a common prefix is not below");
	ok(!path_below("/sr", "/src"), "a shorter path is not below");
	r = path_below("/etc/x", "/");
	ok(r && !strcmp(r, "etc/x"), "everything is below '/'");
	r = path_below("a/b", "");
	ok(r && !strcmp(r, "a/b"), "everything relative is below ''");
	r = path_below("a/b", "a");
	ok(r && !strcmp(r, "b"), "relative paths too");
}

static void test_dirlen(void)
{
	ok(path_dirlen("a/b/c") == 3, "dirlen of a/b/c is 3");
	ok(path_dirlen("a") == 0, "dirlen of a name is 0");
	ok(path_dirlen("/a") == 0, "dirlen of /a is 0");
}

int main(void)
{
	test_append();
	test_normalise();
	test_step();
	test_below();
	test_dirlen();
	return tap_done();
}
