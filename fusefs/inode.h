/* inode.h - the inode table: which host inode each FUSE node id stands for,
 * where in SOURCE it was last seen, and a bounded cache of directory fds.
 *
 * No node holds an fd of its own. A node is located by its parent and its
 * name; the host is reached through the parent's "anchor", a directory fd
 * from a small LRU cache that is reopened beneath SOURCE on demand (with
 * O_NOFOLLOW on every component) and verified against the node's identity.
 * So the daemon's fd count is bounded however many inodes the kernel
 * remembers, and a directory the host replaced by a symlink is never
 * followed: the reopen fails and the node answers ESTALE.
 *
 * Identity is (st_dev, st_ino, birth time where the filesystem has one), so
 * a host inode number reused for a new file is a new node with a new
 * generation, never the old one. */
#ifndef SANDYFS_INODE_H
#define SANDYFS_INODE_H

#include "host/compat.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct sfs_table;
struct sfs_node;

/* A pinned directory fd: valid until sfs_anchor_put. */
struct sfs_anchor {
	struct sfs_table *table;
	struct sfs_node *node; /* NULL for the root and after put */
	int fd;
	bool own_fd; /* an fd of no node's, closed by put */
};

/* Where a node lives on the host: its parent's anchor and its name ("." for
 * the root, whose anchor is SOURCE itself). */
struct sfs_location {
	struct sfs_anchor dir;
	char name[NAME_MAX + 1];
};

/* The identity and kind of a node, copied out for the caller. */
struct sfs_node_info {
	mode_t type; /* S_IFMT bits */
	dev_t dev;
	ino_t ino;
	uint64_t generation;
	bool covered;	  /* host changes to it are reported (watch.h) */
	int overlay_fd;	  /* a host file served in its place (guard.h), or -1 */
	int orphan_fd;	  /* see sfs_node_adopt_orphan_fd, or -1 */
	unsigned handles; /* file handles the kernel holds on it */
	bool in_store;	  /* in the project's store (sfs_table_set_store) */
	bool store_base;  /* the private directory itself */
	int owned;	  /* created through the mount: 1, 0, or -1 unknown */
	int mirror;	  /* a directory whose store mirror exists: 1, 0, or -1 */
};

/* ROOTFD is an anchor fd on SOURCE, owned by the table from now on. At
 * most ANCHOR_LIMIT directory fds are cached (pinned ones may briefly
 * exceed it). */
int sfs_table_new(int rootfd, const struct sfs_stat *root_st, unsigned anchor_limit,
		  struct sfs_table **out);
void sfs_table_free(struct sfs_table *t);

int sfs_table_rootfd(const struct sfs_table *t);
struct sfs_node *sfs_table_root(struct sfs_table *t);

/* FUSE node ids: 1 is the root, every other id is the node's address (the
 * kernel only ever sends ids it was given and has not forgotten). */
uint64_t sfs_node_id(const struct sfs_node *n);
struct sfs_node *sfs_node_from_id(struct sfs_table *t, uint64_t id);
void sfs_node_info(struct sfs_table *t, const struct sfs_node *n, struct sfs_node_info *out);

/* The kernel now knows PARENT/NAME as the inode described by ST: returns
 * its node with one more lookup reference. STORE_BASE: the inode is a
 * private directory in the store (sfs_table_set_store), not PARENT's entry
 * NAME in SOURCE; what is below it is in the store too. HANDLES: open
 * handles the caller is about to give out on it, counted in the same step
 * (sfs_node_handles), so that a removal racing with a create sees them. */
struct sfs_node *sfs_table_intern(struct sfs_table *t, struct sfs_node *parent, const char *name,
				  const struct sfs_stat *st, bool store_base, unsigned handles);

/* The kernel dropped NLOOKUP references. */
void sfs_table_forget(struct sfs_table *t, struct sfs_node *n, uint64_t nlookup);

/* Keeping names true after changes made through the mount. ST describes
 * the inode at the name before the change (NULL when there was none). */
void sfs_table_note_unlink(struct sfs_table *t, struct sfs_node *parent, const char *name,
			   const struct sfs_stat *st);
/* PARENT/NAME (ST) moved from SOURCE into the store as NEWPARENT/NEWNAME:
 * a directory keeps its node (the kernel goes on using it, as cargo does
 * the target/ it renamed into place), it and every node below it now in
 * the store; anything else loses the name, and the kernel, told ESTALE,
 * looks it up again where it is now. */
