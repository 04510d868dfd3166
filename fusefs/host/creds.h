/* creds.h - running a request as the process that made it. When sandyfs
 * runs as root (for --allow-other), each request that creates, changes or
 * opens something on the host is carried out with the caller's fsuid, fsgid
 * and supplementary groups, so ownership of new files and the host's own
 * permission checks are exactly the ones the caller would get natively.
 * Only the calling thread's credentials change (raw syscalls: glibc's
 * setgroups would change every thread). */
#ifndef SANDYFS_CREDS_H
#define SANDYFS_CREDS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <stdbool.h>

struct sfs_creds {
	bool switched; /* fsuid and fsgid are the caller's */
	bool groups;   /* so are the supplementary groups */
};

/* Decides once whether switching is possible (the daemon is root). */
void sfs_creds_init(void);
/* Whether requests run as their callers: the daemon is root. */
bool sfs_creds_switching(void);

/* Takes on the identity of REQ's caller; 0 or -errno (nothing switched). */
int sfs_creds_enter(fuse_req_t req, struct sfs_creds *saved);
/* Only the caller's fsuid and fsgid, for a write to a file the caller
 * opened: quotas and reserved blocks count as they would natively, and
 * the groups were settled by the open. */
void sfs_creds_enter_ids(fuse_req_t req, struct sfs_creds *saved);
/* For a moment the daemon's own fsuid and fsgid again, inside a request
 * that runs as its caller: for what the kernel allowed the caller once
 * already (keeping a descriptor of a file it opened). sfs_creds_resume
 * gives the caller's back. */
struct sfs_creds_pause {
	bool paused;
	uid_t uid;
	gid_t gid;
};
void sfs_creds_pause(struct sfs_creds_pause *p);
void sfs_creds_resume(struct sfs_creds_pause *p);

/* Undoes what the enter switched. */
void sfs_creds_leave(struct sfs_creds *saved);
#define cleanup_creds __attribute__((cleanup(sfs_creds_leave)))

#endif
