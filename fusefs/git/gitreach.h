/* gitreach.h - the files of SOURCE that the host's git configuration
 * names or reaches, which git on the host reads or runs by itself: the
 * targets of symlinked hooks (a hook installed as a link into the tree),
 * the files include.path and includeIf name (present or absent), the
 * programs of helpers, drivers, filters, editors, aliases and the
 * fsmonitor when they are paths in the tree, excludes and attributes
 * files, and the configuration files themselves when they lie in SOURCE.
 * The configuration read is the one git on the host reads for the
 * repository: the system file, the user's global files and the
 * repository's own, each with its includes. The user's home is
 * $SANDY_USER_HOME (sandy sets it, also under sudo), else $HOME.
 *
 * Each path is made immutable with a reason naming the setting and the
 * file it is set in, which `sandyfs explain` prints. */
#ifndef SANDYFS_GITREACH_H
#define SANDYFS_GITREACH_H

#include "policy/policy.h"

#include <git2.h>

/* Makes ABS (absolute, normalised) immutable with the reason WHY when it
 * lies in SOURCE, below no .git (immutable by name already). Returns 0 or
 * a negative errno with *ERR set. gitlayout.c adds the gitdirs it finds
 * through it. */
int sfs_git_protect_path(struct sfs_policy *p, const char *source, const char *abs,
			 const char *why, char **err);

/* Adds what REPO's configuration reaches inside SOURCE (its resolved
 * path), core.hooksPath's directory included, to P. Returns 0 or a
 * negative errno with *ERR set. */
int sfs_git_protect_reach(struct sfs_policy *p, const char *source, git_repository *repo,
			  char **err);

#endif
