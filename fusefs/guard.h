/* guard.h - enforcement: everything security-relevant the filesystem does
 * on top of the pure policy decision lives here.
 * It turns each operation into the policy questions it must ask (every
 * name touched, present or absent; the subtrees a rename moves; the
 * prefixes a symlink target passes through; whether the agent owns the
 * inode concerned, when the policy's answer depends on it), marks what the
 * agent creates as its own, audits every denial, and
 * serialises directory renames against the creation of new names so that
 * a subtree cannot change between its check and its move.
 *
 * The FUSE handlers (ops.c, handle.c, xattr.c) and the helpers they share
 * (request.c) call it; policy.c decides; audit.c records. */
#ifndef SANDYFS_GUARD_H
#define SANDYFS_GUARD_H

#include "audit.h"
#include "inode.h"
#include "owner.h"
#include "policy/policy.h"

#include <stdbool.h>
#include <sys/types.h>

struct sfs_guard;

/* Who asked, for the audit log. */
struct sfs_caller {
	pid_t pid;
	uid_t uid;
};

/*
 * The inode an operation concerns, for when the policy's answer depends on
 * whether the agent owns it (a readonly path): a node the table knows, or
 * the entry NAME of directory DIRFD that ST describes. Asked only then, and
 * at most once.
 */
struct sfs_subject {
	struct sfs_node *node;
	int dirfd;
	const char *name;
	const struct sfs_stat *st;
	int owned; /* the answer once known; -1 before */
};

#define SFS_SUBJECT_NODE(n) ((struct sfs_subject){.node = (n), .dirfd = -1, .owned = -1})
#define SFS_SUBJECT_AT(fd, nm, s)                                                                  \
	((struct sfs_subject){.dirfd = (fd), .name = (nm), .st = (s), .owned = -1})

/*
 * What the policy said of one path for one operation, asked once in a
 * request (sfs_guard_judge) and carried to each later step of it that
 * depends on the path: where its name lives (a private directory's own
 * name is in the store), whether what is made there is marked the agent's,
 * what a lookup of it shows, the refusal audited. The policy never
 * changes once the guard has it, so the answer stays true.
 */
struct sfs_verdict {
	const char *path; /* the caller's, outliving the verdict */
	enum sfs_op op;
	struct sfs_decision d; /* for OP, with what ownership was known */
};

/* Takes ownership of POLICY, AUDIT (which may be NULL) and OWNER. Overlay
 * files the policy names are opened here, once, read-only. */
int sfs_guard_new(struct sfs_policy *policy, struct sfs_audit *audit, struct sfs_owner *owner,
		  struct sfs_table *table, struct sfs_guard **out, char **err);
void sfs_guard_free(struct sfs_guard *g);
/* Starts the guard's threads (the walk of SOURCE's symlinks) once the
 * daemon has detached. Negative errno. */
int sfs_guard_start(struct sfs_guard *g);

/* What a lookup or a directory listing shows at RELPATH: -ENOENT for a
 * hidden path; for an overlay, the fd of the host file to serve in
 * *OVERLAY_FD (else -1); *PRIVATE says whether the path is private (in the
 * store, not in SOURCE). Never audited: looking is not a denial. */
int sfs_guard_visible(struct sfs_guard *g, const char *relpath, int *overlay_fd, bool *private);

/* Whether RELPATH is private (served from the store). */
bool sfs_guard_private(struct sfs_guard *g, const char *relpath);

/* Whether RELPATH is writable or private: everything may happen there,
 * whoever made what is there. */
bool sfs_guard_writable(struct sfs_guard *g, const char *relpath);

/* The same three from a path's verdict, for any operation: the class of
 * the path itself (an owned inode's is readonly); what sfs_guard_visible
 * says of it; whether it is private; whether it is writable or private. */
enum sfs_class sfs_verdict_class(const struct sfs_verdict *v);
int sfs_guard_view(struct sfs_guard *g, const struct sfs_verdict *v, int *overlay_fd,
		   bool *private);
bool sfs_verdict_private(const struct sfs_verdict *v);
bool sfs_verdict_writable(const struct sfs_verdict *v);

