/* policy_note.h - the short note (POLICY.md) that tells the agent inside the
 * session what it may write, that protected names stay read-only, and where
 * to read why a write failed. Built from `sandyfs rules --json`. */
#ifndef SANDY_POLICY_NOTE_H
#define SANDY_POLICY_NOTE_H

#include "world/egress.h"
#include "sys/sandy.h"
#include "runtime/fsquery.h"
#include "runtime/sandyfs.h"

#include <stdbool.h>

/* The merged policy as `sandyfs rules --json` gives it: what the note says
 * of it, and the rule sources the allowlist's registries come from. */
struct policy_rules {
	struct strv write_globs;   /* writable rules' patterns */
	struct strv private_globs; /* private rules' patterns */
	struct strv layout;	   /* "PATH (WHY)": what git's layout makes immutable */
	struct strv sources;	   /* the rule sources' names ("base", "node", ...) */
	bool owned;		   /* what the agent creates is its own */
};

/* Asks sandyfs (FS) for the policy it serves the project with (with
 * PRIVATE_GIT, as a mount with the agent's own .git). Empty lists when it
 * cannot say: the note then describes the policy without them. */
void policy_rules_fetch(const struct sandyfs_prog *fs, const struct strv *rule_args,
			bool private_git, struct policy_rules *out);
void policy_rules_free(struct policy_rules *r);

struct policy_note {
	const struct policy_rules *rules; /* NULL with --fs=bind: there is no policy */
	const char *workspace;		  /* the project's path as the agent sees it */
	const char *denials;		  /* the audit log's path as the agent sees it */
	const char *home;		  /* the agent's home as it sees it */
	bool shared;			  /* ~/shared is mounted */
	bool private_git;		  /* .git is the agent's own repository */
	bool push_gate;			  /* with sandy's pre-push hook */
	bool container;			  /* a container; else the bubblewrap sandbox */
	enum egress_mode network;
	const struct strv *allow; /* the allowlist, when filtered */
};

/* The note's text (malloc'ed). */
int policy_note_text(const struct policy_note *n, char **out);

#endif
