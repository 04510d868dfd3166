/* daemon.c - see daemon.h. */

#include "daemon.h"
#include "audit.h"
#include "host/compat.h"
#include "git/source.h"
#include "git/gitpriv.h"
#include "ops.h"
#include "stats.h"
#include "host/store.h"
#include "common/quote.h"
#include "common/mountinfo.h"
#include "common/usage.h"
#include "common/util.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Whether PATH (absolute, resolved) is a mount point; FSTYPE gets its type. */
static bool is_mount_point(const char *path, char *fstype, size_t size)
{
	struct mount_entry e;
	int r = mount_lookup(path, &e);

	if (r >= 0) {
		snprintf(fstype, size, "%s", r ? e.fstype : "");
		return r > 0;
	}
	/* Without /proc: a mount root sits on another device than its parent
	 * directory. */
	struct stat a, b;
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s/..", path);
	snprintf(fstype, size, "unknown");
	return stat(path, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

/* Checks MOUNTPOINT and resolves it into RESOLVED. Messages name it.
 * A mountpoint that is a mount already is refused unless OVER: a mount
 * there would hide it, which is a mistake but where the mount is the
 * point (a volume that carries the mount to other containers, as sandy
 * kube's Pod has: the mount propagates only from the volume's root). */
static int check_mountpoint(const char *mp, const char *source_resolved, bool over, char *resolved)
{
	struct stat st;
	char fstype[64];

	if (stat(mp, &st) < 0) {
		if (errno == ENOTCONN) {
			error("mountpoint '%s' is a dead mount (its daemon is gone); "
			      "clean it up with 'sandyfs umount %s'",
			      mp, mp);
			return -1;
		}
		if (errno == ENOENT)
			error("mountpoint '%s' does not exist", mp);
		else
			error("cannot use mountpoint '%s': %s", mp, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		error("mountpoint '%s' is not a directory", mp);
		return -1;
	}
	if (!realpath(mp, resolved)) {
		error("cannot resolve mountpoint '%s': %s", mp, strerror(errno));
		return -1;
	}
	if (!over && is_mount_point(resolved, fstype, sizeof(fstype))) {
		error("mountpoint '%s' is already a mount (%s); unmount it first", mp, fstype);
		return -1;
	}
	size_t sl = strlen(source_resolved);
	if (strncmp(resolved, source_resolved, sl) == 0 && resolved[sl] == '/') {
		/* The daemon reaches SOURCE by walking it: a mount inside it
		 * would send the daemon's own lookups back to itself. */
		cleanup_free char *shown = quote_str(source_resolved);
		error("mountpoint '%s' is inside source '%s'", mp, quoted(shown));
		return -1;
	}
	return 0;
}

static int open_source(const char *source, char *resolved)
{
	/* The project's name: the directory of a clone, say. */
	cleanup_free char *shown = quote_str(source);
	struct stat st;

	if (stat(source, &st) < 0) {
		if (errno == ENOENT)
			error("source '%s' does not exist", quoted(shown));
		else
			error("cannot open source '%s': %s", quoted(shown), strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		error("source '%s' is not a directory", quoted(shown));
		return -1;
	}
	if (!realpath(source, resolved)) {
		error("cannot resolve source '%s': %s", quoted(shown), strerror(errno));
		return -1;
	}
	int fd = open(resolved, (sfs_anchor_flags() & ~O_NOFOLLOW));
	if (fd < 0)
		error("cannot open source '%s': %s", quoted(shown), strerror(errno));
	return fd;
}

/* How many directory fds the inode table may keep: a quarter of the fd
 * limit, so that open files, directory handles and libfuse have the rest. */
static unsigned anchor_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1024;
	rlim_t budget = rl.rlim_cur / 4;
	return budget > 4096 ? 4096 : (unsigned)(budget < 16 ? 16 : budget);
}

static int write_pid_file(const char *path)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	int len = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	ssize_t w = write(fd, buf, (size_t)len);
	int e = errno;
	close(fd);
	return w == len ? 0 : -(w < 0 ? e : EIO);
}

/* Detaches from the terminal once the mount is live. The parent exits 0
 * only after the child has taken over (pid file written), so a script can
 * use the mount and the pid file as soon as `sandyfs mount` returns. */
static int detach(const struct sfs_mount_opts *o)
{
	int pipefd[2];

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		error("cannot detach: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		error("cannot detach: %s", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		char ok = 0;
		close(pipefd[1]);
		ssize_t n = read(pipefd[0], &ok, 1);
		if (n == 1 && ok == 'k')
			_exit(0);
		int status;
		waitpid(pid, &status, 0);
		_exit(1);
	}
	close(pipefd[0]);
	setsid();
	if (o->pid_file) {
		int r = write_pid_file(o->pid_file);
		if (r < 0) {
			error("cannot write pid file '%s': %s", o->pid_file, strerror(-r));
			return -1;
		}
	}
	if (chdir("/") < 0) {
		error("cannot detach: %s", strerror(errno));
		return -1;
	}
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		close(null);
	}
	if (write(pipefd[1], "k", 1) != 1)
		return -1;
	close(pipefd[1]);
	return 0;
}

/* FUSE over io_uring: requests come through rings shared with the kernel
 * instead of a read and a write of /dev/fuse each. libfuse 3.18 and newer
 * speak it; the kernel offers it only when root has switched it on
 * (/sys/module/fuse/parameters/enable_uring), and without it the mount
 * works as before. */
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 18)
#define IO_URING_OPT ",io_uring"
#else
#define IO_URING_OPT ""
#endif

