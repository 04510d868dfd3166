/* agentgit.h - the agent's own repository in a session: sandyfs serves it
 * at .git (--private-git), layered on the host's objects, which the agent
 * sees read-only where the repository's alternates say; the optional push
 * gate (a pre-push hook that asks sandyfs to judge what would be pushed);
 * the summary's list of branches waiting to be imported; and `sandy git`,
 * which asks sandyfs to list and import them. What may come back is
 * decided by sandyfs alone (fusefs/git/gitcheck.h). */
#ifndef SANDY_AGENTGIT_H
#define SANDY_AGENTGIT_H

#include "sys/sandy.h"
#include "runtime/fsquery.h"
#include "runtime/sandyfs.h"
#include "world/world.h"

#include <stdbool.h>
#include <stdio.h>

/* The project's common git directory (malloc'ed into *OUT) when PROJECT
 * is the top of a git work tree: 1; 0 when it is not; -errno. */
int agentgit_host_dir(const char *project, char **out);

/* Where the agent sees the host's git directory: RUN/host-git, RUN being
 * where the session's files are seen inside. Malloc'ed. */
char *agentgit_seen_at(const char *run);

/* Finds the push gate's pieces (struct agentgit_gate, world/world.h); says what is missing. */
int agentgit_gate_find(const char *sandyfs, struct agentgit_gate *out);
void agentgit_gate_free(struct agentgit_gate *g);

/* `sandy git`: runs `sandyfs git SUB` (FS) with the rule options on the
 * project (BRANCH for import). Exit status. */
int agentgit_command(const struct sandyfs_prog *fs, const struct strv *rule_args, const char *sub,
		     bool force, const char *branch);

/* Prints the branches the agent's repository holds that the project's
 * lacks, with how to import them; nothing when there are none. */
void agentgit_summary(FILE *f, const struct sandyfs_prog *fs, const struct strv *rule_args);

#endif
