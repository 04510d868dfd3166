/* install.h - where a program finds what it ships with: the rule files,
 * the read-only overlays, the container files, and sandyfs beside sandy.
 * One rule for all of them, in this order:
 *
 *   1. the environment variable that names it ($SANDY_RULES_DIR, ...),
 *      when set and not empty: the user's choice, taken as given;
 *   2. the source tree's copy, when the program runs uninstalled: its
 *      executable lies beneath the build directory meson configured
 *      (SANDY_BUILD_ROOT), as the tests run it (so an install tree made
 *      inside the build directory counts as the build);
 *   3. beside the program: the executable's directory, then the path
 *      from meson's bindir to its datadir (SANDY_BINDIR_TO_DATADIR,
 *      "../share" for the usual layout), then sandy/NAME; a program is
 *      looked for in the executable's own directory. So an install tree
 *      works wherever it lies: a `meson install --destdir` tree run from
 *      there, a prefix moved elsewhere;
 *   4. the configured path: PREFIX/DATADIR/sandy/NAME (PREFIX/BINDIR/NAME
 *      for a program).
 *
 * An installed program never falls back to the source tree: when none of
 * the places has it, the error names every place it looked. */
#ifndef SANDY_COMMON_INSTALL_H
#define SANDY_COMMON_INSTALL_H

#include <stdbool.h>

struct install_item {
	const char *what;  /* for messages: "the shipped rules" */
	const char *env;   /* the variable that names it ("SANDY_RULES_DIR"), or NULL */
	const char *build; /* the source tree's or build directory's copy, absolute */
	const char *name;  /* installed as DATADIR/sandy/NAME, or BINDIR/NAME */
	bool program;	   /* NAME is a program installed in BINDIR */
	const char *probe; /* a file that must exist in the directory, or NULL */
};

/* The directory of the running program's executable (symlinks resolved),
 * or NULL when /proc/self/exe cannot be read. Not to be freed. */
const char *install_self_dir(void);

/* Whether the running program is a build directory's, not an installed
 * copy. */
bool install_uninstalled(void);

/* Finds ITEM as above: 0 and *PATH (malloc'ed); -ENOENT and *ERR (as
 * err_set, when ERR is not NULL) naming the places looked in; -ENOMEM. */
int install_find(const struct install_item *item, char **path, char **err);

/* The shipped rule files and read-only overlays: sandyfs reads them, sandy
 * shows them to its push gate. */
extern const struct install_item install_rules, install_overlays;

#endif
