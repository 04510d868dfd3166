/* session.c - see session.h. */

#include "session.h"
#include "sys/platform.h"
#include "sys/sandy.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

/* The files a session directory may hold; removal names them one by one
 * instead of recursing. */
static const char *const session_files[] = {
	"lock",	     "project",	      "runtime",	"container",	"denials.jsonl",
	"POLICY.md", "sandyfs.pid",   "agent-settings", "agent-memory", "ssh-agent.sock",
	"gateway",   "fsbox",	      "fsbox.pid",	"fsbox-root",	"allowlist",
	"cgroup",    "cgroup-memory",
};

/* The directories it may hold that the command or the network gateway
 * write into, removed with what is in them. */
static const char *const session_trees[] = {"git", "ssh", "net", "egress", "host-git", "gate"};

bool session_own_dir(const char *path, struct stat *st)
{
	return lstat(path, st) == 0 && S_ISDIR(st->st_mode) && st->st_uid == geteuid() &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static int ensure_dir(const char *path, mode_t mode)
{
	struct stat st;

	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -errno;
	if (!session_own_dir(path, &st)) {
		sandy_error(
			"runtime directory '%s' is not safe to use: it must be a directory owned "
			"by uid %u and writable only by it",
			path, (unsigned)geteuid());
		return -EPERM;
	}
	if ((st.st_mode & 07777) != mode && chmod(path, mode) < 0)
		return -errno;
	return 0;
}

int session_rundir(char **out)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	uid_t uid = geteuid();
	struct stat st;
	cleanup_free char *dir = NULL;
	/* Root's sessions are traversable (not listable) so a user that sudo
	 * hands the session to can read its note and audit log; the view
	 * directory inside stays root's own. */
	mode_t mode = uid == 0 ? 0711 : 0700;

	if (xdg && xdg[0] == '/' && session_own_dir(xdg, &st))
		dir = sandy_asprintf("%s/sandy", xdg);
	else if (uid == 0)
		dir = strdup("/run/sandy");
	else {
		cleanup_free char *run_user = sandy_asprintf("/run/user/%u", (unsigned)uid);
		if (run_user && session_own_dir(run_user, &st))
			dir = sandy_asprintf("%s/sandy", run_user);
		else
			dir = sandy_asprintf("/tmp/sandy-%u", (unsigned)uid);
	}
	if (!dir)
		return -ENOMEM;
	int r = ensure_dir(dir, mode);
	if (r < 0) {
		if (r != -EPERM)
			sandy_error("cannot create runtime directory '%s': %s", dir, strerror(-r));
		return r;
	}
	*out = steal_ptr(&dir);
	return 0;
}

static char *read_key(const char *dir, const char *key)
{
	cleanup_free char *path = sandy_asprintf("%s/%s", dir, key);
	char *text = NULL;

	if (!path || sandy_read_file(path, 4096, &text) < 0)
		return NULL;
	text[strcspn(text, "\n")] = '\0';
	return text;
}

/* rm -r of DIRFD/NAME that follows no symlink and enters no other
 * filesystem (a mount found there is left, and so is its parent). */
static int remove_tree_at(int dirfd, const char *name, dev_t dev)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
	if (st.st_dev != dev)
		return -EBUSY;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		close_keep_errno(fd);
		return -errno;
	}
	struct dirent *de;
	int r = 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			int e = remove_tree_at(fd, de->d_name, dev);
			if (e < 0)
				r = e;
		}
	closedir(d);
	if (r == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
		r = -errno;
	return r;
}

/* Removes what session_create made, file by file. rmdir() fails on a
 * directory that still holds anything (or a mount), which is the point. */
