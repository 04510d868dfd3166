/* deferred.c - see deferred.h. */

#include "deferred.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct sfs_deferred {
	struct fuse_session *se;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	uint64_t *ids; /* queued, each once */
	size_t n, cap;
	bool stop;
};

static void *deferred_main(void *arg)
{
	struct sfs_deferred *d = arg;
	uint64_t *batch = NULL;
	size_t n = 0;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (d->n == 0 && !d->stop)
			pthread_cond_wait(&d->wake, &d->lock);
		if (d->n == 0)
			break;
		/* Sent unlocked: each may wait for a reply in flight. */
		free(batch);
		batch = d->ids;
		n = d->n;
		d->ids = NULL;
		d->n = d->cap = 0;
		pthread_mutex_unlock(&d->lock);
		for (size_t i = 0; i < n; i++)
			fuse_lowlevel_notify_inval_inode(d->se, batch[i], 0, 0);
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	free(batch);
	return NULL;
}

int sfs_deferred_start(struct fuse_session *se, struct sfs_deferred **out)
{
	struct sfs_deferred *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	d->se = se;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	r = pthread_create(&d->thread, NULL, deferred_main, d);
	if (r != 0) {
		pthread_cond_destroy(&d->wake);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return -r;
	}
	*out = d;
	return 0;
}

void sfs_deferred_inval_data(struct sfs_deferred *d, uint64_t ino)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	bool queued = false;
	for (size_t i = 0; i < d->n && !queued; i++)
		queued = d->ids[i] == ino;
	if (!queued && d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		uint64_t *ids = realloc(d->ids, cap * sizeof(*ids));
		if (ids) {
			d->ids = ids;
			d->cap = cap;
		}
	}
	/* Out of memory the page stays: the host file is unchanged all the
	 * same, and a later read past the cache shows it. */
	if (!queued && d->n < d->cap)
		d->ids[d->n++] = ino;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
}

void sfs_deferred_inval_now(struct sfs_deferred *d, uint64_t ino)
{
	if (d)
		fuse_lowlevel_notify_inval_inode(d->se, ino, 0, 0);
}

void sfs_deferred_stop(struct sfs_deferred *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
#ifdef __GLIBC__
	/* An invalidation waiting for a write-back whose reply never reached
	 * the kernel ends only at the unmount, which comes after this: the
	 * thread is left to it rather than waited for. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	if (pthread_timedjoin_np(d->thread, NULL, &until) != 0) {
		pthread_detach(d->thread);
		return;
	}
#else
	pthread_join(d->thread, NULL);
#endif
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	free(d->ids);
	free(d);
}
