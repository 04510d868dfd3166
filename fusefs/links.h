/* links.h - the symlink index: every symlink in SOURCE (outside .git) with
 * its target, so that a change of one name can find the links whose
 * resolution it redirects (symchain.h) and have them judged again before
 * it is made. Seeded by one walk of SOURCE, in a thread of its own once the
 * daemon serves (a question waits for it; a question asked before the
 * thread was started makes the walk itself), kept current by the daemon's own
 * changes and by what the watcher hears of the host's, and bounded: past
 * SFS_LINKS_MAX links or SFS_LINKS_MAX_BYTES of paths and targets it stops
 * keeping count and says so, and the questions fail closed. */
#ifndef SANDYFS_LINKS_H
#define SANDYFS_LINKS_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/symchain.h"

#define SFS_LINKS_MAX	    200000
#define SFS_LINKS_MAX_BYTES (64u << 20)

struct sfs_links;

/* An index of SOURCE (ROOTFD, which must stay open), not walked yet. */
int sfs_links_new(int rootfd, struct sfs_links **out);
/* Starts the walk in a thread: after the daemon has detached, since a
 * fork keeps no thread but the caller's. Negative errno. */
int sfs_links_start(struct sfs_links *l);
void sfs_links_free(struct sfs_links *l);

/*
 * The links of the index whose resolution can change when any of
 * CHANGED[0..M) changes, directly or through one another, copied into
 * *OUT (*N of them; free with sfs_links_release). -EOVERFLOW when the
 * index stopped keeping count (every link cannot be known), -ENOMEM.
 * Waits for the first walk to end.
 */
int sfs_links_affected(struct sfs_links *l, const char *const *changed, size_t m,
		       struct sfs_link **out, size_t *n);
void sfs_links_release(struct sfs_link *v, size_t n);

/* What the daemon changed: PATH is a symlink to TARGET now; PATH (and
 * what was below it) is gone; what was at and below FROM is at and below
 * TO (what was at TO replaced); FROM and TO swapped. */
void sfs_links_set(struct sfs_links *l, const char *path, const char *target);
void sfs_links_remove(struct sfs_links *l, const char *path);
void sfs_links_move(struct sfs_links *l, const char *from, const char *to);
void sfs_links_exchange(struct sfs_links *l, const char *a, const char *b);

/* What the host may have changed at PATH (relative to SOURCE): read
 * again from SOURCE, and below it when it is a directory now. PARENTFD is
 * PATH's directory (the caller's; the watcher has it at hand, so a deep
 * path costs no walk from the root), or -1 to open it from the root. */
void sfs_links_host_changed(struct sfs_links *l, const char *path, int parentfd);

/* How many links are known; whether the index overflowed. */
size_t sfs_links_count(struct sfs_links *l, bool *overflowed);

#endif
