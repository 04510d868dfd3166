/* explain.h - what the policy of a source says, without a mount:
 * `sandyfs explain` (per path: its class, the deciding rule and why, what
 * the user can do) and `sandyfs rules` (the effective merged policy), as
 * text or JSON (the JSON carries exactly the fields the text shows). The
 * policy is assembled as the mount assembles it (git/source.h). */
#ifndef SANDYFS_EXPLAIN_H
#define SANDYFS_EXPLAIN_H

#include "policy/rules.h"

#include <stdbool.h>

struct sfs_query {
	struct sfs_rule_opts rules;
	const char *source;
	const char *store; /* the project's store; NULL: the default (host/store.h) */
	bool private_git;  /* as a mount with --private-git */
	bool json;
};

/* Explains each of PATHS (relative to SOURCE, or SOURCE/PATH, or absolute
 * inside SOURCE; it need not exist). Exit status: 0, or 1 when the rules
 * do not load or a path lies outside SOURCE (the others are explained). */
int sfs_explain(const struct sfs_query *q, char *const *paths, int npaths);

/* Prints the effective policy. Exit status. */
int sfs_rules(const struct sfs_query *q);

/* The project types --type takes, one a line (for shell completion).
 * Exit status. */
int sfs_rules_types(void);

#endif
