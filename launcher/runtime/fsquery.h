/* fsquery.h - sandyfs asked about a project rather than mounting it
 * (rules, explain, store, git): this host's program, or in the portable
 * shape sandyfs in a short container of its image (fsbox.h). Above both the
 * daemon module (sandyfs.h) and the box, which it chooses between. */
#ifndef SANDY_FSQUERY_H
#define SANDY_FSQUERY_H

#include "sys/sandy.h"

#include <stdbool.h>

/* How sandy runs sandyfs for what is not a mount (rules, explain, store,
 * git): the program on this host, or, where none runs (the portable shape
 * of sandy, platform.h: a Mac has no Linux sandyfs), sandyfs in a short
 * container of its own image in the engine's world, which sees the
 * project, the store, the user's rule files and those of --rules at their
 * host paths (fsbox_query_argv). */
struct sandyfs_prog {
	char *path;	  /* on this host; NULL when it runs in a container */
	char *project;	  /* the project as the questions name it */
	struct strv argv; /* what runs sandyfs: PATH, or ENGINE run ... IMAGE sandyfs */
};

/* Finds sandyfs for questions about PROJECT under RULE_ARGS: on this host,
 * else through ENGINE (NULL: the first that answers). Says what is
 * missing; 0 or -errno. */
int sandyfs_prog_find(struct sandyfs_prog *p, const char *engine, const char *project,
		      const struct strv *rule_args);
void sandyfs_prog_free(struct sandyfs_prog *p);
static inline void sandyfs_prog_freep(struct sandyfs_prog *p)
{
	sandyfs_prog_free(p);
}
#define cleanup_sandyfs_prog __attribute__((cleanup(sandyfs_prog_freep)))

/* Replaces this process with ARGV (sandyfs's argv, as the _argv helpers
 * make it); returns only on failure, with the message printed. */
int sandyfs_exec(const struct strv *argv);

/* The start of a question to sandyfs about the project's policy under
 * RULE_ARGS: `SANDYFS CMD [--json] RULE_ARGS -- PROJECT`, appended to ARGV;
 * the caller adds CMD's paths, if any, and runs it. */
int sandyfs_query_argv(struct strv *argv, const struct sandyfs_prog *p, const char *cmd, bool json,
		       const struct strv *rule_args);

#endif