/*
 * Whether OP on RELPATH would complete the shape of a git directory in
 * SOURCE (ROOTFD), or change what git reads commands from inside a
 * directory that has the shape (gitshape.h): 1 with the refusal in *OUT,
 * else 0. Asks the host which names the directories hold. The guard asks
 * it of every change the policy allows outside the store; `sandyfs
 * explain` of the paths it is asked about.
 */
int sfs_gitdir_judge(int rootfd, const char *relpath, enum sfs_op op, struct sfs_decision *out);

/* Whether OP may be done at RELPATH; on denial audits it (with OPNAME and
 * TARGET, a second path or NULL) and returns the negative errno. WHO (may
 * be NULL: not owned) is the inode OP concerns. */
int sfs_guard_check(struct sfs_guard *g, const struct sfs_caller *c, const char *relpath,
		    enum sfs_op op, const char *opname, const char *target,
		    struct sfs_subject *who);

/* sfs_guard_check in two steps, for a request that needs the path's class
 * before it can say which inode OP concerns (where the name lives decides
 * which directory WHO is in). sfs_guard_judge asks the policy, once, with
 * WHO's ownership if it is known already (WHO may be NULL: not owned);
 * nothing is audited, nothing read from the host. sfs_guard_conclude does
 * the rest: ownership asked when it decides, the shape of git directories,
 * the audit of a denial; 0 or the negative errno. */
void sfs_guard_judge(struct sfs_guard *g, const char *relpath, enum sfs_op op,
		     struct sfs_subject *who, struct sfs_verdict *v);
int sfs_guard_conclude(struct sfs_guard *g, const struct sfs_caller *c, struct sfs_verdict *v,
		       const char *opname, const char *target, struct sfs_subject *who);

/* Whether the agent owns WHO: 1 or 0 (cached in the node when there is
 * one). */
int sfs_guard_owned(struct sfs_guard *g, struct sfs_subject *who);

/* What the agent just made at NAME in DIRFD (ST; open as FD, or -1; FRESH:
 * new, not moved there) is its own: marked on the host (owner.h). Call
 * outside the store only (what is there is private) and before the
 * entry's attributes are read (the mark touches its times). */
void sfs_guard_mark_owned(struct sfs_guard *g, int fd, int dirfd, const char *name,
			  const struct sfs_stat *st, bool fresh);

/* The inode ST describes lost its last name through the mount. */
void sfs_guard_forget_owned(struct sfs_guard *g, const struct sfs_stat *st);

/* Denies OPNAME at RELPATH for a reason of the filesystem's own (device
 * nodes, set-uid bits), whatever the policy says; audits it; -EROFS. */
int sfs_guard_deny_builtin(struct sfs_guard *g, const struct sfs_caller *c, const char *relpath,
			   const char *opname, const char *why);
/* The same at V's path, audited with the class its verdict gives it. */
int sfs_guard_deny_judged(struct sfs_guard *g, const struct sfs_caller *c,
			  const struct sfs_verdict *v, const char *opname, const char *why);

/* A symlink to TARGET at LINKPATH, made there or arriving there (OPNAME:
 * "symlink", "rename", "link"): the target followed as the host would, through the symlinks
 * of SOURCE on the way (sfs_policy_check_symlink). A relative target means something
 * else at every place, so a symlink that moves or gets a second name is
 * judged again where it arrives. */
int sfs_guard_symlink_target(struct sfs_guard *g, const struct sfs_caller *c, const char *linkpath,
			     const char *target, const char *opname);

/* The same for the symlink NAME in DIRFD, arriving at LINKPATH. */
int sfs_guard_symlink_arrives(struct sfs_guard *g, const struct sfs_caller *c, int dirfd,
			      const char *name, const char *linkpath, const char *opname);

/* symlink(TARGET, LINKPATH): the target as above, and the name; the
 * second with LINKPATH's verdict (V, any operation) judged already. */
int sfs_guard_symlink(struct sfs_guard *g, const struct sfs_caller *c, const char *linkpath,
		      const char *target);
int sfs_guard_symlink_judged(struct sfs_guard *g, const struct sfs_caller *c,
			     const struct sfs_verdict *v, const char *target);

