/* gitpriv.h - the agent's private repository: made and refreshed in the
 * project's store from SOURCE's repository when a --private-git mount
 * starts, and brought back by `sandyfs git`.
 *
 *   STORE/tree/.git     the private repository the mount serves at .git:
 *                       HEAD, refs, index and info/exclude copied from
 *                       SOURCE's, config.sandy made from SOURCE's config
 *                       without what runs programs (the agent's own config
 *                       includes it); objects/info/alternates names
 *                       SOURCE's objects, so nothing is copied
 *   STORE/git-mirror    the refs as last copied from SOURCE: a ref that
 *                       still has that value follows SOURCE's at the next
 *                       refresh, one the agent moved is kept
 *
 * Everything under STORE/tree is the agent's to write, so every file
 * written there is written with *at() calls that follow no symlink, and
 * everything read from there is read as hostile input: refs are parsed
 * here, objects only through libgit2's object database (whose ids are
 * checked against the content), never through the repository's own
 * config, hooks or alternates. */
#ifndef SANDYFS_GITPRIV_H
#define SANDYFS_GITPRIV_H

#include "policy/rules.h"
#include "host/store.h"

#include <stdbool.h>

/*
 * Makes or refreshes the private repository for SOURCE (resolved). Where
 * git runs, SOURCE's git directory is seen at HOST_GIT_AT (NULL: its own
 * path): alternates name HOST_GIT_AT/objects. A SOURCE that is not the top
 * of a repository is nothing to do (0). Returns 0 or a negative errno with
 * *ERR; *NOTE (malloc'ed, or NULL) says what the agent kept of its own.
 */
int sfs_gitpriv_refresh(struct sfs_store *store, const char *source, const char *host_git_at,
			char **note, char **err);

/* `sandyfs git list|import|check`. Exit statuses. */
int sfs_git_list_main(const struct sfs_rule_opts *rules, const char *store, bool json,
		      const char *source);
int sfs_git_import_main(const struct sfs_rule_opts *rules, const char *store, bool force,
			const char *source, const char *branch);
/* HOST_GIT, when not NULL, is SOURCE's git directory: commits it has are
 * not the agent's and are not judged. */
int sfs_git_check_main(const struct sfs_rule_opts *rules, const char *git_dir, const char *host_git,
		       const char *source, char **commits, int ncommits);

#endif
