/* gitlayout.h - the parts of SOURCE's git layout that are not named .git,
 * learned from libgit2 at mount time: a gitdir that a pointer
 * file names inside SOURCE (separate-git-dir, submodules, worktrees) and
 * the core.hooksPath directory inside SOURCE, present or absent. Every
 * `.git` component is immutable by name in the policy already. */
#ifndef SANDYFS_GITLAYOUT_H
#define SANDYFS_GITLAYOUT_H

#include "policy.h"

/* Adds those paths to P as immutable. SOURCE that is no git repository, or
 * lies inside one, is fine. Returns 0 or a negative errno with *ERR. */
int sfs_git_protect_layout(struct sfs_policy *p, const char *source, char **err);

#endif