/* What a rename allowed by sfs_guard_rename leaves to be done. */
enum sfs_rename_after {
	SFS_MARK_OLD = 1,   /* the inode that was at OLDPATH is now the agent's */
	SFS_MARK_NEW = 2,   /* the inode that was at NEWPATH (exchanged) is */
	SFS_INTO_STORE = 4, /* it moves from SOURCE into the store */
};

/* rename(OLDPATH, NEWPATH, FLAGS): both names and, for directories, every
 * entry of the subtrees that move; what is replaced as removed; a symlink,
 * moved itself or with its directory, may not arrive at a name that leads
 * to protected paths (sfs_guard_symlink_name) nor where its target would
 * not be allowed (sfs_guard_symlink_target). OLD and NEW are the inodes at each name (NEW's
 * st NULL when nothing is there). A writable file taken to a name no write
 * glob covers becomes the agent's own there (`sed -i.bak`): *AFTER says
 * so. SOURCE's content may move into the store (it leaves SOURCE, which is
 * judged); the store's never moves into SOURCE (-EXDEV: mv then copies,
 * and each copy is judged). Call with the exclusive lock held. -EXDEV too
 * for a subtree too large to check. */
int sfs_guard_rename(struct sfs_guard *g, const struct sfs_caller *c, const char *oldpath,
		     struct sfs_subject *old, const char *newpath, struct sfs_subject *new,
		     unsigned int flags, unsigned *after);
/* The same, the two paths' verdicts (any operation) judged already. */
int sfs_guard_rename_judged(struct sfs_guard *g, const struct sfs_caller *c,
			    const struct sfs_verdict *oldv, struct sfs_subject *old,
			    const struct sfs_verdict *newv, struct sfs_subject *new,
			    unsigned int flags, unsigned *after);

/* Whether a symlink may be named LINKPATH: not when its name is a
 * directory that a stricter rule names on the way to what it protects
 * (".cargo" of "**\/.cargo/config.toml"): a symlink there would give the
 * protected path a second name, inside a writable directory. */
int sfs_guard_symlink_name(struct sfs_guard *g, const struct sfs_caller *c, const char *linkpath,
			   const char *opname);
int sfs_guard_symlink_name_judged(struct sfs_guard *g, const struct sfs_caller *c,
				  const struct sfs_verdict *v, const char *opname);

/*
 * A change that can redirect the symlinks of SOURCE: a symlink made at
 * PATH (pointing at TARGET), a symlink removed from PATH, what is at PATH
 * moved to TO (with what is below it), PATH and TO exchanged.
 */
struct sfs_link_change {
	enum { SFS_LINK_SET, SFS_LINK_REMOVE, SFS_LINK_MOVE, SFS_LINK_EXCHANGE } kind;
	const char *path;
	const char *to;	    /* MOVE, EXCHANGE; else NULL */
	const char *target; /* SET */
};

/*
 * Before CH is made: every symlink of SOURCE whose resolution it can
 * change (one passing through PATH or TO, one below them, one through such
 * a link) is judged again as the host would resolve it once CH is made
 * (sfs_policy_check_symlink_target); when one would then reach a refused
 * name, CH is refused and audited with that link named. Also refused when
 * SOURCE holds more links than are kept track of.
 */
int sfs_guard_links_check(struct sfs_guard *g, const struct sfs_caller *c,
			  const struct sfs_link_change *ch, const char *opname);

/* Ends a change whose links check passed (which holds the links lock until
 * then, so that changes of links, even under the shared mutation lock, are
 * judged and recorded one at a time): MADE, the index follows it. */
void sfs_guard_links_done(struct sfs_guard *g, const struct sfs_link_change *ch, bool made);

/* The host may have changed RELPATH (in directory PARENTFD, or -1): the
 * index reads it again. */
void sfs_guard_links_host_changed(struct sfs_guard *g, const char *relpath, int parentfd);

/* The mutation lock: shared around every change that makes or removes a
 * name, exclusive around renames and symlinks. */
void sfs_guard_lock(struct sfs_guard *g, bool exclusive);
void sfs_guard_unlock(struct sfs_guard *g);

#endif
