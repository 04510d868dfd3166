/* session.h - the session directory: one per running sandy under the
 * user's runtime directory, holding the mountpoint, the audit log, the
 * policy note and a lock that the live sandy holds. A directory whose lock
 * is free belongs to a run that died; the next sandy cleans it up (its
 * container, its mounts, dead or alive, then the directory). */
#ifndef SANDY_SESSION_H
#define SANDY_SESSION_H

#include <stdbool.h>
#include <sys/stat.h>

struct session {
	char *rundir;
	char *dir;
	char *id; /* also names the container: sandy-ID */
	int lockfd;
	char *view;	  /* DIR/view, the shared bind */
	char *mountpoint; /* DIR/view/workspace, where sandyfs serves */
	char *audit;	  /* DIR/denials.jsonl */
	char *policy;	  /* DIR/POLICY.md */
	char *pidfile;	  /* DIR/sandyfs.pid */
};

/* The user's runtime directory for sandy: $XDG_RUNTIME_DIR/sandy, /run/sandy
 * for root, /run/user/UID/sandy, or /tmp/sandy-UID; created, and checked to
 * be the user's own. */
int session_rundir(char **out);

/* Cleans up every session under RUNDIR whose sandy is gone. Prints what it
 * did; failures are reported and skipped, never fatal. */
void session_sweep(const char *rundir, const char *sandyfs);

/* Creates and locks a new session directory for PROJECT. */
int session_create(const char *rundir, const char *project, struct session *s);

/* Remembers KEY=VALUE in the session directory (the runtime and container
 * name), for the sweep of a crashed run. */
int session_record(const struct session *s, const char *key, const char *value);

/* The value session_record stored under KEY in DIR (malloc'ed). */
int session_read_key(const char *dir, const char *key, char **value);

/* The directory of the running session ID under RUNDIR, or with ID NULL of
 * the only running one, that has recorded KEY. Says what is wrong when
 * there is none, or several. */
int session_find_live(const char *rundir, const char *id, const char *key, char **dir);

/* Whether PATH is a directory of this user's (its stat in *ST). */
bool session_own_dir(const char *path, struct stat *st);

/* Removes what session_create made, file by file; a directory that still
 * holds anything (a mount) stays. Negative errno. */
int session_remove_dir(const char *dir);

/* Releases the lock and, with REMOVE, the session directory first (its
 * mounts must be gone: nothing here recurses, so a mount left behind is
 * never walked into). Without REMOVE, the next sandy's sweep cleans up. */
void session_end(struct session *s, bool remove);

#endif
