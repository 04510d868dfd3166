/* nsrun.c - see nsrun.h. */

#include "nsrun.h"
#include "proc.h"
#include "sandy.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>

/* What the child reports through the pipe when it cannot start the
 * command: which step failed and its errno. */
struct ns_failure {
	int step;
	int err;
};

enum {
	STEP_UNSHARE,
	STEP_USERNS_MAP,
	STEP_PROPAGATION,
	STEP_BIND,
	STEP_READONLY,
	STEP_CHDIR,
	STEP_CREDS,
	STEP_EXEC,
};

static const char *const step_what[] = {
	[STEP_UNSHARE] = "cannot create a mount namespace",
	[STEP_USERNS_MAP] = "cannot map the user into its namespace",
	[STEP_PROPAGATION] = "cannot make the namespace's mounts private",
	[STEP_BIND] = "cannot put the sandyfs view over the project",
	[STEP_READONLY] = "cannot make the session directory read-only",
	[STEP_CHDIR] = "cannot enter the project",
	[STEP_CREDS] = "cannot switch to the invoking user",
	[STEP_EXEC] = "cannot run the command",
};

static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int e = errno;
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -(n < 0 ? e : EIO);
}

/* A non-root user gets a mount namespace through a user namespace in
 * which it is itself (not root): it may bind mounts there and nothing
 * more. */
static int enter_namespace(struct ns_failure *f)
{
	if (geteuid() == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			return f->step = STEP_UNSHARE, -errno;
		return 0;
	}
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return f->step = STEP_UNSHARE, -errno;
	f->step = STEP_USERNS_MAP;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	int r = write_proc("/proc/self/uid_map", map);
	if (r == 0)
		r = write_proc("/proc/self/setgroups", "deny\n");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (r == 0)
		r = write_proc("/proc/self/gid_map", map);
	return r;
}

static int set_mounts(const struct nsrun_spec *s, struct ns_failure *f)
{
	f->step = STEP_PROPAGATION;
	/* Slave, not private: an unmount on the host (sandy's teardown)
	 * still reaches this namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -errno;
	if (s->view) {
		f->step = STEP_BIND;
		if (mount(s->view, s->project, NULL, MS_BIND | MS_REC, NULL) < 0)
			return -errno;
	}
	/* The audit log and the note are the session's record: the command
	 * may read them, not rewrite them. */
	f->step = STEP_READONLY;
	struct statvfs sv;
	if (statvfs(s->session_dir, &sv) < 0 ||
	    mount(s->session_dir, s->session_dir, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -errno;
	/* A remount must repeat the flags the mount is locked with (in a user
	 * namespace, dropping noexec or nosuid is refused). */
	unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		flags |= MS_NOEXEC;
	if (sv.f_flag & ST_NOATIME)
		flags |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		flags |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		flags |= MS_RELATIME;
	if (mount(NULL, s->session_dir, NULL, flags, NULL) < 0)
		return -errno;
	return 0;
}

/* Re-enters the working directory through the new mounts: the old cwd
 * still points into the directory the view now covers. */
static int enter_project(const struct nsrun_spec *s, struct ns_failure *f)
{
	char cwd[PATH_MAX];
	size_t len = strlen(s->project);

	f->step = STEP_CHDIR;
	if (getcwd(cwd, sizeof(cwd)) && !strncmp(cwd, s->project, len) &&
	    (cwd[len] == '\0' || cwd[len] == '/') && chdir(cwd) == 0)
		return 0;
	return chdir(s->project) < 0 ? -errno : 0;
}

static int drop_to_user(const struct host_user *u, struct ns_failure *f)
{
	f->step = STEP_CREDS;
	if (!u->via_sudo)
		return 0;
	if ((u->name ? initgroups(u->name, u->gid) : setgroups(0, NULL)) < 0 ||
	    setgid(u->gid) < 0 || setuid(u->uid) < 0)
		return -errno;
	if (u->name) {
		setenv("USER", u->name, 1);
		setenv("LOGNAME", u->name, 1);
	}
	if (u->home)
		setenv("HOME", u->home, 1);
	setenv("SHELL", u->shell, 1);
	return 0;
}

static void child(const struct nsrun_spec *s, int report)
{
	struct ns_failure f = {0};
	int r;

	proc_reset_signals();
	if ((r = enter_namespace(&f)) == 0 && (r = set_mounts(s, &f)) == 0 &&
	    (r = enter_project(s, &f)) == 0 && (r = drop_to_user(s->user, &f)) == 0) {
		setenv("SANDY", "1", 1);
		setenv("SANDY_SESSION", s->session_id, 1);
		if (s->policy)
			setenv("SANDY_POLICY", s->policy, 1);
		if (s->audit)
			setenv("SANDY_DENIALS", s->audit, 1);
		f.step = STEP_EXEC;
		if (s->command) {
			execvp(s->command[0], s->command);
		} else {
			char *argv[] = {s->user->shell, NULL};
			execv(argv[0], argv);
		}
		r = -errno;
	}
	f.err = -r;
	if (write(report, &f, sizeof(f)) < 0)
		_exit(SANDY_EXIT_FAILURE);
	_exit(f.step == STEP_EXEC ? (f.err == ENOENT ? 127 : 126) : SANDY_EXIT_FAILURE);
}

int nsrun_start(const struct nsrun_spec *s, pid_t *pidp)
{
	int report[2];

	if (pipe2(report, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(report[0]);
		close(report[1]);
		sandy_error("cannot start the command: %s", strerror(e));
		return -e;
	}
	if (pid == 0) {
		close(report[0]);
		child(s, report[1]);
	}
	close(report[1]);
	struct ns_failure f;
	ssize_t n;
	while ((n = read(report[0], &f, sizeof(f))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (n != (ssize_t)sizeof(f)) {
		*pidp = pid;
		return 0;
	}
	const char *cmd = s->command ? s->command[0] : s->user->shell;
	if (f.step == STEP_EXEC) {
		/* Like a shell: the session ran, the command's status (126 or
		 * 127) is the result. */
		sandy_error("cannot run '%s': %s", cmd, strerror(f.err));
		*pidp = pid;
		return 0;
	}
	proc_wait(pid);
	if (f.step == STEP_UNSHARE && f.err == EPERM && geteuid() != 0)
		sandy_error("%s: %s; this kernel does not let users create namespaces "
			    "(kernel.unprivileged_userns_clone); run sandy as root (sudo) or use "
			    "a container runtime",
			    step_what[f.step], strerror(f.err));
	else
		sandy_error("%s: %s", step_what[f.step], strerror(f.err));
	return -(f.err ? f.err : EIO);
}
