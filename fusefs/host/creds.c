/* creds.c - see creds.h. */

#include "creds.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"

static bool creds_switchable;

void sfs_creds_init(void)
{
	creds_switchable = geteuid() == 0;
}

bool sfs_creds_switching(void)
{
	return creds_switchable;
}

static int set_thread_groups(size_t n, const gid_t *groups)
{
	return syscall(SYS_setgroups, n, groups) < 0 ? -errno : 0;
}

int sfs_creds_enter(fuse_req_t req, struct sfs_creds *saved)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t small[64], *groups = small;
	int n;

	saved->switched = saved->groups = false;
	if (!creds_switchable || (ctx->uid == 0 && ctx->gid == 0))
		return 0;

	n = fuse_req_getgroups(req, (int)ARRAY_SIZE(small), small);
	if (n > (int)ARRAY_SIZE(small)) {
		groups = calloc((size_t)n, sizeof(*groups));
		if (!groups)
			return -ENOMEM;
		n = fuse_req_getgroups(req, n, groups);
	}
	/* The caller may have exited already; it then has no groups left
	 * to grant anything, and the primary ones are enough. */
	int r = set_thread_groups(n > 0 ? (size_t)n : 0, groups);
	if (groups != small)
		free(groups);
	if (r < 0)
		return r;
	setfsgid(ctx->gid);
	setfsuid(ctx->uid);
	saved->switched = saved->groups = true;
	if ((uid_t)setfsuid((uid_t)-1) != ctx->uid || (gid_t)setfsgid((gid_t)-1) != ctx->gid) {
		sfs_creds_leave(saved);
		return -EPERM;
	}
	return 0;
}

void sfs_creds_enter_ids(fuse_req_t req, struct sfs_creds *saved)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	saved->groups = false;
	saved->switched = creds_switchable && (ctx->uid != 0 || ctx->gid != 0);
	if (saved->switched) {
		setfsgid(ctx->gid);
		setfsuid(ctx->uid);
	}
}

void sfs_creds_pause(struct sfs_creds_pause *p)
{
	p->paused = false;
	if (!creds_switchable)
		return;
	p->uid = (uid_t)setfsuid((uid_t)-1);
	p->gid = (gid_t)setfsgid((gid_t)-1);
	if (p->uid != 0 || p->gid != 0) {
		setfsuid(0);
		setfsgid(0);
		p->paused = true;
	}
}

void sfs_creds_resume(struct sfs_creds_pause *p)
{
	int e = errno;

	if (p->paused) {
		setfsgid(p->gid);
		setfsuid(p->uid);
		p->paused = false;
	}
	errno = e;
}

void sfs_creds_leave(struct sfs_creds *saved)
{
	int e = errno;

	if (saved->switched) {
		setfsuid(0);
		setfsgid(0);
		saved->switched = false;
	}
	if (saved->groups) {
		set_thread_groups(0, NULL);
		saved->groups = false;
	}
	errno = e;
}
