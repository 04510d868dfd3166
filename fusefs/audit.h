/* audit.h - the audit log: one JSON object per line per
 * denied operation, appended to a file the user (and, through sandy, the
 * agent) can read. Bursts are rate-limited by a token bucket; what the
 * bucket drops is counted and reported in a {"suppressed": N} record, so a
 * denial loop cannot fill the disk and nothing is dropped silently. */
#ifndef SANDYFS_AUDIT_H
#define SANDYFS_AUDIT_H

#include <stdint.h>
#include <sys/types.h>

struct sfs_audit;

struct sfs_audit_record {
	const char *op;	       /* "create", "rename", ... */
	const char *path;      /* relative to SOURCE */
	const char *target;    /* second name (rename, link, symlink target), or NULL */
	const char *cls;       /* class name of the path that decided */
	const char *rule_file; /* deciding rule */
	const char *rule;
	const char *why;
	pid_t pid;
	uid_t uid;
	int err; /* the errno the caller got */
};

/* Rate limit: BURST records at once, then RATE per second. */
struct sfs_audit_limits {
	unsigned burst;
	unsigned rate;
};

/* Opens (creating, appending) PATH. Negative errno. */
int sfs_audit_open(const char *path, const struct sfs_audit_limits *limits, struct sfs_audit **out);
/* Writes out the count of suppressed records, if any, and closes. */
void sfs_audit_close(struct sfs_audit *a);

/* Records a denial; thread-safe; never blocks on anything but the file. */
void sfs_audit_denial(struct sfs_audit *a, const struct sfs_audit_record *r);

/* Counters: records written, records suppressed so far. */
void sfs_audit_counts(struct sfs_audit *a, uint64_t *written, uint64_t *suppressed);

#endif
