/*
 * tests/attack/attack.c: the attack driver, run by tests/attack/matrix.sh
 * (the matrix, per caller and world) and tests/attack/audit.sh (the audit
 * log). The real tools are tests/attack/tools.sh; the git layout only
 * libgit2 knows (separate gitdirs, core.hooksPath, worktrees) is also
 * tests/attack/gitlayout.sh.
 *
 * This file owns the whole attack matrix: the protected targets, the
 * operations tried on them, the fixtures they need, the host-side snapshots
 * that decide every case, the name variants, the git-layout cases, the
 * special files, the race and the audit-log checks. The shell scripts in
 * tests/attack/ build the SOURCE trees (real git repositories), mount them
 * and run this driver against the mounts.
 *
 * Every case is decided on the HOST side first: before the attack, the
 * protected path's whole subtree in SOURCE is snapshotted (existence, type,
 * mode, owner, size, content hash, mtime, ctime, link count, xattrs, symlink
 * target) together with the listings of the directories around it; after
 * the attack both must be identical (for absent names: still absent, and no
 * new name beside them). Only then is the errno compared with the expected
 * one (EROFS for a denial; the kernel's own errno where it refuses before
 * sandyfs is asked, e.g. EEXIST). Writable controls run the very same
 * operations on writable names and must succeed with the effect visible on
 * the host, so a mount that refuses everything cannot pass.
 *
 * Output: TAP, one "ok - ..."/"not ok - ..." line per case, "# skip ..."
 * for a case that cannot run. Exit status 1 when any case failed.
 *
 * usage:
 *   attack prepare WORLD SOURCE
 *       make the shared fixtures (root and depth 1) before mounting
 *   attack matrix [--as USER] [--race SECONDS] [--only SECTIONS] LABEL WORLD SOURCE MOUNT
 *       run the cases; SECTIONS: direct,variants,misc,git,race,scan
 *   attack audit [--user USER] [--flood N] LOG SOURCE MOUNT
 *       one record per denial, with the deciding rule; the rate limit
 *   attack auditcheck LABEL LOG
 *       every line of LOG parses
 * WORLD: present (every protected name exists), absent (the names do not,
 * their directories do), missing (nothing of them exists, SOURCE is no git
 * repository at its root).
 *
 * gnu11, libc, pthreads and cJSON.
 */
#include <cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* The mtime every fixture gets, so that a re-timing shows. */
#define FIXTURE_MTIME 981173106 /* 2001-02-03 04:05:06 UTC */
#define XATTR_NAME    "user.attack"
#define XATTR_VALUE   "fixture"

/* ------------------------------------------------------------------------ */
/* Globals, output */

enum world { W_PRESENT, W_ABSENT, W_MISSING };
static const char *const world_names[] = {"present", "absent", "missing"};

static const char *g_src;   /* SOURCE on the host, absolute */
static const char *g_mnt;   /* the mount, absolute */
static const char *g_label; /* "root" or "user": who attacks */
static enum world g_world;
static bool g_root; /* the attacker is root */
static uid_t g_uid;
static gid_t g_gid;
static unsigned g_seq; /* numbers fresh per-case directories */
static unsigned g_pass, g_fail, g_skips;

/* Paths of SOURCE that the oracle calls protected and that exist on
 * purpose: present at the start, or made by a fixture. The final scan
 * finds nothing else. */
static char **g_known;
static size_t g_nknown, g_capknown;

__attribute__((format(printf, 2, 3))) static void tap(bool pass, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(pass ? "ok - " : "not ok - ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
	if (pass)
		g_pass++;
	else
		g_fail++;
}

__attribute__((format(printf, 1, 2))) static void diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
}

__attribute__((format(printf, 1, 2))) static void skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# skip ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
	g_skips++;
}

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("attack: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	printf("not ok - attack driver: setup failed (see stderr)\n");
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		die("out of memory");
	return d;
}

static const char *ename(int e)
{
	if (e == 0)
		return "ok";
	const char *s = strerrorname_np(e);
	static __thread char buf[16];
	if (s)
		return s;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

/* Rotating buffers for short-lived strings (main thread only). */
static char *rbuf(void)
{
	static char bufs[32][PATH_MAX];
	static unsigned n;
	return bufs[n++ % 32];
}

__attribute__((format(printf, 1, 2))) static const char *F(const char *fmt, ...)
{
	char *b = rbuf();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, PATH_MAX, fmt, ap);
	va_end(ap);
	return b;
}

/* REL joined to a base: "" is the base itself. */
static const char *join(const char *a, const char *b)
{
	if (!*a)
		return F("%s", b);
	if (!*b)
		return F("%s", a);
	return F("%s/%s", a, b);
}

/* A '/' B into OUT (PATH_MAX bytes); thread-safe. */
static void path2(char *out, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la + lb + 2 > PATH_MAX)
		die("path too long: %s/%s", a, b);
	memcpy(out, a, la);
	out[la] = '/';
	memcpy(out + la + 1, b, lb + 1);
}

/* TMPL with its "%u" replaced by NO (the per-case names of controls). */
static void expand(char *out, size_t cap, const char *tmpl, unsigned no)
{
	const char *pct = strstr(tmpl, "%u");
	if (!pct) {
		snprintf(out, cap, "%s", tmpl);
		return;
	}
	snprintf(out, cap, "%.*s%u%s", (int)(pct - tmpl), tmpl, no, pct + 2);
}

/* The host path of REL (relative to SOURCE). */
static const char *H(const char *rel)
{
	return *rel ? F("%s/%s", g_src, rel) : F("%s", g_src);
}

/* The same path seen through the mount. */
static const char *M(const char *rel)
{
	return *rel ? F("%s/%s", g_mnt, rel) : F("%s", g_mnt);
}

static const char *dirname_of(const char *rel)
{
	const char *s = strrchr(rel, '/');
	return s ? F("%.*s", (int)(s - rel), rel) : F("%s", "");
}

static const char *basename_of(const char *rel)
{
	const char *s = strrchr(rel, '/');
	return F("%s", s ? s + 1 : rel);
}

/* The relative symlink target that leads from directory FROM to TO (both
 * relative to SOURCE). */
static const char *rel_between(const char *from, const char *to)
{
	size_t common = 0, i = 0;

	/* the longest common leading run of whole components */
	for (;; i++) {
		bool fe = from[i] == '\0' || from[i] == '/';
		bool te = to[i] == '\0' || to[i] == '/';
		if (fe && te)
			common = i;
		if (from[i] != to[i] || from[i] == '\0')
			break;
	}
	if (!*from)
		common = 0;
	char *out = rbuf();
	out[0] = '\0';
	const char *rest = from + common;
	if (*rest == '/')
		rest++;
	if (*from && *rest) {
		for (const char *c = rest; c;) {
			strcat(out, "../");
			c = strchr(c, '/');
			if (c)
				c++;
		}
	}
	const char *tail = to + common;
	if (*from && common == 0)
		tail = to;
	if (*tail == '/')
		tail++;
	strcat(out, tail);
	if (!*out)
		strcpy(out, ".");
	return out;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ULL;
	}
	return h;
}
#define FNV_INIT 14695981039346656037ULL

static int E(long r)
{
	return r < 0 ? errno : 0;
}

/* The errno of an open() whose fd is not needed. */
static int Eopen(int fd)
{
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void write_file(const char *path, const char *content, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		die("cannot create '%s': %s", path, strerror(errno));
	size_t n = strlen(content);
	if (write(fd, content, n) != (ssize_t)n)
		die("cannot write '%s': %s", path, strerror(errno));
	close(fd);
	if (chmod(path, mode) < 0)
		die("cannot chmod '%s': %s", path, strerror(errno));
}

static bool lexists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			die("cannot mkdir '%s': %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		die("cannot mkdir '%s': %s", buf, strerror(errno));
}

static void rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char sub[PATH_MAX];
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			rm_rf(sub);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

/* Reads at most CAP bytes of PATH; the length, or -errno. */
static ssize_t read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		if (r == 0 || (n += (size_t)r) == cap)
			break;
	}
	close(fd);
	return (ssize_t)n;
}

/* Runs ARGV with stdout and stderr to /dev/null; the exit status, or -1. */
static int run(char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ------------------------------------------------------------------------ */
/* The oracle: which names git's layout, canonical matching and the shipped rules make
 * immutable or protected, for the names this suite plants. It folds a
 * component the way canonical matching does (fusefs/policy/canon.h: ASCII case, the HFS+
 * ignorables, U+212A and U+017F, NTFS trailing dots and spaces and :streams, the 8.3 names). */

static bool hfs_ignorable(uint32_t c)
{
	return (c >= 0x200c && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x206a && c <= 0x206f) || c == 0xfeff;
}

static void canon_component(const char *in, size_t len, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 4 < cap;) {
		unsigned char c = (unsigned char)in[i];
		uint32_t cp = c;
		size_t n = 1;
		if (c >= 0xe0 && c < 0xf0 && i + 2 < len + 1) {
			cp = ((uint32_t)(c & 0x0f) << 12) | ((uint32_t)(in[i + 1] & 0x3f) << 6) |
			     (uint32_t)(in[i + 2] & 0x3f);
			n = 3;
		} else if (c >= 0xc0 && c < 0xe0) {
			cp = ((uint32_t)(c & 0x1f) << 6) | (uint32_t)(in[i + 1] & 0x3f);
			n = 2;
		}
		if (hfs_ignorable(cp)) {
		} else if (cp == 0x212a) {
			out[o++] = 'k';
		} else if (cp == 0x17f) {
			out[o++] = 's';
		} else if (n == 1) {
			out[o++] = (char)tolower(c);
		} else {
			memcpy(out + o, in + i, n);
			o += n;
		}
		i += n;
	}
	out[o] = '\0';
	char *colon = strchr(out + 1, ':');
	if (colon && out[0])
		*colon = '\0';
	while (o > 0 && (out[o - 1] == '.' || out[o - 1] == ' '))
		out[--o] = '\0';
	static const char *const short_names[][2] = {
		{"git~1", ".git"},
		{"gi7eba~1", ".gitmodules"},
		{"gi7d29~1", ".gitattributes"},
		{"vscode~1", ".vscode"},
	};
	for (size_t i = 0; i < sizeof(short_names) / sizeof(short_names[0]); i++)
		if (!strcmp(out, short_names[i][0]))
			snprintf(out, cap, "%s", short_names[i][1]);
}

/* Names protected at any depth (base.json and rust.json), folded. */
static const char *const protected_names[] = {
	".git",	     ".envrc",	  ".vscode",	 ".husky",	   ".pre-commit-config.yaml",
	"claude.md", ".mcp.json", ".gitmodules", ".gitattributes", ".githooks",
	".idea",     ".sandy",	  ".cursor",	 "agents.md",	   "gemini.md",
	".claude",
};

/* Whether REL (relative to SOURCE) is, or is below, a protected or
 * immutable name. */
static bool oracle_protected(const char *rel)
{
	char prev[NAME_MAX * 4] = "";

	for (const char *c = rel; *c;) {
		size_t l = strcspn(c, "/");
		char cur[NAME_MAX * 4];
		canon_component(c, l, cur, sizeof(cur));
		for (size_t i = 0; i < sizeof(protected_names) / sizeof(protected_names[0]); i++)
			if (!strcmp(cur, protected_names[i]))
				return true;
		if (!strcmp(prev, ".cargo") &&
		    (!strcmp(cur, "config") || !strcmp(cur, "config.toml")))
			return true;
		snprintf(prev, sizeof(prev), "%s", cur);
		c += l;
		if (*c == '/')
			c++;
	}
	return false;
}

/* Whether anything at or below REL on the host is protected. */
static bool subtree_protected(const char *rel_arg)
{
	char rel[PATH_MAX]; /* REL_ARG may be a rotating buffer */

	snprintf(rel, sizeof(rel), "%s", rel_arg);
	if (oracle_protected(rel))
		return true;
	const char *hp = H(rel);
	if (!is_dir(hp))
		return false;
	DIR *d = opendir(hp);
	struct dirent *de;
	bool found = false;
	while (!found && d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char sub[PATH_MAX];
		path2(sub, rel, de->d_name);
		found = subtree_protected(sub);
	}
	if (d)
		closedir(d);
	return found;
}

static void known_add(const char *rel)
{
	if (g_nknown == g_capknown) {
		g_capknown = g_capknown ? 2 * g_capknown : 1024;
		g_known = xrealloc(g_known, g_capknown * sizeof(*g_known));
	}
	g_known[g_nknown++] = xstrdup(rel);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Calls FN for every path below REL under ROOT (host or mount). */
static void walk(const char *root_arg, const char *rel_arg, void (*fn)(const char *rel, void *),
		 void *arg)
{
	char path[PATH_MAX], root[PATH_MAX], rel[PATH_MAX]; /* the args may be rotating buffers */

	snprintf(root, sizeof(root), "%s", root_arg);
	snprintf(rel, sizeof(rel), "%s", rel_arg);
	if (*rel)
		path2(path, root, rel);
	else
		snprintf(path, sizeof(path), "%s", root);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char sub[PATH_MAX];
		if (*rel)
			path2(sub, rel, de->d_name);
		else
			snprintf(sub, sizeof(sub), "%s", de->d_name);
		fn(sub, arg);
		path2(path, root, sub);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			walk(root, sub, fn, arg);
	}
	if (d)
		closedir(d);
}

static void collect_known(const char *rel, void *arg)
{
	(void)arg;
	if (oracle_protected(rel))
		known_add(rel);
}

/* Registers every protected path that exists below REL now (fixtures). */
static void register_fixtures(const char *rel)
{
	if (oracle_protected(rel) && lexists(H(rel)))
		known_add(rel);
	walk(g_src, rel, collect_known, NULL);
}

/* ------------------------------------------------------------------------ */
/* Host snapshots */

struct ent {
	char *rel;
	bool exists;
	struct stat st;
	uint64_t hash; /* content, symlink target or sorted names */
	char *xattrs;  /* "name=value\n"..., sorted */
	char *data;    /* a regular file's content, for restoring */
	size_t len;
	char *link;
};

struct snap {
	struct ent *v;
	size_t n, cap;
};

static char *xattr_text(const char *path)
{
	char names[4096];
	ssize_t n = llistxattr(path, names, sizeof(names));
	if (n <= 0)
		return xstrdup("");
	const char *list[64];
	size_t cnt = 0;
	for (char *p = names; p < names + n && cnt < 64; p += strlen(p) + 1)
		list[cnt++] = p;
	qsort(list, cnt, sizeof(*list), cmp_str);
	size_t cap = 1, used = 0;
	char *out = xstrdup("");
	for (size_t i = 0; i < cnt; i++) {
		char val[1024];
		ssize_t vl = lgetxattr(path, list[i], val, sizeof(val) - 1);
		if (vl < 0)
			vl = 0;
		val[vl] = '\0';
		size_t need = strlen(list[i]) + (size_t)vl + 3;
		out = xrealloc(out, cap + need);
		cap += need;
		used += (size_t)snprintf(out + used, need, "%s=%s\n", list[i], val);
	}
	return out;
}

static void snap_add(struct snap *s, const char *rel_arg, int depth)
{
	char rel[PATH_MAX]; /* REL_ARG may be a rotating buffer */

	snprintf(rel, sizeof(rel), "%s", rel_arg);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	struct ent *e = &s->v[s->n++];
	memset(e, 0, sizeof(*e));
	e->rel = xstrdup(rel);
	const char *hp = H(rel);
	if (lstat(hp, &e->st) < 0)
		return;
	e->exists = true;
	e->xattrs = xattr_text(hp);
	e->hash = FNV_INIT;
	if (S_ISREG(e->st.st_mode)) {
		size_t cap = (size_t)e->st.st_size + 1;
		if (cap > (4u << 20))
			cap = 4u << 20;
		e->data = xmalloc(cap);
		ssize_t n = read_file(hp, e->data, cap);
		e->len = n > 0 ? (size_t)n : 0;
		e->hash = fnv(e->hash, e->data, e->len);
	} else if (S_ISLNK(e->st.st_mode)) {
		char t[PATH_MAX];
		ssize_t n = readlink(hp, t, sizeof(t) - 1);
		t[n > 0 ? n : 0] = '\0';
		e->link = xstrdup(t);
		e->hash = fnv(e->hash, t, strlen(t));
	} else if (S_ISDIR(e->st.st_mode)) {
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s", hp);
		DIR *d = opendir(path);
		struct dirent *de;
		char **names = NULL;
		size_t nn = 0;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			names = xrealloc(names, (nn + 1) * sizeof(*names));
			names[nn++] = xstrdup(de->d_name);
		}
		if (d)
			closedir(d);
		if (nn)
			qsort(names, nn, sizeof(*names), cmp_str);
		for (size_t i = 0; i < nn; i++)
			e->hash = fnv(e->hash, names[i], strlen(names[i]) + 1);
		/* snap_add grows s->v: E is not used after this point */
		for (size_t i = 0; i < nn; i++) {
			char sub[PATH_MAX];
			if (depth != 0) {
				path2(sub, rel, names[i]);
				snap_add(s, sub, depth - 1);
			}
			free(names[i]);
		}
		free(names);
	}
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->rel, ((const struct ent *)b)->rel);
}

/* The snapshot of REL and what is below it, DEPTH levels down (-1: all);
 * an absent REL gives one absent entry. */
static void snap_take_depth(struct snap *s, const char *rel, int depth)
{
	memset(s, 0, sizeof(*s));
	snap_add(s, rel, depth);
	qsort(s->v, s->n, sizeof(*s->v), cmp_ent);
}

static void snap_take(struct snap *s, const char *rel)
{
	snap_take_depth(s, rel, -1);
}

static void snap_free(struct snap *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].rel);
		free(s->v[i].xattrs);
		free(s->v[i].data);
		free(s->v[i].link);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t cap, const char *fmt,
							 ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
}

