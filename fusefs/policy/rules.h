/*
 * rules: reading rule files into a compiled policy. The only
 * part of the policy code that does file I/O.
 *
 * Sources, all merged into one policy (order never matters):
 *   - the shipped rules directory: base.json always, NAME.json for each
 *     --type NAME, and, with no --type and no --no-detect, every shipped
 *     file whose "detect" marker exists at SOURCE's root or in a
 *     subdirectory; of every other shipped file its protections (protect,
 *     hide, overlay), whatever was detected;
 *   - "extends": names resolved in the shipped directory (cycles rejected);
 *   - --rules FILE (command line, user trust);
 *   - $SANDY_CONFIG_DIR/rules.d/ *.json, else ~/.config/sandy/rules.d/ *.json
 *     ($XDG_CONFIG_HOME honoured; user trust);
 *   - SOURCE/.sandy/rules.json (project trust: may add write globs and
 *     protections, may not "release" and may only overlay shipped files).
 *
 * The shipped directory and the one of the overlay files named without a
 * '/' are found as common/install.h says: $SANDY_RULES_DIR and
 * $SANDY_OVERLAYS_DIR; the source tree's rules/ and ro-overlays/ for a
 * program of the build directory; DATADIR/sandy/rules and
 * DATADIR/sandy/ro-overlays beside the program, then at the configured
 * prefix. Neither found is an error naming where it looked.
 *
 * Any error (syntax, unknown or duplicate key, wrong type, bad glob,
 * unknown extends, extends cycle, forbidden release) rejects the whole
 * policy with a message "FILE:LINE: reason" (the caller prefixes
 * "error: ").
 */
#ifndef SANDYFS_RULES_H
#define SANDYFS_RULES_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "common/strv.h"

/* ---- command-line rule options, shared by mount, explain and rules ---- */

struct sfs_rule_opts {
	struct strv types; /* --type NAME, in order */
	struct strv files; /* --rules FILE, in order */
	bool no_detect;
};

enum { SFS_OPT_NO_DETECT = 0x5301 };

/* getopt short options and long option entries, to splice into a table. */
#define SFS_RULE_SHORT_OPTS "t:r:"
/* clang-format off */
#define SFS_RULE_LONG_OPTS                                                                         \
	{"type", required_argument, NULL, 't'},                                                    \
	{"rules", required_argument, NULL, 'r'},                                                   \
	{"no-detect", no_argument, NULL, SFS_OPT_NO_DETECT}
/* clang-format on */

/* The rule options in --help, for every command that takes them:
 * SANDYFS_HELP_RULE_OPTIONS of the generated sandyfs_help.h, from the
 * "rule options:" block of fusefs/sandyfs.help. */

/*
 * Feeds one getopt result to O: 1 when OPT was a rule option (consumed),
 * 0 when it is not one, -ENOMEM.
 */
int sfs_rule_opts_parse(struct sfs_rule_opts *o, int opt, const char *arg);
void sfs_rule_opts_free(struct sfs_rule_opts *o);

/*
 * Loads every source above for SOURCE_DIR and compiles the policy. On
 * failure returns a negative errno and *ERR (malloc'ed) says what and
 * where, e.g. "rules/x.json:7: unknown key 'wirte'".
 */
int sfs_policy_load(const struct sfs_rule_opts *o, const char *source_dir, struct sfs_policy **out,
		    char **err);

/* The shipped rules and overlay directories as resolved above: 0 and *DIR
 * (malloc'ed), or a negative errno and *ERR (malloc'ed) naming the places
 * looked in. */
int sfs_shipped_rules_dir(char **dir, char **err);
int sfs_shipped_overlays_dir(char **dir, char **err);

/* The project types --type takes: the NAMEs of the shipped NAME.json but
 * base.json (always read), sorted, appended to NAMES. 0, or a negative
 * errno and *ERR (malloc'ed). */
int sfs_shipped_types(struct strv *names, char **err);

/* ---- the loader underneath, for tests and fuzzers ---- */

enum sfs_trust {
	SFS_TRUST_SHIPPED, /* rules/ and extends */
	SFS_TRUST_USER,	   /* --rules and ~/.config/sandy/rules.d */
	SFS_TRUST_PROJECT, /* SOURCE/.sandy/rules.json */
};

struct sfs_loader;

/* SHIPPED_DIR resolves --type and extends (NULL: none); OVERLAYS_DIR bare overlay names. */
struct sfs_loader *sfs_loader_new(const char *shipped_dir, const char *overlays_dir);
void sfs_loader_free(struct sfs_loader *l);

/* Adds SHIPPED_DIR/NAME.json (and what it extends) unless already loaded. */
int sfs_loader_add_type(struct sfs_loader *l, const char *name, const char *origin, char **err);
/* Adds a rule file given by path. */
int sfs_loader_add_file(struct sfs_loader *l, const char *path, enum sfs_trust trust,
			const char *origin, char **err);
/* Adds rule file text held in memory; DISPLAY names it in messages. */
int sfs_loader_add_buffer(struct sfs_loader *l, const char *display, const char *text, size_t len,
			  enum sfs_trust trust, const char *origin, char **err);
/*
 * Adds every shipped file whose detect marker exists in directory SOURCE_FD
 * or in a subdirectory of it (up to four levels down, not in hidden or
 * private directories): its write, generated and private rules apply at
 * each place a marker is (re-rooted there for a subdirectory), its
 * protections everywhere.
 */
int sfs_loader_detect(struct sfs_loader *l, int source_fd, char **err);
/*
 * Adds the protect, hide and overlay rules of every shipped file not loaded
 * yet: protection never depends on detection.
 */
int sfs_loader_add_protections(struct sfs_loader *l, char **err);
/* Applies releases and compiles. The loader stays valid (and must be freed). */
int sfs_loader_finish(struct sfs_loader *l, struct sfs_policy **out, char **err);

#endif