static int build_fuse_args(const struct sfs_mount_opts *o, struct fuse_args *args)
{
	char opts[4096];
	/* The kernel checks permissions from the attributes it caches: the
	 * files it opens without asking (no_open) are checked too. */
	int n = snprintf(opts, sizeof(opts),
			 "fsname=sandyfs,subtype=sandyfs,default_permissions" IO_URING_OPT "%s%s%s",
			 o->allow_other ? ",allow_other" : "", o->fuse_opts ? "," : "",
			 o->fuse_opts ? o->fuse_opts : "");

	if (n < 0 || (size_t)n >= sizeof(opts)) {
		error("mount options too long");
		return -1;
	}
	if (fuse_opt_add_arg(args, "sandyfs") != 0 || fuse_opt_add_arg(args, "-o") != 0 ||
	    fuse_opt_add_arg(args, opts) != 0) {
		error("out of memory");
		return -1;
	}
	return 0;
}

/* PATH made absolute, as the daemon leaves its working directory. */
static int absolute_path(const char *path, char *out, size_t size)
{
	char cwd[PATH_MAX] = "";

	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -errno;
	int n = snprintf(out, size, "%s%s%s", cwd, *cwd ? "/" : "", path);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* --private-git: .git and .worktrees come from the store, where the
 * private repository is refreshed from SOURCE's unless another mount of
 * the project is using it. A repository that cannot be refreshed is
 * served as it is: the agent's git says what is wrong with it. */
static void private_git(struct sfs_store *store, const char *source, const char *host_git_at)
{
	cleanup_free char *note = NULL, *err = NULL;

	int r = sfs_store_lock_alone(store);
	if (r == -EBUSY) {
		cleanup_free char *shown = quote_str(source);
		error("another mount of '%s' is using the private repository: not refreshed",
		      quoted(shown));
		return;
	}
	if (r == 0) {
		r = sfs_gitpriv_refresh(store, source, host_git_at, &note, &err);
		int s = sfs_store_lock_shared(store);
		if (r == 0 && s < 0)
			r = s;
	}
	if (r < 0)
		error("%s; the private repository is served as it is", err ? err : strerror(-r));
	else if (note)
		error("private repository: %s", note);
}

/* The project's store: PATH, or the default one for SOURCE. */
static int open_store(const char *path, const char *source, int source_fd, struct sfs_store **out)
{
	cleanup_free char *dflt = NULL, *err = NULL;
	int r = 0;

	if (!path) {
		r = sfs_store_default_path(source, &dflt);
		if (r < 0) {
			error("cannot find a place for the project's store (no HOME): "
			      "give one with --store");
			return r;
		}
		path = dflt;
	}
	r = sfs_store_open(path, source, source_fd, out, &err);
	if (r < 0)
		error("%s", err ? err : strerror(-r));
	return r;
}

int sfs_store_main(const char *source, const char *store, bool clear)
{
	char resolved[PATH_MAX];
	cleanup_free char *dflt = NULL, *err = NULL;
	uint64_t bytes, files;

	if (!store) {
		if (!realpath(source, resolved)) {
			int e = errno;
			cleanup_free char *shown = quote_str(source);
			error("cannot resolve source '%s': %s", quoted(shown), strerror(e));
			return 1;
		}
		if (sfs_store_default_path(resolved, &dflt) < 0) {
			error("cannot find the project's store (no HOME): give it with --store");
			return 1;
		}
		store = dflt;
	}
	if (clear) {
		if (sfs_store_clear(store, &err) < 0) {
			error("%s", err ? err : "cannot clear the store");
			return 1;
		}
		printf("cleared %s\n", store);
		return 0;
	}
	int r = sfs_store_usage(store, &bytes, &files);
	if (r < 0) {
		error("cannot read store '%s': %s", store, strerror(-r));
		return 1;
	}
	printf("%s\t%.1f MiB in %llu files\n", store, (double)bytes / (1024 * 1024),
	       (unsigned long long)files);
	return 0;
}

/* Once CAP_SYS_ADMIN is given up, root's unmount (umount2, or
 * /bin/umount where /etc/mtab is a file) cannot work: the daemon ends its
 * connection instead, as a daemon that dies does, and leaves the dead
 * mount to whoever mounted it. libfuse's unmount skips a device that
 * polls POLLERR (a connection already gone), so the session's descriptor
 * is replaced by a /dev/fuse one attached to nothing: closing the old one
 * ends the connection, and libfuse only closes the new one. */
static void leave_mount(struct fuse_session *se, const char *mountpoint)
{
	struct pollfd gone = {.fd = fuse_session_fd(se)};

	/* Unmounted from outside already: nothing is left behind. */
	if (poll(&gone, 1, 0) == 1 && (gone.revents & POLLERR))
		return;
	int spare = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (spare >= 0) {
		dup2(spare, fuse_session_fd(se));
		close(spare);
	}
	error("cannot unmount '%s' without the privilege to mount (--drop-mount-privilege): "
	      "its connection is closed; 'sandyfs umount %s' as root removes it",
	      mountpoint, mountpoint);
}

static unsigned worker_count(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus < 2 ? 2 : cpus > 16 ? 16 : (unsigned)cpus;
}

/* What one mount holds while it runs. */
struct mount_run {
	char source[PATH_MAX], mountpoint[PATH_MAX], stats_file[PATH_MAX];
	struct sfs_fs *fs;
	struct fuse_session *se;
	struct sfs_stats_dump *stats_dump;
	struct fuse_args args;
	bool can_unmount;
};

/* The policy, the audit log and the stats file of a mount of SOURCE: each
 * checked before anything is mounted. */
static int open_outputs(const struct sfs_mount_opts *o, struct mount_run *m,
			struct sfs_policy **policy, struct sfs_audit **audit)
{
	static const struct sfs_audit_limits limits = {.burst = 200, .rate = 50};
	static const struct sfs_stats none;
	struct sfs_source src = {&o->rules, m->source, o->private_git};
	cleanup_free char *err = NULL;
	int r = sfs_source_policy(&src, policy, &err);

	if (r < 0)
		return error("%s", err ? err : strerror(-r));
	if (o->audit_file && (r = sfs_audit_open(o->audit_file, &limits, audit)) < 0)
		return error("cannot open audit log '%s': %s", o->audit_file, strerror(-r));
	/* A first, empty copy now: a path that cannot be written stops the
	 * mount before anything is mounted. */
	if (o->stats_file) {
		r = absolute_path(o->stats_file, m->stats_file, sizeof(m->stats_file));
		if (r == 0)
			r = sfs_stats_write(&none, 0, m->stats_file);
		if (r < 0)
			return error("cannot write stats file '%s': %s", o->stats_file,
				     strerror(-r));
	}
	return 0;
}

/* SOURCE and MOUNTPOINT checked, and the filesystem that will serve them,
 * with its policy, audit log and store; nothing mounted yet. */
static int prepare_fs(const struct sfs_mount_opts *o, struct mount_run *m)
{
	struct sfs_fs_config cfg = {
		.cache_timeout = o->cache_timeout,
		.watched_timeout = 60.0,
		.watch_host = true,
		.no_open = o->lazy_open,
		.anchor_limit = anchor_budget(),
	};
	struct sfs_policy *policy = NULL;
	struct sfs_audit *audit = NULL;
	struct sfs_store *store = NULL;
	cleanup_free char *err = NULL;
	cleanup_fd int rootfd = open_source(o->source, m->source);

	if (rootfd < 0 || check_mountpoint(o->mountpoint, m->source, o->over_mount,
					   m->mountpoint) < 0)
		return -1;
	if (open_outputs(o, m, &policy, &audit) < 0 ||
	    open_store(o->store, m->source, rootfd, &store) < 0) {
		sfs_policy_free(policy);
		sfs_audit_close(audit);
		return -1;
	}
	if (o->private_git)
		private_git(store, m->source, o->git_host_path);
	/* Everything is the filesystem's from here, also when it fails. */
	int r = sfs_fs_new(steal_fd(&rootfd), &cfg, policy, audit, store, &m->fs, &err);
	if (r < 0) {
		cleanup_free char *shown = quote_str(o->source);
		if (err)
			return error("%s", err);
		return error("cannot serve source '%s': %s", quoted(shown), strerror(-r));
	}
	return 0;
}

/* Serves until told to stop: the privilege given up, detached (or the
 * pid file written), the stats and watch threads started, the workers
 * run. The exit status, or -1 when it could not start. */
static int serve(const struct sfs_mount_opts *o, struct mount_run *m)
{
	int r;

	/* Before anything is served (the pid file says the mount serves),
	 * and before any thread starts: each takes its creator's
	 * capabilities. */
	if (o->drop_mount_privilege) {
		r = sfs_drop_mount_privilege();
		if (r < 0)
			return error("cannot give up the privilege to mount: %s", strerror(-r));
		m->can_unmount = r == 0;
	}
	if (!o->foreground) {
		if (detach(o) < 0)
			return -1;
	} else if (o->pid_file && (r = write_pid_file(o->pid_file)) < 0) {
		return error("cannot write pid file '%s': %s", o->pid_file, strerror(-r));
	}
	/* Before any thread starts: each inherits SIGUSR1 blocked. */
	if (o->stats_file &&
	    (r = sfs_stats_dump_start(sfs_fs_stats(m->fs), m->stats_file, &m->stats_dump)) < 0)
		return error("cannot write stats file '%s': %s", o->stats_file, strerror(-r));
	if ((r = sfs_fs_start(m->fs, m->se)) < 0) {
		cleanup_free char *shown = quote_str(o->source);
		return error("cannot watch source '%s': %s", quoted(shown), strerror(-r));
	}
	struct fuse_loop_config *loop = fuse_loop_cfg_create();
	if (!loop)
		return error("out of memory");
	/* As many workers as CPUs, all kept: the kernel wakes the reader that
	 * has waited longest, so each extra thread makes every request land
	 * on a colder one (rg through the mount on 2 CPUs: 16 threads 5.5x
	 * native, 2 threads 3.9x); fewer idle than running means libfuse
	 * ends and starts a thread per request. No handler waits for
	 * another request, so a small pool cannot deadlock; a slow host
	 * call (fsync of a big file) holds one worker. */
	unsigned workers = worker_count();
	fuse_loop_cfg_set_max_threads(loop, workers);
	fuse_loop_cfg_set_idle_threads(loop, workers);
	r = fuse_session_loop_mt(m->se, loop);
	fuse_loop_cfg_destroy(loop);
	/* libfuse returns the number of the signal that ended the loop:
	 * being told to stop is a clean end. */
	return r == 0 || r == SIGTERM || r == SIGINT || r == SIGHUP ? 0 : 1;
}

int sfs_mount_main(const struct sfs_mount_opts *o)
{
	struct mount_run m = {.args = FUSE_ARGS_INIT(0, NULL), .can_unmount = true};
	int status = 1;

	if (prepare_fs(o, &m) < 0)
		return 1;
	if (build_fuse_args(o, &m.args) < 0)
		goto out;
	m.se = fuse_session_new(&m.args, &sfs_ll_ops, sizeof(sfs_ll_ops), m.fs);
	if (!m.se) {
		error("cannot mount '%s': bad mount options", o->mountpoint);
		status = 2;
		goto out;
	}
	if (fuse_set_signal_handlers(m.se) != 0) {
		error("cannot install signal handlers");
		goto out;
	}
	/* New files get exactly the mode the kernel asked for (it has
	 * applied the caller's umask already). */
	umask(0);
	if (fuse_session_mount(m.se, m.mountpoint) != 0) {
		cleanup_free char *shown = quote_str(o->source);
		error("cannot mount '%s' on '%s'", quoted(shown), o->mountpoint);
		goto out_signals;
	}
	status = serve(o, &m);
	status = status < 0 ? 1 : status;
	sfs_fs_stop(m.fs);
	sfs_stats_dump_stop(m.stats_dump);
	if (!m.can_unmount)
		leave_mount(m.se, m.mountpoint);
	fuse_session_unmount(m.se);
	if (o->pid_file)
		unlink(o->pid_file);
out_signals:
	fuse_remove_signal_handlers(m.se);
out:
	if (m.se)
		fuse_session_destroy(m.se);
	fuse_opt_free_args(&m.args);
	sfs_fs_free(m.fs);
	return status;
}

int sfs_umount_main(const char *mountpoint)
{
	char resolved[PATH_MAX], fstype[64];
	struct stat st;

	/* stat fails with ENOTCONN on a dead mount: resolve it by hand. */
	if (stat(mountpoint, &st) < 0 && errno != ENOTCONN) {
		error("cannot unmount '%s': %s", mountpoint, strerror(errno));
		return 1;
	}
	char cwd[PATH_MAX] = "";
	if (mountpoint[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
		error("cannot unmount '%s': %s", mountpoint, strerror(errno));
		return 1;
	}
	int n = snprintf(resolved, sizeof(resolved), "%s%s%s", cwd, *cwd ? "/" : "", mountpoint);
	if (n < 0 || (size_t)n >= sizeof(resolved)) {
		error("cannot unmount '%s': %s", mountpoint, strerror(ENAMETOOLONG));
		return 1;
	}
	size_t len = strlen(resolved);
	while (len > 1 && resolved[len - 1] == '/')
		resolved[--len] = '\0';
	if (!is_mount_point(resolved, fstype, sizeof(fstype))) {
		char real[PATH_MAX];
		if (!realpath(mountpoint, real) || !is_mount_point(real, fstype, sizeof(fstype))) {
			error("cannot unmount '%s': not a mount point", mountpoint);
			return 1;
		}
		snprintf(resolved, sizeof(resolved), "%s", real);
	}
	if (strcmp(fstype, "fuse.sandyfs") != 0 && strncmp(fstype, "fuse", 4) != 0) {
		error("cannot unmount '%s': it is a %s mount, not sandyfs", mountpoint, fstype);
		return 1;
	}
	if (geteuid() == 0) {
		if (umount2(resolved, 0) == 0)
			return 0;
		error("cannot unmount '%s': %s", mountpoint, strerror(errno));
		return 1;
	}
	/* An unprivileged mount belongs to fusermount3, which checks that the
	 * caller owns it. */
	char *argv[] = {"fusermount3", "-u", "--", resolved, NULL};
	pid_t pid;
	int status;
	int r = posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ);
	if (r != 0) {
		error("cannot run fusermount3: %s", strerror(r));
		return 1;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		error("cannot unmount '%s': fusermount3 failed", mountpoint);
		return 1;
	}
	return 0;
}
