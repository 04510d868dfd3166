/* mount.c - see mount.h. */

#include "mount.h"
#include "proc.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

/* Undoes the octal escapes of /proc/self/mountinfo (\040 for a space). */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

struct mountinfo_line {
	char *mountpoint;
	char *optional; /* "shared:N master:M" ... */
	char *fstype;
};

/* Splits one mountinfo line in place:
 * id parent maj:min root mountpoint options [optional...] - fstype source superopts */
static bool parse_line(char *line, struct mountinfo_line *m)
{
	char *save = NULL, *tok;
	int field = 0;
	static char empty[] = "";

	m->optional = empty;
	m->mountpoint = m->fstype = NULL;
	char *opt_start = NULL, *opt_end = NULL;
	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), field++) {
		if (field == 4) {
			m->mountpoint = tok;
		} else if (field >= 6 && !m->fstype) {
			if (!strcmp(tok, "-")) {
				tok = strtok_r(NULL, " \n", &save);
				if (!tok)
					return false;
				m->fstype = tok;
				break;
			}
			if (!opt_start)
				opt_start = tok;
			opt_end = tok + strlen(tok);
		}
	}
	if (!m->mountpoint || !m->fstype)
		return false;
	if (opt_start) {
		/* strtok_r put NULs between the optional fields: rejoin them. */
		for (char *p = opt_start; p < opt_end; p++)
			if (!*p)
				*p = ' ';
		m->optional = opt_start;
	}
	unescape(m->mountpoint);
	return true;
}

int mount_lookup(const char *path, struct mount_entry *e)
{
	cleanup_file FILE *f = fopen("/proc/self/mountinfo", "re");
	cleanup_free char *line = NULL;
	size_t cap = 0;
	int found = -ENOENT;

	if (!f)
		return -errno;
	/* The last entry for a path is the one on top. */
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_line m;
		if (!parse_line(line, &m) || strcmp(m.mountpoint, path) != 0)
			continue;
		found = 0;
		if (e) {
			snprintf(e->fstype, sizeof(e->fstype), "%s", m.fstype);
			e->shared = strstr(m.optional, "shared:") != NULL;
			e->slave = strstr(m.optional, "master:") != NULL;
		}
	}
	return found;
}

int mounts_under(const char *dir, struct strv *out)
{
	cleanup_file FILE *f = fopen("/proc/self/mountinfo", "re");
	cleanup_free char *line = NULL;
	cleanup_strv struct strv all = {0};
	size_t cap = 0, len = strlen(dir);

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_line m;
		if (!parse_line(line, &m))
			continue;
		if (strncmp(m.mountpoint, dir, len) != 0 ||
		    (m.mountpoint[len] != '\0' && m.mountpoint[len] != '/'))
			continue;
		int r = strv_push(&all, m.mountpoint);
		if (r < 0)
			return r;
	}
	/* mountinfo lists a mount after the one it sits on. */
	for (size_t i = all.n; i-- > 0;) {
		int r = strv_push(out, all.v[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

int view_share(const char *view)
{
	if (mount(view, view, NULL, MS_BIND, NULL) < 0)
		return -errno;
	if (mount(NULL, view, NULL, MS_SHARED, NULL) < 0) {
		int e = errno;
		umount2(view, MNT_DETACH);
		return -e;
	}
	return 0;
}

int sandyfs_mount(const char *sandyfs, const struct strv *rule_args, bool allow_other,
		  const char *audit, const char *pidfile, const char *project, const char *mp)
{
	cleanup_strv struct strv argv = {0};
	int r = 0;

	r = strv_ok(r, strv_push(&argv, sandyfs));
	r = strv_ok(r, strv_push(&argv, "mount"));
	if (allow_other)
		r = strv_ok(r, strv_push(&argv, "--allow-other"));
	r = strv_ok(r, strv_push(&argv, "--pid-file"));
	r = strv_ok(r, strv_push(&argv, pidfile));
	r = strv_ok(r, strv_push(&argv, "--audit"));
	r = strv_ok(r, strv_push(&argv, audit));
	r = strv_ok(r, strv_extend(&argv, rule_args));
	r = strv_ok(r, strv_push(&argv, "--"));
	r = strv_ok(r, strv_push(&argv, project));
	r = strv_ok(r, strv_push(&argv, mp));
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

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

int sandyfs_watch(const char *pidfile, struct sfs_daemon *d)
{
	cleanup_free char *text = NULL;
	int r = read_file(pidfile, 32, &text);

	*d = (struct sfs_daemon){.pid = -1, .fd = -1};
	if (r < 0)
		return r;
	char *end;
	long pid = strtol(text, &end, 10);
	if (pid <= 1 || (*end && *end != '\n'))
		return -EINVAL;
	d->pid = (pid_t)pid;
	d->fd = pidfd_open_compat(d->pid);
	if (d->fd < 0 && errno == ESRCH)
		return -ESRCH;
	if (d->fd >= 0)
		fcntl(d->fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

bool sandyfs_alive(const struct sfs_daemon *d)
{
	if (d->pid <= 0)
		return false;
	if (d->fd >= 0) {
		struct pollfd p = {.fd = d->fd, .events = POLLIN};
		return poll(&p, 1, 0) == 0;
	}
	return kill(d->pid, 0) == 0 || errno == EPERM;
}

void sandyfs_wait_exit(const struct sfs_daemon *d, int ms)
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

void sandyfs_unwatch(struct sfs_daemon *d)
{
	if (d->fd >= 0)
		close(d->fd);
	*d = (struct sfs_daemon){.pid = -1, .fd = -1};
}

static int plain_unmount(const char *mp, bool lazy)
{
	if (geteuid() == 0)
		return umount2(mp, lazy ? MNT_DETACH : 0) == 0 ? 0 : -errno;
	/* A user's FUSE mount belongs to fusermount3; other mounts a user
	 * cannot have made. */
	char *argv[] = {"fusermount3", "-u", "-q", "--", (char *)mp, NULL};
	char *lazy_argv[] = {"fusermount3", "-u", "-q", "-z", "--", (char *)mp, NULL};
	int status = proc_run(lazy ? lazy_argv : argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_NULL,
			      NULL, NULL);
	return status == 0 ? 0 : -EBUSY;
}

int unmount_path(const char *sandyfs, const char *mp)
{
	struct mount_entry e;

	if (mount_lookup(mp, &e) == -ENOENT)
		return 0;
	if (sandyfs && !strncmp(e.fstype, "fuse", 4)) {
		char *argv[] = {(char *)sandyfs, "umount", (char *)mp, NULL};
		if (proc_run(argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_NULL, NULL, NULL) == 0)
			return 0;
	}
	int r = plain_unmount(mp, false);
	if (r == 0 || mount_lookup(mp, NULL) == -ENOENT)
		return 0;
	/* Busy: a process outside sandy's control (a background job of a
	 * --runtime=none session) still works in it. Detaching takes it
	 * out of every path; the daemon ends when the last user lets go. */
	r = plain_unmount(mp, true);
	if (r < 0 && mount_lookup(mp, NULL) == 0) {
		sandy_error("cannot unmount '%s': %s; unmount it by hand ('%s umount %s')", mp,
			    strerror(-r), sandyfs ? sandyfs : "sandyfs", mp);
		return r;
	}
	return 0;
}
