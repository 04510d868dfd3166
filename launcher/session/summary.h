/* summary.h - the session summary: denials grouped by the rule that decided
 * them (from the audit log), and the files the session changed, from a
 * libgit2 status taken at launch and again at the end. */
#ifndef SANDY_SUMMARY_H
#define SANDY_SUMMARY_H

#include "sys/sandy.h"
#include "runtime/fsquery.h"
#include "runtime/sandyfs.h"

#include <stdbool.h>
#include <stdio.h>

struct git_snapshot;

/* The status of the repository holding PROJECT, limited to PROJECT; with
 * *OUT NULL (and 0 returned) when PROJECT is in no work tree. */
int summary_snapshot_take(const char *project, struct git_snapshot **out);
void summary_snapshot_free(struct git_snapshot *s);

struct denial_stats;

/* Reads the audit log (one JSON object per line). Missing file: no
 * denials. */
int summary_denials_read(const char *path, struct denial_stats **out);
void summary_denials_free(struct denial_stats *d);

/* How to ask sandyfs about the session's paths. */
struct summary_policy {
	const struct sandyfs_prog *fs;
	const struct strv *rule_args;
};

/* Prints the summary to F: the denials, the changed files (those the
 * agent owns marked so), and where the private directories are kept.
 * POLICY NULL: the session had no policy (--fs=bind). */
void summary_print(FILE *f, const char *project, const struct git_snapshot *launch,
		   const struct denial_stats *denials, const struct summary_policy *policy);

#endif
