/* test_stats.c - the request counters: a handler's timer counts once on
 * every way out of its scope, the JSON file names every request kind with
 * its count and time, replaces the previous copy whole, and a path that
 * cannot be written is an error that leaves nothing behind. */
#include "scratch.h"
#include "stats.h"
#include "tap.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static int handler(struct sfs_stats *s, int way)
{
	SFS_TIME_REQUEST(s, OPEN);
	if (way == 0)
		return 0;
	struct timespec ts = {0, 2 * 1000 * 1000};
	nanosleep(&ts, NULL);
	return way;
}

static cJSON *load(const char *path)
{
	char buf[16384];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return cJSON_Parse(buf);
}

static long field(const cJSON *o, const char *req, const char *what)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "requests");
	const cJSON *v =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, req), what);
	return cJSON_IsNumber(v) ? (long)v->valuedouble : -1;
}

int main(void)
{
	static struct sfs_stats s;
	char path[512], tmp[600];
	const char *dir = scratch_dir();

	handler(&s, 0);
	handler(&s, 1);
	handler(&s, 2);
	ok_eq_long(atomic_load(&s.count[SFS_REQ_OPEN]), 3, "a timer counts once per way out");
	ok(atomic_load(&s.nsec[SFS_REQ_OPEN]) >= 4 * 1000 * 1000,
	   "it adds the time spent (>= 4 ms for two 2 ms sleeps: %llu ns)",
	   (unsigned long long)atomic_load(&s.nsec[SFS_REQ_OPEN]));
	ok_eq_long(atomic_load(&s.count[SFS_REQ_RELEASE]), 0, "other kinds stay at zero");

	snprintf(path, sizeof(path), "%s/stats.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	atomic_store(&s.host_events, 7);
	ok_eq_long(sfs_stats_write(&s, 5, path), 0, "the counters are written");
	cJSON *o = load(path);
	ok(o != NULL, "as one JSON object");
	const cJSON *serial = cJSON_GetObjectItemCaseSensitive(o, "serial");
	ok_eq_long(cJSON_IsNumber(serial) ? serial->valuedouble : -1, 5, "with the serial");
	const cJSON *events = cJSON_GetObjectItemCaseSensitive(o, "host_events");
	ok_eq_long(cJSON_IsNumber(events) ? events->valuedouble : -1, 7,
		   "with the host events heard");
	ok_eq_long(field(o, "open", "count"), 3, "open's count");
	ok(field(o, "open", "usec") >= 4000, "open's time in microseconds");
	static const char *const every[] = {
		"lookup",  "forget",	  "getattr",	     "setattr",	   "mkdir",
		"unlink",  "rename",	  "create",	     "read",	   "write",
		"release", "readdirplus", "copy_file_range", "removexattr"};
	int named = 0;
	for (size_t i = 0; i < sizeof(every) / sizeof(every[0]); i++)
		named += field(o, every[i], "count") == 0;
	ok_eq_long(named, (long)(sizeof(every) / sizeof(every[0])),
		   "every request kind is named, unused ones with 0");
	cJSON_Delete(o);

	atomic_fetch_add(&s.count[SFS_REQ_OPEN], 1);
	ok_eq_long(sfs_stats_write(&s, 6, path), 0, "a second copy replaces the first");
	o = load(path);
	ok_eq_long(field(o, "open", "count"), 4, "... and has the new counts");
	cJSON_Delete(o);
	struct stat st;
	ok(stat(tmp, &st) < 0 && errno == ENOENT, "no temporary file is left");

	char bad[600];
	snprintf(bad, sizeof(bad), "%s/missing/stats.json", dir);
	ok_eq_long(sfs_stats_write(&s, 1, bad), -ENOENT, "a missing directory is -ENOENT");
	return tap_done();
}
