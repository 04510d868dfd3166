/* deferred.h - kernel invalidations that must reach the kernel after the
 * reply to the request that calls for them: sent at once by a worker
 * whose reply is in the kernel already, else queued for a thread of their
 * own. Dropping a file's cached pages waits for the write-back the request
 * being answered belongs to; over io_uring a reply reaches the kernel only
 * when the worker returns to its ring, so a worker that invalidated
 * before returning would wait for itself. */
#ifndef SANDYFS_DEFERRED_H
#define SANDYFS_DEFERRED_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdint.h>

struct sfs_deferred;

/* Starts the thread that sends to SE. */
int sfs_deferred_start(struct fuse_session *se, struct sfs_deferred **out);

/* Queues dropping node INO's cached data (and attributes). Never waits
 * for the kernel. */
void sfs_deferred_inval_data(struct sfs_deferred *d, uint64_t ino);

/* Drops node INO's cached data now, from the calling thread: for a
 * worker whose reply is already in the kernel. */
void sfs_deferred_inval_now(struct sfs_deferred *d, uint64_t ino);

/* Sends what is queued, stops the thread, frees D (NULL is fine). */
void sfs_deferred_stop(struct sfs_deferred *d);

#endif
