/*
 * policy: the pure decision of what may happen to a path. Given a compiled
 * policy, a path relative to SOURCE, an operation and whether the inode
 * concerned is owned by the agent, says which class the path has, whether the operation is allowed
 * (and the errno when not), and which rule decided it and why. No FUSE, no I/O, no allocation on
 * the decision path for paths shorter than about 1 KiB; safe to call from any number of threads at
 * once once compiled.
 *
 * A policy is built by adding rules (rules.c does that from the rule files)
 * and compiling once; after sfs_policy_compile (and any
 * sfs_policy_add_immutable calls that follow it) it is never changed.
 *
 * Paths: relative to SOURCE, no leading '/', components separated by one
 * '/', no "." or ".." components; "" is SOURCE itself. Write globs match
 * this real path; every stricter class matches its canonical form
 * (canon.h), so case, Unicode and NTFS spellings of a protected name are
 * that protected name.
 */
#ifndef SANDYFS_POLICY_H
#define SANDYFS_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Classes, from the most restrictive: immutable > private > hidden >
 * protected > overlay > writable > owned > readonly. One exception: at the
 * exact path an overlay names, the overlay beats hidden and protected (all
 * three are read-only; the overlay reveals nothing of SOURCE), so a masked
 * `.env` is served although `.env` is hidden. Immutable beats everything,
 * but only at or above a private directory: below one, everything is
 * private (the store is not the host's tree, so a package's own `.git`,
 * `.env` or `package.json` there is the package's business).
 *
 * OWNED is never the class of a path alone: it is what a readonly path
 * becomes when the inode there was created through the mount by the agent
 * (the caller of sfs_policy_decide_owned says so).
 */
enum sfs_class {
	SFS_CLASS_WRITABLE,
	SFS_CLASS_READONLY,
	SFS_CLASS_OVERLAY,
	SFS_CLASS_PROTECTED,
	SFS_CLASS_HIDDEN,
	SFS_CLASS_IMMUTABLE,
	SFS_CLASS_OWNED,
	SFS_CLASS_PRIVATE,
};

/*
 * Operations. LOOKUP and READ are the only non-mutating ones (READ includes
 * readdir, readlink, getxattr, listxattr). Everything else needs the
 * writable class, except MKDIR and RMDIR (see sfs_policy_decide).
 * LINK_SOURCE is the existing inode being hard-linked, LINK_TARGET the new
 * name; SYMLINK is the link's name (check the target with
 * sfs_policy_check_symlink); XATTR is setxattr/removexattr; SETATTR is any
 * change of mode, owner, size or times. MKNOD is a FIFO or socket (a
 * regular file made by mknod is a CREATE). The caller still refuses what
 * no class allows (device nodes, set-uid/set-gid bits).
 */
enum sfs_op {
	SFS_OP_LOOKUP,
	SFS_OP_READ,
	SFS_OP_CREATE,
	SFS_OP_MKDIR,
	SFS_OP_MKNOD,
	SFS_OP_SYMLINK,
	SFS_OP_LINK_TARGET,
	SFS_OP_LINK_SOURCE,
	SFS_OP_WRITE,
	SFS_OP_TRUNCATE,
	SFS_OP_SETATTR,
	SFS_OP_XATTR,
	SFS_OP_UNLINK,
	SFS_OP_RMDIR,
	SFS_OP_RENAME_FROM,
	SFS_OP_RENAME_TO,
};

/* One rule entry. All strings are owned by the policy. */
struct sfs_rule {
	enum sfs_class cls;
	const char *file;	  /* rule file as opened, or "(built-in)" */
	int line;		  /* 1-based line of the entry in FILE, 0 when unknown */
	const char *key;	  /* "write", "generated", "private", "protect", "hide", "overlay",
				     "immutable" */
	int index;		  /* 0-based position in that key's array */
	const char *pattern;	  /* the glob (or exact path) as written */
	const char *why;	  /* never NULL */
	const char *overlay_file; /* overlay: the host file served; else NULL */
	int tier;		  /* protect: 0 always, 1 build tools, 2 CI (releasable) */
	const char *released_by;  /* non-NULL: inactive, released at this "file:line" */
	/* write: a generated tree (build output): tier 1 and 2 protections
	 * do not apply at or below what it matches. */
	bool generated;
	/* hide: globs of what the pattern matches that stays visible (a
	 * template beside the secrets it describes); NULL-terminated, or
	 * NULL. */
	const char *const *except;
};

/* Where the rules came from, for `sandyfs rules`. */
struct sfs_rule_source {
	const char *path;
	const char *name;	 /* the file's "name", or NULL */
	const char *description; /* or NULL */
	const char *origin;	 /* why it is loaded: "always", "--type", "detected: go.mod", ... */
};

struct sfs_decision {
	enum sfs_class cls;
	bool allowed;
	int err;		     /* 0 when allowed, else EROFS (ENOENT for hidden paths) */
	const char *rule_file;	     /* never NULL: a file, "(built-in)" or "(default)" */
	int rule_index;		     /* index in its key's array, -1 for the default */
	const char *rule_text;	     /* the deciding pattern, "" for the default */
	const char *why;	     /* never NULL */
	const struct sfs_rule *rule; /* the deciding rule, NULL for the default */
	const char *overlay_file;    /* class overlay: the host file to serve */
	/* Denied, but allowed if the inode concerned were owned: the caller
	 * may find out and decide again (sfs_policy_decide_owned). */
	bool owner_decides;
};

struct sfs_policy;

/* ---- building ---- */

struct sfs_policy *sfs_policy_new(void);
void sfs_policy_free(struct sfs_policy *p);

/*
 * Adds one rule (strings are copied). The pattern is validated for its
 * class; on a bad glob returns -EINVAL with *REASON (malloc'ed) saying why.
 * Rules with released_by set are kept for listing but never match.
 * Only SFS_CLASS_WRITABLE, _PRIVATE, _PROTECTED, _HIDDEN and _OVERLAY are accepted
 * (immutable names come from the built-in .git rule and
 * sfs_policy_add_immutable).
 */
int sfs_policy_add_rule(struct sfs_policy *p, const struct sfs_rule *r, char **err);
int sfs_policy_add_source(struct sfs_policy *p, const struct sfs_rule_source *s);

/*
 * Whether what the agent creates through the mount is owned by it (on
 * unless a rule file says "owned": false). Set before compiling.
 */
void sfs_policy_set_ownership(struct sfs_policy *p, bool on);
bool sfs_policy_ownership(const struct sfs_policy *p);

/*
 * With ON, SOURCE's top-level .git and .worktrees (canonically, and
 * everything below them) are private: the agent's own repository and its
 * worktrees, served from the store. Every other .git stays immutable. Off
 * by default; `sandyfs git` checks commits with it off, as the host sees
 * them.
 */
void sfs_policy_set_private_git(struct sfs_policy *p, bool on);
bool sfs_policy_private_git(const struct sfs_policy *p);

/*
 * Compiles the rules into one combined regex per class. The rule order
 * never matters: rules are sorted by content first. Returns 0, -ENOMEM, or
 * -EINVAL with *ERR set.
 */
int sfs_policy_compile(struct sfs_policy *p, char **err);

/*
 * Makes RELPATH (and everything below it) immutable, present or absent; for
 * the git layout found at mount time (core.hooksPath, gitdirs named by
 * pointer files). Matched on the canonical form. Call after compile and
 * before the first decision. WHY is copied.
 */
int sfs_policy_add_immutable(struct sfs_policy *p, const char *relpath, const char *why);

/* ---- deciding ---- */

/*
 * The decision for OP on RELPATH when the inode concerned is not owned.
 * Any '.git' component (canonically: .GIT, git~1, ".git.", ".git::$DATA",
 * ...) makes the path immutable, present or absent, at any depth (unless
 * it lies below a private directory). SOURCE itself ("") is readonly. A
 * path that cannot be evaluated (uncompiled policy, out of memory, a PCRE2
 * resource limit) is decided hidden by a built-in rule: invisible and
 * unwritable.
 *
 * Writable and private paths allow everything. On a readonly path, MKDIR
 * and RMDIR are allowed where a write glob could match something below it
 * (sfs_policy_write_possible_below): `mkdir -p src/new/dir` works with
 * "src/" + "**" writable, and the same directories can be removed again
 * (only when empty, which the caller's rmdir enforces). Everything else on
 * a readonly path needs an owned inode (sfs_policy_decide_owned).
 */
void sfs_policy_decide(const struct sfs_policy *p, const char *relpath, enum sfs_op op,
		       struct sfs_decision *out);

/*
 * The same, saying whether the inode OP concerns is owned: the file
 * written, truncated or re-moded, the name removed, the inode moved by a
 * rename (RENAME_FROM and RENAME_TO, or RMDIR and MKDIR for a directory)
 * or linked (LINK_SOURCE and LINK_TARGET), and what CREATE, MKDIR and
 * SYMLINK make (it will be owned). On a readonly path with ownership on,
 * an owned inode allows every OP but MKNOD, and the class becomes OWNED. A
 * rename that replaces an inode is an UNLINK (or RMDIR) of the replaced
 * one as well.
 */
void sfs_policy_decide_owned(const struct sfs_policy *p, const char *relpath, enum sfs_op op,
			     bool owned, struct sfs_decision *out);

/* The class of RELPATH alone (OUT filled as for SFS_OP_LOOKUP). */
enum sfs_class sfs_policy_classify(const struct sfs_policy *p, const char *relpath,
				   struct sfs_decision *out);

/*
 * True when some path strictly below directory RELPATH could match a
 * write glob (PCRE2 hard partial matching of "RELPATH/"). Does not look at
 * the stricter classes: sfs_policy_decide combines both.
 */
bool sfs_policy_write_possible_below(const struct sfs_policy *p, const char *relpath);

/*
 * Whether a symlink named NAME (one component, LEN bytes) would give the
 * paths a stricter rule protects a second name: NAME is, canonically, a
 * directory that such a rule passes through on the way to what it protects
 * (.cargo of the rule for .cargo/config.toml at any depth, .git, .github,
 * the directories above a path of the git layout). True, with the refusal
 * in *OUT when OUT is not NULL, also for a name that cannot be judged.
 * The mount asks it of every symlink made, moved or linked outside the
 * store, and the import of every symlink a commit adds: one rule for both.
 */
bool sfs_policy_shadow_name(const struct sfs_policy *p, const char *name, size_t len,
			    struct sfs_decision *out);

/* *OUT is a refusal (EROFS) by the built-in rule R, of R's class: for the
 * built-in checks beside the decision (symlinks, the shape of a git
 * directory). */
void sfs_policy_refuse(struct sfs_decision *out, const struct sfs_rule *r);

/* Symlink targets are judged in symchain.h. */

/* ---- listing ---- */

size_t sfs_policy_rule_count(const struct sfs_policy *p);
const struct sfs_rule *sfs_policy_rule(const struct sfs_policy *p, size_t i);
/* Immutable rules: index 0 is the built-in .git rule, then the added paths. */
size_t sfs_policy_immutable_count(const struct sfs_policy *p);
const struct sfs_rule *sfs_policy_immutable(const struct sfs_policy *p, size_t i);
/* With a private repository, its built-in rules (.git, then .worktrees),
 * which decide before any other; NULL past them, or without one. */
const struct sfs_rule *sfs_policy_private_git_rule(const struct sfs_policy *p, size_t i);
size_t sfs_policy_source_count(const struct sfs_policy *p);
const struct sfs_rule_source *sfs_policy_source(const struct sfs_policy *p, size_t i);

const char *sfs_class_name(enum sfs_class c); /* "writable", "readonly", ... */
const char *sfs_op_name(enum sfs_op op);      /* "lookup", "create", ... */
/* Strictness rank: immutable 7, private 6, ... owned 1, readonly 0. */
int sfs_class_rank(enum sfs_class c);
/*
 * Whether C keeps a name read-only whatever a write rule says: immutable,
 * hidden, protected and overlay. Private is not one: a private name is
 * writable, only served from somewhere else.
 */
bool sfs_class_protective(enum sfs_class c);
/* The glob flags rules of class C compile with (see glob.h). */
unsigned sfs_class_glob_flags(enum sfs_class c);

#endif
