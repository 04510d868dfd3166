/* loader.h - the rule loader's insides, shared by the three files that make
 * it up and by nothing else: rules.c (the sources of rules and the loader
 * that merges them), ruleparse.c (one rule file's text to rules, with the
 * line of every rule) and detect.c (which shipped types apply where). */
#ifndef SANDYFS_LOADER_H
#define SANDYFS_LOADER_H

#include <stdbool.h>
#include <stddef.h>

#include "rules.h"
#include "common/strv.h"

/* A rule file larger than this is refused rather than read. */
#define MAX_RULE_FILE (1024 * 1024)

struct rule_release {
	char *pattern;
	int line;
};

/* One rule file, parsed but not yet merged. */
struct rule_file {
	char *path;
	char *stem; /* shipped files: the NAME of NAME.json */
	char *name, *description, *origin;
	enum sfs_trust trust;
	struct sfs_rule *rules;
	size_t nrules;
	struct rule_release *rel;
	size_t nrel;
	struct strv extends;
	int *extends_line; /* the line of each of extends */
	struct strv detect;
	/* "projects": the user-level file applies only to these (absolute
	 * paths); empty: to every project. */
	struct strv projects;
	int owned; /* "owned": -1 when absent */
};

struct sfs_loader {
	char *shipped_dir, *overlays_dir;
	char *source; /* the project's resolved path, for "projects"; NULL: unknown */
	struct rule_file **files;
	size_t nfiles;
	const char **chain; /* stems being loaded, for extends cycles */
	size_t nchain;
};

/* ---- ruleparse.c ---- */

void rule_file_free(struct rule_file *f);
void rule_free_strings(struct sfs_rule *r);
/* A name "extends" and --type may give: [a-z0-9_-], 1 to 64 bytes. */
bool rule_set_name_valid(const char *s);
/* An fd of the regular file PATH, or a negative errno and *ERR. */
int rule_file_open(const char *path, char **err);
/* Parses TEXT (LEN bytes, NUL-terminated), named PATH in messages, into a
 * new *OUT (STEM: the NAME of a shipped NAME.json, else NULL). */
int rule_file_parse(struct sfs_loader *l, const char *text, size_t len, const char *path,
		    const char *stem, enum sfs_trust trust, const char *origin,
		    struct rule_file **out, char **err);
/* The same for the text read from FD. */
int rule_file_parse_fd(struct sfs_loader *l, int fd, const char *path, const char *stem,
		       enum sfs_trust trust, const char *origin, struct rule_file **out,
		       char **err);

/* ---- rules.c ---- */

/* Whether the shipped type STEM is loaded already. */
bool loader_has(const struct sfs_loader *l, const char *stem);
/* Resolves F's extends, then takes F over (freed on failure too). */
int loader_commit(struct sfs_loader *l, struct rule_file *f, char **err);
/* Parses SHIPPED_DIR/NAME.json into a new *OUT, not merged yet. */
int loader_parse_shipped(struct sfs_loader *l, const char *name, const char *origin,
			 struct rule_file **out, char **err);
/* The names of the shipped types not loaded yet, sorted. */
int loader_unloaded_types(const struct sfs_loader *l, struct strv *names, char **err);

#endif