static bool ts_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Describes how B differs from A into WHY; false when they are equal. */
static bool snap_diff(const struct snap *a, const struct snap *b, char *why, size_t cap)
{
	size_t i = 0, j = 0, shown = 0;
	bool differ = false;

	while (i < a->n || j < b->n) {
		int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->v[i].rel, b->v[j].rel);
		const struct ent *x = c <= 0 ? &a->v[i] : NULL, *y = c >= 0 ? &b->v[j] : NULL;
		char d[512] = "";
		if (x && x->exists && (!y || !y->exists)) {
			snprintf(d, sizeof(d), "%s vanished", x->rel);
		} else if (y && y->exists && (!x || !x->exists)) {
			snprintf(d, sizeof(d), "%s appeared (mode %o, %lld bytes)", y->rel,
				 y->st.st_mode, (long long)y->st.st_size);
		} else if (x && y && x->exists) {
			const struct stat *p = &x->st, *q = &y->st;
			if (p->st_mode != q->st_mode)
				append(d, sizeof(d), " mode %o->%o", p->st_mode, q->st_mode);
			if (p->st_uid != q->st_uid || p->st_gid != q->st_gid)
				append(d, sizeof(d), " owner %u:%u->%u:%u", p->st_uid, p->st_gid,
				       q->st_uid, q->st_gid);
			if (p->st_size != q->st_size)
				append(d, sizeof(d), " size %lld->%lld", (long long)p->st_size,
				       (long long)q->st_size);
			if (x->hash != y->hash)
				append(d, sizeof(d), " content");
			if (p->st_nlink != q->st_nlink)
				append(d, sizeof(d), " nlink %lu->%lu", (unsigned long)p->st_nlink,
				       (unsigned long)q->st_nlink);
			if (p->st_ino != q->st_ino)
				append(d, sizeof(d), " inode");
			if (!ts_eq(p->st_mtim, q->st_mtim))
				append(d, sizeof(d), " mtime");
			if (!ts_eq(p->st_ctim, q->st_ctim))
				append(d, sizeof(d), " ctime");
			if (strcmp(x->xattrs, y->xattrs))
				append(d, sizeof(d), " xattrs");
			if (*d) {
				differ = true;
				if (shown++ < 3)
					append(why, cap, "%s%s:%s", shown > 1 ? "; " : "", x->rel,
					       d);
				*d = '\0';
			}
		}
		if (*d) {
			differ = true;
			if (shown++ < 3)
				append(why, cap, "%s%s", shown > 1 ? "; " : "", d);
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	if (shown > 3)
		append(why, cap, "; ... (%zu differences)", shown);
	return differ;
}

static void restore_entry(const struct ent *e)
{
	const char *hp = H(e->rel);
	struct stat now;
	bool exists = lstat(hp, &now) == 0;

	if (exists && (now.st_mode & S_IFMT) != (e->st.st_mode & S_IFMT))
		rm_rf(hp), exists = false;
	if (S_ISDIR(e->st.st_mode)) {
		if (!exists)
			mkdir(hp, 0700);
	} else if (S_ISREG(e->st.st_mode)) {
		/* a fresh inode: the old one may have gained a link elsewhere */
		unlink(hp);
		int fd = open(hp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			if (write(fd, e->data, e->len) < 0)
				diag("restore: cannot write %s: %s", e->rel, strerror(errno));
			close(fd);
		}
	} else if (S_ISLNK(e->st.st_mode)) {
		unlink(hp);
		if (symlink(e->link, hp) < 0)
			diag("restore: cannot symlink %s: %s", e->rel, strerror(errno));
		return;
	} else {
		return;
	}
	if (g_root && lchown(hp, e->st.st_uid, e->st.st_gid) < 0)
		diag("restore: cannot chown %s: %s", e->rel, strerror(errno));
	chmod(hp, e->st.st_mode & 07777);
	char names[4096];
	ssize_t n = llistxattr(hp, names, sizeof(names));
	for (char *p = names; n > 0 && p < names + n; p += strlen(p) + 1)
		lremovexattr(hp, p);
	for (const char *x = e->xattrs; *x;) {
		const char *eq = strchr(x, '='), *nl = strchr(x, '\n');
		if (!eq || !nl)
			break;
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - x), x);
		lsetxattr(hp, name, eq + 1, (size_t)(nl - eq - 1), 0);
		x = nl + 1;
	}
}

/* Puts SOURCE back as snapshot BEFORE shows it, after a failed case
 * changed a place later cases share: what appeared goes, what changed or
 * vanished is made again (AFTER is the snapshot that showed the change,
 * taken to the same depth). */
static void snap_restore(const struct snap *before, const struct snap *after)
{
	size_t i = 0, j = 0;

	while (i < before->n || j < after->n) {
		int c = i == before->n	? 1
			: j == after->n ? -1
					: strcmp(before->v[i].rel, after->v[j].rel);
		if (c > 0 || (c == 0 && !before->v[i].exists && after->v[j].exists))
			rm_rf(H(after->v[j].rel));
		if (c <= 0 && before->v[i].exists) {
			const struct ent *x = &before->v[i], *y = c == 0 ? &after->v[j] : NULL;
			if (!y || !y->exists || x->hash != y->hash ||
			    x->st.st_mode != y->st.st_mode || x->st.st_uid != y->st.st_uid ||
			    x->st.st_ino != y->st.st_ino || x->st.st_nlink != y->st.st_nlink ||
			    strcmp(x->xattrs, y->xattrs))
				restore_entry(x);
		}
		if (c <= 0)
			i++;
		if (c >= 0)
			j++;
	}
	/* times last, children before their directories */
	for (size_t k = before->n; k-- > 0;) {
		const struct ent *e = &before->v[k];
		if (!e->exists || S_ISLNK(e->st.st_mode))
			continue;
		struct timespec ts[2] = {e->st.st_atim, e->st.st_mtim};
		utimensat(AT_FDCWD, H(e->rel), ts, AT_SYMLINK_NOFOLLOW);
	}
}

/* The sorted names in directory REL on the host, without EXCLUDE, as one
 * string; "(none)" when it does not exist. */
static char *listing(const char *rel, const char *exclude)
{
	DIR *d = opendir(H(rel));
	if (!d)
		return xstrdup("(none)");
	char **names = NULL;
	size_t n = 0, total = 1;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (exclude && !strcmp(de->d_name, exclude))
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(de->d_name);
		total += strlen(de->d_name) + 1;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	char *out = xmalloc(total);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		strcat(out, names[i]);
		strcat(out, "/");
		free(names[i]);
	}
	free(names);
	return out;
}

/* What is in listing B and not in A (and the reverse), for a message. */
static void listing_diff(const char *rel, const char *a, const char *b, char *why, size_t cap)
{
	char added[512] = "", removed[512] = "";
	for (int pass = 0; pass < 2; pass++) {
		const char *from = pass ? a : b, *in = pass ? b : a;
		char *out = pass ? removed : added;
		for (const char *c = from; *c;) {
			size_t l = strcspn(c, "/");
			char name[NAME_MAX * 4 + 3];
			snprintf(name, sizeof(name), "/%.*s/", (int)l, c);
			char with_slash[PATH_MAX + 2];
			snprintf(with_slash, sizeof(with_slash), "/%s", in);
			if (!strstr(with_slash, name))
				append(out, 512, " %.*s", (int)l, c);
			c += l;
			if (*c == '/')
				c++;
		}
	}
	append(why, cap, "%slisting of '%s' changed:%s%s%s%s", *why ? "; " : "", *rel ? rel : ".",
	       *added ? " new" : "", added, *removed ? " gone" : "", removed);
}

/* ------------------------------------------------------------------------ */
/* Targets and fixtures */

struct target {
	const char *name;  /* below the case's directory; %u: the case number */
	const char *guard; /* the shallowest protected path of NAME */
	bool git;	   /* fixtures are real git repositories */
	bool control;	   /* writable: the operations must succeed */
	const char *cls;   /* audit: the class expected */
	const char *rule;  /* audit: the deciding rule expected */
	const char *file;  /* audit: the rule file's name */
};

static const struct target targets[] = {
	{".git/hooks/pre-commit", ".git", true, false, "immutable", NULL, "(built-in)"},
	{".git/config", ".git", true, false, "immutable", NULL, "(built-in)"},
	{".envrc", ".envrc", false, false, "protected", ".envrc", "base.json"},
	{".vscode/tasks.json", ".vscode", false, false, "protected", ".vscode/", "base.json"},
	{".claude/settings.json", ".claude", false, false, "protected", ".claude/", "base.json"},
	{".cargo/config.toml", ".cargo/config.toml", false, false, "protected",
	 "**/.cargo/config.toml", "rust.json"},
	{".husky/pre-commit", ".husky", false, false, "protected", ".husky/", "base.json"},
	{".pre-commit-config.yaml", ".pre-commit-config.yaml", false, false, "protected",
	 ".pre-commit-config.yaml", "base.json"},
	{"CLAUDE.md", "CLAUDE.md", false, false, "protected", "CLAUDE.md", "base.json"},
	{".mcp.json", ".mcp.json", false, false, "protected", ".mcp.json", "base.json"},
	{".gitmodules", ".gitmodules", false, false, "protected", ".gitmodules", "base.json"},
	{"ctl%u.md", "ctl%u.md", false, true, NULL, NULL, NULL},
	{"ctl%u.md/f.md", "ctl%u.md", false, true, NULL, NULL, NULL},
};
#define NTARGETS (sizeof(targets) / sizeof(targets[0]))

static const char *fixture_text(const char *rel)
{
	if (strstr(rel, "hooks/"))
		return F("#!/bin/sh\n# fixture %s\nexit 0\n", rel);
	return F("fixture of %s: the host trusts this file\n", rel);
}

/* A protected file as the host has it: known content, 0644 (a hook that
 * is not executable yet), an xattr, an old mtime. */
static void write_fixture(const char *rel)
{
	const char *hp = H(rel);
	write_file(hp, fixture_text(rel), 0644);
	lsetxattr(hp, XATTR_NAME, XATTR_VALUE, strlen(XATTR_VALUE), 0);
	struct timespec ts[2] = {{FIXTURE_MTIME, 0}, {FIXTURE_MTIME, 0}};
	utimensat(AT_FDCWD, hp, ts, AT_SYMLINK_NOFOLLOW);
}

/* Copies the tree at FROM to TO (regular files, directories, modes). */
static void copy_tree(const char *from, const char *to)
{
	struct stat st;

	if (lstat(from, &st) < 0)
		die("cannot stat '%s': %s", from, strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(to, st.st_mode & 07777) < 0)
			die("cannot mkdir '%s': %s", to, strerror(errno));
		DIR *d = opendir(from);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char a[PATH_MAX], b[PATH_MAX];
			path2(a, from, de->d_name);
			path2(b, to, de->d_name);
			copy_tree(a, b);
		}
		if (d)
			closedir(d);
	} else if (S_ISREG(st.st_mode)) {
		char buf[65536];
		ssize_t n = read_file(from, buf, sizeof(buf));
		int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
		if (n < 0 || fd < 0 || write(fd, buf, (size_t)n) != n)
			die("cannot copy '%s': %s", from, strerror(errno));
		close(fd);
	}
}

/* A repository made once by git init (without the sample hooks), which
 * per-case fixtures copy: a git run per case would cost 10 ms. */
static char g_template[PATH_MAX];

static void template_cleanup(void)
{
	if (*g_template)
		rm_rf(g_template);
}

/* A real repository at PREFIX, without the sample hooks. */
static void git_init(const char *prefix)
{
	const char *hp = H(prefix);
	if (!*g_template) {
		snprintf(g_template, sizeof(g_template), "/tmp/attack-repo.XXXXXX");
		if (!mkdtemp(g_template))
			die("cannot make a temporary directory: %s", strerror(errno));
		atexit(template_cleanup);
		char *argv[] = {"git", "init", "-q", g_template, NULL};
		if (run(argv) != 0)
			die("git init '%s' failed", g_template);
		rm_rf(F("%s/.git/hooks", g_template));
		mkdir(F("%s/.git/hooks", g_template), 0755);
	}
	copy_tree(F("%s/.git", g_template), F("%s/.git", hp));
}

/* Makes target T below PREFIX as world STATE wants it. NAME is T->name
 * with the case number filled in. */
static void make_fixture(const char *prefix, const struct target *t, const char *name,
			 enum world state)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s", join(prefix, name));
	if (t->git) {
		if (state == W_MISSING)
			return;
		if (!lexists(H(join(prefix, ".git"))))
			git_init(prefix);
		if (state == W_PRESENT) {
			if (!lexists(H(rel)))
				write_fixture(rel);
			else
				lsetxattr(H(rel), XATTR_NAME, XATTR_VALUE, strlen(XATTR_VALUE), 0);
		} else if (unlink(H(rel)) < 0 && errno != ENOENT) {
			die("cannot remove '%s': %s", H(rel), strerror(errno));
		}
		return;
	}
	if (state == W_MISSING)
		return;
	const char *dir = dirname_of(rel);
	if (*dir)
		mkdir_p(H(dir));
	if (state == W_PRESENT) {
		if (lexists(H(rel)))
			lsetxattr(H(rel), XATTR_NAME, XATTR_VALUE, strlen(XATTR_VALUE), 0);
		else
			write_fixture(rel);
	}
}

static const char *depth_prefix(int depth, unsigned no)
{
	switch (depth) {
	case 0:
		return "";
	case 1:
		return "examples";
	default:
		return F("src/c%05u/b/c", no);
	}
}

static const char *ro_place(int depth);

static int cmd_prepare(int argc, char **argv)
{
	if (argc != 4)
		die("usage: attack prepare WORLD SOURCE");
	for (g_world = W_PRESENT; g_world <= W_MISSING; g_world++)
		if (!strcmp(argv[2], world_names[g_world]))
			break;
	if (g_world > W_MISSING)
		die("unknown world '%s'", argv[2]);
	g_src = argv[3];
	g_root = geteuid() == 0;
	mkdir_p(H("examples"));
	mkdir_p(H("src/w"));
	mkdir_p(H("vendor/a/b/c"));
	for (int depth = 0; depth <= 1; depth++) {
		for (size_t i = 0; i < NTARGETS; i++) {
			if (targets[i].control)
				continue;
			if (targets[i].git && depth == 0 && g_world != W_MISSING &&
			    !lexists(H(".git")))
				die("the %s world needs SOURCE to be a git repository",
				    world_names[g_world]);
			make_fixture(depth_prefix(depth, 0), &targets[i], targets[i].name, g_world);
		}
	}
	/* a file of the host's own in each readonly place */
	for (int depth = 0; depth <= 4; depth += depth ? 3 : 1)
		write_file(H(join(ro_place(depth), "ro-fixture.dat")), "the host's own\n", 0644);
	/* a secret the overlay must mask, and one that is hidden */
	write_file(H(".env"), "API_TOKEN=host-secret-4f1d\n", 0600);
	write_file(H("src/w/id_rsa"), "host private key\n", 0600);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases */

struct kase {
	unsigned no;
	char what[512]; /* for the TAP line: "root/present/d4/.envrc" */
	const struct target *t;
	int depth;
	bool shared;   /* at a place later cases use: restore after a change */
	bool writable; /* a control */
	char name[PATH_MAX];
	char prefix[PATH_MAX];
	char rel[PATH_MAX];	/* the protected path */
	char guard[PATH_MAX];	/* snapshotted recursively */
	char top[PATH_MAX];	/* the first component of NAME below PREFIX */
	char leafdir[PATH_MAX]; /* the directory holding REL */
	char w[PATH_MAX];	/* a fresh writable directory */
	bool present;		/* REL exists */
	bool lpe;		/* LEAFDIR exists */
	int gdepth;		/* how deep GUARD is snapshotted (-1: all) */
	struct stat before;	/* REL's stat when present */
	/* outcome */
	char steps[2048];
	bool bad;
};

/* Records one step: ERR (0: success) must be one of WANT. */
#define STEP(k, what, err, ...) step_((k), (what), (err), (const int[]){__VA_ARGS__, -1})
static int step_(struct kase *k, const char *what, int err, const int *want)
{
	bool good = false;

	for (const int *w = want; *w != -1; w++)
		good |= *w == err;
	append(k->steps, sizeof(k->steps), "%s%s: %s", *k->steps ? ", " : "", what, ename(err));
	if (!good) {
		append(k->steps, sizeof(k->steps), " (want");
		for (const int *w = want; *w != -1; w++)
			append(k->steps, sizeof(k->steps), "%s%s", w == want ? " " : "|",
			       ename(*w));
		append(k->steps, sizeof(k->steps), ")");
		k->bad = true;
	}
	return err;
}

/* For controls: the change must be visible on the host. */
static void effect(struct kase *k, bool cond, const char *what)
{
	if (k->writable && !cond) {
		append(k->steps, sizeof(k->steps), ", host does not show: %s", what);
		k->bad = true;
	}
}

/* What a refused operation would have made must not be on the host. */
static void gone(struct kase *k, const char *rel)
{
	if (lexists(H(rel))) {
		append(k->steps, sizeof(k->steps), ", HOST HAS %s", rel);
		k->bad = true;
	}
}

/* The answer a denied operation gets, or success for a control. */
static int deny(const struct kase *k)
{
	return k->writable ? 0 : EROFS;
}

/* For operations on REL that need it to exist. */
static int needs(const struct kase *k)
{
	return k->present ? deny(k) : ENOENT;
}

/* For operations that make REL and fail when it exists. */
static int creates(const struct kase *k)
{
	return !k->lpe ? ENOENT : k->present ? EEXIST : deny(k);
}

static const char *W(const struct kase *k, const char *name)
{
	return join(k->w, name);
}

static off_t host_size(const char *rel)
{
	struct stat st;
	return lstat(H(rel), &st) == 0 ? st.st_size : -1;
}

static mode_t host_mode(const char *rel)
{
	struct stat st;
	return lstat(H(rel), &st) == 0 ? st.st_mode : 0;
}

static bool host_has(const char *rel, const char *content)
{
	char buf[4096];
	ssize_t n = read_file(H(rel), buf, sizeof(buf) - 1);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, content);
}

