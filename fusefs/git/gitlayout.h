/* gitlayout.h - the parts of SOURCE's git layout that are not named .git,
 * learned from libgit2 at mount time: a gitdir that a pointer
 * file names inside SOURCE (separate-git-dir, submodules, worktrees) and
 * the core.hooksPath directory inside SOURCE, present or absent. Every
 * `.git` component is immutable by name in the policy already. */
#ifndef SANDYFS_GITLAYOUT_H
#define SANDYFS_GITLAYOUT_H

#include "policy/policy.h"

/* Adds those paths to P as immutable. SOURCE that is no git repository, or
 * lies inside one, is fine. Returns 0 or a negative errno with *ERR. */
int sfs_git_protect_layout(struct sfs_policy *p, const char *source, char **err);

/* git_libgit2_init for sandyfs's reads of a repository, with git's
 * ownership check (safe.directory) off: the daemon, root, reads a
 * repository the user owns, and that check is for running its config;
 * nothing sandyfs does with libgit2 runs anything. Pair it with
 * git_libgit2_shutdown: libgit2's global state (among it what reads pack
 * files) exists only between the two. */
void sfs_git_library_init(void);

#endif
