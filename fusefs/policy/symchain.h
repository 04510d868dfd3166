/*
 * symchain: symlink targets as the host follows them. A symlink is judged
 * by resolving its target from the link's directory the way the host
 * would, through every symlink of SOURCE on the way (at most
 * SFS_SYMLINK_MAX_HOPS of them, as the kernel's 40), judging every place
 * the resolution passes: a chain of links whose every hop the policy allows
 * is allowed (a loop, which leads nowhere, too); one that reaches an immutable, hidden, protected
 * or overlay name, or leaves SOURCE, anywhere, is refused. And the other way round: which existing
 * links a change of one name can redirect, so that they are judged again before the change is made.
 * Pure: what is a symlink is asked of a probe (the mount asks SOURCE, the import a commit's tree).
 */
#ifndef SANDYFS_SYMCHAIN_H
#define SANDYFS_SYMCHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

/* As the kernel: a resolution through more symlinks than this fails (ELOOP). */
#define SFS_SYMLINK_MAX_HOPS 40

/* The index of the built-in symlink rule that refuses a chain of more than
 * SFS_SYMLINK_MAX_HOPS links (key "symlink"). A chain that comes back to
 * where it stood (a loop) leads nowhere and is allowed, as a dangling link
 * is: a change that would make it lead somewhere redirects it, and it is
 * judged again then (sfs_symlink_affected). */
#define SFS_RULE_SYMLINK_LOOP 3

/*
 * Whether the path PREFIX (relative to SOURCE) is a symlink: 1 and its
 * target in TARGET (CAP bytes, NUL-terminated), 0 when it is not one or
 * does not exist, a negative errno when it cannot be told (-ENAMETOOLONG:
 * the target does not fit).
 */
/* *OUT is a refusal (EROFS) by built-in rule R: the symlink rules here,
 * and those of the callers that judge links (the guard's). */
void sfs_symlink_refuse(struct sfs_decision *out, const struct sfs_rule *r);

typedef int (*sfs_symlink_probe)(void *ctx, const char *prefix, char *target, size_t cap);

/*
 * symlink(TARGET, LINKPATH): allowed only when LINKPATH may be created as
 * a symlink and the target half below allows TARGET. Denials are EROFS and
 * name the rule that decided. A link whose own name is private may point
 * anywhere: it lives in the store, which the host never follows.
 */
void sfs_policy_check_symlink(const struct sfs_policy *p, const char *linkpath, const char *target,
			      sfs_symlink_probe probe, void *ctx, struct sfs_decision *out);

/*
 * The target half alone, whatever LINKPATH's own class (a symlink that
 * arrives in a commit, or one judged again): TARGET must be relative, have
 * no backslash, and resolve, from LINKPATH's directory and through every
 * symlink PROBE (when not NULL) reports, without leaving SOURCE and without
 * reaching, at any step, a name of class immutable, hidden, protected or
 * overlay (present or absent): "a/../x" passes through "a", and through
 * what "a" points to when it is a symlink. Every component is asked of
 * PROBE as the resolution reaches it, in order. OUT is left as the caller
 * filled it when the target is fine.
 */
void sfs_policy_check_symlink_target(const struct sfs_policy *p, const char *linkpath,
				     const char *target, sfs_symlink_probe probe, void *ctx,
				     struct sfs_decision *out);

/*
 * Resolves TARGET lexically from LINKPATH's directory into OUT (CAP bytes,
 * relative to SOURCE, "" for SOURCE itself), following no symlink. Returns
 * the length, -EINVAL for an absolute or empty target, -EXDEV when it
 * leaves SOURCE, -ENAMETOOLONG when OUT is too small.
 */
int sfs_policy_symlink_resolve(const char *linkpath, const char *target, char *out, size_t cap);

/*
 * Whether the host's resolution of the symlink LINKPATH -> TARGET can
 * change when what is at NAME changes (a symlink made or removed there, a
 * directory moved there or away): LINKPATH is NAME or lies below it, or
 * the lexical walk of TARGET from LINKPATH's directory reaches NAME or a
 * path below it. Compared on canonical names, as the host's filesystem may
 * fold them.
 */
bool sfs_symlink_depends_on(const char *linkpath, const char *target, const char *name);

struct sfs_link {
	const char *path;   /* relative to SOURCE */
	const char *target; /* as the link holds it */
};

/*
 * Marks AFFECTED[i] for each of LINKS[0..N) whose resolution can change when
 * any of CHANGED[0..M) changes: directly (sfs_symlink_depends_on), or
 * through links already marked (a link through a link that changed).
 * Returns how many were marked.
 */
size_t sfs_symlink_affected(const struct sfs_link *links, size_t n, const char *const *changed,
			    size_t m, bool *affected);

#endif