/* Makes W/NAME through the mount, with CONTENT. */
static int mk_wfile(struct kase *k, const char *name, const char *content)
{
	int fd = open(M(W(k, name)), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int e = fd < 0 ? errno : 0;
	if (fd >= 0) {
		size_t n = strlen(content);
		if (write(fd, content, n) != (ssize_t)n)
			e = errno ? errno : EIO;
		close(fd);
	}
	return STEP(k, F("create writable %s", name), e, 0);
}

static int mk_wdir(struct kase *k, const char *name)
{
	return STEP(k, F("mkdir writable %s", name), E(mkdir(M(W(k, name)), 0755)), 0);
}

/* Brings the kernel's caches into play: the names (present or not)
 * looked up, the file read, the directories listed. */
static void warm(const struct kase *k)
{
	struct stat st;
	char buf[4096];

	lstat(M(k->prefix), &st);
	for (const char *c = k->rel + strlen(k->prefix); *c;) {
		if (*c == '/')
			c++;
		const char *slash = strchr(c, '/');
		size_t upto = slash ? (size_t)(slash - k->rel) : strlen(k->rel);
		lstat(M(F("%.*s", (int)upto, k->rel)), &st);
		if (!slash)
			break;
		c = slash + 1;
	}
	if (k->present) {
		read_file(M(k->rel), buf, sizeof(buf));
		lgetxattr(M(k->rel), XATTR_NAME, buf, sizeof(buf));
	}
	DIR *d = opendir(M(k->prefix));
	while (d && readdir(d)) {
	}
	if (d)
		closedir(d);
	if (k->lpe && (d = opendir(M(k->leafdir)))) {
		while (readdir(d)) {
		}
		closedir(d);
	}
	lstat(M(k->w), &st);
}

/* Whether the mount shows REL as the host has it. */
static bool mount_agrees(const char *rel, char *why, size_t cap)
{
	struct stat h, m;
	bool he = lstat(H(rel), &h) == 0, me = lstat(M(rel), &m) == 0;

	if (he != me) {
		append(why, cap, "%smount %s '%s' while the host %s it", *why ? "; " : "",
		       me ? "shows" : "does not show", rel, he ? "has" : "has not");
		return false;
	}
	if (!he)
		return true;
	if ((h.st_mode & S_IFMT) != (m.st_mode & S_IFMT) || h.st_size != m.st_size) {
		append(why, cap, "%smount shows '%s' as mode %o size %lld, host %o %lld",
		       *why ? "; " : "", rel, m.st_mode, (long long)m.st_size, h.st_mode,
		       (long long)h.st_size);
		return false;
	}
	if (S_ISREG(h.st_mode) && h.st_size < 65536) {
		char a[65536], b[65536];
		ssize_t na = read_file(H(rel), a, sizeof(a)), nb = read_file(M(rel), b, sizeof(b));
		if (na >= 0 && (nb != na || memcmp(a, b, (size_t)na))) {
			append(why, cap, "%smount serves other content for '%s' than the host has",
			       *why ? "; " : "", rel);
			return false;
		}
	}
	return true;
}

/* Drops the mount's cached pages of REL, so that a change the kernel
 * kept although the host refused it does not spill into later cases. */
static void drop_pages(const char *rel)
{
	int fd = open(M(rel), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

/* Waits until the mount shows REL as the host has it (after a restore). */
static void wait_coherent(const char *rel)
{
	for (int i = 0; i < 200; i++) {
		char why[256] = "";
		if (mount_agrees(rel, why, sizeof(why)))
			return;
		usleep(10000);
	}
	diag("the mount still disagrees with the host about '%s' after 2 s", rel);
}

struct op {
	const char *name;
	int (*fn)(struct kase *);
	unsigned flags;
	void (*prep)(struct kase *); /* host-side set-up, before the snapshot */
};
#define NEED_PRESENT 1u /* only when REL exists */
#define NEED_LEAF    2u /* only when REL exists or is merely absent (not missing) */
#define MULTI	     4u /* only for names with a directory component */
#define NOT_ROOT     8u /* needs a case directory below SOURCE */

/* Runs one case: snapshot, warm, attack, compare, report. */
static void run_kase(struct kase *k, const struct op *op)
{
	struct snap before, after;
	char *list_prefix, *list_leafdir = NULL;
	/* A control's own name is expected to change, and an unprotected
	 * directory holding the name (.cargo) is compared by listing. */
	char ownbuf[NAME_MAX + 1];
	const char *own = NULL;
	if (k->writable)
		own = strcpy(ownbuf, basename_of(k->top));
	bool leafdir_listed =
		strcmp(k->leafdir, k->prefix) && strlen(k->guard) > strlen(k->leafdir);

	if (op->prep)
		op->prep(k);
	snap_take_depth(&before, k->guard, k->gdepth);
	list_prefix = listing(k->prefix, own);
	if (leafdir_listed)
		list_leafdir = listing(k->leafdir, NULL);
	warm(k);

	op->fn(k);

	char why[2048] = "";
	bool changed = false;
	snap_take_depth(&after, k->guard, k->gdepth);
	if (!k->writable)
		changed |= snap_diff(&before, &after, why, sizeof(why));
	char *now = listing(k->prefix, own);
	if (strcmp(now, list_prefix)) {
		listing_diff(k->prefix, list_prefix, now, why, sizeof(why));
		changed = true;
	}
	free(now);
	if (leafdir_listed) {
		now = listing(k->leafdir, NULL);
		if (strcmp(now, list_leafdir)) {
			listing_diff(k->leafdir, list_leafdir, now, why, sizeof(why));
			changed = true;
		}
		free(now);
	}
	bool agrees = mount_agrees(k->rel, why, sizeof(why));
	if (!agrees) {
		drop_pages(k->rel);
		char still[256] = "";
		if (!mount_agrees(k->rel, still, sizeof(still)))
			append(why, sizeof(why), " (also after dropping the cached pages)");
		else
			append(why, sizeof(why), " (until its cached pages were dropped)");
	}
	bool pass = !changed && agrees && !k->bad;
	tap(pass, "%s: %s: %s; %s%s%s%s", k->what, op->name, k->steps,
	    k->writable ? "host shows the change"
	    : changed	? "HOST CHANGED: "
			: "host unchanged",
	    changed ? why : "", !changed && !agrees ? "; " : "", !changed && !agrees ? why : "");
	if (changed && k->shared && !k->writable) {
		snap_restore(&before, &after);
		wait_coherent(k->rel);
	}
	free(list_prefix);
	free(list_leafdir);
	snap_free(&before);
	snap_free(&after);
}

/* Fills K for target T at DEPTH; false when OP (NULL: any) does not
 * apply. */
static bool kase_init(struct kase *k, const struct target *t, int depth, const struct op *op)
{
	memset(k, 0, sizeof(*k));
	k->no = ++g_seq;
	k->t = t;
	k->depth = depth;
	k->writable = t->control;
	k->shared = depth < 4;
	expand(k->name, sizeof(k->name), t->name, k->no);
	snprintf(k->prefix, sizeof(k->prefix), "%s", depth_prefix(depth, k->no));
	snprintf(k->rel, sizeof(k->rel), "%s", join(k->prefix, k->name));
	char guard[PATH_MAX];
	expand(guard, sizeof(guard), t->guard, k->no);
	snprintf(k->guard, sizeof(k->guard), "%s", join(k->prefix, guard));
	snprintf(k->top, sizeof(k->top), "%s",
		 join(k->prefix, F("%.*s", (int)strcspn(k->name, "/"), k->name)));
	snprintf(k->leafdir, sizeof(k->leafdir), "%s", dirname_of(k->rel));
	snprintf(k->w, sizeof(k->w), "src/w/%05u", k->no);
	/* A repository's gitdir is large: down to the target's level only
	 * (a change elsewhere in it still shows in its directories). */
	k->gdepth = -1;
	if (t->git) {
		k->gdepth = 0;
		for (const char *c = strchr(k->name, '/'); c; c = strchr(c + 1, '/'))
			k->gdepth++;
	}
	unsigned flags = op ? op->flags : 0;
	if ((flags & MULTI) && !strchr(k->name, '/'))
		return false;
	if ((flags & NOT_ROOT) && depth == 0)
		return false;
	/* Per-case places are made now, on the host, in directories the
	 * mount has never looked at; shared ones were made before mounting
	 * (a control's name is new in any case). */
	if (depth >= 4) {
		mkdir_p(H(k->prefix));
		make_fixture(k->prefix, t, k->name, g_world);
		register_fixtures(k->prefix);
	} else if (t->control) {
		make_fixture(k->prefix, t, k->name, g_world);
	}
	k->present = lstat(H(k->rel), &k->before) == 0;
	k->lpe = is_dir(H(k->leafdir));
	if ((flags & NEED_PRESENT) && !k->present)
		return false;
	if ((flags & NEED_LEAF) && !k->lpe)
		return false;
	mkdir_p(H(k->w));
	return true;
}

/* ---- 1. direct operations ---- */

/* open(REL, FLAGS) must be refused; if it is not, the write through the
 * fd must be (and the line says so). */
static int open_then_write(struct kase *k, const char *what, int flags)
{
	int fd = open(M(k->rel), flags | O_CLOEXEC);
	int e = STEP(k, what, fd < 0 ? errno : 0, needs(k));
	if (fd >= 0) {
		STEP(k, "write", E(pwrite(fd, "written\n", 8, 0)), deny(k));
		close(fd);
	}
	return e;
}

static int op_open_wronly(struct kase *k)
{
	return open_then_write(k, "open O_WRONLY", O_WRONLY);
}

static int op_open_rdwr(struct kase *k)
{
	return open_then_write(k, "open O_RDWR", O_RDWR);
}

static int op_append(struct kase *k)
{
	int fd = open(M(k->rel), O_WRONLY | O_APPEND | O_CLOEXEC);
	int e = STEP(k, "open O_WRONLY|O_APPEND", fd < 0 ? errno : 0, needs(k));
	if (fd >= 0) {
		STEP(k, "write", E(write(fd, "appended\n", 9)), deny(k));
		close(fd);
		effect(k, host_size(k->rel) == k->before.st_size + 9, "9 bytes appended");
	}
	return e;
}

static int op_trunc(struct kase *k)
{
	int e = STEP(k, "open O_WRONLY|O_TRUNC",
		     Eopen(open(M(k->rel), O_WRONLY | O_TRUNC | O_CLOEXEC)), needs(k));
	if (!e)
		effect(k, host_size(k->rel) == 0, "size 0");
	return e;
}

static int op_rdonly_trunc(struct kase *k)
{
	int e = STEP(k, "open O_RDONLY|O_TRUNC",
		     Eopen(open(M(k->rel), O_RDONLY | O_TRUNC | O_CLOEXEC)), needs(k));
	if (!e)
		effect(k, host_size(k->rel) == 0, "size 0");
	return e;
}

static int op_creat(struct kase *k)
{
	int e = STEP(k, "open O_CREAT|O_TRUNC",
		     Eopen(open(M(k->rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)),
		     !k->lpe ? ENOENT : deny(k));
	if (!e)
		effect(k, host_size(k->rel) == 0, "an empty file");
	return e;
}

static int op_excl(struct kase *k)
{
	int e = STEP(k, "open O_CREAT|O_EXCL",
		     Eopen(open(M(k->rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)),
		     creates(k));
	if (!e)
		effect(k, S_ISREG(host_mode(k->rel)), "a new file");
	return e;
}

static int op_mkdir(struct kase *k)
{
	int e = STEP(k, "mkdir", E(mkdir(M(k->rel), 0755)), creates(k));
	if (!e)
		effect(k, S_ISDIR(host_mode(k->rel)), "a new directory");
	return e;
}

/* mkdir -p REL/sub, from the case directory down; what it made is removed
 * again, so only what may not be made can remain. */
static int op_mkdir_p(struct kase *k)
{
	char path[PATH_MAX], made[16][PATH_MAX];
	int nmade = 0, e = 0;
	const char *full = F("%s/sub", k->rel);
	size_t start = strlen(k->prefix) + (*k->prefix ? 1 : 0);

	for (size_t i = start;; i++) {
		if (full[i] != '/' && full[i] != '\0')
			continue;
		snprintf(path, sizeof(path), "%.*s", (int)i, full);
		if (mkdir(M(path), 0755) == 0) {
			if (nmade < 16)
				snprintf(made[nmade++], PATH_MAX, "%s", path);
		} else if (errno != EEXIST) {
			e = errno;
			break;
		}
		if (!full[i])
			break;
	}
	STEP(k, "mkdir -p", e, k->present ? ENOTDIR : deny(k));
	if (!e)
		effect(k, S_ISDIR(host_mode(full)), "the directories");
	while (nmade-- > 0)
		STEP(k, F("rmdir %s", basename_of(made[nmade])), E(rmdir(M(made[nmade]))), 0);
	return e;
}

static int op_truncate(struct kase *k)
{
	int e = STEP(k, "truncate", E(truncate(M(k->rel), 0)), needs(k));
	if (!e)
		effect(k, host_size(k->rel) == 0, "size 0");
	return e;
}

/* Opens REL for writing (which a protected name refuses) or else read-only,
 * so the fd-based operations can be tried on what the caller can get. */
static int open_w_or_r(struct kase *k, int wflags, bool *writing)
{
	int fd = open(M(k->rel), wflags | O_CLOEXEC);
	STEP(k, "open for writing", fd < 0 ? errno : 0, deny(k));
	*writing = fd >= 0;
	if (fd >= 0)
		return fd;
	fd = open(M(k->rel), O_RDONLY | O_CLOEXEC);
	STEP(k, "open O_RDONLY", fd < 0 ? errno : 0, 0);
	return fd;
}

/* What an fd operation on REL must end with: success for a control; for
 * a protected name the kernel's refusal on a read-only fd (RO_ERR), or
 * EROFS from sandyfs if a write fd was (wrongly) handed out. */
static int fd_want(const struct kase *k, bool writing, int ro_err)
{
	return k->writable ? 0 : writing ? EROFS : ro_err;
}

static int op_ftruncate(struct kase *k)
{
	bool w;
	int fd = open_w_or_r(k, O_WRONLY, &w);
	if (fd < 0)
		return 0;
	int e = STEP(k, "ftruncate", E(ftruncate(fd, 0)), fd_want(k, w, EINVAL),
		     fd_want(k, w, EBADF));
	close(fd);
	if (!e)
		effect(k, host_size(k->rel) == 0, "size 0");
	return e;
}

static int op_fallocate(struct kase *k)
{
	bool w;
	int fd = open_w_or_r(k, O_WRONLY, &w);
	if (fd < 0)
		return 0;
	int e = STEP(k, "fallocate", E(fallocate(fd, 0, 0, 65536)), fd_want(k, w, EBADF));
	close(fd);
	if (!e)
		effect(k, host_size(k->rel) == 65536, "65536 bytes");
	return e;
}

static int op_copy_range(struct kase *k)
{
	static const char payload[] = "copied by copy_file_range\n";
	if (mk_wfile(k, "src", payload))
		return 0;
	bool w;
	int in = open(M(W(k, "src")), O_RDONLY | O_CLOEXEC);
	int out = open_w_or_r(k, O_WRONLY, &w);
	int e = 0;
	if (in >= 0 && out >= 0) {
		loff_t off_in = 0, off_out = 0;
		e = STEP(k, "copy_file_range",
			 E(copy_file_range(in, &off_in, out, &off_out, sizeof(payload) - 1, 0)),
			 fd_want(k, w, EBADF));
		if (!e) {
			char buf[64];
			ssize_t n = read_file(H(k->rel), buf, sizeof(buf));
			effect(k,
			       n >= (ssize_t)sizeof(payload) - 1 &&
				       !memcmp(buf, payload, sizeof(payload) - 1),
			       "the copied bytes");
		}
	}
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return e;
}

static int op_mmap(struct kase *k)
{
	bool w;
	int fd = open_w_or_r(k, O_RDWR, &w);
	if (fd < 0)
		return 0;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = STEP(k, "mmap PROT_WRITE MAP_SHARED", p == MAP_FAILED ? errno : 0,
		     k->writable || w ? 0 : EACCES);
	if (p != MAP_FAILED) {
		((char *)p)[0] = 'X';
		STEP(k, "msync", E(msync(p, 4096, MS_SYNC)), deny(k));
		munmap(p, 4096);
	}
	close(fd);
	if (!e) {
		char c = 0;
		read_file(H(k->rel), &c, 1);
		effect(k, c == 'X', "the byte written through the mapping");
	}
	return e;
}

static int op_chmod_x(struct kase *k)
{
	int e = STEP(k, "chmod +x", E(chmod(M(k->rel), 0755)), needs(k));
	if (!e)
		effect(k, (host_mode(k->rel) & 0777) == 0755, "mode 755");
	return e;
}

static int op_fchmod(struct kase *k)
{
	int fd = open(M(k->rel), O_RDONLY | O_CLOEXEC);
	if (STEP(k, "open O_RDONLY", fd < 0 ? errno : 0, 0))
		return 0;
	int e = STEP(k, "fchmod +x", E(fchmod(fd, 0755)), deny(k));
	close(fd);
	if (!e)
		effect(k, (host_mode(k->rel) & 0777) == 0755, "mode 755");
	return e;
}

static int op_chown(struct kase *k)
{
	/* root gives the file away; a user may only "change" it to itself,
	 * which the kernel lets through to sandyfs. */
	uid_t u = g_root ? 4242 : g_uid;
	gid_t g = g_root ? 4242 : g_gid;
	int e = STEP(k, F("chown %u:%u", u, g), E(lchown(M(k->rel), u, g)), needs(k));
	if (!e) {
		struct stat st;
		effect(k, lstat(H(k->rel), &st) == 0 && st.st_uid == u && st.st_gid == g,
		       "the new owner");
	}
	return e;
}

static int op_utimens_now(struct kase *k)
{
	int e = STEP(k, "utimensat(now)",
		     E(utimensat(AT_FDCWD, M(k->rel), NULL, AT_SYMLINK_NOFOLLOW)), needs(k));
	if (!e) {
		struct stat st;
		effect(k, lstat(H(k->rel), &st) == 0 && st.st_mtime > FIXTURE_MTIME + 1000,
		       "a new mtime");
	}
	return e;
}

static int op_utimens_set(struct kase *k)
{
	struct timespec ts[2] = {{1262304000, 0}, {1262304000, 0}};
	int e = STEP(k, "utimensat(2010)",
		     E(utimensat(AT_FDCWD, M(k->rel), ts, AT_SYMLINK_NOFOLLOW)), needs(k));
	if (!e) {
		struct stat st;
		effect(k, lstat(H(k->rel), &st) == 0 && st.st_mtime == 1262304000, "mtime 2010");
	}
	return e;
}

static int op_futimens(struct kase *k)
{
	int fd = open(M(k->rel), O_RDONLY | O_CLOEXEC);
	if (STEP(k, "open O_RDONLY", fd < 0 ? errno : 0, 0))
		return 0;
	int e = STEP(k, "futimens(now)", E(futimens(fd, NULL)), deny(k));
	close(fd);
	return e;
}

static int op_setxattr(struct kase *k)
{
	int e = STEP(k, "setxattr", E(lsetxattr(M(k->rel), "user.attack.new", "evil", 4, 0)),
		     needs(k));
	if (!e) {
		char v[16];
		effect(k, lgetxattr(H(k->rel), "user.attack.new", v, sizeof(v)) == 4,
		       "the new xattr");
	}
	return e;
}

static int op_removexattr(struct kase *k)
{
	char v[64];
	if (lgetxattr(H(k->rel), XATTR_NAME, v, sizeof(v)) < 0) {
		STEP(k, "fixture xattr", errno, 0);
		return 0;
	}
	int e = STEP(k, "removexattr", E(lremovexattr(M(k->rel), XATTR_NAME)), deny(k));
	if (!e)
		effect(k, lgetxattr(H(k->rel), XATTR_NAME, v, sizeof(v)) < 0, "the xattr gone");
	return e;
}

static int op_unlink(struct kase *k)
{
	int e = STEP(k, "unlink", E(unlink(M(k->rel))), needs(k));
	if (!e)
		effect(k, !lexists(H(k->rel)), "the name gone");
	return e;
}

static int op_rmdir_file(struct kase *k)
{
	return STEP(k, "rmdir", E(rmdir(M(k->rel))), ENOTDIR);
}

/* rmdir of the directory holding the name: a protected directory refuses
 * with EROFS before the host is asked (an empty one would go). */
static int op_rmdir_dir(struct kase *k)
{
	bool dir_protected = strlen(k->guard) <= strlen(k->leafdir) && !k->writable;
	int want = dir_protected ? EROFS : k->present ? ENOTEMPTY : 0;
	int e = STEP(k, F("rmdir %s", basename_of(k->leafdir)), E(rmdir(M(k->leafdir))), want);
	if (!e) /* an unprotected empty directory: put it back */
		STEP(k, "mkdir it again", E(mkdir(M(k->leafdir), 0755)), 0);
	return e;
}

/* ---- 2. renames ---- */

static int op_rename_onto(struct kase *k)
{
	static const char payload[] = "planted by rename\n";
	if (mk_wfile(k, "f", payload))
		return 0;
	int e = STEP(k, "rename writable file onto it", E(rename(M(W(k, "f")), M(k->rel))),
		     !k->lpe ? ENOENT : deny(k));
	if (!e)
		effect(k, host_has(k->rel, payload), "the planted content");
	return e;
}

static int op_rename_away(struct kase *k)
{
	int e = STEP(k, "rename it away", E(rename(M(k->rel), M(W(k, "moved")))), needs(k));
	if (!e && !k->writable) /* a hole: put it back before going on */
		rename(M(W(k, "moved")), M(k->rel));
	int want = k->writable	? (k->lpe ? 0 : ENOENT)
		   : !k->lpe	? ENOENT
		   : k->present ? EEXIST
				: EROFS;
	int c = STEP(k, "create it again",
		     Eopen(open(M(k->rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)), want);
	if (!e && !c)
		effect(k, lexists(H(W(k, "moved"))) && lexists(H(k->rel)), "both names");
	return e;
}

/* mv TOP TOP.old (mv .git .git.old, mv .vscode c): refused when anything
 * protected moves with it. */
static int op_rename_top(struct kase *k)
{
	bool exists = lexists(H(k->top));
	int want = !exists ? ENOENT : subtree_protected(k->top) && !k->writable ? EROFS : 0;
	/* A writable control keeps its extension, so the new name is as
	 * writable as the old one (ctl.md -> ctl.old.md, not ctl.md.old). */
	const char *base = strrchr(k->top, '/');
	const char *dot = strrchr(base ? base + 1 : k->top, '.');
	const char *old = k->writable && dot ? F("%.*s.old%s", (int)(dot - k->top), k->top, dot)
					     : F("%s.old", k->top);
	int e = STEP(k, F("mv %s %s", basename_of(k->top), basename_of(old)),
		     E(rename(M(k->top), M(old))), want);
	if (!e)
		STEP(k, "mv it back", E(rename(M(old), M(k->top))), 0);
	return e;
}

/* mv of the writable directory holding the name. */
static int op_rename_prefix(struct kase *k)
{
	int want = subtree_protected(k->prefix) ? EROFS : 0;
	const char *old = F("%s.old", k->prefix);
	int e = STEP(k, F("mv %s (holding it)", basename_of(k->prefix)),
		     E(rename(M(k->prefix), M(old))), want);
	if (!e)
		STEP(k, "mv it back", E(rename(M(old), M(k->prefix))), 0);
	return e;
}

static int op_rename_dir_onto(struct kase *k)
{
	if (mk_wdir(k, "d"))
		return 0;
	int want = !k->lpe ? ENOENT : k->present ? ENOTDIR : deny(k);
	int e = STEP(k, "rename writable dir onto it", E(rename(M(W(k, "d")), M(k->rel))), want,
		     k->present && !k->writable ? EROFS : want);
	if (!e)
		effect(k, S_ISDIR(host_mode(k->rel)), "the directory");
	return e;
}

/* A writable directory holding a file of the protected leaf's name is
 * moved onto the directory that holds the protected name. */
static int op_rename_dir_holding(struct kase *k)
{
	static const char payload[] = "arrived with its directory\n";
	if (mk_wdir(k, "d") || mk_wfile(k, F("d/%s", basename_of(k->rel)), payload))
		return 0;
	bool parent = is_dir(H(dirname_of(k->leafdir)));
	int want = !parent ? ENOENT : !k->writable ? EROFS : k->present ? ENOTEMPTY : 0;
	int e = STEP(k, F("rename writable dir onto %s", basename_of(k->leafdir)),
		     E(rename(M(W(k, "d")), M(k->leafdir))), want);
	if (!e)
		effect(k, host_has(k->rel, payload), "the moved file");
	return e;
}

static int op_exchange_file(struct kase *k)
{
	static const char payload[] = "swapped in\n";
	if (mk_wfile(k, "f", payload))
		return 0;
	int e = STEP(k, "RENAME_EXCHANGE with a writable file",
		     E(renameat2(AT_FDCWD, M(W(k, "f")), AT_FDCWD, M(k->rel), RENAME_EXCHANGE)),
		     needs(k));
	if (!e && !k->writable)
		renameat2(AT_FDCWD, M(W(k, "f")), AT_FDCWD, M(k->rel), RENAME_EXCHANGE);
	if (!e)
		effect(k, host_has(k->rel, payload), "the swapped content");
	return e;
}

static int op_exchange_dir(struct kase *k)
{
	static const char payload[] = "swapped in with its directory\n";
	if (mk_wdir(k, "d") || mk_wfile(k, F("d/%s", basename_of(k->rel)), payload))
		return 0;
	int e = STEP(k, F("RENAME_EXCHANGE writable dir with %s", basename_of(k->leafdir)),
		     E(renameat2(AT_FDCWD, M(W(k, "d")), AT_FDCWD, M(k->leafdir), RENAME_EXCHANGE)),
		     deny(k));
	if (!e && !k->writable)
		renameat2(AT_FDCWD, M(W(k, "d")), AT_FDCWD, M(k->leafdir), RENAME_EXCHANGE);
	if (!e)
		effect(k, host_has(k->rel, payload), "the swapped file");
	return e;
}

static int op_noreplace(struct kase *k)
{
	static const char payload[] = "planted by RENAME_NOREPLACE\n";
	if (mk_wfile(k, "f", payload))
		return 0;
	int e = STEP(k, "RENAME_NOREPLACE onto it",
		     E(renameat2(AT_FDCWD, M(W(k, "f")), AT_FDCWD, M(k->rel), RENAME_NOREPLACE)),
		     creates(k));
	if (!e)
		effect(k, host_has(k->rel, payload), "the planted content");
	return e;
}

/* editor-style save: write a temporary file beside it, rename it over */
static int op_editor_save(struct kase *k)
{
	static const char payload[] = "saved by an editor\n";
	const char *tmp = join(k->leafdir, F(".%s.swp.md", basename_of(k->rel)));
	int fd = open(M(tmp), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int e = STEP(k, "write temporary beside it", fd < 0 ? errno : 0, 0, EROFS, ENOENT);
	if (fd < 0)
		return e;
	if (write(fd, payload, sizeof(payload) - 1) < 0)
		STEP(k, "write", errno, 0);
	fsync(fd);
	close(fd);
	e = STEP(k, "rename it over", E(rename(M(tmp), M(k->rel))), deny(k));
	if (e)
		STEP(k, "remove the temporary", E(unlink(M(tmp))), 0);
	else
		effect(k, host_has(k->rel, payload), "the saved content");
	return e;
}

/* ---- 3. links ---- */

static int op_link_out(struct kase *k)
{
	int e = STEP(k, "link it to a writable name", E(link(M(k->rel), M(W(k, "hl")))), needs(k));
	int fd = open(M(W(k, "hl")), O_WRONLY | O_APPEND | O_CLOEXEC);
	STEP(k, "open the new name for writing", fd < 0 ? errno : 0, e ? ENOENT : 0);
	if (fd >= 0) {
		if (write(fd, "through the link\n", 17) < 0)
			STEP(k, "write", errno, 0);
		close(fd);
	}
	if (!e)
		effect(k, host_size(k->rel) == k->before.st_size + 17, "the write");
	return e;
}

static int op_link_in(struct kase *k)
{
	static const char payload[] = "planted by link\n";
	if (mk_wfile(k, "f", payload))
		return 0;
	int e = STEP(k, "link a writable file onto it", E(link(M(W(k, "f")), M(k->rel))),
		     creates(k));
	if (!e)
		effect(k, host_has(k->rel, payload), "the linked file");
	return e;
}

static int op_tmpfile(struct kase *k)
{
	int fd = open(M(k->w), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	/* libfuse 3.14 has no tmpfile operation: EOPNOTSUPP, and the point is
	 * that the protected name stays untouched either way. */
	int e = STEP(k, "O_TMPFILE", fd < 0 ? errno : 0, EOPNOTSUPP, 0);
	if (fd < 0)
		return e;
	if (write(fd, "tmpfile\n", 8) < 0)
		STEP(k, "write", errno, 0);
	e = STEP(k, "linkat onto it",
		 E(linkat(AT_FDCWD, F("/proc/self/fd/%d", fd), AT_FDCWD, M(k->rel),
			  AT_SYMLINK_FOLLOW)),
		 creates(k));
	close(fd);
	return e;
}

/* ---- 4. symlinks ---- */

static int op_symlink_to(struct kase *k)
{
	const char *target = rel_between(k->w, k->rel);
	int e = STEP(k, F("ln -s %s", target), E(symlink(target, M(W(k, "s")))), deny(k));
	if (!e)
		effect(k, S_ISLNK(host_mode(W(k, "s"))), "the symlink");
	return e;
}

static int op_symlink_under(struct kase *k)
{
	const char *target = F("%s/x", rel_between(k->w, k->guard));
	int e = STEP(k, F("ln -s %s", target), E(symlink(target, M(W(k, "s")))), deny(k));
	if (!e)
		effect(k, S_ISLNK(host_mode(W(k, "s"))), "the symlink");
	return e;
}

static int op_symlink_abs(struct kase *k)
{
	STEP(k, "ln -s MOUNT/name", E(symlink(M(k->rel), M(W(k, "s1")))), EROFS);
	return STEP(k, "ln -s SOURCE/name", E(symlink(H(k->rel), M(W(k, "s2")))), EROFS);
}

/* A symlink the host made (never checked by sandyfs) on the way. */
static void prep_through(struct kase *k)
{
	const char *to = rel_between(k->w, k->prefix);
	if (symlink(to, H(W(k, "l"))) < 0)
		die("cannot symlink on the host: %s", strerror(errno));
}

/* The chain s -> l/NAME -> the name is judged where it ends. */
static int op_symlink_through(struct kase *k)
{
	const char *target = F("l/%s", k->name);
	int e = STEP(k, F("ln -s %s (l: a symlink)", target), E(symlink(target, M(W(k, "s")))),
		     deny(k));
	if (!e)
		effect(k, S_ISLNK(host_mode(W(k, "s"))), "the symlink");
	return e;
}

static int op_symlink_at(struct kase *k)
{
	int e = STEP(k, "symlink at it", E(symlink("elsewhere", M(k->rel))), creates(k));
	if (!e)
		effect(k, S_ISLNK(host_mode(k->rel)), "the symlink");
	return e;
}

static void prep_dir(struct kase *k)
{
	mkdir_p(H(W(k, "d")));
}

/* A writable directory is replaced by a symlink to the directory holding
 * the protected name, and the name is created through it. */
static int op_dir_to_symlink(struct kase *k)
{
	if (STEP(k, "mv d d.old", E(rename(M(W(k, "d")), M(W(k, "d.old")))), 0))
		return 0;
	const char *to = rel_between(k->w, k->prefix);
	int s = STEP(k, F("ln -s %s d", to), E(symlink(to, M(W(k, "d")))), 0, EROFS);
	int e = 0;
	if (!s) {
		const char *via = W(k, F("d/%s", k->name));
		e = STEP(k, "create it through d",
			 Eopen(open(M(via), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)),
			 !k->lpe ? ENOENT : deny(k));
		STEP(k, "rm d", E(unlink(M(W(k, "d")))), 0);
	}
	STEP(k, "mv d.old d", E(rename(M(W(k, "d.old")), M(W(k, "d")))), 0);
	if (!s && !e)
		effect(k, lexists(H(k->rel)), "the file made through the symlink");
	return e;
}

/* ---- 7. special files ---- */

static int op_mkfifo(struct kase *k)
{
	int e = STEP(k, "mkfifo", E(mkfifo(M(k->rel), 0644)), creates(k));
	if (!e)
		effect(k, S_ISFIFO(host_mode(k->rel)), "the fifo");
	return e;
}

static int op_mknod_chr(struct kase *k)
{
	/* never a device node, not even at a writable name; without
	 * CAP_MKNOD the kernel says EPERM first */
	int want = !k->lpe ? ENOENT : k->present ? EEXIST : g_root ? EROFS : EPERM;
	return STEP(k, "mknod c 1 3", E(mknod(M(k->rel), S_IFCHR | 0666, makedev(1, 3))), want);
}

static int op_socket(struct kase *k)
{
	if (chdir(M(k->leafdir)) < 0)
		return STEP(k, "cd to its directory", errno, k->lpe ? 0 : ENOENT);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", basename_of(k->rel));
	int e = STEP(k, "bind a unix socket at it", E(bind(s, (struct sockaddr *)&sa, sizeof(sa))),
		     k->present ? EADDRINUSE : deny(k));
	close(s);
	if (chdir("/") < 0)
		die("cannot chdir /");
	if (!e)
		effect(k, S_ISSOCK(host_mode(k->rel)), "the socket");
	return e;
}

static const struct op direct_ops[] = {
	{"open for writing", op_open_wronly, NEED_LEAF, NULL},
	{"open read-write", op_open_rdwr, NEED_LEAF, NULL},
	{"append", op_append, NEED_LEAF, NULL},
	{"open O_TRUNC", op_trunc, NEED_LEAF, NULL},
	{"open O_RDONLY|O_TRUNC", op_rdonly_trunc, NEED_LEAF, NULL},
	{"create", op_creat, 0, NULL},
	{"create O_EXCL", op_excl, 0, NULL},
	{"mkdir", op_mkdir, 0, NULL},
	{"mkdir -p through it", op_mkdir_p, 0, NULL},
	{"truncate", op_truncate, NEED_LEAF, NULL},
	{"ftruncate", op_ftruncate, NEED_PRESENT, NULL},
	{"fallocate", op_fallocate, NEED_PRESENT, NULL},
	{"copy_file_range into it", op_copy_range, NEED_PRESENT, NULL},
	{"shared writable mmap", op_mmap, NEED_PRESENT, NULL},
	{"chmod +x", op_chmod_x, NEED_LEAF, NULL},
	{"fchmod +x", op_fchmod, NEED_PRESENT, NULL},
	{"chown", op_chown, NEED_LEAF, NULL},
	{"utimensat now", op_utimens_now, NEED_LEAF, NULL},
	{"utimensat 2010", op_utimens_set, NEED_LEAF, NULL},
	{"futimens", op_futimens, NEED_PRESENT, NULL},
	{"setxattr", op_setxattr, NEED_LEAF, NULL},
	{"removexattr", op_removexattr, NEED_PRESENT, NULL},
	{"unlink", op_unlink, NEED_LEAF, NULL},
	{"rmdir", op_rmdir_file, NEED_PRESENT, NULL},
	{"rmdir its directory", op_rmdir_dir, NEED_LEAF | MULTI, NULL},
	{"rename onto it", op_rename_onto, 0, NULL},
	{"rename away and recreate", op_rename_away, NEED_LEAF, NULL},
	{"rename an ancestor", op_rename_top, 0, NULL},
	{"rename the directory holding it", op_rename_prefix, NOT_ROOT, NULL},
	{"rename a directory onto it", op_rename_dir_onto, 0, NULL},
	{"rename a directory onto its directory", op_rename_dir_holding, MULTI, NULL},
	{"RENAME_EXCHANGE file", op_exchange_file, NEED_LEAF, NULL},
	{"RENAME_EXCHANGE directory", op_exchange_dir, NEED_LEAF | MULTI, NULL},
	{"RENAME_NOREPLACE", op_noreplace, 0, NULL},
	{"editor save", op_editor_save, NEED_LEAF, NULL},
	{"hardlink out", op_link_out, NEED_LEAF, NULL},
	{"hardlink in", op_link_in, 0, NULL},
	{"O_TMPFILE + linkat", op_tmpfile, 0, NULL},
	{"symlink to it", op_symlink_to, 0, NULL},
	{"symlink under it", op_symlink_under, 0, NULL},
	{"absolute symlink to it", op_symlink_abs, 0, NULL},
	{"symlink through a symlink", op_symlink_through, 0, prep_through},
	{"symlink at it", op_symlink_at, 0, NULL},
	{"dir replaced by a symlink", op_dir_to_symlink, 0, prep_dir},
	{"mkfifo at it", op_mkfifo, 0, NULL},
	{"mknod at it", op_mknod_chr, 0, NULL},
	{"unix socket at it", op_socket, 0, NULL},
};
#define NDIRECT (sizeof(direct_ops) / sizeof(direct_ops[0]))

static const int depths[] = {0, 1, 4};

static void section_direct(void)
{
	for (size_t ti = 0; ti < NTARGETS; ti++) {
		for (size_t di = 0; di < 3; di++) {
			for (size_t oi = 0; oi < NDIRECT; oi++) {
				struct kase *k = xmalloc(sizeof(*k));
				if (kase_init(k, &targets[ti], depths[di], &direct_ops[oi])) {
					snprintf(k->what, sizeof(k->what), "%s/%s/d%d/%.200s%s",
						 g_label, world_names[g_world], depths[di], k->name,
						 k->writable ? " (writable control)" : "");
					run_kase(k, &direct_ops[oi]);
				}
				free(k);
			}
		}
	}
}

/* ------------------------------------------------------------------------ */
/* 5. names: spellings a case-insensitive or Unicode-folding host treats as
 * the protected name */

struct variant {
	const char *target; /* targets[].name */
	const char *name;   /* the spelling, in place of the target's name */
	const char *why;
};

static const struct variant variants[] = {
	{".git/config", ".GIT/config", "case"},
	{".git/config", ".Git/config", "case"},
	{".git/config", ".g\u200cit/config", "HFS ignorable U+200C"},
	{".git/config", "\ufeff.git/config", "HFS ignorable U+FEFF"},
	{".git/config", ".gi\u200et/config", "HFS ignorable U+200E"},
	{".git/config", ".git./config", "NTFS trailing dot"},
	{".git/config", ".git /config", "NTFS trailing space"},
	{".git/config", ".git::$INDEX_ALLOCATION/config", "NTFS stream"},
	{".git/config", "GIT~1/config", "8.3 short name"},
	{".git/config", "git~1/config", "8.3 short name"},
	{".git/hooks/pre-commit", ".GIT/hooks/pre-commit", "case"},
	{".git/hooks/pre-commit", ".g\u200dit/hooks/pre-commit", "HFS ignorable U+200D"},
	{".envrc", ".Envrc", "case"},
	{".envrc", ".ENVRC", "case"},
	{".envrc", ".env\u200crc", "HFS ignorable U+200C"},
	{".envrc", ".envrc\u206a", "HFS ignorable U+206A"},
	{".envrc", ".envrc.", "NTFS trailing dot"},
	{".envrc", ".envrc ", "NTFS trailing space"},
	{".envrc", ".envrc::$DATA", "NTFS stream"},
	{".vscode/tasks.json", ".VSCode/tasks.json", "case"},
	{".vscode/tasks.json", ".vs\u200ccode/tasks.json", "HFS ignorable U+200C"},
	{".vscode/tasks.json", ".v\u017fcode/tasks.json", "U+017F folds to s"},
	{".vscode/tasks.json", ".vscode./tasks.json", "NTFS trailing dot"},
	{".vscode/tasks.json", "VSCODE~1/tasks.json", "8.3 short name"},
	{".claude/settings.json", ".Claude/settings.json", "case"},
	{".claude/settings.json", ".claude/Settings.JSON", "case"},
	{".claude/settings.json", ".claude/\u017fettings.json", "U+017F folds to s"},
	{".claude/settings.json", ".cl\u200baude/settings.json", "U+200B (not ignorable)"},
	{".claude/settings.json", ".claude/settings.json.", "NTFS trailing dot"},
	{".claude/settings.json", ".claude/settings.json::$DATA", "NTFS stream"},
	{".cargo/config.toml", ".CARGO/config.toml", "case"},
	{".cargo/config.toml", ".cargo/Config.Toml", "case"},
	{".cargo/config.toml", ".car\u200cgo/config.toml", "HFS ignorable U+200C"},
	{".cargo/config.toml", ".cargo/config.toml ", "NTFS trailing space"},
	{".husky/pre-commit", ".Husky/pre-commit", "case"},
	{".husky/pre-commit", ".hus\u212ay/pre-commit", "U+212A folds to k"},
	{".husky/pre-commit", ".hu\u017fky/pre-commit", "U+017F folds to s"},
	{".husky/pre-commit", ".husky./pre-commit", "NTFS trailing dot"},
	{".pre-commit-config.yaml", ".Pre-Commit-Config.YAML", "case"},
	{".pre-commit-config.yaml", ".pre-commit-config.yaml\u200f", "HFS ignorable U+200F"},
	{".pre-commit-config.yaml", ".pre-commit-config.yaml:x", "NTFS stream"},
	{"CLAUDE.md", "claude.md", "case"},
	{"CLAUDE.md", "Claude.MD", "case"},
	{".mcp.json", ".MCP.json", "case"},
	{".gitmodules", ".GITMODULES", "case"},
	{".gitmodules", "GI7EBA~1", "8.3 short name"},
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

/* The spelling as a readable label (non-ASCII as \uXXXX). */
static const char *printable(const char *s)
{
	char *out = rbuf();
	size_t o = 0;
	for (const unsigned char *c = (const unsigned char *)s; *c && o + 8 < PATH_MAX;) {
		if (*c < 0x80) {
			out[o++] = (char)*c++;
			continue;
		}
		uint32_t cp;
		if (*c >= 0xe0) {
			cp = ((uint32_t)(c[0] & 0x0f) << 12) | ((uint32_t)(c[1] & 0x3f) << 6) |
			     (c[2] & 0x3f);
			c += 3;
		} else {
			cp = ((uint32_t)(c[0] & 0x1f) << 6) | (c[1] & 0x3f);
			c += 2;
		}
		o += (size_t)snprintf(out + o, PATH_MAX - o, "\\u%04X", cp);
	}
	out[o] = '\0';
	return out;
}

/* Makes the directories of REL below the case directory that do not exist
 * yet, through the mount, until one is refused; the refusal, or 0. */
static int mkdirs_to(struct kase *k, const char *rel, char made[][PATH_MAX], int *nmade)
{
	size_t start = strlen(k->prefix) + (*k->prefix ? 1 : 0);

	for (size_t i = start; rel[i]; i++) {
		if (rel[i] != '/')
			continue;
		const char *dir = F("%.*s", (int)i, rel);
		if (mkdir(M(dir), 0755) == 0) {
			snprintf(made[(*nmade)++], PATH_MAX, "%s", dir);
		} else if (errno != EEXIST) {
			return errno;
		}
	}
	return 0;
}

static void rmdirs(struct kase *k, char made[][PATH_MAX], int nmade)
{
	while (nmade-- > 0)
		STEP(k, F("rmdir %s", printable(basename_of(made[nmade]))),
		     E(rmdir(M(made[nmade]))), 0);
}

enum vop { V_CREATE, V_MKDIR, V_RENAME, V_LINK, V_SYMLINK, V_NOPS };
static const char *const vop_names[] = {"create", "mkdir", "rename a file onto it",
					"hardlink onto it", "symlink at it"};

static int variant_attack(struct kase *k, enum vop op)
{
	char made[8][PATH_MAX];
	int nmade = 0;
	static const char payload[] = "planted under another spelling\n";

	if (op == V_RENAME || op == V_LINK)
		if (mk_wfile(k, "f", payload))
			return 0;
	int e = mkdirs_to(k, k->rel, made, &nmade);
	if (e) {
		STEP(k, "mkdir -p its directory", e, EROFS);
	} else {
		switch (op) {
		case V_CREATE:
			e = Eopen(open(M(k->rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
			break;
		case V_MKDIR:
			e = E(mkdir(M(k->rel), 0755));
			break;
		case V_RENAME:
			e = E(rename(M(W(k, "f")), M(k->rel)));
			break;
		case V_LINK:
			e = E(link(M(W(k, "f")), M(k->rel)));
			break;
		default:
			e = E(symlink("elsewhere", M(k->rel)));
			break;
		}
		STEP(k, vop_names[op], e, EROFS);
	}
	rmdirs(k, made, nmade);
	return e;
}

/* One spelling, at one depth, attacked by OP. The snapshots: what is at
 * the spelling's first component (absent before), the canonical name's
 * guard, and the listings of the directories around them. */
static void run_variant(const struct variant *v, const struct target *t, int depth, enum vop op)
{
	struct kase *k = xmalloc(sizeof(*k));
	struct snap canon, canon2, before, after;
	char cg[PATH_MAX], why[2048] = "";

	kase_init(k, t, depth, NULL);
	expand(cg, sizeof(cg), t->guard, k->no);
	snprintf(k->name, sizeof(k->name), "%s", v->name);
	snprintf(k->rel, sizeof(k->rel), "%s", join(k->prefix, k->name));
	snprintf(k->top, sizeof(k->top), "%s",
		 join(k->prefix, F("%.*s", (int)strcspn(k->name, "/"), k->name)));
	snprintf(k->guard, sizeof(k->guard), "%s", join(k->prefix, cg));
	snprintf(k->leafdir, sizeof(k->leafdir), "%s", dirname_of(k->rel));
	k->present = lexists(H(k->rel));
	k->lpe = is_dir(H(k->leafdir));
	snprintf(k->what, sizeof(k->what), "%s/%s/d%d/%s (%s)", g_label, world_names[g_world],
		 depth, printable(v->name), v->why);

	snap_take_depth(&canon, k->guard, k->gdepth);
	snap_take(&before, k->top);
	char *lp = listing(k->prefix, NULL), *ll = listing(k->leafdir, NULL);
	warm(k);
	variant_attack(k, op);
	snap_take(&after, k->top);
	snap_take_depth(&canon2, k->guard, k->gdepth);
	bool changed = snap_diff(&before, &after, why, sizeof(why));
	changed |= snap_diff(&canon, &canon2, why, sizeof(why));
	char *lp2 = listing(k->prefix, NULL), *ll2 = listing(k->leafdir, NULL);
	if (strcmp(lp, lp2)) {
		listing_diff(k->prefix, lp, lp2, why, sizeof(why));
		changed = true;
	}
	if (strcmp(ll, ll2)) {
		listing_diff(k->leafdir, ll, ll2, why, sizeof(why));
		changed = true;
	}
	bool agrees = mount_agrees(k->rel, why, sizeof(why));
	tap(!changed && agrees && !k->bad, "%s: %s: %s; %s%s", k->what, vop_names[op], k->steps,
	    changed ? "HOST CHANGED: " : "host unchanged", why);
	if (changed && k->shared) {
		snap_restore(&canon, &canon2);
		snap_restore(&before, &after);
	}
	free(lp);
	free(ll);
	free(lp2);
	free(ll2);
	snap_free(&before);
	snap_free(&after);
	snap_free(&canon);
	snap_free(&canon2);
	free(k);
}

static void section_variants(void)
{
	for (size_t vi = 0; vi < NVARIANTS; vi++) {
		const struct target *t = NULL;
		for (size_t i = 0; i < NTARGETS; i++)
			if (!strcmp(targets[i].name, variants[vi].target))
				t = &targets[i];
		for (size_t di = 0; di < 3; di++)
			for (int op = 0; op < V_NOPS; op++)
				run_variant(&variants[vi], t, depths[di], (enum vop)op);
	}
}

/* ------------------------------------------------------------------------ */
/* Cases that are not about one target: special files and set-id bits,
 * symlinks leaving SOURCE, hidden names and the overlay; and the git
 * layout. Each names the paths it must leave alone. */

struct misc {
	const char *name;
	int (*fn)(struct kase *);
	const char *guard; /* relative to the case's readonly place, or "" */
};

/* Whether the host file REL carries sandyfs's ownership mark. */
static bool host_marked(const char *rel)
{
	char v[16];
	return lgetxattr(H(rel), "user.sandyfs", v, sizeof(v)) == 8;
}

/* Writes CONTENT into the existing file PATH (O_TRUNC); the errno. */
static int write_through(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return errno;
	size_t n = strlen(content);
	int e = write(fd, content, n) == (ssize_t)n ? 0 : errno ? errno : EIO;
	close(fd);
	return e;
}

/* The readonly place at each depth (made by prepare): nothing is
 * writable there. */
static const char *ro_place(int depth)
{
	return depth == 0 ? "" : depth == 1 ? "vendor" : "vendor/a/b/c";
}

static int m_symlink_etc(struct kase *k)
{
	int e = STEP(k, "ln -s /etc/passwd", E(symlink("/etc/passwd", M(W(k, "s")))), EROFS);
	STEP(k, "ln -s /", E(symlink("/", M(W(k, "s2")))), EROFS);
	gone(k, W(k, "s"));
	gone(k, W(k, "s2"));
	return e;
}

static int m_symlink_outside(struct kase *k)
{
	char up[PATH_MAX] = "";
	for (const char *c = k->w; c; c = strchr(c + 1, '/'))
		strcat(up, "../");
	/* UP climbs to SOURCE itself; one more .. leaves it */
	int e = STEP(k, F("ln -s %s..", up), E(symlink(F("%s..", up), M(W(k, "s")))), EROFS);
	STEP(k, F("ln -s %s../etc/passwd", up), E(symlink(F("%s../etc/passwd", up), M(W(k, "s2")))),
	     EROFS);
	STEP(k, "ln -s ../../../../../../../../../..",
	     E(symlink("../../../../../../../../../..", M(W(k, "s3")))), EROFS);
	gone(k, W(k, "s"));
	gone(k, W(k, "s2"));
	gone(k, W(k, "s3"));
	return e;
}

/* A relative target means something else at every place: a symlink made
 * where it stays inside SOURCE may not be moved, or carried by its
 * directory, or given a second name, where it leaves SOURCE. */
static int m_symlink_moved(struct kase *k)
{
	char up[PATH_MAX] = "../";
	for (const char *c = k->w; c; c = strchr(c + 1, '/'))
		strcat(up, "../");
	/* From W/md, UP climbs to SOURCE; from W, it leaves it. */
	if (mk_wdir(k, "md") || mk_wdir(k, "md/sub"))
		return 0;
	int e = STEP(k, F("ln -s %sx md/s", up), E(symlink(F("%sx", up), M(W(k, "md/s")))), 0);
	STEP(k, F("ln -s ../%sx md/sub/s", up), E(symlink(F("../%sx", up), M(W(k, "md/sub/s")))),
	     0);
	STEP(k, "mv md/s s (one level up)", E(rename(M(W(k, "md/s")), M(W(k, "s")))), EROFS);
	STEP(k, "ln md/s s", E(link(M(W(k, "md/s")), M(W(k, "s")))), EROFS);
	STEP(k, "mv md/sub sub (its symlink one level up)",
	     E(rename(M(W(k, "md/sub")), M(W(k, "sub")))), EROFS);
	gone(k, W(k, "s"));
	gone(k, W(k, "sub"));
	effect(k, S_ISLNK(host_mode(W(k, "md/s"))), "md/s where it was made");
	effect(k, S_ISLNK(host_mode(W(k, "md/sub/s"))), "md/sub/s where it was made");
	STEP(k, "mv md/s md/s2 (control: the same depth)",
	     E(rename(M(W(k, "md/s")), M(W(k, "md/s2")))), 0);
	effect(k, S_ISLNK(host_mode(W(k, "md/s2"))), "md/s2, renamed beside itself");
	return e;
}

static int m_symlink_ok(struct kase *k)
{
	if (mk_wfile(k, "f", "target\n"))
		return 0;
	int e = STEP(k, "ln -s f (writable control)", E(symlink("f", M(W(k, "s")))), 0);
	char t[64] = "";
	ssize_t n = readlink(H(W(k, "s")), t, sizeof(t) - 1);
	t[n > 0 ? n : 0] = '\0';
	effect(k, !strcmp(t, "f"), "the symlink to f");
	STEP(k, "ln -s .. (writable control)", E(symlink("..", M(W(k, "up")))), 0);
	effect(k, S_ISLNK(host_mode(W(k, "up"))), "the symlink to ..");
	return e;
}

static int m_fifo_w(struct kase *k)
{
	int e = STEP(k, "mkfifo in a writable dir", E(mkfifo(M(W(k, "fifo")), 0644)), 0);
	effect(k, S_ISFIFO(host_mode(W(k, "fifo"))), "the fifo");
	return e;
}

static int m_fifo_ro(struct kase *k)
{
	return STEP(k, "mkfifo in a read-only place",
		    E(mkfifo(M(join(ro_place(k->depth), F("fifo%u", k->no))), 0644)), EROFS);
}

static int bind_at(const char *dir, const char *name)
{
	if (chdir(dir) < 0)
		return errno;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", name);
	int e = E(bind(s, (struct sockaddr *)&sa, sizeof(sa)));
	close(s);
	if (chdir("/") < 0)
		die("cannot chdir /");
	return e;
}

static int m_socket(struct kase *k)
{
	int e = STEP(k, "unix socket in a writable dir", bind_at(M(k->w), "sock"), 0);
	effect(k, S_ISSOCK(host_mode(W(k, "sock"))), "the socket");
	STEP(k, "unix socket in a read-only place",
	     bind_at(M(ro_place(k->depth)), F("sock%u", k->no)), EROFS);
	return e;
}

static int m_devices(struct kase *k)
{
	int want = g_root ? EROFS : EPERM;
	int e = STEP(k, "mknod c 1 3 in a writable dir",
		     E(mknod(M(W(k, "null")), S_IFCHR | 0666, makedev(1, 3))), want);
	STEP(k, "mknod b 7 0 in a writable dir",
	     E(mknod(M(W(k, "loop")), S_IFBLK | 0600, makedev(7, 0))), want);
	STEP(k, "mknod c 1 1 in a read-only place",
	     E(mknod(M(join(ro_place(k->depth), F("mem%u", k->no))), S_IFCHR | 0600,
		     makedev(1, 1))),
	     want);
	gone(k, W(k, "null"));
	gone(k, W(k, "loop"));
	return e;
}

static bool setid(const char *rel)
{
	return (host_mode(rel) & (S_ISUID | S_ISGID)) != 0;
}

static int m_setid_chmod(struct kase *k)
{
	if (mk_wfile(k, "f", "#!/bin/sh\n"))
		return 0;
	int e = STEP(k, "chmod 4755", E(chmod(M(W(k, "f")), 04755)), EROFS);
	STEP(k, "chmod 2755", E(chmod(M(W(k, "f")), 02755)), EROFS);
	int fd = open(M(W(k, "f")), O_RDWR | O_CLOEXEC);
	STEP(k, "open it", fd < 0 ? errno : 0, 0);
	if (fd >= 0) {
		STEP(k, "fchmod 6755", E(fchmod(fd, 06755)), EROFS);
		close(fd);
	}
	if (setid(W(k, "f"))) {
		append(k->steps, sizeof(k->steps), ", a set-id bit landed on the host");
		k->bad = true;
	}
	STEP(k, "chmod 755 (writable control)", E(chmod(M(W(k, "f")), 0755)), 0);
	effect(k, (host_mode(W(k, "f")) & 07777) == 0755, "mode 755 and no set-id bit");
	return e;
}

static int m_setid_create(struct kase *k)
{
	STEP(k, "create mode 4755",
	     Eopen(open(M(W(k, "c")), O_WRONLY | O_CREAT | O_CLOEXEC, 04755)), 0, EROFS);
	STEP(k, "mkdir mode 2755", E(mkdir(M(W(k, "d")), 02755)), 0, EROFS);
	STEP(k, "mknod S_IFREG mode 6755", E(mknod(M(W(k, "n")), S_IFREG | 06755, 0)), 0, EROFS);
	bool any = setid(W(k, "c")) || setid(W(k, "d")) || setid(W(k, "n"));
	if (any) {
		append(k->steps, sizeof(k->steps), ", a set-id bit landed on the host");
		k->bad = true;
	}
	return 0;
}

static int m_readonly_create(struct kase *k)
{
	const char *rel = join(ro_place(k->depth), F("new%u.dat", k->no));
	/* What the agent creates where no write glob matches is its own: it
	 * may write it and remove it again (the listing ends as it began). */
	int e = STEP(k, "create in a read-only place (owned)",
		     Eopen(open(M(rel), O_WRONLY | O_CREAT | O_CLOEXEC, 0644)), 0);
	if (!e) {
		effect(k, host_marked(rel), "the ownership mark");
		STEP(k, "write it", write_through(M(rel), "mine\n"), 0);
		effect(k, host_has(rel, "mine\n"), "the written content");
		STEP(k, "unlink it", E(unlink(M(rel))), 0);
	}
	/* A directory may be made where a write glob could match below it
	 * (the "any depth" globs of base and rust match below any
	 * directory), and it is owned anyway: allowed, and removed again */
	const char *dir = F("%s.d", rel);
	if (!STEP(k, "mkdir in a read-only place (a write glob matches below)",
		  E(mkdir(M(dir), 0755)), 0))
		STEP(k, "rmdir it", E(rmdir(M(F("%s.d", rel)))), 0);
	return e;
}

static int m_editor_ok(struct kase *k)
{
	static const char payload[] = "saved\n";
	if (mk_wfile(k, "main.rs", "fn main() {}\n") || mk_wfile(k, ".main.rs.swp", payload))
		return 0;
	int e = STEP(k, "rename temporary over a writable file (control)",
		     E(rename(M(W(k, ".main.rs.swp")), M(W(k, "main.rs")))), 0);
	effect(k, host_has(W(k, "main.rs"), payload), "the saved content");
	return e;
}

static int m_hidden(struct kase *k)
{
	int e = STEP(k, "create a hidden name (key.pem)",
		     Eopen(open(M(W(k, "key.pem")), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)), ENOENT);
	STEP(k, "mkdir a hidden name (.ssh)", E(mkdir(M(W(k, ".ssh")), 0700)), ENOENT);
	gone(k, W(k, "key.pem"));
	gone(k, W(k, ".ssh"));
	struct stat st;
	STEP(k, "lookup of the host's src/w/id_rsa", E(lstat(M("src/w/id_rsa"), &st)), ENOENT);
	bool listed = false;
	DIR *d = opendir(M("src/w"));
	struct dirent *de;
	while (d && (de = readdir(d)))
		listed |= !strcmp(de->d_name, "id_rsa");
	if (d)
		closedir(d);
	if (listed) {
		append(k->steps, sizeof(k->steps), ", readdir shows the hidden id_rsa");
		k->bad = true;
	}
	return e;
}

static int m_overlay(struct kase *k)
{
	char buf[4096];
	ssize_t n = read_file(M(".env"), buf, sizeof(buf) - 1);
	STEP(k, "read .env", n < 0 ? (int)-n : 0, 0);
	if (n >= 0) {
		buf[n] = '\0';
		if (strstr(buf, "host-secret")) {
			append(k->steps, sizeof(k->steps), ", the overlay shows the host's secret");
			k->bad = true;
		}
	}
	/* an unprivileged caller meets the kernel's permission check on the
	 * overlay file's attributes (root's, 0644) first */
	STEP(k, "open .env for writing", Eopen(open(M(".env"), O_WRONLY | O_TRUNC | O_CLOEXEC)),
	     EROFS, g_root ? EROFS : EACCES);
	STEP(k, "rename over .env",
	     (mk_wfile(k, "env", "X=1\n"), E(rename(M(W(k, "env")), M(".env")))), EROFS);
	return STEP(k, "unlink .env", E(unlink(M(".env"))), EROFS);
}

/* Owned files: what the agent made stays its own and nothing else becomes
 * so. FIXTURE (made by prepare in each readonly place) is the host's. */
static int m_owned(struct kase *k)
{
	/* Copies: F() and join() hand out short-lived buffers. */
	char ro[PATH_MAX], fixture[PATH_MAX], own[PATH_MAX], dir[PATH_MAX], copy[PATH_MAX];
	char again[PATH_MAX];
	static const char fixture_text[] = "the host's own\n";
	char v[16];

	snprintf(ro, sizeof(ro), "%s", ro_place(k->depth));
	snprintf(fixture, sizeof(fixture), "%s", join(ro, "ro-fixture.dat"));
	snprintf(own, sizeof(own), "%s", join(ro, F("own%u.dat", k->no)));
	snprintf(dir, sizeof(dir), "%s", join(ro, F("odir%u", k->no)));
	snprintf(copy, sizeof(copy), "%s", join(ro, F("copy%u.dat", k->no)));
	snprintf(again, sizeof(again), "%s", join(ro, F("again%u.dat", k->no)));

	int e = STEP(k, "create an owned file", Eopen(open(M(own), O_WRONLY | O_CREAT, 0644)), 0);
	if (e)
		return e;
	STEP(k, "getxattr of the mark through the mount",
	     E(getxattr(M(own), "user.sandyfs", v, sizeof(v))), ENODATA);
	char list[1024];
	ssize_t n = listxattr(M(own), list, sizeof(list));
	for (ssize_t o = 0; o < n; o += (ssize_t)strlen(list + o) + 1)
		if (!strcmp(list + o, "user.sandyfs")) {
			append(k->steps, sizeof(k->steps), ", listxattr shows the mark");
			k->bad = true;
		}
	STEP(k, "rename it over the host's file", E(rename(M(own), M(fixture))), EROFS);
	STEP(k, "rename it over .envrc", E(rename(M(own), M(join(ro, ".envrc")))), EROFS);
	STEP(k, "hard link the host's file to a new name",
	     E(link(M(fixture), M(join(ro, F("lnk%u.dat", k->no))))), EROFS);
	gone(k, join(ro, F("lnk%u.dat", k->no)));
	STEP(k, "setxattr the mark on the host's file",
	     E(setxattr(M(fixture), "user.sandyfs", "12345678", 8, 0)), EROFS);
	STEP(k, "removexattr the mark of its own file", E(removexattr(M(own), "user.sandyfs")),
	     EROFS);
	STEP(k, "write the host's file", write_through(M(fixture), "x\n"), EROFS);
	STEP(k, "rename the host's file", E(rename(M(fixture), M(join(ro, "moved.dat")))), EROFS);
	STEP(k, "unlink the host's file", E(unlink(M(fixture))), EROFS);
	if (!host_has(fixture, fixture_text) || host_marked(fixture)) {
		append(k->steps, sizeof(k->steps), ", THE HOST'S FILE CHANGED");
		k->bad = true;
	}
	effect(k, host_marked(own), "the mark on the owned file");
	/* The mark copied onto another file (a backup tool, an editor that
	 * keeps attributes) proves nothing. */
	if (lgetxattr(H(own), "user.sandyfs", v, sizeof(v)) == 8) {
		write_file(H(copy), "copy\n", 0644);
		if (lsetxattr(H(copy), "user.sandyfs", v, 8, 0) == 0)
			STEP(k, "write a host file carrying a copied mark",
			     write_through(M(copy), "x\n"), EROFS);
		effect(k, host_has(copy, "copy\n"), "the copy unchanged");
		unlink(H(copy));
	}
	/* A directory of its own: it may fill it, not move it onto a
	 * protected name. */
	if (!STEP(k, "mkdir an owned directory", E(mkdir(M(dir), 0755)), 0)) {
		STEP(k, "create in it",
		     Eopen(open(M(join(dir, "f.dat")), O_WRONLY | O_CREAT, 0644)), 0);
		STEP(k, "rename it onto .vscode", E(rename(M(dir), M(join(ro, ".vscode")))), EROFS,
		     ENOTEMPTY);
		STEP(k, "rename it onto .husky", E(rename(M(dir), M(join(ro, ".husky")))), EROFS,
		     ENOTEMPTY);
		STEP(k, "remove it again",
		     E(unlink(M(join(dir, "f.dat"))) < 0 ? -1 : rmdir(M(dir))), 0);
	}
	/* The user re-creates the agent's file on the host: it is the user's. */
	if (!STEP(k, "create another owned file", Eopen(open(M(again), O_WRONLY | O_CREAT, 0644)),
		  0)) {
		unlink(H(again));
		write_file(H(again), "the user's now\n", 0644);
		STEP(k, "write it once the host re-created it", write_through(M(again), "x\n"),
		     EROFS, ESTALE);
		effect(k, host_has(again, "the user's now\n"), "the user's content");
		unlink(H(again));
	}
	STEP(k, "unlink the owned file", E(unlink(M(own))), 0);
	return e;
}

/* Private directories: served from the store, never from or to SOURCE. */
static int m_private(struct kase *k)
{
	const char *store = getenv("ATTACK_STORE");
	char nm[PATH_MAX], pkg[PATH_MAX], file[PATH_MAX], in_store[2 * PATH_MAX + 8];
	struct stat a, b;

	if (!store) {
		append(k->steps, sizeof(k->steps), "no store given (ATTACK_STORE)");
		k->bad = true;
		return 0;
	}
	/* Copies: F() and W() hand out short-lived buffers. */
	snprintf(nm, sizeof(nm), "%s", W(k, "node_modules"));
	snprintf(pkg, sizeof(pkg), "%s", W(k, "node_modules/pkg"));
	snprintf(file, sizeof(file), "%s", W(k, "node_modules/pkg/index.js"));
	snprintf(in_store, sizeof(in_store), "%s/tree/%s", store, file);
	/* SOURCE's own copy, which the mount neither shows nor changes. */
	mkdir_p(H(nm));
	write_file(H(W(k, "node_modules/host.js")), "the host's\n", 0644);
	STEP(k, "lookup of SOURCE's own node_modules/host.js",
	     E(lstat(M(W(k, "node_modules/host.js")), &a)), ENOENT);
	STEP(k, "lookup of node_modules before it is made", E(lstat(M(nm), &a)), ENOENT);
	int e = STEP(k, "mkdir node_modules", E(mkdir(M(nm), 0755)), 0);
	STEP(k, "mkdir node_modules/pkg", E(mkdir(M(pkg), 0755)), 0);
	STEP(k, "create node_modules/pkg/index.js", Eopen(open(M(file), O_WRONLY | O_CREAT, 0644)),
	     0);
	STEP(k, "write it", write_through(M(file), "module.exports = 1\n"), 0);
	STEP(k, "mkdir node_modules/pkg/.git (a package's own)",
	     E(mkdir(M(W(k, "node_modules/pkg/.git")), 0755)), 0);
	char buf[64];
	ssize_t n = read_file(in_store, buf, sizeof(buf) - 1);
	effect(k, n == 19, "the file in the store");
	gone(k, file);
	gone(k, W(k, "node_modules/pkg"));
	effect(k, host_has(W(k, "node_modules/host.js"), "the host's\n"),
	       "SOURCE's own copy unchanged");
	effect(k,
	       lstat(M(W(k, "node_modules/..")), &a) == 0 && lstat(M(k->w), &b) == 0 &&
		       a.st_ino == b.st_ino,
	       "node_modules/.. is its directory in the mount");
	/* Links out of the store: the kernel resolves them in the mount, where
	 * every name is judged again. */
	char up[PATH_MAX] = "";
	for (const char *c = nm; c; c = strchr(c + 1, '/'))
		strcat(up, "../");
	strcat(up, ".envrc");
	STEP(k, "symlink node_modules/back -> .envrc of the root",
	     E(symlink(up, M(W(k, "node_modules/back")))), 0);
	STEP(k, "create .envrc through it",
	     Eopen(open(M(W(k, "node_modules/back")), O_WRONLY | O_CREAT, 0644)), EROFS);
	gone(k, ".envrc");
	STEP(k, "rename from the store into SOURCE", E(rename(M(file), M(W(k, "index.js")))),
	     EXDEV);
	STEP(k, "hard link from the store into SOURCE", E(link(M(file), M(W(k, "index.js")))),
	     EXDEV);
	gone(k, W(k, "index.js"));
	STEP(k, "a file named venv (a private directory's name)",
	     Eopen(open(M(W(k, "venv")), O_WRONLY | O_CREAT, 0644)), EROFS);
	gone(k, W(k, "venv"));
	STEP(k, "remove it all again",
	     E(unlink(M(W(k, "node_modules/back"))) < 0 ||
			       rmdir(M(W(k, "node_modules/pkg/.git"))) < 0 || unlink(M(file)) < 0 ||
			       rmdir(M(pkg)) < 0
		       ? -1
		       : rmdir(M(nm))),
	     0);
	effect(k, host_has(W(k, "node_modules/host.js"), "the host's\n"),
	       "SOURCE's own copy still there");
	effect(k, !lexists(F("%s/tree/%s", store, nm)), "the store emptied through the mount");
	return e;
}

static const struct misc misc_cases[] = {
	{"absolute symlinks", m_symlink_etc, NULL},
	{"symlinks leaving SOURCE", m_symlink_outside, NULL},
	{"symlinks moved out of SOURCE", m_symlink_moved, NULL},
	{"relative symlinks (control)", m_symlink_ok, NULL},
	{"fifo where writable (control)", m_fifo_w, NULL},
	{"fifo in a read-only place", m_fifo_ro, "RO"},
	{"unix sockets", m_socket, "RO"},
	{"device nodes", m_devices, "RO"},
	{"set-id bits by chmod", m_setid_chmod, NULL},
	{"set-id bits by create mode", m_setid_create, NULL},
	{"files in a read-only place", m_readonly_create, "RO"},
	{"owned files", m_owned, "RO"},
	{"private directories", m_private, NULL},
	{"editor save (control)", m_editor_ok, NULL},
	{"hidden names", m_hidden, NULL},
	{"the .env overlay", m_overlay, ".env"},
};

/* A case with its own attack: GUARD (recursive snapshot), the listings of
 * the directories in LISTED, and W, all checked. */
static void run_custom(struct kase *k, int (*fn)(struct kase *), const char *name,
		       const char *const *listed, size_t nlisted)
{
	struct snap before, after;
	char *lists[8], dirs[8][PATH_MAX];

	for (size_t i = 0; i < nlisted; i++)
		snprintf(dirs[i], PATH_MAX, "%s", listed[i]);
	listed = NULL;
	/* no guard: the case checks the host itself (what it made in W is
	 * expected to be there) */
	bool guarded = *k->guard;
	mkdir_p(H(k->w));
	if (guarded)
		snap_take(&before, k->guard);
	for (size_t i = 0; i < nlisted; i++)
		lists[i] = listing(dirs[i], NULL);
	warm(k);
	fn(k);
	char why[2048] = "";
	bool changed = false;
	if (guarded) {
		snap_take(&after, k->guard);
		changed = snap_diff(&before, &after, why, sizeof(why));
	}
	for (size_t i = 0; i < nlisted; i++) {
		char *now = listing(dirs[i], NULL);
		if (strcmp(now, lists[i])) {
			listing_diff(dirs[i], lists[i], now, why, sizeof(why));
			changed = true;
		}
		free(now);
		free(lists[i]);
	}
	tap(!changed && !k->bad, "%s: %s: %s; %s%s", k->what, name, k->steps,
	    changed ? "HOST CHANGED: " : "host unchanged", why);
	if (guarded) {
		if (changed && k->shared)
			snap_restore(&before, &after);
		snap_free(&before);
		snap_free(&after);
	}
}

static void section_misc(void)
{
	for (size_t mi = 0; mi < sizeof(misc_cases) / sizeof(misc_cases[0]); mi++) {
		const struct misc *m = &misc_cases[mi];
		for (size_t di = 0; di < 3; di++) {
			if (m->fn == m_overlay && depths[di] != 0)
				continue;
			struct kase *k = xmalloc(sizeof(*k));
			memset(k, 0, sizeof(*k));
			k->no = ++g_seq;
			k->depth = depths[di];
			k->shared = true;
			snprintf(k->w, sizeof(k->w), "%s/w%05u",
				 depths[di] == 0   ? "src"
				 : depths[di] == 1 ? "examples"
						   : "src/m/b/c",
				 k->no);
			const char *ro = ro_place(k->depth);
			snprintf(k->prefix, sizeof(k->prefix), "%s", ro);
			snprintf(k->rel, sizeof(k->rel), "%s", ro);
			snprintf(k->leafdir, sizeof(k->leafdir), "%s", ro);
			k->writable = true; /* the controls' effects are checked */
			snprintf(k->guard, sizeof(k->guard), "%s",
				 m->guard && !strcmp(m->guard, ".env") ? ".env" : "");
			snprintf(k->what, sizeof(k->what), "%s/%s/d%d", g_label,
				 world_names[g_world], depths[di]);
			const char *listed[1] = {ro};
			run_custom(k, m->fn, m->name, listed, 1);
			free(k);
		}
	}
}

/* ---- 6. nested repositories and the git layout (present world) ---- */

static int g_mkdir_dotgit(struct kase *k)
{
	if (mk_wdir(k, "x"))
		return 0;
	int e = STEP(k, "mkdir x/.git", E(mkdir(M(W(k, "x/.git")), 0755)), EROFS);
	STEP(k, "mkdir -p x/.GIT/hooks", E(mkdir(M(W(k, "x/.GIT")), 0755)), EROFS);
	gone(k, W(k, "x/.git"));
	gone(k, W(k, "x/.GIT"));
	return e;
}

static int g_git_init(struct kase *k)
{
	char *argv[] = {"git", "init", "-q", (char *)M(W(k, "y")), NULL};
	int st = run(argv);
	if (st == 0) {
		append(k->steps, sizeof(k->steps), "git init: succeeded");
		k->bad = true;
	} else {
		append(k->steps, sizeof(k->steps), "git init: failed (exit %d)", st);
	}
	if (lexists(H(W(k, "y/.git")))) {
		append(k->steps, sizeof(k->steps), ", y/.git exists on the host");
		k->bad = true;
	}
	return 0;
}

static int g_gitdir_file(struct kase *k)
{
	if (mk_wdir(k, "z"))
		return 0;
	int fd = open(M(W(k, "z/.git")), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int e = STEP(k, "create z/.git (gitdir: file)", fd < 0 ? errno : 0, EROFS);
	if (fd >= 0) {
		if (write(fd, "gitdir: ../../../../.git\n", 25) < 0)
			STEP(k, "write", errno, 0);
		close(fd);
	}
	STEP(k, "rename a gitdir: file to z/.git",
	     (mk_wfile(k, "gitfile", "gitdir: ../../../../.git\n"),
	      E(rename(M(W(k, "gitfile")), M(W(k, "z/.git"))))),
	     EROFS);
	STEP(k, "symlink z/.git", E(symlink("../../../../.git", M(W(k, "z/.git")))), EROFS);
	gone(k, W(k, "z/.git"));
	return e;
}

/* absent core.hooksPath directories: .husky/_ (root repository) and
 * hooks (the submodule src/deps/a, inside a writable tree) */
static int g_hookspath(struct kase *k)
{
	int e = STEP(k, "mkdir .husky/_", E(mkdir(M(".husky/_"), 0755)), EROFS);
	STEP(k, "mkdir src/deps/a/hooks", E(mkdir(M("src/deps/a/hooks"), 0755)), EROFS);
	STEP(k, "create src/deps/a/hooks",
	     Eopen(open(M("src/deps/a/hooks"), O_WRONLY | O_CREAT | O_CLOEXEC, 0755)), EROFS);
	STEP(k, "rename a writable dir to src/deps/a/hooks",
	     (mk_wdir(k, "h"), E(rename(M(W(k, "h")), M("src/deps/a/hooks")))), EROFS);
	STEP(k, "symlink src/deps/a/hooks", E(symlink("../../../src", M("src/deps/a/hooks"))),
	     EROFS);
	return e;
}

static int g_modules(struct kase *k)
{
	const char *deep = ".git/modules/a/modules/b/hooks";
	int e = STEP(k, "create .git/modules/a/modules/b/hooks/x",
		     Eopen(open(M(F("%s/x", deep)), O_WRONLY | O_CREAT | O_CLOEXEC, 0755)), EROFS);
	STEP(k, "chmod +x .../b/hooks/pre-commit", E(chmod(M(F("%s/pre-commit", deep)), 0755)),
	     EROFS);
	STEP(k, "open .../b/hooks/pre-commit O_TRUNC",
	     Eopen(open(M(F("%s/pre-commit", deep)), O_WRONLY | O_TRUNC | O_CLOEXEC)), EROFS);
	STEP(k, "open .git/modules/a/config for writing",
	     Eopen(open(M(".git/modules/a/config"), O_WRONLY | O_APPEND | O_CLOEXEC)), EROFS);
	STEP(k, "mv .git/modules/a/modules .git/m",
	     E(rename(M(".git/modules/a/modules"), M(".git/m"))), EROFS);
	return e;
}

static int g_gitfile(struct kase *k)
{
	const char *gf = "src/deps/a/.git";
	int e = STEP(k, "open the submodule's gitdir: file O_TRUNC",
		     Eopen(open(M(gf), O_WRONLY | O_TRUNC | O_CLOEXEC)), EROFS);
	STEP(k, "unlink it", E(unlink(M(gf))), EROFS);
	STEP(k, "rename it away", E(rename(M(gf), M("src/deps/a/gitfile"))), EROFS);
	STEP(k, "rename a writable gitdir: file onto it",
	     (mk_wfile(k, "gf", "gitdir: ../../../../.git\n"), E(rename(M(W(k, "gf")), M(gf)))),
	     EROFS);
	STEP(k, "mv src/deps/a (holding it)", E(rename(M("src/deps/a"), M("src/deps/a2"))), EROFS);
	return e;
}

static void section_git(void)
{
	static const struct {
		const char *name;
		int (*fn)(struct kase *);
		const char *guard;
	} cases[] = {
		{"mkdir of a nested .git", g_mkdir_dotgit, NULL},
		{"git init of a nested repository", g_git_init, NULL},
		{"a planted gitdir: file", g_gitdir_file, NULL},
		{"absent core.hooksPath directories", g_hookspath, "src/deps"},
		{"deep submodule gitdirs", g_modules, ".git"},
		{"a submodule's gitdir: file", g_gitfile, "src/deps"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kase *k = xmalloc(sizeof(*k));
		memset(k, 0, sizeof(*k));
		k->no = ++g_seq;
		k->depth = 4;
		snprintf(k->w, sizeof(k->w), "src/g%05u/b/c", k->no);
		snprintf(k->guard, sizeof(k->guard), "%s", cases[i].guard ? cases[i].guard : "");
		snprintf(k->rel, sizeof(k->rel), "%s", k->guard);
		snprintf(k->prefix, sizeof(k->prefix), "%s", "");
		snprintf(k->leafdir, sizeof(k->leafdir), "%s", ".husky");
		k->lpe = true;
		k->shared = true;
		snprintf(k->what, sizeof(k->what), "%s/%s/git", g_label, world_names[g_world]);
		if (cases[i].guard && !lexists(H(cases[i].guard))) {
			skip("%s: %s: SOURCE has no '%s'", k->what, cases[i].name, cases[i].guard);
			free(k);
			continue;
		}
		const char *listed[2] = {"", ".husky"};
		run_custom(k, cases[i].fn, cases[i].name, listed, 2);
		free(k);
	}
}

/* ------------------------------------------------------------------------ */
/* 9. the race: writable directories and symlinks are created, renamed and
 * swapped while other threads try to land a file at a protected name. */

struct race {
	char w[PATH_MAX]; /* the race directory through the mount */
	volatile int stop;
	/* Directory renames begun and finished: an observation made while
	 * none ran (both equal before, unchanged after) is atomic with
	 * respect to them, so a path it resolved had that name. */
	long started, finished;
	long quiet;  /* observations made in such a window */
	long landed; /* an attack that may never succeed did */
	long tries, denials;
	pthread_mutex_t lock;
	char first[512];
};

/* Something that must never succeed did: WHAT, about NAME. */
static void race_landed(struct race *r, const char *what, const char *name)
{
	pthread_mutex_lock(&r->lock);
	if (!r->landed++)
		snprintf(r->first, sizeof(r->first), "%s %s", what, name);
	pthread_mutex_unlock(&r->lock);
}

static void race_path(const struct race *r, char *buf, const char *name)
{
	path2(buf, r->w, name);
}

/* Around every rename the swapping threads make. */
static void swap_begin(struct race *r)
{
	__atomic_add_fetch(&r->started, 1, __ATOMIC_SEQ_CST);
}

static void swap_end(struct race *r)
{
	__atomic_add_fetch(&r->finished, 1, __ATOMIC_SEQ_CST);
}

/* A window in which no rename runs: QUIET_BEGIN gives a token that
 * QUIET_END accepts only if no rename was running at the start or began
 * since. */
static long quiet_begin(struct race *r)
{
	long s = __atomic_load_n(&r->started, __ATOMIC_SEQ_CST);
	long f = __atomic_load_n(&r->finished, __ATOMIC_SEQ_CST);
	return s == f ? s : -1;
}

static bool quiet_end(struct race *r, long token)
{
	bool q = token >= 0 && __atomic_load_n(&r->started, __ATOMIC_SEQ_CST) == token;
	if (q)
		__atomic_add_fetch(&r->quiet, 1, __ATOMIC_RELAXED);
	return q;
}

static void *race_swapper(void *arg)
{
	struct race *r = arg;
	char d[PATH_MAX], e[PATH_MAX], c[PATH_MAX], dc[PATH_MAX], ec[PATH_MAX];

	race_path(r, d, "d");
	race_path(r, e, "e");
	race_path(r, c, ".cargo");
	race_path(r, dc, "d/config.toml");
	race_path(r, ec, "e/config.toml");
	while (!r->stop) {
		mkdir(d, 0755);
		mkdir(e, 0755);
		swap_begin(r);
		/* allowed while d holds nothing protected-to-be */
		if (rename(d, c) == 0)
			rename(c, d);
		renameat2(AT_FDCWD, d, AT_FDCWD, e, RENAME_EXCHANGE);
		if (rename(e, c) == 0)
			rename(c, e);
		swap_end(r);
		unlink(dc);
		unlink(ec);
	}
	return NULL;
}

/* The tightest form of the race: d becomes .cargo and back, as fast as
 * the daemon allows (only while d holds nothing that would be protected
 * there) ... */
static void *race_flipper(void *arg)
{
	struct race *r = arg;
	char d[PATH_MAX], c[PATH_MAX];

	race_path(r, d, "d");
	race_path(r, c, ".cargo");
	while (!r->stop) {
		mkdir(d, 0755);
		swap_begin(r);
		if (rename(d, c) == 0)
			rename(c, d);
		swap_end(r);
	}
	return NULL;
}

/* ... while files are made in it through a directory fd, and removed
 * again so the flipper can go on. A create the daemon judged while the
 * directory was d and made once it was .cargo lands at .cargo/NAME, which
 * then can neither be removed nor moved away: the final scan sees it. */
static void *race_planter(void *arg)
{
	struct race *r = arg;
	char d[PATH_MAX], f[PATH_MAX];

	race_path(r, d, "d");
	race_path(r, f, "f");
	for (unsigned i = 0; !r->stop; i++) {
		int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		for (int j = 0; j < 64 && !r->stop; j++) {
			const char *name = (i + (unsigned)j) & 1 ? "config.toml" : "config";
			int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
			else
				linkat(AT_FDCWD, f, dfd, name, 0);
			unlinkat(dfd, name, 0);
			mkdirat(dfd, name, 0755);
			unlinkat(dfd, name, AT_REMOVEDIR);
		}
		close(dfd);
	}
	return NULL;
}

static void *race_linker(void *arg)
{
	struct race *r = arg;
	char l[PATH_MAX], l2[PATH_MAX], e[PATH_MAX];

	race_path(r, l, "l");
	race_path(r, l2, "l2");
	race_path(r, e, "e");
	for (unsigned i = 0; !r->stop; i++) {
		swap_begin(r);
		unlink(l);
		symlink(i & 1 ? "d" : ".cargo", l);
		symlink(i & 2 ? "." : "e", l2);
		rename(l2, l);
		/* a directory and a symlink trade places */
		if (renameat2(AT_FDCWD, l, AT_FDCWD, e, RENAME_EXCHANGE) == 0)
			renameat2(AT_FDCWD, l, AT_FDCWD, e, RENAME_EXCHANGE);
		swap_end(r);
	}
	unlink(l2);
	return NULL;
}

static void *race_attacker(void *arg)
{
	struct race *r = arg;
	char p[PATH_MAX], tmp[PATH_MAX], f[PATH_MAX], d[PATH_MAX];
	static const char *const maybe[] = {"d/config.toml", "e/config", "l/config.toml",
					    "l/.envrc",	     "d/.envrc", "l/e/config.toml"};
	static const char *const never[] = {".cargo/config.toml", ".cargo/config", ".envrc",
					    "d/.git", "l/.git"};
	pthread_t self = pthread_self();
	char tname[32];

	snprintf(tname, sizeof(tname), "tmp-%lx", (unsigned long)self & 0xfffff);
	race_path(r, f, "f");
	race_path(r, d, "d");
	for (unsigned i = 0; !r->stop; i++) {
		const char *m = maybe[i % 6], *n = never[i % 5];
		int fd;
		__atomic_add_fetch(&r->tries, 1, __ATOMIC_RELAXED);
		/* names that may be writable at the moment (d is d) */
		race_path(r, p, m);
		fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		/* through a directory fd that the swapper renames */
		int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fd = openat(dfd, "config.toml", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
			linkat(AT_FDCWD, f, dfd, "config", 0);
			close(dfd);
		}
		/* names that are protected whatever happens; a success counts
		 * when no directory was renamed meanwhile (else the kernel
		 * may have resolved .cargo to a directory renamed since,
		 * and the file landed at its new, writable name) */
		race_path(r, p, n);
		long q = quiet_begin(r);
		fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			close(fd);
			if (quiet_end(r, q))
				race_landed(r, "create", n);
		} else if (errno == EROFS) {
			__atomic_add_fetch(&r->denials, 1, __ATOMIC_RELAXED);
		}
		path2(tmp, r->w, tname);
		fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		q = quiet_begin(r);
		if (rename(tmp, p) == 0 && quiet_end(r, q))
			race_landed(r, "rename onto", n);
		q = quiet_begin(r);
		if (link(f, p) == 0 && quiet_end(r, q))
			race_landed(r, "link onto", n);
		q = quiet_begin(r);
		if (mkdir(p, 0755) == 0 && quiet_end(r, q))
			race_landed(r, "mkdir", n);
		/* a quiet look at the host side too (what sandyfs made) */
		q = quiet_begin(r);
		struct stat st;
		if (lstat(p, &st) == 0 && quiet_end(r, q))
			race_landed(r, "the mount shows", n);
		race_path(r, p, m);
		rename(tmp, p);
		unlink(tmp);
	}
	return NULL;
}

/* Looks at the host side while the race runs: a protected name that lands
 * even for a moment is seen. */
struct watcher {
	struct race *r;
	char host[PATH_MAX];
};

static void *race_watcher(void *arg)
{
	struct watcher *w = arg;
	char p[PATH_MAX];
	static const char *const names[] = {
		".cargo/config.toml", ".cargo/config", ".envrc", "d/.git", "e/.git", "d/.envrc"};
	while (!w->r->stop) {
		for (size_t i = 0; i < 6; i++) {
			path2(p, w->host, names[i]);
			struct stat st;
			long q = quiet_begin(w->r);
			if (lstat(p, &st) == 0 && quiet_end(w->r, q))
				race_landed(w->r, "the host saw", names[i]);
		}
		usleep(200);
	}
	return NULL;
}

static void race_scan(const char *rel, void *arg)
{
	struct race *r = arg;
	if (oracle_protected(rel))
		race_landed(r, "after the race, SOURCE holds", rel);
}

/* Whether a stat through the mount answers within SECONDS (in a child, so
 * a hung mount cannot hang the driver). */
static bool mount_answers(const char *path, int seconds)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct stat st;
		_exit(stat(path, &st) == 0 ? 0 : 1);
	}
	for (int i = 0; i < seconds * 100; i++) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) && WEXITSTATUS(status) == 0;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	return false;
}

static void section_race(int seconds)
{
	static struct race r;
	struct watcher w;
	char rel[64];

	snprintf(rel, sizeof(rel), "src/race%u", ++g_seq);
	pthread_t th[9];
	int n = 0;

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.lock, NULL);
	if (mkdir(M(rel), 0755) < 0) {
		tap(false, "%s/%s/race: mkdir %s through the mount: %s", g_label,
		    world_names[g_world], rel, strerror(errno));
		return;
	}
	snprintf(r.w, sizeof(r.w), "%s", M(rel));
	snprintf(w.host, sizeof(w.host), "%s", H(rel));
	w.r = &r;
	int fd = open(M(F("%s/f", rel)), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	pthread_create(&th[n++], NULL, race_flipper, &r);
	pthread_create(&th[n++], NULL, race_swapper, &r);
	pthread_create(&th[n++], NULL, race_linker, &r);
	pthread_create(&th[n++], NULL, race_planter, &r);
	pthread_create(&th[n++], NULL, race_planter, &r);
	pthread_create(&th[n++], NULL, race_attacker, &r);
	pthread_create(&th[n++], NULL, race_attacker, &r);
	pthread_create(&th[n++], NULL, race_watcher, &w);
	sleep((unsigned)seconds);
	r.stop = 1;
	bool hung = false;
	for (int i = 0; i < n; i++) {
		struct timespec deadline;
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 30;
		if (pthread_timedjoin_np(th[i], NULL, &deadline) != 0)
			hung = true;
	}
	const char *what = F("%s/%s/race", g_label, world_names[g_world]);
	tap(!hung, "%s: %d threads for %d s stop within 30 s (%ld attempts, %ld denials)", what, n,
	    seconds, r.tries, r.denials);
	if (hung) {
		tap(false, "%s: sandyfs hangs: the threads are still in system calls", what);
		fflush(stdout);
		_exit(1);
	}
	tap(mount_answers(M(rel), 10), "%s: sandyfs still answers after the race", what);
	tap(r.denials > 0, "%s: the attacks were refused (%ld EROFS)", what, r.denials);
	walk(g_src, rel, race_scan, &r);
	tap(r.landed == 0,
	    "%s: no file ever landed at a protected name (host side; %ld checks in quiet "
	    "windows)%s%s",
	    what, r.quiet, r.landed ? ": " : "", r.landed ? r.first : "");
	pthread_mutex_destroy(&r.lock);
}

/* ------------------------------------------------------------------------ */
/* The final scan: no protected name in SOURCE or in the mount that was not
 * there at the start or made as a fixture. */

struct scan {
	const char *where;
	long found;
	char first[3][PATH_MAX];
};

static void scan_fn(const char *rel, void *arg)
{
	struct scan *s = arg;
	if (!oracle_protected(rel))
		return;
	const char *key = rel;
	if (g_nknown && bsearch(&key, g_known, g_nknown, sizeof(*g_known), cmp_str))
		return;
	if (s->found < 3)
		snprintf(s->first[s->found], PATH_MAX, "%s", printable(rel));
	s->found++;
}

static void section_scan(void)
{
	if (g_nknown)
		qsort(g_known, g_nknown, sizeof(*g_known), cmp_str);
	for (int side = 0; side < 2; side++) {
		struct scan s = {side ? "mount" : "SOURCE", 0, {"", "", ""}};
		walk(side ? g_mnt : g_src, "", scan_fn, &s);
		tap(s.found == 0,
		    "%s/%s: no new protected name anywhere in %s (%zu expected ones)%s%s%s%s%s%s",
		    g_label, world_names[g_world], s.where, g_nknown, s.found ? ": " : "",
		    s.first[0], s.found > 1 ? ", " : "", s.first[1], s.found > 2 ? ", " : "",
		    s.first[2]);
	}
}

/* ------------------------------------------------------------------------ */
/* Modes */

static void become(const char *user)
{
	struct passwd *pw = getpwnam(user);
	if (!pw)
		die("no user '%s'", user);
	if (initgroups(pw->pw_name, pw->pw_gid) < 0 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
		die("cannot become '%s': %s", user, strerror(errno));
	setenv("HOME", pw->pw_dir, 1);
}

static bool has_section(const char *only, const char *name)
{
	if (!only)
		return true;
	size_t l = strlen(name);
	for (const char *c = only; (c = strstr(c, name)); c += l)
		if ((c == only || c[-1] == ',') && (c[l] == ',' || c[l] == '\0'))
			return true;
	return false;
}

static int cmd_matrix(int argc, char **argv)
{
	const char *as = NULL, *only = NULL;
	int race_seconds = 3, i = 2;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--as") && i + 1 < argc)
			as = argv[++i];
		else if (!strcmp(argv[i], "--race") && i + 1 < argc)
			race_seconds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else
			die("unknown option '%s'", argv[i]);
	}
	if (argc - i != 4)
		die("usage: attack matrix [--as USER] [--race S] [--only LIST] LABEL WORLD SOURCE "
		    "MOUNT");
	g_label = argv[i];
	for (g_world = W_PRESENT; g_world <= W_MISSING; g_world++)
		if (!strcmp(argv[i + 1], world_names[g_world]))
			break;
	if (g_world > W_MISSING)
		die("unknown world '%s'", argv[i + 1]);
	static char src[PATH_MAX], mnt[PATH_MAX];
	if (!realpath(argv[i + 2], src) || !realpath(argv[i + 3], mnt))
		die("cannot resolve SOURCE or MOUNT: %s", strerror(errno));
	g_src = src;
	g_mnt = mnt;
	if (as)
		become(as);
	g_root = geteuid() == 0;
	g_uid = geteuid();
	g_gid = getegid();
	umask(022);
	if (chdir("/") < 0)
		die("cannot chdir /");
	/* what is protected and present now is what may stay */
	walk(g_src, "", collect_known, NULL);

	if (has_section(only, "direct"))
		section_direct();
	if (has_section(only, "variants"))
		section_variants();
	if (has_section(only, "misc"))
		section_misc();
	if (has_section(only, "git"))
		section_git();
	if (has_section(only, "race") && race_seconds > 0)
		section_race(race_seconds);
	if (has_section(only, "scan"))
		section_scan();
	diag("%s/%s: %u passed, %u failed, %u skipped", g_label, world_names[g_world], g_pass,
	     g_fail, g_skips);
	return g_fail ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* 10. the audit log */

struct audit_reader {
	FILE *f;
	const char *path;
};

/* The records appended since the last call, parsed; NULL entries for
 * lines that do not parse. */
static size_t audit_read(struct audit_reader *a, cJSON **out, size_t cap, size_t *bad)
{
	char *line = NULL;
	size_t len = 0, n = 0;

	*bad = 0;
	clearerr(a->f);
	while (getline(&line, &len, a->f) > 0) {
		cJSON *j = cJSON_Parse(line);
		if (!j || !cJSON_IsObject(j)) {
			(*bad)++;
			cJSON_Delete(j);
			continue;
		}
		if (n < cap)
			out[n++] = j;
		else
			cJSON_Delete(j);
	}
	free(line);
	return n;
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool jnum(const cJSON *o, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(v))
		return false;
	*out = v->valuedouble;
	return true;
}

static bool iso_time(const char *s)
{
	int y, mo, d, h, mi;
	double sec;
	return s && sscanf(s, "%4d-%2d-%2dT%2d:%2d:%lfZ", &y, &mo, &d, &h, &mi, &sec) == 6 &&
	       s[strlen(s) - 1] == 'Z';
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

struct expect {
	const char *op;	    /* the record's op */
	const char *path;   /* relative to SOURCE */
	const char *target; /* or NULL */
	const char *cls;
	const char *rule;      /* NULL: any non-empty */
	const char *rule_file; /* a suffix */
	const char *err;
	pid_t pid;
	uid_t uid;
};

/* Checks that exactly one record arrived and that it says E. */
/* The pid an audit record gives for the caller PID: none (0) with
 * ATTACK_PID_UNSEEN set, for a daemon in a pid namespace of its own
 * (sandyfs in its container), to which the kernel passes no pid for a
 * caller outside it. */
static pid_t seen_pid(pid_t pid)
{
	const char *unseen = getenv("ATTACK_PID_UNSEEN");

	return unseen && *unseen ? 0 : pid;
}

static void audit_expect(struct audit_reader *a, const char *what, const struct expect *x)
{
	cJSON *recs[8];
	size_t bad, n = audit_read(a, recs, 8, &bad);
	char why[1024] = "";

	if (bad)
		append(why, sizeof(why), " %zu unparseable line(s);", bad);
	if (n != 1)
		append(why, sizeof(why), " %zu records (want 1);", n);
	if (n >= 1) {
		const cJSON *r = recs[0];
		const char *s;
		double num = 0;
		if (!iso_time(jstr(r, "time")))
			append(why, sizeof(why), " time '%s';",
			       jstr(r, "time") ? jstr(r, "time") : "");
		if (!(s = jstr(r, "op")) || strcmp(s, x->op))
			append(why, sizeof(why), " op '%s' (want '%s');", s ? s : "-", x->op);
		if (!(s = jstr(r, "path")) || strcmp(s, x->path))
			append(why, sizeof(why), " path '%s' (want '%s');", s ? s : "-", x->path);
		s = jstr(r, "target");
		if (x->target && (!s || strcmp(s, x->target)))
			append(why, sizeof(why), " target '%s' (want '%s');", s ? s : "-",
			       x->target);
		if (!(s = jstr(r, "class")) || strcmp(s, x->cls))
			append(why, sizeof(why), " class '%s' (want '%s');", s ? s : "-", x->cls);
		/* a built-in refusal (device node, set-id bit) has no rule
		 * entry: its why says it */
		bool builtin = !strcmp(x->rule_file, "(built-in)") && !x->rule;
		s = jstr(r, "rule");
		if (!s || (x->rule ? strcmp(s, x->rule) : !*s && !builtin))
			append(why, sizeof(why), " rule '%s' (want '%s');", s ? s : "-",
			       x->rule ? x->rule : "(any)");
		if (!(s = jstr(r, "rule_file")) || !ends_with(s, x->rule_file))
			append(why, sizeof(why), " rule_file '%s' (want *%s);", s ? s : "-",
			       x->rule_file);
		if (!(s = jstr(r, "why")) || !*s)
			append(why, sizeof(why), " no why;");
		if (!jnum(r, "pid", &num) || (pid_t)num != seen_pid(x->pid))
			append(why, sizeof(why), " pid %.0f (want %d);", num,
			       (int)seen_pid(x->pid));
		if (!jnum(r, "uid", &num) || (uid_t)num != x->uid)
			append(why, sizeof(why), " uid %.0f (want %u);", num, x->uid);
		if (!(s = jstr(r, "errno")) || strcmp(s, x->err))
			append(why, sizeof(why), " errno '%s' (want %s);", s ? s : "-", x->err);
	}
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(recs[i]);
	tap(!*why, "audit: %s: one record, class %s, rule %s%s", what, x->cls,
	    x->rule ? x->rule : "(built-in)", why);
}

#define FLOOD_THREADS 4

struct flood {
	char target[PATH_MAX];
	long each;
	long refused;
};

static void *flood_loop(void *arg)
{
	struct flood *fl = arg;
	long refused = 0;

	for (long n = 0; n < fl->each; n++)
		refused += unlink(fl->target) < 0 && errno == EROFS;
	__atomic_add_fetch(&fl->refused, refused, __ATOMIC_RELAXED);
	return NULL;
}

static int cmd_audit(int argc, char **argv)
{
	const char *user = NULL;
	long flood = 100000;
	int i = 2;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--user") && i + 1 < argc)
			user = argv[++i];
		else if (!strcmp(argv[i], "--flood") && i + 1 < argc)
			flood = atol(argv[++i]);
		else
			die("unknown option '%s'", argv[i]);
	}
	if (argc - i != 3)
		die("usage: attack audit [--user USER] [--flood N] LOG SOURCE MOUNT");
	static char src[PATH_MAX], mnt[PATH_MAX];
	if (!realpath(argv[i + 1], src) || !realpath(argv[i + 2], mnt))
		die("cannot resolve SOURCE or MOUNT");
	g_src = src;
	g_mnt = mnt;
	g_label = "audit";
	g_world = W_PRESENT;
	g_root = geteuid() == 0;
	struct audit_reader a = {fopen(argv[i], "r"), argv[i]};
	if (!a.f)
		die("cannot open the audit log '%s': %s", argv[i], strerror(errno));
	fseek(a.f, 0, SEEK_END);
	size_t bad;
	cJSON *junk[1];
	pid_t me = getpid();
	uid_t uid = geteuid();

	/* one record per denial, with the deciding rule, for every target at
	 * every depth, for a few operations: fewer than the burst of 200 */
	for (size_t ti = 0; ti < NTARGETS; ti++) {
		const struct target *t = &targets[ti];
		if (t->control)
			continue;
		for (size_t di = 0; di < 3; di++) {
			char prefix[PATH_MAX];
			snprintf(prefix, sizeof(prefix), "%s", depth_prefix(depths[di], ++g_seq));
			if (depths[di] >= 4) {
				mkdir_p(H(prefix));
				make_fixture(prefix, t, t->name, W_PRESENT);
			}
			char rel[PATH_MAX], w[PATH_MAX];
			snprintf(rel, sizeof(rel), "%s", join(prefix, t->name));
			snprintf(w, sizeof(w), "src/w/a%05u", g_seq);
			mkdir_p(H(w));
			struct expect x = {.cls = t->cls,
					   .rule = t->rule,
					   .rule_file = t->file,
					   .err = "EROFS",
					   .pid = me,
					   .uid = uid,
					   .path = rel};
			struct stat st;
			lstat(M(rel), &st); /* warm, and no record for looking */
			audit_read(&a, junk, 0, &bad);
			x.op = "unlink";
			unlink(M(rel));
			audit_expect(&a, F("d%d/%s: unlink", depths[di], t->name), &x);
			x.op = "setattr";
			chmod(M(rel), 0755);
			audit_expect(&a, F("d%d/%s: chmod", depths[di], t->name), &x);
			x.op = "open";
			Eopen(open(M(rel), O_WRONLY | O_CLOEXEC));
			audit_expect(&a, F("d%d/%s: open O_WRONLY", depths[di], t->name), &x);
			char f[PATH_MAX];
			path2(f, w, "f");
			Eopen(open(M(f), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
			audit_read(&a, junk, 0, &bad);
			x.op = "rename";
			x.target = f;
			rename(M(f), M(rel));
			audit_expect(&a, F("d%d/%s: rename onto it", depths[di], t->name), &x);
		}
	}
	/* built-in refusals and the git layout */
	{
		const char *w = "src/w/audit";
		mkdir_p(H(w));
		struct expect x = {.op = "mknod",
				   .path = F("%s/null", w),
				   .cls = "writable",
				   .rule_file = "(built-in)",
				   .err = "EROFS",
				   .pid = me,
				   .uid = uid};
		static char p1[PATH_MAX];
		snprintf(p1, sizeof(p1), "%s", x.path);
		x.path = p1;
		if (g_root) {
			mknod(M(p1), S_IFCHR | 0600, makedev(1, 3));
			audit_expect(&a, "mknod of a device node", &x);
		}
		Eopen(open(M(F("%s/suid", w)), O_WRONLY | O_CREAT | O_CLOEXEC, 0755));
		audit_read(&a, junk, 0, &bad);
		static char p2[PATH_MAX];
		snprintf(p2, sizeof(p2), "%s/suid", w);
		x.path = p2;
		x.op = "chmod";
		chmod(M(p2), 04755);
		audit_expect(&a, "chmod 4755", &x);
		struct expect h = {.op = "mkdir",
				   .path = "src/deps/a/hooks",
				   .cls = "immutable",
				   .rule_file = "",
				   .err = "EROFS",
				   .pid = me,
				   .uid = uid};
		if (lexists(H("src/deps/a"))) {
			mkdir(M(h.path), 0755);
			audit_expect(&a, "mkdir of the submodule's absent core.hooksPath", &h);
		}
		h.path = "src/w/audit/.git";
		h.rule_file = "(built-in)";
		mkdir(M(h.path), 0755);
		audit_expect(&a, "mkdir of a nested .git", &h);
		struct expect hid = {.op = "create",
				     .path = "src/w/audit/key.pem",
				     .cls = "hidden",
				     .rule = "*.pem",
				     .rule_file = "base.json",
				     .err = "ENOENT",
				     .pid = me,
				     .uid = uid};
		Eopen(open(M(hid.path), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
		audit_expect(&a, "create of a hidden name", &hid);
	}
	/* the caller's identity: a child as the test user */
	if (user) {
		struct passwd *pw = getpwnam(user);
		if (!pw)
			die("no user '%s'", user);
		pid_t pid = fork();
		if (pid == 0) {
			become(user);
			unlink(M(".envrc"));
			_exit(0);
		}
		int status;
		waitpid(pid, &status, 0);
		struct expect x = {.op = "unlink",
				   .path = ".envrc",
				   .cls = "protected",
				   .rule = ".envrc",
				   .rule_file = "base.json",
				   .err = "EROFS",
				   .pid = pid,
				   .uid = pw->pw_uid};
		audit_expect(&a, F("a denial to %s names its pid and uid", user), &x);
	}

	/* the flood: FLOOD denials in a loop stay within the rate limit, and
	 * the suppressed counters add up */
	if (flood > 0) {
		struct timespec t0, t1;
		sleep(1); /* tokens back */
		audit_read(&a, junk, 0, &bad);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		/* in FLOOD_THREADS threads, so the loop is as fast as the
		 * daemon can refuse */
		struct flood fl = {.each = flood / FLOOD_THREADS};
		snprintf(fl.target, sizeof(fl.target), "%s", M(".envrc"));
		pthread_t th[FLOOD_THREADS];
		for (int t = 0; t < FLOOD_THREADS; t++)
			pthread_create(&th[t], NULL, flood_loop, &fl);
		for (int t = 0; t < FLOOD_THREADS; t++)
			pthread_join(th[t], NULL);
		long refused = fl.refused;
		flood = fl.each * FLOOD_THREADS;
		const char *target = fl.target;
		/* after a pause, one more denial writes the pending counter */
		usleep(200000);
		refused += unlink(target) < 0 && errno == EROFS;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double secs =
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		long lines = 0, records = 0, unparsed = 0;
		double suppressed = 0;
		char *line = NULL;
		size_t len = 0;
		clearerr(a.f);
		while (getline(&line, &len, a.f) > 0) {
			lines++;
			cJSON *j = cJSON_Parse(line);
			double v;
			if (!j)
				unparsed++;
			else if (jnum(j, "suppressed", &v))
				suppressed += v;
			else if (jstr(j, "op"))
				records++;
			else
				unparsed++;
			cJSON_Delete(j);
		}
		free(line);
		/* burst 200, then 50 a second (as the daemon is built) */
		double limit = 200 + 50 * secs + 2;
		tap(refused == flood + 1, "audit: flood: %ld of %ld unlinks refused with EROFS",
		    refused, flood + 1);
		tap(unparsed == 0, "audit: flood: every one of %ld lines parses", lines);
		tap(lines <= limit, "audit: flood: %ld lines in %.1f s, within 200 + 50/s (%.0f)",
		    lines, secs, limit);
		tap((long)suppressed + records == flood + 1,
		    "audit: flood: %ld records + %.0f suppressed = %ld denials", records,
		    suppressed, flood + 1);
	}
	fclose(a.f);
	return g_fail ? 1 : 0;
}

/* Every line of the log parses as a record or a suppressed counter. */
static int cmd_auditcheck(int argc, char **argv)
{
	if (argc != 4)
		die("usage: attack auditcheck LABEL LOG");
	FILE *f = fopen(argv[3], "r");
	if (!f) {
		tap(false, "%s: the audit log exists: %s", argv[2], strerror(errno));
		return 1;
	}
	char *line = NULL;
	size_t len = 0;
	long lines = 0, bad = 0;
	while (getline(&line, &len, f) > 0) {
		lines++;
		cJSON *j = cJSON_Parse(line);
		double v;
		bool good = j && (jnum(j, "suppressed", &v) ||
				  (jstr(j, "op") && jstr(j, "path") && jstr(j, "class") &&
				   jstr(j, "rule_file") && jstr(j, "errno")));
		if (!good && bad++ < 3)
			diag("bad audit line: %s", line);
		cJSON_Delete(j);
	}
	free(line);
	fclose(f);
	tap(bad == 0 && lines > 0, "%s: all %ld lines of the audit log parse", argv[2], lines);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		die("usage: attack prepare|matrix|audit|auditcheck ...");
	if (!strcmp(argv[1], "prepare"))
		return cmd_prepare(argc, argv);
	if (!strcmp(argv[1], "matrix"))
		return cmd_matrix(argc, argv);
	if (!strcmp(argv[1], "audit"))
		return cmd_audit(argc, argv);
	if (!strcmp(argv[1], "auditcheck"))
		return cmd_auditcheck(argc, argv);
	die("unknown mode '%s'", argv[1]);
}
