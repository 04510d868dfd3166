/*
 * plant: tries to plant, change or remove protected names through a mount
 * and checks the host side after. The driver of tests/attack/planted.sh.
 *
 *   plant [--as USER] absent|present LABEL SOURCE MOUNT < CASES
 *
 * Each line of CASES is "NAME GUARD OWN": NAME relative to SOURCE, GUARD
 * the outermost protected directory that NAME is in ("-" when none), OWN a
 * file the caller made through the mount (so it owns it).
 *
 *   absent:  the missing directories of NAME, then create, mkdir, mkfifo,
 *            symlink, hard link of OWN and rename of OWN onto NAME; each
 *            must fail with EROFS (ENOENT once a protected directory on
 *            the way was refused). On the host afterwards NAME and GUARD
 *            do not exist and NAME's directory has no new file.
 *   present: overwrite, append, truncate, chmod, utimes, setxattr, an
 *            editor's save (a temporary file renamed over it), rename of
 *            OWN over it, rename away, hard link from it, unlink; each must
 *            fail with EROFS. On the host afterwards NAME has its content,
 *            mode, size and mtime, and its directory the same names.
 *
 * The attempts run in a child that takes USER's identity (--as); the host
 * is read by the parent, before and after. One TAP line per case.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

struct host_state {
	bool exists;
	mode_t mode;
	off_t size;
	struct timespec mtime;
	uint64_t sum;
	char *listing; /* NAME's directory: its names (absent: not directories) */
};

struct plant_case {
	char *name, *guard, *own;
	struct host_state before;
	char *failures; /* what went wrong, for the TAP line */
	int attempts;
};

static const char *source_dir, *mount_dir;
static bool present;

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("plant: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static char *joinpath(const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, "%s/%s", a, b) < 0)
		die("out of memory");
	return s;
}

__attribute__((format(printf, 2, 3))) static void append(char **s, const char *fmt, ...)
{
	char *add, *n;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&add, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	if (asprintf(&n, "%s%s", *s ? *s : "", add) < 0)
		die("out of memory");
	free(*s);
	free(add);
	*s = n;
}

