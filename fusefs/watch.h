/* watch.h - hearing about changes made on the host. With inotify on the
 * directories the kernel has looked up, a host-side create, delete, rename,
 * edit or chmod is turned at once into a kernel cache invalidation, so the
 * kernel may cache entries and attributes of watched directories for long
 * and still show host changes within moments. Where no notification can be
 * had (the portable flavour, a network filesystem, a directory that cannot
 * be watched), entries are cached only briefly. */
#ifndef SANDYFS_WATCH_H
#define SANDYFS_WATCH_H

#include "inode.h"
#include "stats.h"

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdbool.h>

struct sfs_watch;

/* -EOPNOTSUPP when SOURCE (ROOTFD) cannot be watched reliably. What is
 * heard and invalidated is counted in STATS. */
int sfs_watch_new(struct sfs_table *t, int rootfd, struct sfs_stats *stats, struct sfs_watch **out);
/* Starts delivering invalidations to SE; stop before unmounting. */
int sfs_watch_start(struct sfs_watch *w, struct fuse_session *se);
void sfs_watch_free(struct sfs_watch *w);

/* The kernel can let a cached name expire without unhashing it (a name a
 * process sits in stays its cwd while it is checked again): used for
 * every host change from then on. */
void sfs_watch_set_expire_only(struct sfs_watch *w, bool expire_only);

/* FN(CTX, RELPATH, PARENTFD) is told of every name heard created, removed
 * or moved in SOURCE (outside the store), from the watcher's thread, with
 * an fd of its directory valid for the call (or -1). Set before starting. */
void sfs_watch_on_name(struct sfs_watch *w,
		       void (*fn)(void *ctx, const char *relpath, int parentfd), void *ctx);

/* Watches directory NAME in DIRFD (NULL name: DIRFD itself), known as N.
 * Returns whether N is now watched. */
bool sfs_watch_dir(struct sfs_watch *w, struct sfs_node *n, int dirfd, const char *name);

#endif
