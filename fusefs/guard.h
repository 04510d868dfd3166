/* guard.h - enforcement: everything security-relevant the filesystem does
 * on top of the pure policy decision lives here (SPEC §4.2, §4.5, §4.6).
 * It turns each operation into the policy questions it must ask (every
 * name touched, present or absent; the subtrees a rename moves; the
 * prefixes a symlink target passes through), audits every denial, and
 * serialises directory renames against the creation of new names so that
 * a subtree cannot change between its check and its move.
 *
 * ops.c calls it; policy.c decides; audit.c records. */
#ifndef SANDYFS_GUARD_H
#define SANDYFS_GUARD_H

#include "audit.h"
#include "inode.h"
#include "policy.h"

#include <stdbool.h>
#include <sys/types.h>

struct sfs_guard;

/* Who asked, for the audit log. */
struct sfs_caller {
	pid_t pid;
	uid_t uid;
};

/* Takes ownership of POLICY and AUDIT (which may be NULL). Overlay files
 * the policy names are opened here, once, read-only. */
int sfs_guard_new(struct sfs_policy *policy, struct sfs_audit *audit, struct sfs_table *table,
		  struct sfs_guard **out, char **errmsg);
void sfs_guard_free(struct sfs_guard *g);

/* PARENT's path relative to SOURCE joined with NAME (NAME NULL: PARENT's
 * own path), into BUF. -ESTALE when PARENT has no known name. */
int sfs_guard_path(struct sfs_guard *g, struct sfs_node *parent, const char *name, char *buf,
		   size_t size);

/* What a lookup or a directory listing shows at RELPATH: -ENOENT for a
 * hidden path; for an overlay, the fd of the host file to serve in
 * *OVERLAY_FD (else -1). Never audited: looking is not a denial. */
int sfs_guard_visible(struct sfs_guard *g, const char *relpath, int *overlay_fd);

/* Whether OP may be done at RELPATH; on denial audits it (with OPNAME and
 * TARGET, a second path or NULL) and returns the negative errno. */
int sfs_guard_check(struct sfs_guard *g, const struct sfs_caller *c, const char *relpath,
		    enum sfs_op op, const char *opname, const char *target);

/* Denies OPNAME at RELPATH for a reason of the filesystem's own (device
 * nodes, set-uid bits), whatever the policy says; audits it; -EROFS. */
int sfs_guard_deny_builtin(struct sfs_guard *g, const struct sfs_caller *c, const char *relpath,
			   const char *opname, const char *why);

/* symlink(TARGET, LINKPATH): the name, the lexical target (§4.6), and no
 * existing symlink on the way to it in SOURCE. */
int sfs_guard_symlink(struct sfs_guard *g, const struct sfs_caller *c, const char *linkpath,
		      const char *target);

/* rename(OLDPATH, NEWPATH, FLAGS): both names and, for directories, every
 * entry of the subtrees that move; a symlink may not arrive at a name that
 * leads to protected paths (see sfs_guard_symlink_name). OLD_TYPE and
 * NEW_TYPE are the S_IFMT of what exists at each name (0 when nothing
 * does). Call with the exclusive lock held. -EXDEV for a subtree too large
 * to check (mv then copies file by file, each of which is checked). */
int sfs_guard_rename(struct sfs_guard *g, const struct sfs_caller *c, const char *oldpath,
		     mode_t old_type, const char *newpath, mode_t new_type, unsigned int flags);

/* Whether a symlink may be named LINKPATH: not when its name is a
 * directory that a stricter rule names on the way to what it protects
 * (".cargo" of "**\/.cargo/config.toml"): a symlink there would give the
 * protected path a second name, inside a writable directory. */
int sfs_guard_symlink_name(struct sfs_guard *g, const struct sfs_caller *c, const char *linkpath,
			   const char *opname);

/* The mutation lock: shared around every change that creates a name,
 * exclusive around directory renames. */
void sfs_guard_lock(struct sfs_guard *g, bool exclusive);
void sfs_guard_unlock(struct sfs_guard *g);

/* Whether RELPATH (a directory node's path from the table) still leads
 * from SOURCE to the directory ANCHOR_FD is open on: -ESTALE when the
 * host moved it since the table last saw it. */
int sfs_guard_verify_dir(struct sfs_guard *g, const char *relpath, int anchor_fd);

#endif
