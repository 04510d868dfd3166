/* policy_note.h - the short note (POLICY.md) that tells the agent inside the
 * session what it may write, that protected names stay read-only, and where
 * to read why a write failed. Built from `sandyfs rules --json`. */
#ifndef SANDY_POLICY_NOTE_H
#define SANDY_POLICY_NOTE_H

#include "egress.h"
#include "sandy.h"

#include <stdbool.h>

struct policy_note {
	const char *sandyfs; /* NULL with --fs=bind: there is no policy */
	const struct strv *rule_args;
	const char *project;
	const char *workspace; /* the project's path as the agent sees it */
	const char *denials;   /* the audit log's path as the agent sees it */
	const char *home;      /* the agent's home as it sees it */
	bool shared;	       /* ~/shared is mounted */
	bool container;	       /* a container; else the bubblewrap sandbox */
	enum egress_mode network;
	const struct strv *allow; /* the allowlist, when filtered */
};

/* The names of the rule sources sandyfs uses for the project ("base",
 * "node", ...), for the allowlist's registries. Empty when it cannot say. */
int policy_rule_sources(const char *sandyfs, const struct strv *rule_args, const char *project,
			struct strv *out);

/* The note's text (malloc'ed). */
int policy_note_text(const struct policy_note *n, char **out);

#endif
