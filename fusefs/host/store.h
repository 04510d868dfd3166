/* store.h - the project's store: where its private directories live,
 * outside SOURCE, kept across sessions. One directory per project:
 *
 *   STORE/tree/PATH   the private directory PATH of SOURCE (node_modules,
 *                     src/pkg/__pycache__, ...), and the directories on
 *                     the way to it, which mirror SOURCE's (owner, mode)
 *   STORE/owned       ownership records the host cannot keep beside the
 *                     file (owner.h)
 *   STORE/git-mirror  what the private repository last took from SOURCE's
 *                     (gitpriv.h)
 *   STORE/source      SOURCE's path, for whoever looks at the store
 *   STORE/lock        every daemon serving the project holds it shared;
 *                     clearing the store takes it exclusively
 *
 * By default the store is ${SANDY_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/sandy}
 * /projects/NAME-HASH, NAME being SOURCE's last component and HASH a hash
 * of its resolved path. Nothing here decides policy: the caller says
 * which paths are private. */
#ifndef SANDYFS_STORE_H
#define SANDYFS_STORE_H

#include <stdbool.h>
#include <stdint.h>

struct sfs_store;

/* The default store of SOURCE (a resolved, absolute path), malloc'ed into
 * *OUT; -ENOENT when no cache directory can be found (no HOME). */
int sfs_store_default_path(const char *source_resolved, char **out);

/* Opens the store at PATH, making it when missing, and takes the shared
 * lock. SOURCE_FD is SOURCE (its owner and mode are the tree root's). On
 * failure *ERR says what and where. */
int sfs_store_open(const char *path, const char *source_resolved, int source_fd,
		   struct sfs_store **out, char **err);
void sfs_store_free(struct sfs_store *s);

/* Whether this daemon is the store's only user: turns the shared lock
 * into an exclusive one (0), or says another daemon serves the project
 * (-EBUSY, the shared lock kept). sfs_store_lock_shared goes back. */
int sfs_store_lock_alone(struct sfs_store *s);
int sfs_store_lock_shared(struct sfs_store *s);

/* An anchor fd on STORE/tree (kept by the store). */
int sfs_store_tree_fd(const struct sfs_store *s);
/* An fd on STORE itself (kept by the store). */
int sfs_store_dir_fd(const struct sfs_store *s);

/* An anchor fd (the caller's) on the store directory that mirrors SOURCE's
 * directory RELPATH ("" for the root): -ENOENT when it does not exist and
 * CREATE is false; with CREATE, the missing directories on the way are
 * made with the owner and mode of SOURCE's (SOURCE_FD). */
int sfs_store_mirror(struct sfs_store *s, int source_fd, const char *relpath, bool create);

/* `sandyfs store`: the size of the private directories in the store at
 * PATH, and how many files (0 when it does not exist); removing the store,
 * refused while a daemon holds it. */
int sfs_store_usage(const char *path, uint64_t *bytes, uint64_t *files);
int sfs_store_clear(const char *path, char **err);

#endif