int session_remove_dir(const char *dir)
{
	char path[PATH_MAX];
	int r = 0;

	if (strlen(dir) + sizeof("/view/workspace") > sizeof(path))
		return -ENAMETOOLONG;
	for (size_t i = 0; i < ARRAY_SIZE(session_files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, session_files[i]);
		if (unlink(path) < 0 && errno != ENOENT)
			r = -errno;
	}
	cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	for (size_t i = 0; dfd >= 0 && i < ARRAY_SIZE(session_trees); i++) {
		int e = fstat(dfd, &st) < 0 ? -errno
					    : remove_tree_at(dfd, session_trees[i], st.st_dev);
		if (e < 0 && e != -ENOENT)
			r = e;
	}
	snprintf(path, sizeof(path), "%s/view/workspace", dir);
	if (rmdir(path) < 0 && errno != ENOENT)
		r = -errno;
	snprintf(path, sizeof(path), "%s/view", dir);
	if (rmdir(path) < 0 && errno != ENOENT)
		r = -errno;
	if (rmdir(dir) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/* A name that says which project a session serves (for `ls` and `docker
 * ps`) and is unique: the project's base name, reduced to what container
 * names allow, and random hex. */
static char *session_id(const char *project)
{
	const char *base = strrchr(project, '/');
	char name[33];
	size_t n = 0;
	unsigned char rnd[4] = {0};

	base = base && base[1] ? base + 1 : "root";
	for (; *base && n < sizeof(name) - 1; base++) {
		char c = *base;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
		if (n == 0 && (c == '.' || c == '-'))
			continue;
		name[n++] = ok ? c : '_';
	}
	if (n == 0)
		name[n++] = 'p';
	name[n] = '\0';
	if (platform_random(rnd, sizeof(rnd)) < 0) {
		/* Uniqueness still holds through the pid. */
		unsigned v = (unsigned)getpid();
		memcpy(rnd, &v, sizeof(rnd));
	}
	return sandy_asprintf("%s-%02x%02x%02x%02x", name, rnd[0], rnd[1], rnd[2], rnd[3]);
}

static int create_locked(const char *rundir, const char *project, struct session *s)
{
	cleanup_free char *tmp = sandy_asprintf("%s/.new-XXXXXX", rundir);
	cleanup_free char *lock = NULL;

	if (!tmp || !mkdtemp(tmp))
		return tmp ? -errno : -ENOMEM;
	/* mkdtemp made it 0700; root's must be traversable, see rundir. */
	if (geteuid() == 0 && chmod(tmp, 0711) < 0)
		goto fail;
	lock = sandy_asprintf("%s/lock", tmp);
	if (!lock) {
		errno = ENOMEM;
		goto fail;
	}
	s->lockfd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->lockfd < 0)
		goto fail;
	if (flock(s->lockfd, LOCK_EX | LOCK_NB) < 0)
		goto fail;
	/* Only now, locked, does the directory get a name the sweep looks
	 * at as a session. */
	s->dir = sandy_asprintf("%s/%s", rundir, s->id);
	if (!s->dir) {
		errno = ENOMEM;
		goto fail;
	}
	if (rename(tmp, s->dir) < 0)
		goto fail;
	if (session_record(s, "project", project) < 0)
		return -errno;
	return 0;
fail:;
	int e = errno;
	if (s->lockfd >= 0) {
		if (lock)
			unlink(lock);
		close(s->lockfd);
		s->lockfd = -1;
	}
	rmdir(tmp);
	free(s->dir);
	s->dir = NULL;
	return -e;
}

int session_create(const char *rundir, const char *project, struct session *s)
{
	int r = -EEXIST;

	*s = (struct session){.lockfd = -1};
	s->rundir = strdup(rundir);
	if (!s->rundir)
		return -ENOMEM;
	/* A racing sweep may remove the fresh, not yet locked directory:
	 * try again. */
	for (int attempt = 0; attempt < 3 && r < 0; attempt++) {
		free(s->id);
		s->id = session_id(project);
		if (!s->id)
			return -ENOMEM;
		r = create_locked(rundir, project, s);
		if (r != -ENOENT && r != -EEXIST && r != -ENOTEMPTY)
			break;
	}
	if (r < 0) {
		sandy_error("cannot create a session directory in '%s': %s", rundir, strerror(-r));
		return r;
	}
	s->view = sandy_asprintf("%s/view", s->dir);
	s->mountpoint = sandy_asprintf("%s/view/workspace", s->dir);
	s->audit = sandy_asprintf("%s/denials.jsonl", s->dir);
	s->policy = sandy_asprintf("%s/POLICY.md", s->dir);
	s->pidfile = sandy_asprintf("%s/sandyfs.pid", s->dir);
	if (!s->view || !s->mountpoint || !s->audit || !s->policy || !s->pidfile)
		return -ENOMEM;
	/* The view holds the mount of the project: only its owner (and the
	 * container engine, root) may pass. */
	if (mkdir(s->view, 0700) < 0 || mkdir(s->mountpoint, 0700) < 0) {
		r = -errno;
		sandy_error("cannot create mountpoint '%s': %s", s->mountpoint, strerror(-r));
		return r;
	}
	return 0;
}

int session_record(const struct session *s, const char *key, const char *value)
{
	cleanup_free char *path = sandy_asprintf("%s/%s", s->dir, key);
	cleanup_free char *text = sandy_asprintf("%s\n", value);

	if (!path || !text)
		return -ENOMEM;
	return sandy_write_file(path, text, strlen(text), 0644);
}

void session_end(struct session *s, bool remove)
{
	if (remove && s->dir) {
		int r = session_remove_dir(s->dir);
		if (r < 0)
			sandy_error("cannot remove session directory '%s': %s", s->dir,
				    strerror(-r));
	}
	if (s->lockfd >= 0)
		close(s->lockfd);
	free(s->rundir);
	free(s->dir);
	free(s->id);
	free(s->view);
	free(s->mountpoint);
	free(s->audit);
	free(s->policy);
	free(s->pidfile);
	*s = (struct session){.lockfd = -1};
}

int session_read_key(const char *dir, const char *key, char **value)
{
	*value = read_key(dir, key);
	return *value ? 0 : -ENOENT;
}

/* Whether DIR's sandy is alive: its lock is held. */
static bool session_alive(const char *dir)
{
	cleanup_free char *lockpath = sandy_asprintf("%s/lock", dir);
	cleanup_fd int fd = lockpath ? open(lockpath, O_RDWR | O_CLOEXEC | O_NOFOLLOW) : -1;

	return fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
}

int session_find_live(const char *rundir, const char *id, const char *key, char **dir)
{
	DIR *d = opendir(rundir);
	struct dirent *de;
	cleanup_strv struct strv found = {0};
	int r = 0;

	*dir = NULL;
	if (id && (!*id || strchr(id, '/') || id[0] == '.')) {
		sandy_error("bad session '%s'", id);
		if (d)
			closedir(d);
		return -EINVAL;
	}
	while (d && r == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' || (id && strcmp(de->d_name, id)))
			continue;
		cleanup_free char *path = sandy_asprintf("%s/%s", rundir, de->d_name);
		cleanup_free char *value = NULL;
		struct stat st;
		if (!path)
			r = -ENOMEM;
		else if (session_own_dir(path, &st) && session_alive(path) &&
			 session_read_key(path, key, &value) == 0)
			r = strv_push(&found, path);
	}
	if (d)
		closedir(d);
	if (r < 0)
		return r;
	if (found.n == 1) {
		*dir = strdup(found.v[0]);
		return *dir ? 0 : -ENOMEM;
	}
	if (found.n == 0 && id)
		sandy_error("no running session '%s' with a network allowlist (sessions are in "
			    "'%s')",
			    id, rundir);
	else if (found.n == 0)
		sandy_error("no running session with a network allowlist (sessions are in '%s')",
			    rundir);
	else {
		sandy_error("%zu sessions are running; name one with --session:", found.n);
		for (size_t i = 0; i < found.n; i++)
			fprintf(stderr, "  %s\n", strrchr(found.v[i], '/') + 1);
	}
	return found.n ? -EEXIST : -ENOENT;
}
