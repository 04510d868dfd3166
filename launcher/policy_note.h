/* policy_note.h - the short note (POLICY.md) that tells the agent inside the
 * session what it may write, that protected names stay read-only, and where
 * to read why a write failed. Built from `sandyfs rules --json`. */
#ifndef SANDY_POLICY_NOTE_H
#define SANDY_POLICY_NOTE_H

#include "util.h"

#include <stdbool.h>

struct policy_note {
	const char *sandyfs; /* NULL with --fs=bind: there is no policy */
	const struct strv *rule_args;
	const char *project;
	const char *workspace; /* the project's path as the agent sees it */
	const char *denials;   /* the audit log's path as the agent sees it */
};

/* The note's text (malloc'ed). */
int policy_note_text(const struct policy_note *n, char **out);

/* What the note says of the policy. */
struct policy_summary {
	struct strv write_globs;   /* writable rules' patterns */
	struct strv private_globs; /* private rules' patterns */
	struct strv sources;	   /* the rule sources' names */
	bool owned;		   /* what the agent creates is its own */
};
void policy_summary_free(struct policy_summary *s);

/* From `sandyfs rules --json` output ({"sources": [{"name", "path", ...}],
 * "rules": [{"class", "pattern", ...}], "owned": BOOL}): the patterns of the
 * writable and private rules and the names of the rule sources, in order,
 * without duplicates, and whether ownership is on (also when the output
 * does not say). */
int policy_parse_rules(const char *json, struct policy_summary *out);

#endif
