/* test_audit.c - the audit log: one parseable JSON line per denial with
 * every field, and a rate limit that bounds a denial loop
 * while accounting for every record it drops. */
#include "audit.h"
#include "common/quote.h"
#include "scratch.h"
#include "tap.h"
#include "utf8.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct sfs_audit_record sample = {
	.op = "create",
	.path = "src/a/.envrc",
	.cls = "protected",
	.rule_file = "rules/base.json",
	.rule = ".envrc",
	.why = "direnv runs it \"on cd\"\n",
	.pid = 4242,
	.uid = 1000,
	.err = EROFS,
};

struct counts {
	long records, suppressed_lines, suppressed_sum, unparsable;
};

static struct counts read_log(const char *path, cJSON **first)
{
	struct counts c = {0};
	char line[8192];
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f)) {
		cJSON *o = cJSON_Parse(line);
		if (!o) {
			c.unparsable++;
			continue;
		}
		cJSON *sup = cJSON_GetObjectItem(o, "suppressed");
		if (sup) {
			c.suppressed_lines++;
			c.suppressed_sum += (long)sup->valuedouble;
			cJSON_Delete(o);
		} else {
			c.records++;
			if (first && !*first)
				*first = o;
			else
				cJSON_Delete(o);
		}
	}
	if (f)
		fclose(f);
	return c;
}

static bool has_string(cJSON *o, const char *key, const char *want)
{
	cJSON *v = cJSON_GetObjectItem(o, key);
	return cJSON_IsString(v) && strcmp(v->valuestring, want) == 0;
}

static void test_record(const char *dir)
{
	char path[512];
	struct sfs_audit *a;
	struct sfs_audit_limits lim = {.burst = 10, .rate = 10};
	cJSON *first = NULL;

	snprintf(path, sizeof(path), "%s/one.jsonl", dir);
	ok(sfs_audit_open(path, &lim, &a) == 0, "the audit log opens");
	sfs_audit_denial(a, &sample);
	sfs_audit_close(a);
	struct counts c = read_log(path, &first);
	ok(c.records == 1 && c.unparsable == 0, "one denial is one parseable line");
	ok(first && has_string(first, "op", "create") &&
		   has_string(first, "path", "src/a/.envrc") &&
		   has_string(first, "class", "protected") &&
		   has_string(first, "rule_file", "rules/base.json") &&
		   has_string(first, "rule", ".envrc") &&
		   has_string(first, "why", "direnv runs it \"on cd\"\n") &&
		   has_string(first, "errno", "EROFS"),
	   "the record carries op, path, class, rule, why and errno (quotes and newlines escaped)");
	ok(first && cJSON_GetObjectItem(first, "pid")->valuedouble == 4242 &&
		   cJSON_GetObjectItem(first, "uid")->valuedouble == 1000 &&
		   cJSON_IsString(cJSON_GetObjectItem(first, "time")),
	   "the record carries the caller's pid and uid and the time");
	cJSON_Delete(first);
}

/* Reads the file at PATH into BUF: whether it is UTF-8 (the audit log's
 * readers may be strict JSON parsers). */
static bool file_is_utf8(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return n > 0 && utf8_ok((const unsigned char *)buf, n);
}

static void test_not_utf8(const char *dir)
{
	char path[512], text[8192];
	struct sfs_audit *a;
	struct sfs_audit_limits lim = {.burst = 10, .rate = 10};
	struct sfs_audit_record r = sample;
	cJSON *first = NULL;
	char *back = NULL;
	size_t len = 0;
	const char *name = "src/\xff.envrc\033]52;c;aGk=\a";

	r.path = name;
	r.target = "ok/\xc3\xa9";
	snprintf(path, sizeof(path), "%s/bytes.jsonl", dir);
	ok(sfs_audit_open(path, &lim, &a) == 0, "the audit log opens");
	sfs_audit_denial(a, &r);
	sfs_audit_close(a);
	struct counts c = read_log(path, &first);
	ok(c.records == 1 && c.unparsable == 0, "a name with a 0xff byte is one parseable line");
	ok(file_is_utf8(path, text, sizeof(text)), "the line is UTF-8: %s", text);
	ok(strstr(text, "\"path\":\"src/\xef\xbf\xbd.envrc\\u001b]52;c;aGk=\\u0007\"") != NULL,
	   "path holds U+FFFD for the byte, the controls escaped as JSON does");
	ok(first && quote_json_get(first, "path", &back, &len) == 0 && len == strlen(name) &&
		   memcmp(back, name, len) == 0,
	   "path_hex gives the very bytes back");
	ok(first && !cJSON_GetObjectItem(first, "target_hex") &&
		   has_string(first, "target", "ok/\xc3\xa9"),
	   "a UTF-8 target is as it was, with no target_hex");
	free(back);
	cJSON_Delete(first);
}

static void test_rate_limit(const char *dir)
{
	char path[512];
	struct sfs_audit *a;
	struct sfs_audit_limits lim = {.burst = 100, .rate = 50};
	struct timespec t0, t1;
	const long n = 100000;

	snprintf(path, sizeof(path), "%s/loop.jsonl", dir);
	sfs_audit_open(path, &lim, &a);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++)
		sfs_audit_denial(a, &sample);
	uint64_t written, suppressed;
	sfs_audit_counts(a, &written, &suppressed);
	sfs_audit_close(a);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	struct counts c = read_log(path, NULL);
	long bound = (long)(lim.burst + lim.rate * secs) + 2;
	ok(c.records + c.suppressed_lines <= bound,
	   "100,000 denials write at most burst + rate x time lines (%ld <= %ld)",
	   c.records + c.suppressed_lines, bound);
	ok(c.records + c.suppressed_sum == n,
	   "every denial is either written or counted as suppressed (%ld + %ld == %ld)", c.records,
	   c.suppressed_sum, n);
	ok(c.unparsable == 0, "every line parses");
	ok((long)suppressed == c.suppressed_sum, "the daemon's counter agrees with the log");
}

int main(void)
{
	const char *dir = scratch_dir();

	test_record(dir);
	test_not_utf8(dir);
	test_rate_limit(dir);
	return tap_done();
}
