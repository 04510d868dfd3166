/* sandyfs.c - see sandyfs.h. */

#include "sandyfs.h"
#include "sys/host.h"
#include "sys/platform.h"
#include "sys/proc.h"

#include "common/mountinfo.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>

int sandyfs_mount_argv(struct strv *argv, const char *sandyfs, const struct strv *rule_args,
		       bool allow_other, bool foreground, const char *audit, const char *pidfile,
		       const char *git_seen_at, const char *project, const char *mp)
{
	int r = 0;

	r = strv_ok(r, strv_push(argv, sandyfs));
	r = strv_ok(r, strv_push(argv, "mount"));
	if (foreground)
		r = strv_ok(r, strv_push(argv, "--foreground"));
	if (allow_other)
		r = strv_ok(r, strv_push(argv, "--allow-other"));
	/* Opens without a round trip to the daemon each (rg, tar, builds open
	 * every file): a file the policy keeps is then refused at its first
	 * write, truncate or allocation rather than at open. */
	r = strv_ok(r, strv_push(argv, "--lazy-open"));
	r = strv_ok(r, strv_push(argv, "--pid-file"));
	r = strv_ok(r, strv_push(argv, pidfile));
	r = strv_ok(r, strv_push(argv, "--audit"));
	r = strv_ok(r, strv_push(argv, audit));
	if (git_seen_at) {
		r = strv_ok(r, strv_push(argv, "--private-git"));
		r = strv_ok(r, strv_push(argv, "--git-host-path"));
		r = strv_ok(r, strv_push(argv, git_seen_at));
	}
	r = strv_ok(r, strv_extend(argv, rule_args));
	r = strv_ok(r, strv_push(argv, "--"));
	r = strv_ok(r, strv_push(argv, project));
	return strv_ok(r, strv_push(argv, mp));
}

int sandyfs_mount(const char *sandyfs, const struct strv *rule_args, bool allow_other,
		  const char *audit, const char *pidfile, const char *git_seen_at,
		  const char *project, const char *mp)
{
	cleanup_strv struct strv argv = {0};
	int r = sandyfs_mount_argv(&argv, sandyfs, rule_args, allow_other, false, audit, pidfile,
				   git_seen_at, project, mp);

	if (r < 0)
		return r;
	/* sandyfs reports its own failures (a bad rule file names file and
	 * line); its stderr goes straight to the user. */
	int status = proc_run(argv.v, PROC_IN_NULL, NULL, NULL);
	if (status < 0) {
		sandy_error("cannot run '%s': %s", sandyfs, strerror(-status));
		return status;
	}
	return status == 0 ? 0 : -EIO;
}

int sandyfs_watch(const char *pidfile, struct sandyfs_daemon *d)
{
	cleanup_free char *text = NULL;
	int r = sandy_read_file(pidfile, 32, &text);

	*d = (struct sandyfs_daemon){.pid = -1, .fd = -1};
	if (r < 0)
		return r;
	char *end;
	long pid = strtol(text, &end, 10);
	if (pid <= 1 || (*end && *end != '\n'))
		return -EINVAL;
	d->pid = (pid_t)pid;
	d->fd = proc_pidfd(d->pid);
	if (d->fd < 0 && errno == ESRCH)
		return -ESRCH;
	return 0;
}

bool sandyfs_alive(const struct sandyfs_daemon *d)
{
	if (d->pid <= 0)
		return false;
	if (d->fd >= 0) {
		struct pollfd p = {.fd = d->fd, .events = POLLIN};
		return poll(&p, 1, 0) == 0;
	}
	return kill(d->pid, 0) == 0 || errno == EPERM;
}

void sandyfs_wait_exit(const struct sandyfs_daemon *d, int ms)
{
	if (d->pid <= 0)
		return;
	if (d->fd >= 0) {
		struct pollfd p = {.fd = d->fd, .events = POLLIN};
		while (poll(&p, 1, ms) < 0 && errno == EINTR)
			;
		return;
	}
	for (int waited = 0; waited < ms && sandyfs_alive(d); waited += 20)
		nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
}

void sandyfs_end(const struct sandyfs_daemon *d, int ms)
{
	if (!sandyfs_alive(d))
		return;
	if (platform_pidfd_kill(d->fd, d->pid, SIGTERM) == 0)
		sandyfs_wait_exit(d, ms);
}

void sandyfs_unwatch(struct sandyfs_daemon *d)
{
	if (d->fd >= 0)
		close(d->fd);
	*d = (struct sandyfs_daemon){.pid = -1, .fd = -1};
}

static int plain_unmount(const char *mp, bool lazy)
{
	if (geteuid() == 0)
		return platform_unmount(mp, lazy);
	/* A user's FUSE mount belongs to fusermount3; other mounts a user
	 * cannot have made. */
	char *argv[] = {"fusermount3", "-u", "-q", "--", (char *)mp, NULL};
	char *lazy_argv[] = {"fusermount3", "-u", "-q", "-z", "--", (char *)mp, NULL};
	int status = proc_run(lazy ? lazy_argv : argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_NULL,
			      NULL, NULL);
	return status == 0 ? 0 : -EBUSY;
}

int sandyfs_unmount(const char *sandyfs, const char *mp)
{
	/* When mountinfo cannot be read the mount may still be there: no
	 * fstype, so only the plain unmount is tried. */
	struct mount_entry e = {0};

	if (mount_lookup(mp, &e) == 0)
		return 0;
	if (sandyfs && !strncmp(e.fstype, "fuse", 4)) {
		char *argv[] = {(char *)sandyfs, "umount", (char *)mp, NULL};
		if (proc_run(argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_NULL, NULL, NULL) == 0)
			return 0;
	}
	int r = plain_unmount(mp, false);
	if (r == 0 || mount_lookup(mp, NULL) == 0)
		return 0;
	/* Busy: a process outside sandy's control (a background job of a
	 * --runtime=none session) still works in it. Detaching takes it
	 * out of every path; the daemon ends when the last user lets go. */
	r = plain_unmount(mp, true);
	if (r < 0 && mount_lookup(mp, NULL) > 0) {
		sandy_error("cannot unmount '%s': %s; unmount it by hand ('%s umount %s')", mp,
			    strerror(-r), sandyfs ? sandyfs : "sandyfs", mp);
		return r;
	}
	return 0;
}