void sfs_table_note_moved_away(struct sfs_table *t, struct sfs_node *parent, const char *name,
			       const struct sfs_stat *st, struct sfs_node *newparent,
			       const char *newname);
void sfs_table_note_rename(struct sfs_table *t, struct sfs_node *oldparent, const char *oldname,
			   const struct sfs_stat *old_st, struct sfs_node *newparent,
			   const char *newname, const struct sfs_stat *new_st, bool exchange);

/* Pins an fd on directory DIR. Negative errno: -ESTALE when DIR is no longer
 * where the table last saw it. */
int sfs_anchor_get(struct sfs_table *t, struct sfs_node *dir, struct sfs_anchor *out);
void sfs_anchor_put(struct sfs_anchor *a);
#define cleanup_anchor __attribute__((cleanup(sfs_anchor_put)))

/* Pins the parent anchor of N and copies N's name (for the root and a
 * private directory: its own anchor and "."). */
int sfs_locate(struct sfs_table *t, struct sfs_node *n, struct sfs_location *out);
static inline void sfs_location_put(struct sfs_location *l)
{
	sfs_anchor_put(&l->dir);
}
#define cleanup_location __attribute__((cleanup(sfs_location_put)))

/* N's path relative to SOURCE ("" for the root), joined with NAME unless
 * NAME is NULL, into BUF: for the policy and for messages. -ESTALE when N
 * has no known name, -ENAMETOOLONG. */
int sfs_node_relpath(struct sfs_table *t, struct sfs_node *n, const char *name, char *buf,
		     size_t size);

/* The path of N's I-th other name (a hard link the kernel also knows):
 * -ENOENT past the last one. */
int sfs_node_alias_relpath(struct sfs_table *t, struct sfs_node *n, unsigned i, char *buf,
			   size_t size);

/* Whether what FD has open (FD >= 0), else what is at LOC's name, is the
 * inode N stands for (dev, ino, type, birth time): 0 with its attributes in
 * *ST, -ESTALE when the name leads nowhere or to another inode, another
 * negative errno when it cannot be told. The one identity check of a node
 * found on the host. */
int sfs_node_found(struct sfs_table *t, struct sfs_node *n, const struct sfs_location *loc, int fd,
		   struct sfs_stat *st);

/* Marks N as served from OVERLAY_FD (owned by the guard) instead of
 * SOURCE. */
void sfs_node_set_overlay(struct sfs_table *t, struct sfs_node *n, int overlay_fd);

/* The kernel took (DELTA 1) or released (-1) a file handle on N. Taking
 * one waits while a removal of one of N's names is under way: the kernel
 * may send the open of a file it looked up just before the name went, and
 * the open must either come first, and be seen by the removal, or come
 * after, and meet no name. */
void sfs_node_handles(struct sfs_table *t, struct sfs_node *n, int delta);

/* A name of N is about to be removed through the mount (unlink, rmdir, a
 * rename over it), until sfs_node_removal_end: returns whether the kernel
 * holds a handle on N, for which the file must then be kept. */
bool sfs_node_removal_begin(struct sfs_table *t, struct sfs_node *n);
void sfs_node_removal_end(struct sfs_table *t, struct sfs_node *n);

/* Waits until no removal of a name of N is under way: what N is located
 * by then is a name it has (a removal of one name of a file with hard
 * links runs beside opens, under the mutation lock shared). */
void sfs_node_removal_wait(struct sfs_table *t, struct sfs_node *n);

/* N lost its last known name through the mount (unlink, rename over it)
 * while the kernel still knows it, maybe open: FD, an fd on the same file
 * opened before the name went, keeps it readable and writable until the
 * kernel forgets N. Returns whether N took FD (else the caller closes it). */
bool sfs_node_adopt_orphan_fd(struct sfs_table *t, struct sfs_node *n, int fd);