static uint64_t file_sum(const char *path)
{
	uint64_t h = 1469598103934665603ULL;
	unsigned char buf[8192];
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
	close(fd);
	return h;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names in directory DIR, directories left out with NO_DIRS. */
static char *listing_of(const char *dir, bool no_dirs)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL, *out = NULL;
	size_t n = 0;

	if (!d)
		return strdup("(no directory)");
	while ((e = readdir(d))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (no_dirs && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			continue;
		v = realloc(v, (n + 1) * sizeof(*v));
		if (!v)
			die("out of memory");
		v[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), name_cmp);
	append(&out, "%s", "");
	for (size_t i = 0; i < n; i++) {
		append(&out, "%s%s", i ? " " : "", v[i]);
		free(v[i]);
	}
	free(v);
	return out;
}

static void read_host(const char *name, struct host_state *s)
{
	char *path = joinpath(source_dir, name), *dir = strdup(path);
	struct stat st;

	memset(s, 0, sizeof(*s));
	if (lstat(path, &st) == 0) {
		s->exists = true;
		s->mode = st.st_mode;
		s->size = st.st_size;
		s->mtime = st.st_mtim;
		s->sum = S_ISREG(st.st_mode) ? file_sum(path) : 0;
	}
	*strrchr(dir, '/') = '\0';
	s->listing = listing_of(dir, !present);
	free(path);
	free(dir);
}

static bool exists_on_host(const char *name)
{
	char *path = joinpath(source_dir, name);
	struct stat st;
	bool r = lstat(path, &st) == 0;

	free(path);
	return r;
}

/* ---- the attempts, in the child --------------------------------------- */

enum { OP_NAME_MAX = 16 };

struct result {
	int index;
	char op[OP_NAME_MAX];
	int err; /* 0: the attempt succeeded */
	bool noparent;
};

static int out_fd;

static void report(int index, const char *op, int err, bool noparent)
{
	struct result r = {.index = index, .err = err, .noparent = noparent};

	snprintf(r.op, sizeof(r.op), "%s", op);
	if (write(out_fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(3);
}

#define TRY(op, expr) report(index, op, (expr) < 0 ? errno : 0, noparent)

static int write_all(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (write(fd, "planted\n", 8) != 8) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (close(fd) < 0)
		return -1;
	return 0;
}

/* Makes the missing directories of NAME below MOUNT: false when one was refused. */
static bool make_parents(int index, const char *name)
{
	char *p = joinpath(mount_dir, name);
	size_t base = strlen(mount_dir) + 1;
	bool noparent = false;

	for (char *s = p + base; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			report(index, "mkdir-parents", errno, false);
			noparent = true;
			*s = '/';
			break;
		}
		*s = '/';
	}
	free(p);
	return !noparent;
}

static void attempt_absent(int index, const struct plant_case *c)
{
	bool noparent = !make_parents(index, c->name);
	char *m = joinpath(mount_dir, c->name), *own = joinpath(mount_dir, c->own);
	const char *own_base = strrchr(c->own, '/') ? strrchr(c->own, '/') + 1 : c->own;

	TRY("create", write_all(m, O_WRONLY | O_CREAT | O_TRUNC));
	TRY("mkdir", mkdir(m, 0755));
	TRY("mkfifo", mkfifo(m, 0644));
	TRY("symlink", symlink(own_base, m));
	TRY("link", link(own, m));
	TRY("rename", rename(own, m));
	free(m);
	free(own);
}

static void attempt_present(int index, const struct plant_case *c)
{
	const bool noparent = false;
	char *m = joinpath(mount_dir, c->name), *own = joinpath(mount_dir, c->own);
	char *tmp = NULL, *away = NULL, *ln = NULL;
	struct timespec now[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};

	if (asprintf(&tmp, "%s.plant-tmp", m) < 0 || asprintf(&away, "%s.away", m) < 0 ||
	    asprintf(&ln, "%s.ln", m) < 0)
		_exit(3);
	TRY("overwrite", write_all(m, O_WRONLY | O_TRUNC));
	TRY("append", write_all(m, O_WRONLY | O_APPEND));
	TRY("truncate", truncate(m, 0));
	TRY("chmod", chmod(m, 0755));
	TRY("utimes", utimensat(AT_FDCWD, m, now, AT_SYMLINK_NOFOLLOW));
	TRY("setxattr", setxattr(m, "user.planted", "1", 1, 0));
	/* An editor's save: the temporary file is the agent's, its rename
	 * over the protected name is refused, and it is removed again. */
	if (write_all(tmp, O_WRONLY | O_CREAT | O_EXCL) == 0) {
		TRY("save-rename", rename(tmp, m));
		unlink(tmp);
	} else {
		/* Beside a protected file inside a protected directory the
		 * temporary file is refused already. */
		TRY("save-tmp", -1);
	}
	TRY("rename-over", rename(own, m));
	TRY("rename-away", rename(m, away));
	TRY("link-from", link(m, ln));
	TRY("unlink", unlink(m));
	free(m);
	free(own);
	free(tmp);
	free(away);
	free(ln);
}

static void become(const char *user)
{
	struct passwd *pw = getpwnam(user);

	if (!pw)
		die("no user '%s'", user);
	if (initgroups(pw->pw_name, pw->pw_gid) < 0 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
		die("cannot become '%s': %s", user, strerror(errno));
}

/* ---- checking, in the parent ---------------------------------------- */

static int expected_err(const struct result *r)
{
	if (r->err == EROFS)
		return 1;
	/* A refused directory on the way: nothing below it can exist. */
	if (r->noparent && r->err == ENOENT)
		return 1;
	/* A temporary file beside a name in a protected directory. */
	if (!strcmp(r->op, "save-tmp"))
		return 1;
	return 0;
}

/* The names of listing A that listing B lacks, each after a space. */
static char *names_missing(const char *a, const char *b)
{
	char *out = NULL, *copy = strdup(a), *save = NULL;
	char *padded = NULL;

	if (!copy || asprintf(&padded, " %s ", b) < 0)
		die("out of memory");
	append(&out, "%s", "");
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *needle = NULL;

		if (asprintf(&needle, " %s ", t) < 0)
			die("out of memory");
		if (!strstr(padded, needle))
			append(&out, " %s", t);
		free(needle);
	}
	free(copy);
	free(padded);
	return out;
}

static void check_after(struct plant_case *c)
{
	struct host_state after;

	read_host(c->name, &after);
	if (present) {
		if (!after.exists)
			append(&c->failures, " gone from the host");
		else if (after.mode != c->before.mode || after.size != c->before.size ||
			 after.sum != c->before.sum ||
			 after.mtime.tv_sec != c->before.mtime.tv_sec ||
			 after.mtime.tv_nsec != c->before.mtime.tv_nsec)
			append(&c->failures, " changed on the host (mode %o size %lld)",
			       (unsigned)after.mode, (long long)after.size);
	} else {
		if (after.exists)
			append(&c->failures, " exists on the host");
		if (strcmp(c->guard, "-") && exists_on_host(c->guard))
			append(&c->failures, " '%s' exists on the host", c->guard);
	}
	/* A directory on the way may have been made (an ordinary one, the
	 * agent's own), holding no file of NAME's. */
	bool made_empty = !strcmp(c->before.listing, "(no directory)") && !*after.listing;
	if (strcmp(after.listing, c->before.listing) && !made_empty) {
		char *gone = names_missing(c->before.listing, after.listing),
		     *added = names_missing(after.listing, c->before.listing);

		append(&c->failures, " its directory on the host changed (new:%s; gone:%s)", added,
		       gone);
		free(gone);
		free(added);
	}
	free(after.listing);
}

int main(int argc, char **argv)
{
	const char *as = NULL, *label;
	struct plant_case *cases = NULL;
	size_t n = 0;
	char *line = NULL;
	size_t cap = 0;
	int fds[2], status, bad = 0;
	pid_t pid;

	if (argc > 2 && !strcmp(argv[1], "--as")) {
		as = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 5 || (strcmp(argv[1], "absent") && strcmp(argv[1], "present")))
		die("usage: plant [--as USER] absent|present LABEL SOURCE MOUNT < CASES");
	present = !strcmp(argv[1], "present");
	label = argv[2];
	source_dir = argv[3];
	mount_dir = argv[4];

	while (getline(&line, &cap, stdin) > 0) {
		char name[4096], guard[4096], own[4096];

		if (sscanf(line, "%4095s %4095s %4095s", name, guard, own) != 3)
			die("bad case line '%s'", line);
		cases = realloc(cases, (n + 1) * sizeof(*cases));
		if (!cases)
			die("out of memory");
		memset(&cases[n], 0, sizeof(cases[n]));
		cases[n].name = strdup(name);
		cases[n].guard = strdup(guard);
		cases[n].own = strdup(own);
		read_host(name, &cases[n].before);
		if (present != cases[n].before.exists)
			die("'%s' should be %s on the host", name, present ? "present" : "absent");
		n++;
	}
	free(line);

	if (pipe(fds) < 0 || (pid = fork()) < 0)
		die("cannot fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		out_fd = fds[1];
		if (as)
			become(as);
		for (size_t i = 0; i < n; i++) {
			if (present)
				attempt_present((int)i, &cases[i]);
			else
				attempt_absent((int)i, &cases[i]);
		}
		_exit(0);
	}
	close(fds[1]);
	for (;;) {
		struct result r;
		ssize_t got = read(fds[0], &r, sizeof(r));

		if (got == 0)
			break;
		if (got != (ssize_t)sizeof(r) || r.index < 0 || (size_t)r.index >= n)
			die("short result from the child");
		struct plant_case *c = &cases[r.index];
		c->attempts++;
		if (!expected_err(&r))
			append(&c->failures, " %s: %s", r.op,
			       r.err ? strerror(r.err) : "succeeded");
	}
	close(fds[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("the child failed (status %d)", status);
	for (size_t i = 0; i < n; i++) {
		struct plant_case *c = &cases[i];

		check_after(c);
		if (c->attempts < (present ? 11 : 6))
			append(&c->failures, " only %d attempts made", c->attempts);
		if (c->failures) {
			printf("not ok - %s: %s: refused, nothing changed on the host:%s\n", label,
			       c->name, c->failures);
			bad++;
		} else {
			printf("ok - %s: %s: %d attempts refused, nothing changed on the host\n",
			       label, c->name, c->attempts);
		}
		free(c->name);
		free(c->guard);
		free(c->own);
		free(c->before.listing);
		free(c->failures);
	}
	free(cases);
	return bad ? 1 : 0;
}
