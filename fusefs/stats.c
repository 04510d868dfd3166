/* stats.c - see stats.h. */

#include "stats.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const request_names[SFS_REQ_COUNT] = {
#define SFS_REQUEST_NAME(id, name) [SFS_REQ_##id] = name,
	SFS_REQUESTS(SFS_REQUEST_NAME)
#undef SFS_REQUEST_NAME
};

uint64_t sfs_stats_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sfs_stats_timer_stop(struct sfs_request_timer *t)
{
	uint64_t elapsed = sfs_stats_clock_ns() - t->start_ns;

	atomic_fetch_add_explicit(&t->stats->count[t->req], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&t->stats->nsec[t->req], elapsed, memory_order_relaxed);
}

int sfs_stats_write(const struct sfs_stats *stats, uint64_t serial, const char *path)
{
	char tmp[4096];
	int n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);

	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	FILE *f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f,
		"{\"serial\": %llu, \"host_events\": %llu, \"host_invalidations\": %llu, "
		"\"host_overflows\": %llu, \"requests\": {",
		(unsigned long long)serial, (unsigned long long)atomic_load(&stats->host_events),
		(unsigned long long)atomic_load(&stats->host_invalidations),
		(unsigned long long)atomic_load(&stats->host_overflows));
	for (int i = 0; i < SFS_REQ_COUNT; i++)
		fprintf(f, "%s\n  \"%s\": {\"count\": %llu, \"usec\": %llu}", i ? "," : "",
			request_names[i], (unsigned long long)atomic_load(&stats->count[i]),
			(unsigned long long)(atomic_load(&stats->nsec[i]) / 1000));
	fputs("\n}}\n", f);
	int r = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

struct sfs_stats_dump {
	const struct sfs_stats *stats;
	char *path;
	uint64_t serial;
	pthread_t thread;
};

static void *dump_thread(void *arg)
{
	struct sfs_stats_dump *d = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		/* Not cancelled half-way through a write (stdio and write()
		 * are cancellation points too). */
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		sfs_stats_write(d->stats, ++d->serial, d->path);
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	}
	return NULL;
}

int sfs_stats_dump_start(const struct sfs_stats *stats, const char *path,
			 struct sfs_stats_dump **out)
{
	struct sfs_stats_dump *d = calloc(1, sizeof(*d));
	sigset_t set;

	if (!d || !(d->path = strdup(path))) {
		free(d);
		return -ENOMEM;
	}
	d->stats = stats;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	int r = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (r == 0)
		r = pthread_create(&d->thread, NULL, dump_thread, d);
	if (r != 0) {
		free(d->path);
		free(d);
		return -r;
	}
	/* A file from the start: a reader need not wait for the first signal. */
	r = sfs_stats_write(stats, ++d->serial, path);
	if (r < 0) {
		sfs_stats_dump_stop(d);
		return r;
	}
	*out = d;
	return 0;
}

void sfs_stats_dump_stop(struct sfs_stats_dump *d)
{
	if (!d)
		return;
	pthread_cancel(d->thread);
	pthread_join(d->thread, NULL);
	sfs_stats_write(d->stats, ++d->serial, d->path);
	free(d->path);
	free(d);
}
