/* nsrun.c - see nsrun.h. bubblewrap is Linux's: the portable shape of
 * sandy (platform.h) leaves all of this out, and says so. */

#include "nsrun.h"
#include "nsnet.h"
#include "sys/proc.h"
#include "sys/sandy.h"

#include "common/path.h"

#include <string.h>

int nsrun_inside(int argc, char **argv)
{
	unsigned long long nproc = 0, data = 0;
	const char *proxy = NULL;
	int i = 1, e;

	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;
		if (!v)
			break;
		if (!strcmp(a, "--exe-fd"))
			close((int)strtol(v, &end, 10));
		else if (!strcmp(a, "--nproc"))
			nproc = strtoull(v, &end, 10);
		else if (!strcmp(a, "--data"))
			data = strtoull(v, &end, 10);
		else if (!strcmp(a, "--proxy")) {
			proxy = v;
			end = (char *)v + strlen(v);
		}
		if (!end || *end) {
			sandy_error("bad argument '%s' for 'sandy " NSRUN_INSIDE
				    "', which sandy runs inside its sandbox",
				    a);
			return SANDY_EXIT_FAILURE;
		}
		i++;
	}
	if (i + 1 >= argc) {
		sandy_error("no command for 'sandy " NSRUN_INSIDE "'");
		return SANDY_EXIT_FAILURE;
	}
	/* The process limit before the bridge forks, which it holds too; the
	 * memory limit after: the bridge's own is bounded by its connection
	 * cap, and a sanitizer's build of it, whose shadow memory counts as
	 * data, could map nothing more under the limit. */
	if (nproc && (e = nslimits_set_rlimits((unsigned long)nproc, 0)) < 0) {
		sandy_error("cannot limit the sandbox's processes: %s", strerror(-e));
		return SANDY_EXIT_FAILURE;
	}
	if (proxy && nsnet_bridge_start(proxy) < 0)
		return SANDY_EXIT_FAILURE;
	if (data && (e = nslimits_set_rlimits(0, data)) < 0) {
		sandy_error("cannot limit the sandbox's memory: %s", strerror(-e));
		return SANDY_EXIT_FAILURE;
	}
	execvp(argv[i + 1], argv + i + 1);
	e = errno;
	sandy_error("cannot run '%s': %s", argv[i + 1], strerror(e));
	return e == ENOENT ? 127 : 126;
}

#if SANDY_LINUX_HOST

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>

/* Where the command starts: the directory sandy was started in when it is
 * inside the project (seen through the view at the same path), else the
 * project's root. */
static const char *start_dir(const char *project, char *cwd, size_t size)
{
	if (getcwd(cwd, size) && path_below(cwd, project))
		return cwd;
	return project;
}

static int push3(struct strv *a, const char *op, const char *x, const char *y)
{
	int r = strv_push(a, op);
	r = strv_ok(r, strv_push(a, x));
	return y ? strv_ok(r, strv_push(a, y)) : r;
}

static int bwrap_argv(const struct nsrun_spec *s, int exe_fd, struct strv *a)
{
	char cwd[PATH_MAX];
	struct stat st;
	int r = strv_push(a, s->bwrap);
	const struct nslimits *l = s->limits;

	/* No new session would leave the terminal's TIOCSTI to the command:
	 * it could type into the user's shell after sandy exits. */
	r = strv_ok(r, strv_push(a, "--new-session"));
	r = strv_ok(r, strv_push(a, "--die-with-parent"));
	r = strv_ok(r, strv_push(a, "--unshare-pid"));
	r = strv_ok(r, strv_push(a, "--unshare-ipc"));
	r = strv_ok(r, strv_push(a, "--unshare-uts"));
	r = strv_ok(r, strv_push(a, "--unshare-cgroup-try"));
	/* Loopback alone; the proxy's bridge, when there is one, listens
	 * there. Abstract Unix sockets are per network namespace: the host's
	 * (an X11 display, a session bus) are out of reach too. */
	if (s->network != EGRESS_OPEN)
		r = strv_ok(r, strv_push(a, "--unshare-net"));
	/* RLIMIT_NPROC counts a uid's processes per user namespace: in one of
	 * its own, the sandbox's alone. bubblewrap makes one for any user
	 * anyway; root is held to no RLIMIT_NPROC whatever its namespace, and
	 * keeps the host's. */
	if (s->user->uid != 0)
		r = strv_ok(r, strv_push(a, "--unshare-user-try"));
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
	/* sandy itself first (nsrun_inside), by its descriptor: its path may
	 * be out of the sandbox's sight, or another file by now. */
	r = strv_ok(r, strv_pushf(a, "/proc/self/fd/%d", exe_fd));
	r = strv_ok(r, strv_push(a, NSRUN_INSIDE));
	r = strv_ok(r, strv_push(a, "--exe-fd"));
	r = strv_ok(r, strv_pushf(a, "%d", exe_fd));
	if (l && l->how == NSLIMITS_RLIMITS) {
		/* The kernel holds root to no RLIMIT_NPROC: its memory only. */
		if (s->user->uid != 0) {
			r = strv_ok(r, strv_push(a, "--nproc"));
			r = strv_ok(r, strv_pushf(a, "%u", l->pids));
		}
		r = strv_ok(r, strv_push(a, "--data"));
		r = strv_ok(r, strv_pushf(a, "%llu", l->memory));
	}
	if (s->network == EGRESS_FILTERED)
		r = strv_ok(r, push3(a, "--proxy", s->proxy_socket, NULL));
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
	cleanup_fd int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int report[2];

	if (exe < 0) {
		int e = errno;
		sandy_error("cannot open sandy's own executable '/proc/self/exe': %s", strerror(e));
		return -e;
	}
	if (bwrap_argv(s, exe, &argv) < 0) {
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
		/* What failed, and how. */
		int e[2] = {0, 0};
		close(report[0]);
		proc_reset_signals();
		/* Out of the terminal's foreground group: Ctrl-C reaches sandy,
		 * which hands it to the command (nsrun_interrupt), not
		 * bubblewrap, which would die of it and take the sandbox along. */
		setpgid(0, 0);
		/* Into its cgroup while still root, when sudo made sandy so:
		 * everything the sandbox starts stays there. */
		if (s->limits && (e[1] = nslimits_join(s->limits)) < 0)
			e[0] = 1;
		else if (fcntl(exe, F_SETFD, 0) < 0)
			e[1] = -errno;
		else if ((e[1] = become_user(s->user)) == 0) {
			execve(s->bwrap, argv.v, s->world->env.v);
			e[1] = -errno;
		}
		if (write(report[1], e, sizeof(e)) < 0)
			_exit(SANDY_EXIT_FAILURE);
		_exit(SANDY_EXIT_FAILURE);
	}
	close(report[1]);
	int e[2] = {0, 0};
	ssize_t n;
	while ((n = read(report[0], e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (n != (ssize_t)sizeof(e)) {
		*pidp = pid;
		return 0;
	}
	proc_wait(pid);
	if (e[0] == 1)
		sandy_error("cannot move the sandbox into its cgroup '%s': %s", s->limits->cgroup,
			    strerror(-e[1]));
	else
		sandy_error("cannot run '%s' as uid %u: %s", s->bwrap, (unsigned)s->user->uid,
			    strerror(-e[1]));
	return e[1];
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