/* Kept fds: with --lazy-open an unprivileged daemon opens the file for
 * each write, and cannot once its mode bars the owner (a file created
 * O_WRONLY with mode 0444, or fchmod'ed so while open), though the kernel
 * allowed the writer's open. So an fd opened while it could be is kept
 * with N until the kernel forgets N (which it does not while the file is
 * open), at most the table's kept limit of them (as many as anchors by
 * default): past it the least recently used is closed, and a write
 * through that file fails as the mode says (EACCES).
 *
 * sfs_node_keep_fd takes FD (opened ACCMODE) for N; one kept O_RDWR or
 * O_WRONLY is not replaced by a narrower one. sfs_node_kept_dup: a
 * duplicate of N's fd if it serves ACCMODE (any, when negative), else -1.
 * sfs_node_kept_accmode: the kept fd's, or -1 without one.
 * sfs_node_drop_kept closes it. */
void sfs_node_keep_fd(struct sfs_table *t, struct sfs_node *n, int fd, int accmode);
int sfs_node_kept_dup(struct sfs_table *t, struct sfs_node *n, int accmode);
int sfs_node_kept_accmode(struct sfs_table *t, const struct sfs_node *n);
void sfs_node_drop_kept(struct sfs_table *t, struct sfs_node *n);
/* How many are kept now, and how many the limit pushed out so far. */
void sfs_table_kept_counts(struct sfs_table *t, unsigned *kept, uint64_t *evicted);
void sfs_table_set_kept_limit(struct sfs_table *t, unsigned limit);

/* The project's store: STORE_FD, an anchor on the directory that mirrors
 * SOURCE for private directories, stays the caller's. Set before the first
 * lookup. */
void sfs_table_set_store(struct sfs_table *t, int store_fd);

/* Whether DIR's path from the root (in SOURCE, or in the store for a node
 * in it) still leads to the directory ANCHOR_FD is open on: -ESTALE when
 * the host moved it since the table last saw it. */
int sfs_node_verify(struct sfs_table *t, struct sfs_node *dir, int anchor_fd);

/* Whether N is still where the table says: its directory's path leads to
 * that directory, and its name there to N. -ESTALE when the host moved
 * either (a decision on the old path would judge the wrong place). Not
 * looked at again while no rename has been heard on the host since the
 * last look and every directory above N is watched. */
int sfs_node_check_place(struct sfs_table *t, struct sfs_node *n);

/* Renames happened on the host (or events were lost): every node's place
 * is to be checked again. */
void sfs_table_note_host_moves(struct sfs_table *t);

/* What the guard learnt of N: whether the agent created it (cached for
 * the node's life: ownership goes with the inode), and, for a directory in
 * SOURCE, whether its store mirror (where private directories in it live)
 * exists. Both are ignored for nodes in the store. */
void sfs_node_set_owned(struct sfs_table *t, struct sfs_node *n, bool owned);
void sfs_node_set_mirror(struct sfs_table *t, struct sfs_node *n, bool exists);

/* Host change notifications (watch.c). A watched directory is one whose
 * changes the daemon hears about; entries below it may be cached long. */
void sfs_table_set_inotify(struct sfs_table *t, int inotify_fd);
/* Records that N is watched as WD (removing the watch when N is freed). */
void sfs_table_watch_set(struct sfs_table *t, struct sfs_node *n, int wd);
/* The node watched as WD, pinned for sfs_node_unpin, or NULL. */
struct sfs_node *sfs_table_watch_node(struct sfs_table *t, int wd);
/* The kernel dropped watch WD (the directory is gone). */
void sfs_table_watch_gone(struct sfs_table *t, int wd);
bool sfs_node_watched(struct sfs_table *t, struct sfs_node *n);
/* The node for ST if the table knows it, pinned; else NULL. */
struct sfs_node *sfs_table_find(struct sfs_table *t, const struct sfs_stat *st);
void sfs_node_unpin(struct sfs_table *t, struct sfs_node *n);

/* Calls FN for every node the table knows that has a name, with the
 * parent's id and the name; FN must not call back into the table. Used to
 * invalidate everything when host notifications were lost. */
void sfs_table_for_each_entry(struct sfs_table *t,
			      void (*fn)(void *ctx, uint64_t parent_id, uint64_t id,
					 const char *name),
			      void *ctx);

/* Counters for tests and the benchmark. */
struct sfs_table_stats {
	uint64_t nodes;
	uint64_t anchors_cached;
	uint64_t anchor_opens;
	uint64_t anchor_hits;
};
void sfs_table_stats(struct sfs_table *t, struct sfs_table_stats *out);

#endif
