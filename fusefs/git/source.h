/* source.h - a source's policy, assembled in one place: the rule files
 * (policy/rules.h), git's layout as the host's git would find it
 * (gitlayout.h: gitdirs named by pointer files, common dirs,
 * core.hooksPath, submodules, what git's configuration reaches) and, for a
 * mount with a private repository, the agent's own .git. The mount,
 * `sandyfs explain`, `sandyfs rules` (and through it the agent's POLICY.md)
 * and `sandyfs git` all ask this function, so what explain answers is
 * what the mount does. */
#ifndef SANDYFS_GIT_SOURCE_H
#define SANDYFS_GIT_SOURCE_H

#include "policy/rules.h"

#include <stdbool.h>

struct sfs_source {
	const struct sfs_rule_opts *rules;
	const char *path; /* SOURCE, absolute */
	bool private_git; /* .git and .worktrees are the agent's (--private-git) */
};

/* The compiled policy for S into *OUT. A rule file that does not load, or
 * a git layout that cannot be read (what git would run from outside .git
 * would be unknown), is an error: there is no half-read policy. Returns a
 * negative errno and says what failed in *ERR. */
int sfs_source_policy(const struct sfs_source *s, struct sfs_policy **out, char **err);

#endif
