/* nsrun.c - see nsrun.h. bubblewrap is Linux's: the portable shape of
 * sandy (platform.h) leaves all of this out, and says so. */

#include "nsrun.h"
#include "proc.h"
#include "sandy.h"

#if SANDY_LINUX_HOST

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

/* Where the command starts: the directory sandy was started in when it is
 * inside the project (seen through the view at the same path), else the
 * project's root. */
static const char *start_dir(const char *project, char *cwd, size_t size)
{
	size_t len = strlen(project);

	if (getcwd(cwd, size) && !strncmp(cwd, project, len) &&
	    (cwd[len] == '\0' || cwd[len] == '/'))
		return cwd;
	return project;
}

static int push3(struct strv *a, const char *op, const char *x, const char *y)
{
	int r = strv_push(a, op);
	r = strv_ok(r, strv_push(a, x));
	return y ? strv_ok(r, strv_push(a, y)) : r;
}

static int bwrap_argv(const struct nsrun_spec *s, struct strv *a)
{
	char cwd[PATH_MAX];
	struct stat st;
	int r = strv_push(a, s->bwrap);

	/* No new session would leave the terminal's TIOCSTI to the command:
	 * it could type into the user's shell after sandy exits. */
	r = strv_ok(r, strv_push(a, "--new-session"));
	r = strv_ok(r, strv_push(a, "--die-with-parent"));
	r = strv_ok(r, strv_push(a, "--unshare-pid"));
	r = strv_ok(r, strv_push(a, "--unshare-ipc"));
	r = strv_ok(r, strv_push(a, "--unshare-uts"));
	r = strv_ok(r, strv_push(a, "--unshare-cgroup-try"));
	if (s->no_network)
		r = strv_ok(r, strv_push(a, "--unshare-net"));
	if (geteuid() == 0)
		r = strv_ok(r, push3(a, "--cap-drop", "ALL", NULL));
	r = strv_ok(r, push3(a, "--ro-bind", "/", "/"));
	r = strv_ok(r, push3(a, "--dev", "/dev", NULL));
	r = strv_ok(r, push3(a, "--tmpfs", "/dev/shm", NULL));
	r = strv_ok(r, push3(a, "--proc", "/proc", NULL));
	r = strv_ok(r, push3(a, "--tmpfs", "/tmp", NULL));
	/* /run holds the host's service sockets (docker, D-Bus, the user's
	 * session bus and agents): a read-only mount does not stop a
	 * connect(). Only the resolver's files come back. */
	r = strv_ok(r, push3(a, "--tmpfs", "/run", NULL));
	if (stat("/run/systemd/resolve", &st) == 0)
		r = strv_ok(r,
			    push3(a, "--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve"));
	r = strv_ok(r, push3(a, "--ro-bind", s->session_dir, s->session_dir));
	for (size_t i = 0; r == 0 && i < s->world->n_mounts; i++) {
		const struct world_mount *m = &s->world->mounts[i];
		r = push3(a, m->readonly ? "--ro-bind" : "--bind", m->source, m->target);
	}
	r = strv_ok(r, push3(a, "--bind", s->view ? s->view : s->project, s->project));
	r = strv_ok(r, push3(a, "--chdir", start_dir(s->project, cwd, sizeof(cwd)), NULL));
	r = strv_ok(r, strv_push(a, "--"));
	if (s->command) {
		/* Through sh, so that a command that cannot run gives a shell's
		 * 127 or 126 (bubblewrap's own exec failure is status 1). */
		r = strv_ok(r, strv_push(a, "/bin/sh"));
		r = strv_ok(r, strv_push(a, "-c"));
		r = strv_ok(r, strv_push(a, "exec \"$@\""));
		r = strv_ok(r, strv_push(a, "sandy"));
		for (char *const *c = s->command; r == 0 && *c; c++)
			r = strv_push(a, *c);
	} else {
		r = strv_ok(r, strv_push(a, s->user->shell));
	}
	return r;
}

/* Through sudo, bubblewrap runs as the user, and makes its namespaces
 * through a user namespace, like for anyone without privileges. */
static int become_user(const struct host_user *u)
{
	if (!u->via_sudo)
		return 0;
	if ((u->name ? initgroups(u->name, u->gid) : setgroups(0, NULL)) < 0 ||
	    setgid(u->gid) < 0 || setuid(u->uid) < 0)
		return -errno;
	return 0;
}

void nsrun_interrupt(pid_t pid, int sig)
{
	char path[64];
	cleanup_free char *children = NULL;

	/* bubblewrap's child is the sandbox's init, leader of the session and
	 * process group that the command runs in. */
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", (long)pid, (long)pid);
	if (sandy_read_file(path, 256, &children) < 0)
		return;
	long init = strtol(children, NULL, 10);
	if (init > 1)
		kill(-(pid_t)init, sig);
}

int nsrun_start(const struct nsrun_spec *s, pid_t *pidp)
{
	cleanup_strv struct strv argv = {0};
	int report[2];

	if (bwrap_argv(s, &argv) < 0) {
		sandy_error("out of memory");
		return -ENOMEM;
	}
	if (getenv("SANDY_DEBUG")) {
		fputs("sandy: running:", stderr);
		for (size_t i = 0; i < argv.n; i++)
			fprintf(stderr, " %s", argv.v[i]);
		fputc('\n', stderr);
	}
	if (pipe2(report, O_CLOEXEC) < 0) {
		int e = errno;
		sandy_error("cannot start the command: %s", strerror(e));
		return -e;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(report[0]);
		close(report[1]);
		sandy_error("cannot start the command: %s", strerror(e));
		return -e;
	}
	if (pid == 0) {
		int e;
		close(report[0]);
		proc_reset_signals();
		/* Out of the terminal's foreground group: Ctrl-C reaches sandy,
		 * which hands it to the command (nsrun_interrupt), not
		 * bubblewrap, which would die of it and take the sandbox along. */
		setpgid(0, 0);
		if ((e = become_user(s->user)) == 0) {
			execve(s->bwrap, argv.v, s->world->env.v);
			e = -errno;
		}
		if (write(report[1], &e, sizeof(e)) < 0)
			_exit(SANDY_EXIT_FAILURE);
		_exit(SANDY_EXIT_FAILURE);
	}
	close(report[1]);
	int e = 0;
	ssize_t n;
	while ((n = read(report[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (n != (ssize_t)sizeof(e)) {
		*pidp = pid;
		return 0;
	}
	proc_wait(pid);
	sandy_error("cannot run '%s' as uid %u: %s", s->bwrap, (unsigned)s->user->uid,
		    strerror(-e));
	return e;
}

#else

int nsrun_start(const struct nsrun_spec *s, pid_t *pidp)
{
	(void)s;
	(void)pidp;
	sandy_error("--runtime=none runs the command under bubblewrap, which needs Linux; use a "
		    "container engine (docker or podman)");
	return -ENOTSUP;
}

void nsrun_interrupt(pid_t pid, int sig)
{
	(void)pid;
	(void)sig;
}

#endif
