/*
 * gitshape: the shape of a git directory. git takes any directory for a
 * repository when it holds a valid HEAD and either objects/ and refs/ or
 * a commondir file naming a directory that has them (git's
 * is_git_directory), whatever the directory is called: `cd src && git
 * status` then reads src/config, and runs its core.fsmonitor, its hooks,
 * its aliases. So no change may complete that shape anywhere in SOURCE,
 * and inside a directory that already has it the names git reads commands
 * from are as immutable as a .git's.
 *
 * Pure: the caller says which names a directory holds (the mount asks the
 * host, the import a commit's tree). Names are compared canonically
 * (canon.h): a case-insensitive host finds "head" for "HEAD".
 */
#ifndef SANDYFS_GITSHAPE_H
#define SANDYFS_GITSHAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

enum sfs_gitdir_part {
	SFS_GITDIR_HEAD = 1,
	SFS_GITDIR_OBJECTS = 2,
	SFS_GITDIR_REFS = 4,
	SFS_GITDIR_COMMONDIR = 8,
};

/* The exact names of the parts, for asking a host directory. */
#define SFS_GITDIR_NPARTS 4
extern const char *const sfs_gitdir_part_names[SFS_GITDIR_NPARTS];

/* Which part NAME (one component of LEN bytes) is, canonically, or 0. */
unsigned sfs_gitdir_part(const char *name, size_t len);

/* Whether a directory holding the parts PRESENT (a mask) is a git
 * directory to git: HEAD, and objects and refs or a commondir. A
 * commondir counts for both, whatever it names: what it names may change
 * later. */
bool sfs_gitdir_complete(unsigned present);

/*
 * Whether NAME (one component) is one that git reads commands or another
 * repository from when it lies directly in a git directory: config,
 * config.worktree, commondir, hooks. Everything below hooks counts too:
 * the caller asks it of the component just below the git directory.
 */
bool sfs_gitdir_command_name(const char *name, size_t len);

/* *OUT is the refusal of a change that would complete a git directory
 * (COMPLETES) or change what git reads commands from in one. */
void sfs_gitdir_refuse(struct sfs_decision *out, bool completes);

#endif
