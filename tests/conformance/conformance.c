/*
 * tests/conformance/conformance.c: the POSIX conformance suite of sandyfs.
 *
 * This file owns the conformance driver and all of its cases. Every case runs
 * twice, once in a fresh subdirectory of a native directory and once in a
 * fresh subdirectory of a sandyfs mount whose source directory lives on the
 * same host filesystem. Each run records what it observes (return values,
 * errno names, normalised stat fields, contents and hashes, name sets, xattr
 * lists, relations between timestamps and inode numbers, ...) and the two
 * logs must be equal. Only what must be equal is observed: never absolute
 * inode or device numbers, atimes or absolute ctimes/mtimes, only relations
 * that must hold. The case body also gets the host-side path of its
 * directory (the native directory itself, or the matching directory under
 * SOURCE_DIR), so host-side effects are checked the same way in both runs.
 *
 * Output is TAP ("ok - NAME" / "not ok - NAME" with the differing part of the
 * two logs as "# native: ..." / "# mount: ..." lines); "# skip NAME: why"
 * for a case that cannot run in this mode. Exit status 1 when a case failed.
 *
 * Log lines starting with '!' are failures on their own (a setup step that
 * failed, an expectation about the native behaviour that did not hold, a
 * crash or a timeout); lines starting with '#' are notes, printed but not
 * compared.
 *
 * The policy: the mount runs under an allow-all rule file, but some rules
 * hold under every policy: set-uid/set-gid bits are never set, device
 * nodes never created, and symlinks whose target is absolute or leads out
 * of SOURCE (directly or through other symlinks) are never created through
 * the mount.
 * Setting those up is the policy tests' business; where a case here needs
 * such an object it makes it on the host side (through `host`, in both
 * runs, with host_chmod() waiting until the mount shows the change) and
 * checks how the mount serves it. The mount may also fail a directory rename that
 * cannot be checked cheaply fail with EXDEV; deep_paths accepts that.
 *
 * Identities: run as root with --as-uid/--as-gid, case bodies run as root and
 * the parts that need an unprivileged caller run in a child that switches to
 * that user; run as the unprivileged user itself, the bodies run as that
 * user and the fixtures owned by "someone else" (root) are made beforehand
 * by `conformance --prepare` run as root.
 *
 * gnu11, libc and pthreads only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
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
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif
#ifndef FALLOC_FL_COLLAPSE_RANGE
#define FALLOC_FL_COLLAPSE_RANGE 0x08
#endif
#ifndef FALLOC_FL_ZERO_RANGE
#define FALLOC_FL_ZERO_RANGE 0x10
#endif
#ifndef FALLOC_FL_INSERT_RANGE
#define FALLOC_FL_INSERT_RANGE 0x20
#endif
#ifndef FALLOC_FL_UNSHARE_RANGE
#define FALLOC_FL_UNSHARE_RANGE 0x40
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif
#ifndef F_OFD_GETLK
#define F_OFD_GETLK  36
#define F_OFD_SETLK  37
#define F_OFD_SETLKW 38
#endif

#define FUSE_SUPER_MAGIC 0x65735546
#define KIB		 1024LL
#define MIB		 (1024LL * 1024)
#define GIB		 (1024LL * 1024 * 1024)
/* A supplementary group the caller gets in the cases that need one (only
 * when the suite runs as root and can give it); it needs no /etc/group
 * entry. */
#define XGID ((gid_t)54321)

/* ------------------------------------------------------------------------ */
/* Options and identities */

static const char *g_native, *g_mount, *g_source;
static const char *g_prefix = "";
static bool g_root;	   /* the suite runs as root */
static bool g_have_caller; /* an unprivileged caller identity is known */
static uid_t g_cuid;
static gid_t g_cgid;
static int g_verbose;
static bool g_prep_failed;

/* One run of a case body. */
struct ctx {
	int out;	  /* the observation pipe */
	bool native;	  /* the native run (only for notes; bodies must not branch on it) */
	bool root;	  /* this process runs as root */
	const char *dir;  /* the case directory as the test sees it (the cwd) */
	const char *host; /* the same directory on the host */
	void *arg;
};

/* The portable flavour (no O_PATH) run by an unprivileged daemon cannot
 * open what it may only search or execute; the script says so through the
 * environment, and the few checks that need it are skipped in both runs
 * alike, as notes. */
static bool daemon_needs_read(void)
{
	return getenv("CONFORMANCE_DAEMON_NEEDS_READ_ON_DIRS") != NULL;
}

struct tcase {
	const char *name;
	void (*body)(struct ctx *);
	void (*prep)(struct ctx *); /* fixtures made as root, on the host side */
	unsigned timeout;	    /* seconds; 0: the default */
	unsigned flags;
};
#define NEED_CALLER 1u /* needs the unprivileged caller identity */
#define NEED_ROOT   2u /* needs a root case body (the root mode) */

#define DEFAULT_TIMEOUT 90

/* ------------------------------------------------------------------------ */
/* Small utilities */

static void ign(long v)
{
	(void)v;
}

static char *rbuf(void)
{
	static char bufs[16][8192];
	static unsigned n;
	return bufs[n++ % 16];
}
#define RBUF_SIZE 8192

__attribute__((format(printf, 1, 2))) static const char *L(const char *fmt, ...)
{
	char *b = rbuf();
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b, RBUF_SIZE, fmt, ap);
	va_end(ap);
	return b;
}

static void write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		c += w;
		n -= (size_t)w;
	}
}

static const char *ename(int e)
{
	const char *s = strerrorname_np(e);
	return s ? s : L("E%d", e);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

static uint64_t fnv_more(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t fnv(const void *p, size_t n)
{
	return fnv_more(1469598103934665603ULL, p, n);
}

/* Bytes made printable: short ones quoted and escaped, long ones hashed. */
static const char *show(const void *p, size_t n)
{
	char *b = rbuf();
	const unsigned char *c = p;
	if (n > 200) {
		snprintf(b, RBUF_SIZE, "<%zu bytes %016" PRIx64 ">", n, fnv(p, n));
		return b;
	}
	size_t o = 0;
	b[o++] = '\'';
	for (size_t i = 0; i < n; i++) {
		if (c[i] == '\\' || c[i] == '\'')
			o += (size_t)sprintf(b + o, "\\%c", c[i]);
		else if (c[i] >= 0x20 && c[i] < 0x7f)
			b[o++] = (char)c[i];
		else
			o += (size_t)sprintf(b + o, "\\x%02x", c[i]);
	}
	b[o++] = '\'';
	b[o] = 0;
	return b;
}

static const char *shows(const char *s)
{
	return show(s, strlen(s));
}

/* ------------------------------------------------------------------------ */
/* Observations */

__attribute__((format(printf, 2, 3))) static void obs(struct ctx *ctx, const char *fmt, ...)
{
	char line[8192];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	for (int i = 0; i < n; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[n++] = '\n';
	write_all(ctx->out, line, (size_t)n);
}

/* A setup step that must work: a failure fails the case. */
__attribute__((format(printf, 3, 4))) static bool must(struct ctx *ctx, bool cond, const char *fmt,
						       ...)
{
	if (cond)
		return true;
	int e = errno;
	char what[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	obs(ctx, "!setup failed: %s: %s", what, ename(e));
	g_prep_failed = true;
	errno = e;
	return false;
}

/* An expectation about what POSIX/Linux does: checked in both runs, so a
 * test setup that does not exercise what the case is about fails instead of
 * passing vacuously. */
__attribute__((format(printf, 3, 4))) static void expect(struct ctx *ctx, bool cond,
							 const char *fmt, ...)
{
	if (cond)
		return;
	char what[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	obs(ctx, "!expected: %s", what);
}

enum { RV_VAL, RV_FD, RV_OK };

static void report(struct ctx *ctx, const char *label, long r, int e, int kind)
{
	if (r < 0)
		obs(ctx, "%s: %s", label, ename(e));
	else if (kind == RV_FD)
		obs(ctx, "%s: fd", label);
	else if (kind == RV_OK)
		obs(ctx, "%s: ok", label);
	else
		obs(ctx, "%s: %ld", label, r);
}

/* R(label, call): run a call returning -1/errno on failure, record the value
 * or the errno name, evaluate to the value (errno preserved). RFD for calls
 * returning a file descriptor (recorded as "fd"). */
#define R_(kind, label, expr)                                                                      \
	({                                                                                         \
		errno = 0;                                                                         \
		long r_ = (long)(expr);                                                            \
		int e_ = errno;                                                                    \
		report(ctx, (label), r_, e_, (kind));                                              \
		errno = e_;                                                                        \
		r_;                                                                                \
	})
#define R(label, expr)	 R_(RV_VAL, label, expr)
#define RFD(label, expr) ((int)R_(RV_FD, label, expr))
#define ROK(label, expr) R_(RV_OK, label, expr)

static void xclose(int fd)
{
	if (fd >= 0)
		close(fd);
}

static const char *hp(struct ctx *ctx, const char *rel)
{
	return L("%s/%s", ctx->host, rel);
}

/* chmod on the host side: for the set-uid/set-gid bits, which the policy
 * never sets through the mount but which must be served. A
 * host-side change reaches the mount within a second (coherence, tested on
 * its own): this waits up to 3 s for it to show before the case goes on. */
static bool host_chmod(struct ctx *ctx, const char *rel, mode_t mode)
{
	if (!must(ctx, chmod(hp(ctx, rel), mode) == 0, "host chmod %s %04o", rel, mode))
		return false;
	for (int i = 0; i < 150; i++) {
		struct stat s;
		if (lstat(rel, &s) == 0 && (s.st_mode & 07777) == mode)
			return true;
		sleep_ms(20);
	}
	errno = ETIMEDOUT;
	return must(ctx, false, "host chmod %s %04o visible through the directory", rel, mode);
}

/* ------------------------------------------------------------------------ */
/* Files */

/* Creates or replaces a file with the given content and (for a file this
 * process owns) exactly the given mode. */
static bool putn(struct ctx *ctx, const char *path, const void *data, size_t n, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (!must(ctx, fd >= 0, "create %s", path))
		return false;
	ssize_t w = write(fd, data, n);
	bool ok = must(ctx, w == (ssize_t)n, "write %s", path);
	/* the exact mode, whatever the umask, when the file is ours */
	struct stat s;
	if (fstat(fd, &s) == 0 && s.st_uid == geteuid() && (s.st_mode & 07777) != mode)
		ok = must(ctx, fchmod(fd, mode) == 0, "fchmod %s", path) && ok;
	ok = must(ctx, close(fd) == 0, "close %s", path) && ok;
	return ok;
}

static bool put(struct ctx *ctx, const char *path, const char *data, mode_t mode)
{
	return putn(ctx, path, data, strlen(data), mode);
}

/* The whole content from offset 0 (at most 256 MiB). */
static int slurp_fd(int fd, char **out, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *b = malloc(cap);
	if (!b)
		return ENOMEM;
	for (;;) {
		if (n == cap) {
			if (cap >= 256 * MIB) {
				free(b);
				return EFBIG;
			}
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		ssize_t r = pread(fd, b + n, cap - n, (off_t)n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(b);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = b;
	*len = n;
	return 0;
}

static int slurp(const char *path, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno;
	int e = slurp_fd(fd, out, len);
	close(fd);
	return e;
}

static void cat(struct ctx *ctx, const char *label, const char *path)
{
	char *d;
	size_t n;
	int e = slurp(path, &d, &n);
	if (e) {
		obs(ctx, "%s: %s", label, ename(e));
		return;
	}
	obs(ctx, "%s: %s", label, show(d, n));
	free(d);
}

static void fdcat(struct ctx *ctx, const char *label, int fd)
{
	char *d;
	size_t n;
	int e = slurp_fd(fd, &d, &n);
	if (e) {
		obs(ctx, "%s: %s", label, ename(e));
		return;
	}
	obs(ctx, "%s: %s", label, show(d, n));
	free(d);
}

/* Whether two files have the same content ("same", "differ", or an errno). */
static const char *same_content(const char *a, const char *b)
{
	char *da, *db;
	size_t na, nb;
	int e = slurp(a, &da, &na);
	if (e)
		return ename(e);
	e = slurp(b, &db, &nb);
	if (e) {
		free(da);
		return ename(e);
	}
	bool same = na == nb && memcmp(da, db, na) == 0;
	free(da);
	free(db);
	return same ? "same" : "differ";
}

/* Host-side view of a file must have the content the test sees. */
static void host_same(struct ctx *ctx, const char *rel)
{
	obs(ctx, "host %s content: %s", rel, same_content(rel, hp(ctx, rel)));
}

/* ------------------------------------------------------------------------ */
/* Stat */

static const char *ftype(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return "reg";
	case S_IFDIR:
		return "dir";
	case S_IFLNK:
		return "lnk";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "sock";
	case S_IFCHR:
		return "chr";
	case S_IFBLK:
		return "blk";
	}
	return "?";
}

static const char *who_u(uid_t u)
{
	if (u == 0)
		return "root";
	if (g_have_caller && u == g_cuid)
		return "caller";
	return L("%u", (unsigned)u);
}

static const char *who_g(gid_t g)
{
	if (g == 0)
		return "root";
	if (g_have_caller && g == g_cgid)
		return "caller";
	if (g == XGID)
		return "xgid";
	return L("%u", (unsigned)g);
}

static void show_st(struct ctx *ctx, const char *label, const struct stat *s, bool blocks)
{
	char dev[64] = "";
	if (S_ISCHR(s->st_mode) || S_ISBLK(s->st_mode))
		snprintf(dev, sizeof(dev), " rdev=%u:%u", major(s->st_rdev), minor(s->st_rdev));
	obs(ctx, "%s: %s %04o nlink=%ju size=%jd uid=%s gid=%s%s%s", label, ftype(s->st_mode),
	    (unsigned)(s->st_mode & 07777), (uintmax_t)s->st_nlink, (intmax_t)s->st_size,
	    who_u(s->st_uid), who_g(s->st_gid),
	    !blocks	       ? ""
	    : s->st_blocks > 0 ? " blocks>0"
			       : " blocks=0",
	    dev);
}

/* lstat, stat, fstat: recorded without absolute ino/dev/times. */
static void st(struct ctx *ctx, const char *label, const char *path)
{
	struct stat s;
	if (lstat(path, &s) != 0)
		obs(ctx, "%s: %s", label, ename(errno));
	else
		show_st(ctx, label, &s, S_ISREG(s.st_mode));
}

static void stf(struct ctx *ctx, const char *label, const char *path)
{
	struct stat s;
	if (stat(path, &s) != 0)
		obs(ctx, "%s: %s", label, ename(errno));
	else
		show_st(ctx, label, &s, S_ISREG(s.st_mode));
}

static void fst(struct ctx *ctx, const char *label, int fd)
{
	struct stat s;
	if (fstat(fd, &s) != 0)
		obs(ctx, "%s: %s", label, ename(errno));
	else
		show_st(ctx, label, &s, false);
}

static ino_t ino_of(const char *path)
{
	struct stat s;
	return lstat(path, &s) == 0 ? s.st_ino : 0;
}

static ino_t fino_of(int fd)
{
	struct stat s;
	return fstat(fd, &s) == 0 ? s.st_ino : 0;
}

static mode_t mode_of(const char *path)
{
	struct stat s;
	return lstat(path, &s) == 0 ? s.st_mode : (mode_t)-1;
}

static void same_ino(struct ctx *ctx, const char *label, const char *a, const char *b)
{
	struct stat sa, sb;
	if (lstat(a, &sa) != 0) {
		obs(ctx, "%s: %s: %s", label, a, ename(errno));
		return;
	}
	if (lstat(b, &sb) != 0) {
		obs(ctx, "%s: %s: %s", label, b, ename(errno));
		return;
	}
	obs(ctx, "%s: %s", label, sa.st_ino == sb.st_ino ? "same ino" : "different ino");
}

static const char *eqs(bool b)
{
	return b ? "=" : "!=";
}

static bool ts_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static int ts_cmp(struct timespec a, struct timespec b)
{
	if (a.tv_sec != b.tv_sec)
		return a.tv_sec < b.tv_sec ? -1 : 1;
	if (a.tv_nsec != b.tv_nsec)
		return a.tv_nsec < b.tv_nsec ? -1 : 1;
	return 0;
}

static const char *ts_str(struct timespec t)
{
	return L("%lld.%09ld", (long long)t.tv_sec, t.tv_nsec);
}

static double ts_d(struct timespec t)
{
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Whether t is within tol seconds of ref. */
static bool near(struct timespec t, struct timespec ref, double tol)
{
	double d = ts_d(t) - ts_d(ref);
	return d < tol && d > -tol;
}

static struct timespec now_rt(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t;
}

/* The attributes seen through the test directory equal the host's. */
static void host_attrs(struct ctx *ctx, const char *rel)
{
	struct stat a, b;
	if (lstat(rel, &a) != 0) {
		obs(ctx, "host attrs %s: %s", rel, ename(errno));
		return;
	}
	if (lstat(hp(ctx, rel), &b) != 0) {
		obs(ctx, "host attrs %s: host %s", rel, ename(errno));
		return;
	}
	obs(ctx, "host attrs %s: type%s mode%s nlink%s size%s uid%s gid%s mtime%s ctime%s", rel,
	    eqs((a.st_mode & S_IFMT) == (b.st_mode & S_IFMT)),
	    eqs((a.st_mode & 07777) == (b.st_mode & 07777)), eqs(a.st_nlink == b.st_nlink),
	    eqs(a.st_size == b.st_size), eqs(a.st_uid == b.st_uid), eqs(a.st_gid == b.st_gid),
	    eqs(ts_eq(a.st_mtim, b.st_mtim)), eqs(ts_eq(a.st_ctim, b.st_ctim)));
}

/* ------------------------------------------------------------------------ */
/* Directories */

struct strv {
	char **v;
	size_t n, cap;
};

static void sv_add(struct strv *s, const char *str)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->n] = strdup(str);
	if (!s->v[s->n])
		abort();
	s->n++;
}

static void sv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sv_sort(struct strv *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmpstr);
}

static char dtype_char(unsigned char t)
{
	switch (t) {
	case DT_REG:
		return 'f';
	case DT_DIR:
		return 'd';
	case DT_LNK:
		return 'l';
	case DT_FIFO:
		return 'p';
	case DT_SOCK:
		return 's';
	case DT_CHR:
		return 'c';
	case DT_BLK:
		return 'b';
	}
	return '?';
}

/* Names in a directory without "." and "..", optionally "name:t" with the
 * d_type letter. Returns 0 or an errno. */
static int list_names(const char *path, struct strv *out, bool types)
{
	DIR *d = opendir(path);
	if (!d)
		return errno;
	struct dirent *e;
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (types)
			sv_add(out, L("%s:%c", e->d_name, dtype_char(e->d_type)));
		else
			sv_add(out, e->d_name);
		errno = 0;
	}
	int err = errno;
	closedir(d);
	sv_sort(out);
	return err;
}

static void show_names(struct ctx *ctx, const char *label, struct strv *s)
{
	if (s->n > 64) {
		uint64_t h = fnv("", 0);
		for (size_t i = 0; i < s->n; i++)
			h = fnv_more(h, s->v[i], strlen(s->v[i]) + 1);
		obs(ctx, "%s: %zu names %016" PRIx64, label, s->n, h);
		return;
	}
	char line[6000];
	size_t o = 0;
	line[0] = 0;
	for (size_t i = 0; i < s->n && o < sizeof(line) - 600; i++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s", i ? " " : "",
				      show(s->v[i], strlen(s->v[i])));
	obs(ctx, "%s: [%s]", label, line);
}

static void ls(struct ctx *ctx, const char *label, const char *path)
{
	struct strv s = {0};
	int e = list_names(path, &s, true);
	if (e)
		obs(ctx, "%s: %s", label, ename(e));
	else
		show_names(ctx, label, &s);
	sv_free(&s);
}

/* ------------------------------------------------------------------------ */
/* Processes and identities */

static const char *status_str(int st)
{
	if (WIFEXITED(st))
		return L("exit %d", WEXITSTATUS(st));
	if (WIFSIGNALED(st))
		return L("signal %s",
			 sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	return "?";
}

static int wait_for(pid_t pid)
{
	int st = 0;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return st;
}

/* Report how a helper process ended; anything but exit 0 fails the case. */
static void reap(struct ctx *ctx, const char *what, pid_t pid)
{
	if (pid <= 0)
		return;
	int st = wait_for(pid);
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		obs(ctx, "!%s ended with %s", what, status_str(st));
}

static int become_caller(const gid_t *extra, int nextra)
{
	gid_t groups[256];
	int n = 250;
	struct passwd *pw = getpwuid(g_cuid);
	if (!pw || getgrouplist(pw->pw_name, g_cgid, groups, &n) < 0) {
		groups[0] = g_cgid;
		n = 1;
	}
	for (int i = 0; i < nextra && n < 256; i++)
		groups[n++] = extra[i];
	if (setgroups((size_t)n, groups) != 0 || setresgid(g_cgid, g_cgid, g_cgid) != 0 ||
	    setresuid(g_cuid, g_cuid, g_cuid) != 0)
		return -1;
	if (geteuid() != g_cuid || getegid() != g_cgid) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* Runs fn in a child process as the unprivileged caller (with the given
 * extra supplementary groups, only possible from root). */
static void as_caller_g(struct ctx *ctx, const gid_t *extra, int nextra, void (*fn)(struct ctx *))
{
	pid_t pid = fork();
	if (pid < 0) {
		obs(ctx, "!fork: %s", ename(errno));
		return;
	}
	if (pid == 0) {
		alarm(120);
		if (ctx->root) {
			if (become_caller(extra, nextra) != 0) {
				obs(ctx, "!cannot become the caller: %s", ename(errno));
				_exit(1);
			}
			ctx->root = false;
		} else if (nextra > 0) {
			obs(ctx, "!extra groups need a root suite");
			_exit(1);
		}
		fn(ctx);
		_exit(0);
	}
	reap(ctx, "caller process", pid);
}

static void as_caller(struct ctx *ctx, void (*fn)(struct ctx *))
{
	as_caller_g(ctx, NULL, 0, fn);
}

/* A directory the caller owns, in both runs. */
static void caller_dir(struct ctx *ctx, const char *name)
{
	must(ctx, mkdir(name, 0755) == 0, "mkdir %s", name);
	if (ctx->root && g_have_caller)
		must(ctx, chown(name, g_cuid, g_cgid) == 0, "chown %s", name);
}

/* ======================================================================== */
/* Cases: lookup, getattr, create, open, read/write */

static void c_getattr(struct ctx *ctx)
{
	put(ctx, "f", "hello", 0644);
	must(ctx, mkdir("d", 0755) == 0, "mkdir d");
	put(ctx, "d/inner", "in", 0600);
	must(ctx, symlink("f", "s") == 0, "symlink s");
	must(ctx, symlink("d", "sd") == 0, "symlink sd");
	must(ctx, symlink("nowhere", "dl") == 0, "symlink dl");
	must(ctx, mkfifo("p", 0640) == 0, "mkfifo p");
	static const char *const paths[] = {
		"f",	   "d",		"d/inner", "s",	       "sd",	"dl",  "p",	   ".",
		"d/..",	   "d/../f",	"sd/",	   "sd/inner", "sd/..", "f/",  "f/x",	   "f/.",
		"missing", "missing/x", "d/",	   "d/.",      "dl/",	"./f", "d//inner",
	};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		st(ctx, L("lstat %s", paths[i]), paths[i]);
		stf(ctx, L("stat %s", paths[i]), paths[i]);
	}
	same_ino(ctx, "ino d/.. vs .", "d/..", ".");
	same_ino(ctx, "ino sd/ vs d", "sd/", "d");
	same_ino(ctx, "ino ./f vs f", "./f", "f");
	struct stat a, b;
	if (stat("s", &a) == 0 && lstat("f", &b) == 0)
		obs(ctx, "ino stat(s) vs f: %s", a.st_ino == b.st_ino ? "same" : "different");
	/* the symlink's own size is the target length */
	for (size_t i = 0; i < 2; i++)
		host_attrs(ctx, i ? "d" : "f");
	host_attrs(ctx, "s");
	host_attrs(ctx, "p");
	host_attrs(ctx, "d/inner");

	struct statx sx;
	if (R("statx f", statx(AT_FDCWD, "f", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx)) == 0)
		obs(ctx, "statx f: basic=%s type=%s mode=%04o size=%llu nlink=%u",
		    (sx.stx_mask & STATX_BASIC_STATS) == STATX_BASIC_STATS ? "all" : "partial",
		    ftype(sx.stx_mode), sx.stx_mode & 07777, (unsigned long long)sx.stx_size,
		    sx.stx_nlink);
	if (R("statx s nofollow",
	      statx(AT_FDCWD, "s", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx)) == 0)
		obs(ctx, "statx s: type=%s size=%llu", ftype(sx.stx_mode),
		    (unsigned long long)sx.stx_size);
	R("statx missing", statx(AT_FDCWD, "missing", 0, STATX_BASIC_STATS, &sx));

	int pfd = RFD("open O_PATH|O_NOFOLLOW s", open("s", O_PATH | O_NOFOLLOW));
	if (pfd >= 0) {
		struct stat ps;
		if (R("fstatat(pfd, \"\", AT_EMPTY_PATH)", fstatat(pfd, "", &ps, AT_EMPTY_PATH)) ==
		    0)
			show_st(ctx, "  O_PATH symlink", &ps, false);
		close(pfd);
	}
	int dfd = RFD("open d O_DIRECTORY", open("d", O_RDONLY | O_DIRECTORY));
	if (dfd >= 0) {
		struct stat ds;
		if (R("fstatat(dfd, inner)", fstatat(dfd, "inner", &ds, AT_SYMLINK_NOFOLLOW)) == 0)
			show_st(ctx, "  d/inner via dirfd", &ds, true);
		R("fstatat(dfd, ..)", fstatat(dfd, "..", &ds, 0));
		R("fstatat(dfd, missing)", fstatat(dfd, "missing", &ds, 0));
		close(dfd);
	}
	static const int modes[] = {F_OK, R_OK, W_OK, X_OK, R_OK | W_OK};
	static const char *const mnames[] = {"F_OK", "R_OK", "W_OK", "X_OK", "R_OK|W_OK"};
	static const char *const apaths[] = {"f", "d", "s", "dl", "d/inner", "missing"};
	for (size_t i = 0; i < 6; i++)
		for (size_t j = 0; j < 5; j++)
			R(L("access %s %s", apaths[i], mnames[j]), access(apaths[i], modes[j]));
	R("faccessat dl AT_SYMLINK_NOFOLLOW", faccessat(AT_FDCWD, "dl", F_OK, AT_SYMLINK_NOFOLLOW));
}

static void c_create_modes(struct ctx *ctx)
{
	static const mode_t umasks[] = {022, 077, 0, 027};
	/* no set-uid/set-gid modes: the policy never sets those bits */
	static const mode_t fmodes[] = {0644, 0600, 0777, 0666, 0000, 0751, 01644, 01777};
	static const mode_t dmodes[] = {0777, 0755, 0700, 0000, 01777, 02775, 0311};
	for (size_t u = 0; u < sizeof(umasks) / sizeof(umasks[0]); u++) {
		umask(umasks[u]);
		for (size_t i = 0; i < sizeof(fmodes) / sizeof(fmodes[0]); i++) {
			const char *n = L("f%03o_%04o", umasks[u], fmodes[i]);
			int fd = open(n, O_CREAT | O_EXCL | O_WRONLY, fmodes[i]);
			if (fd < 0) {
				obs(ctx, "create %s: %s", n, ename(errno));
				continue;
			}
			struct stat a;
			mode_t fm = fstat(fd, &a) == 0 ? a.st_mode & 07777 : 0xffff;
			ssize_t w = write(fd, "x", 1);
			close(fd);
			obs(ctx, "create %s: fstat %04o write %zd path %04o host %04o", n, fm, w,
			    mode_of(n) & 07777, mode_of(hp(ctx, n)) & 07777);
		}
		for (size_t i = 0; i < sizeof(dmodes) / sizeof(dmodes[0]); i++) {
			const char *n = L("d%03o_%04o", umasks[u], dmodes[i]);
			if (mkdir(n, dmodes[i]) != 0) {
				obs(ctx, "mkdir %s: %s", n, ename(errno));
				continue;
			}
			obs(ctx, "mkdir %s: path %04o host %04o", n, mode_of(n) & 07777,
			    mode_of(hp(ctx, n)) & 07777);
		}
		const char *n = L("p%03o", umasks[u]);
		if (mkfifo(n, 0666) == 0)
			obs(ctx, "mkfifo %s: %04o", n, mode_of(n) & 07777);
		n = L("m%03o", umasks[u]);
		if (mknod(n, S_IFREG | 0666, 0) == 0)
			obs(ctx, "mknod reg %s: %04o", n, mode_of(n) & 07777);
		n = L("l%03o", umasks[u]);
		if (symlink("target", n) == 0)
			obs(ctx, "symlink %s: %04o", n, mode_of(n) & 07777);
		n = L("c%03o", umasks[u]);
		int fd = creat(n, 0666);
		if (fd >= 0) {
			close(fd);
			obs(ctx, "creat %s: %04o", n, mode_of(n) & 07777);
		}
	}
	umask(022);
	/* O_CREAT on an existing file keeps its mode */
	put(ctx, "existing", "e", 0600);
	int fd = RFD("open O_CREAT existing 0777", open("existing", O_CREAT | O_WRONLY, 0777));
	xclose(fd);
	st(ctx, "existing", "existing");
	/* open(O_CREAT) with a mode without write permission still gives a
	 * writable descriptor */
	fd = RFD("O_CREAT|O_RDWR 0444", open("ro", O_CREAT | O_RDWR | O_EXCL, 0444));
	if (fd >= 0) {
		R("write to it", write(fd, "abc", 3));
		close(fd);
	}
	cat(ctx, "ro", "ro");
	fd = RFD("reopen O_RDWR 0444", open("ro", O_RDWR));
	xclose(fd);
}

static void c_open_flags(struct ctx *ctx)
{
	put(ctx, "f", "0123456789", 0644);
	must(ctx, mkdir("d", 0755) == 0, "mkdir d");
	must(ctx, symlink("f", "s") == 0, "symlink s");
	must(ctx, symlink("d", "sd") == 0, "symlink sd");
	must(ctx, symlink("target", "dangling") == 0, "symlink dangling");
	int fd;

	fd = RFD("O_CREAT|O_EXCL existing", open("f", O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	fd = RFD("O_CREAT|O_EXCL symlink", open("s", O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	fd = RFD("O_CREAT|O_EXCL dangling", open("dangling", O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	fd = RFD("O_EXCL without O_CREAT", open("f", O_EXCL | O_RDONLY));
	xclose(fd);
	fd = RFD("O_CREAT via dangling symlink", open("dangling", O_CREAT | O_WRONLY, 0640));
	xclose(fd);
	st(ctx, "  target", "target");
	st(ctx, "  dangling", "dangling");
	fd = RFD("O_CREAT|O_EXCL new", open("new", O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	fd = RFD("O_CREAT|O_EXCL new/", open("new2/", O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	fd = RFD("O_CREAT new/ (trailing slash)", open("new3/", O_CREAT | O_WRONLY, 0644));
	xclose(fd);
	st(ctx, "  new3", "new3");

	/* O_TRUNC */
	put(ctx, "t", "some content", 0644);
	fd = RFD("O_TRUNC|O_WRONLY", open("t", O_TRUNC | O_WRONLY));
	if (fd >= 0) {
		fst(ctx, "  fstat", fd);
		R("  write", write(fd, "new", 3));
		close(fd);
	}
	cat(ctx, "  t", "t");
	host_same(ctx, "t");
	fd = RFD("O_TRUNC|O_RDONLY", open("t", O_TRUNC | O_RDONLY));
	xclose(fd);
	st(ctx, "  t", "t");
	fd = RFD("O_TRUNC via symlink", open("s", O_TRUNC | O_RDWR));
	xclose(fd);
	st(ctx, "  f", "f");
	put(ctx, "f", "0123456789", 0644);

	/* O_APPEND */
	fd = RFD("O_APPEND|O_RDWR", open("f", O_APPEND | O_RDWR));
	if (fd >= 0) {
		R("  lseek 0", lseek(fd, 0, SEEK_SET));
		R("  write abc", write(fd, "abc", 3));
		R("  position", lseek(fd, 0, SEEK_CUR));
		R("  lseek 2", lseek(fd, 2, SEEK_SET));
		char b[4] = {0};
		R("  read 3", read(fd, b, 3));
		obs(ctx, "  read: %s", show(b, 3));
		R("  pwrite @0 (appends on Linux)", pwrite(fd, "P", 1, 0));
		R("  F_GETFL&O_APPEND", fcntl(fd, F_GETFL) & O_APPEND ? 1 : 0);
		R("  F_SETFL clear O_APPEND", fcntl(fd, F_SETFL, 0));
		R("  lseek 0", lseek(fd, 0, SEEK_SET));
		R("  write Z at 0", write(fd, "Z", 1));
		close(fd);
	}
	cat(ctx, "  f", "f");
	host_same(ctx, "f");

	/* directories and symlinks */
	fd = RFD("O_DIRECTORY on file", open("f", O_RDONLY | O_DIRECTORY));
	xclose(fd);
	fd = RFD("O_DIRECTORY on dir", open("d", O_RDONLY | O_DIRECTORY));
	xclose(fd);
	fd = RFD("O_DIRECTORY on symlink to dir", open("sd", O_RDONLY | O_DIRECTORY));
	xclose(fd);
	fd = RFD("O_DIRECTORY|O_NOFOLLOW on symlink to dir",
		 open("sd", O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
	xclose(fd);
	fd = RFD("O_NOFOLLOW on symlink", open("s", O_RDONLY | O_NOFOLLOW));
	xclose(fd);
	fd = RFD("O_NOFOLLOW on file", open("f", O_RDONLY | O_NOFOLLOW));
	xclose(fd);
	fd = RFD("O_NOFOLLOW through symlinked dir", open("sd/../f", O_RDONLY | O_NOFOLLOW));
	xclose(fd);
	fd = RFD("O_PATH|O_NOFOLLOW on symlink", open("s", O_PATH | O_NOFOLLOW));
	if (fd >= 0) {
		fst(ctx, "  fstat", fd);
		char b[8];
		R("  read on O_PATH fd", read(fd, b, sizeof(b)));
		R("  fchmod on O_PATH fd", fchmod(fd, 0644));
		close(fd);
	}
	fd = RFD("O_WRONLY on dir", open("d", O_WRONLY));
	xclose(fd);
	fd = RFD("O_RDWR on dir", open("d", O_RDWR));
	xclose(fd);
	fd = RFD("O_CREAT on dir", open("d", O_CREAT | O_RDONLY, 0644));
	xclose(fd);
	fd = RFD("O_CREAT|O_DIRECTORY new", open("cd", O_CREAT | O_DIRECTORY | O_RDONLY, 0755));
	xclose(fd);
	st(ctx, "  cd", "cd");
	fd = RFD("open missing", open("missing", O_RDONLY));
	xclose(fd);
	fd = RFD("O_CREAT in missing dir", open("missing/x", O_CREAT | O_WRONLY, 0644));
	xclose(fd);
	fd = RFD("O_CREAT under a file", open("f/x", O_CREAT | O_WRONLY, 0644));
	xclose(fd);
	fd = RFD("open f/", open("f/", O_RDONLY));
	xclose(fd);
	fd = RFD("O_NOATIME as owner", open("f", O_RDONLY | O_NOATIME));
	xclose(fd);
	fd = RFD("O_SYNC|O_DSYNC write", open("f", O_WRONLY | O_SYNC | O_DSYNC));
	if (fd >= 0) {
		R("  write", write(fd, "S", 1));
		R("  F_GETFL sync bits", fcntl(fd, F_GETFL) & (O_SYNC | O_DSYNC));
		close(fd);
	}
	fd = RFD("O_RDONLY|O_NONBLOCK flags", open("f", O_RDONLY | O_NONBLOCK));
	if (fd >= 0) {
		R("  F_GETFL",
		  fcntl(fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK | O_NOATIME));
		close(fd);
	}
	fd = RFD("O_WRONLY read", open("f", O_WRONLY));
	if (fd >= 0) {
		char b[4];
		R("  read on O_WRONLY fd", read(fd, b, 4));
		close(fd);
	}
	fd = RFD("O_RDONLY write", open("f", O_RDONLY));
	if (fd >= 0) {
		R("  write on O_RDONLY fd", write(fd, "x", 1));
		close(fd);
	}
	fd = RFD("O_RDONLY dir read()", open("d", O_RDONLY));
	if (fd >= 0) {
		char b[4];
		R("  read on dir fd", read(fd, b, 4));
		close(fd);
	}
	cat(ctx, "f", "f");
}

static void c_read_write(struct ctx *ctx)
{
	int fd = RFD("create", open("rw", O_CREAT | O_EXCL | O_RDWR, 0644));
	if (fd < 0)
		return;
	char b[256];
	R("read empty", read(fd, b, sizeof(b)));
	R("write 0 bytes", write(fd, "", 0));
	R("write hello", write(fd, "hello world", 11));
	R("position", lseek(fd, 0, SEEK_CUR));
	R("read at EOF", read(fd, b, sizeof(b)));
	R("pread 5@6", pread(fd, b, 5, 6));
	obs(ctx, "  data: %s", show(b, 5));
	R("pread past EOF", pread(fd, b, 5, 100));
	R("pread across EOF", pread(fd, b, 100, 8));
	R("pwrite @20 (leaves a gap)", pwrite(fd, "tail", 4, 20));
	fst(ctx, "fstat", fd);
	fdcat(ctx, "content", fd);
	R("pwrite overwrite @2", pwrite(fd, "LL", 2, 2));
	R("position unchanged by pread/pwrite", lseek(fd, 0, SEEK_CUR));
	R("pwrite negative offset", pwrite(fd, "x", 1, -1));
	R("pread negative offset", pread(fd, b, 1, -1));
	struct iovec iov[3] = {{"ab", 2}, {"", 0}, {"cdef", 4}};
	R("lseek 30", lseek(fd, 30, SEEK_SET));
	R("writev", writev(fd, iov, 3));
	char r1[3] = {0}, r2[5] = {0};
	struct iovec riov[2] = {{r1, 3}, {r2, 5}};
	R("preadv @29", preadv(fd, riov, 2, 29));
	obs(ctx, "  preadv: %s %s", show(r1, 3), show(r2, 5));
	R("pwritev @0", pwritev(fd, iov, 3, 0));
	fdcat(ctx, "content", fd);
	/* a second descriptor and a second process see the data at once */
	int fd2 = RFD("open second fd", open("rw", O_RDONLY));
	if (fd2 >= 0) {
		R("write via fd1", pwrite(fd, "NEW", 3, 0));
		fdcat(ctx, "  via fd2", fd2);
		close(fd2);
	}
	pid_t pid = fork();
	if (pid == 0) {
		cat(ctx, "  via child process", "rw");
		_exit(0);
	}
	reap(ctx, "reader", pid);
	struct stat s;
	if (stat("rw", &s) == 0)
		obs(ctx, "stat size while open: %jd", (intmax_t)s.st_size);
	R("close", close(fd));
	cat(ctx, "final", "rw");
	host_same(ctx, "rw");
	host_attrs(ctx, "rw");
	/* writes crossing page boundaries */
	fd = RFD("open pages", open("pages", O_CREAT | O_RDWR, 0644));
	if (fd >= 0) {
		static const off_t offs[] = {4095, 8191, 12287, 65535, 4096 * 3 - 1};
		for (size_t i = 0; i < 5; i++)
			R(L("pwrite 3@%jd", (intmax_t)offs[i]), pwrite(fd, "XYZ", 3, offs[i]));
		close(fd);
		cat(ctx, "pages", "pages");
		host_same(ctx, "pages");
	}
}

/* Big writes and reads with odd chunk sizes through different descriptors. */
static void c_large_io(struct ctx *ctx)
{
	const size_t n = 8 * MIB + 12345;
	unsigned char *buf = malloc(n), *back = malloc(n);
	if (!buf || !back)
		abort();
	uint64_t x = 88172645463325252ULL;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
	int fd = RFD("create", open("big", O_CREAT | O_EXCL | O_WRONLY, 0644));
	if (fd < 0)
		goto out;
	size_t done = 0;
	bool ok = true;
	while (done < n) {
		size_t c = n - done < 131071 ? n - done : 131071;
		ssize_t w = write(fd, buf + done, c);
		if (w <= 0) {
			obs(ctx, "write at %zu: %s", done, w < 0 ? ename(errno) : "0");
			ok = false;
			break;
		}
		done += (size_t)w;
	}
	obs(ctx, "wrote %zu in 131071-byte chunks: %s", done, ok ? "ok" : "failed");
	int rfd = RFD("open for reading while the writer is open", open("big", O_RDONLY));
	if (rfd >= 0) {
		size_t got = 0;
		for (;;) {
			ssize_t r = read(rfd, back + got, n - got < 65537 ? n - got : 65537);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		obs(ctx, "read %zu in 65537-byte chunks: %s", got,
		    got == n && memcmp(buf, back, n) == 0 ? "same" : "differ");
		close(rfd);
	}
	R("close", close(fd));
	st(ctx, "big", "big");
	obs(ctx, "host content hash: %s", same_content("big", hp(ctx, "big")));
	char *d;
	size_t dn;
	if (slurp(hp(ctx, "big"), &d, &dn) == 0) {
		obs(ctx, "host content equals what was written: %s",
		    dn == n && memcmp(d, buf, n) == 0 ? "yes" : "no");
		free(d);
	}
out:
	free(buf);
	free(back);
}

static void c_o_direct(struct ctx *ctx)
{
	int fd = RFD("open O_DIRECT|O_CREAT", open("od", O_CREAT | O_RDWR | O_DIRECT, 0644));
	if (fd < 0)
		return;
	void *buf, *back;
	if (posix_memalign(&buf, 4096, 8192) || posix_memalign(&back, 4096, 8192))
		abort();
	memset(buf, 'D', 8192);
	memcpy(buf, "direct", 6);
	R("F_GETFL&O_DIRECT", (fcntl(fd, F_GETFL) & O_DIRECT) ? 1 : 0);
	R("pwrite 4096@0", pwrite(fd, buf, 4096, 0));
	R("pwrite 8192@8192", pwrite(fd, buf, 8192, 8192));
	R("pread 4096@0", pread(fd, back, 4096, 0));
	obs(ctx, "  same: %s", memcmp(buf, back, 4096) == 0 ? "yes" : "no");
	R("pread 8192@12288 (short at EOF)", pread(fd, back, 8192, 12288));
	fst(ctx, "fstat", fd);
	R("close", close(fd));
	cat(ctx, "content", "od");
	host_same(ctx, "od");
	/* a buffered descriptor and a direct one on the same file */
	int b = RFD("buffered fd", open("od", O_RDWR));
	int dfd = RFD("direct fd", open("od", O_RDWR | O_DIRECT));
	if (b >= 0 && dfd >= 0) {
		R("buffered pwrite", pwrite(b, "buffered", 8, 0));
		R("direct pread", pread(dfd, back, 4096, 0));
		obs(ctx, "  direct read sees buffered write: %s",
		    memcmp(back, "buffered", 8) == 0 ? "yes" : "no");
		memcpy(buf, "DIRECT!!", 8);
		R("direct pwrite", pwrite(dfd, buf, 4096, 0));
		char s[8];
		R("buffered pread", pread(b, s, 8, 0));
		obs(ctx, "  buffered read sees direct write: %s",
		    memcmp(s, "DIRECT!!", 8) == 0 ? "yes" : "no");
	}
	xclose(b);
	xclose(dfd);
	fd = RFD("F_SETFL O_DIRECT on a buffered fd", open("od", O_RDWR));
	if (fd >= 0) {
		R("  fcntl", fcntl(fd, F_SETFL, O_DIRECT));
		close(fd);
	}
	host_same(ctx, "od");
	free(buf);
	free(back);
}

/* ======================================================================== */
/* Cases: link counts, unlink of open files, O_APPEND, truncate */

static void nl(struct ctx *ctx, const char *path)
{
	struct stat s;
	if (lstat(path, &s) != 0)
		obs(ctx, "  nlink %s: %s", path, ename(errno));
	else
		obs(ctx, "  nlink %s: %ju", path, (uintmax_t)s.st_nlink);
}

static void c_link_counts(struct ctx *ctx)
{
	put(ctx, "f", "file", 0644);
	nl(ctx, "f");
	R("link f f2", link("f", "f2"));
	nl(ctx, "f");
	nl(ctx, "f2");
	same_ino(ctx, "f vs f2", "f", "f2");
	R("link f f3", link("f", "f3"));
	nl(ctx, "f2");
	R("unlink f2", unlink("f2"));
	nl(ctx, "f");
	nl(ctx, "f3");
	put(ctx, "g", "gee", 0644);
	R("link g g2", link("g", "g2"));
	R("rename f3 over g", rename("f3", "g"));
	nl(ctx, "g2");
	nl(ctx, "g");
	nl(ctx, "f");
	same_ino(ctx, "f vs g", "f", "g");
	cat(ctx, "g2", "g2");
	R("rename f over g (same inode)", rename("f", "g"));
	nl(ctx, "f");
	nl(ctx, "g");
	R("unlink f", unlink("f"));
	nl(ctx, "g");
	host_attrs(ctx, "g");
	host_attrs(ctx, "g2");

	/* directories */
	nl(ctx, ".");
	R("mkdir a", mkdir("a", 0755));
	nl(ctx, ".");
	nl(ctx, "a");
	R("mkdir a/b", mkdir("a/b", 0755));
	R("mkdir a/c", mkdir("a/c", 0755));
	nl(ctx, "a");
	R("rmdir a/c", rmdir("a/c"));
	nl(ctx, "a");
	R("mkdir e", mkdir("e", 0755));
	R("rename a/b e/b", rename("a/b", "e/b"));
	nl(ctx, "a");
	nl(ctx, "e");
	nl(ctx, "e/b");
	R("mkdir a/empty", mkdir("a/empty", 0755));
	nl(ctx, "a");
	R("rename e/b over a/empty", rename("e/b", "a/empty"));
	nl(ctx, "a");
	nl(ctx, "e");
	R("rename a/empty a/moved (same parent)", rename("a/empty", "a/moved"));
	nl(ctx, "a");
	put(ctx, "a/file", "x", 0644);
	R("rename a/file e/file", rename("a/file", "e/file"));
	nl(ctx, "a");
	nl(ctx, "e");
	R("rename e a/sub (dir into other dir)", rename("e", "a/sub"));
	nl(ctx, ".");
	nl(ctx, "a");
	R("link to a dir", link("a", "a2"));
	R("rmdir a/moved", rmdir("a/moved"));
	nl(ctx, "a");
	nl(ctx, ".");
	host_attrs(ctx, "a");
	host_attrs(ctx, ".");
	R("mkdir x/..", mkdir("a/sub/..", 0755));
	nl(ctx, "a");
}

static void c_unlink_open(struct ctx *ctx)
{
	int fd = RFD("create", open("f", O_CREAT | O_EXCL | O_RDWR, 0644));
	if (fd < 0)
		return;
	R("write", write(fd, "before", 6));
	int fd2 = RFD("second fd", open("f", O_RDONLY));
	R("unlink", unlink("f"));
	fst(ctx, "fstat after unlink", fd);
	fdcat(ctx, "read via fd", fd);
	R("write via fd", write(fd, "+after", 6));
	fdcat(ctx, "read via fd2", fd2);
	R("pwrite via fd", pwrite(fd, "B", 1, 0));
	fdcat(ctx, "read via fd2", fd2);
	R("ftruncate 3", ftruncate(fd, 3));
	fst(ctx, "fstat", fd);
	R("ftruncate 5000", ftruncate(fd, 5000));
	fst(ctx, "fstat", fd);
	R("ftruncate 3", ftruncate(fd, 3));
	R("fchmod 0600", fchmod(fd, 0600));
	R("fchown own ids", fchown(fd, geteuid(), getegid()));
	fst(ctx, "fstat", fd);
	R("fsync", fsync(fd));
	R("fsetxattr", fsetxattr(fd, "user.k", "v", 1, 0));
	char v[8];
	R("fgetxattr", fgetxattr(fd, "user.k", v, sizeof(v)));
	struct timespec ts[2] = {{1000, 0}, {2000, 500}};
	R("futimens", futimens(fd, ts));
	struct stat s;
	if (fstat(fd, &s) == 0)
		obs(ctx, "  mtime: %s", ts_str(s.st_mtim));
	st(ctx, "stat f", "f");
	obs(ctx, "host f: %s", access(hp(ctx, "f"), F_OK) == 0 ? "exists" : ename(errno));
	ls(ctx, "ls", ".");
	ls(ctx, "host ls", ctx->host);
	R("close fd", close(fd));
	fdcat(ctx, "fd2 after close of fd", fd2);
	fst(ctx, "fstat fd2", fd2);
	R("close fd2", close(fd2));
	ls(ctx, "host ls after close", ctx->host);

	/* a new file under the old name is a different file */
	fd = RFD("create again", open("f", O_CREAT | O_EXCL | O_RDWR, 0644));
	fd2 = RFD("open it", open("f", O_RDONLY));
	R("unlink", unlink("f"));
	int fd3 = RFD("create a third time", open("f", O_CREAT | O_EXCL | O_RDWR, 0600));
	R("write new", write(fd3, "new", 3));
	R("write old", write(fd, "old", 3));
	fdcat(ctx, "old via fd2", fd2);
	cat(ctx, "new by name", "f");
	if (fd >= 0 && fd3 >= 0)
		obs(ctx, "old vs new ino: %s", fino_of(fd) == fino_of(fd3) ? "same" : "different");
	xclose(fd);
	xclose(fd2);
	xclose(fd3);

	/* rename over an open file */
	put(ctx, "g", "old content", 0644);
	put(ctx, "h", "replacement", 0644);
	fd = RFD("open g", open("g", O_RDONLY));
	R("rename h over g", rename("h", "g"));
	fdcat(ctx, "old fd", fd);
	fst(ctx, "old fd fstat", fd);
	cat(ctx, "g by name", "g");
	xclose(fd);
	ls(ctx, "ls", ".");
	ls(ctx, "host ls", ctx->host);

	/* an open directory that is removed */
	must(ctx, mkdir("dd", 0755) == 0, "mkdir dd");
	int dfd = RFD("open dd", open("dd", O_RDONLY | O_DIRECTORY));
	R("rmdir dd", rmdir("dd"));
	if (dfd >= 0) {
		fst(ctx, "fstat removed dir", dfd);
		xclose(RFD("openat O_CREAT in removed dir",
			   openat(dfd, "x", O_CREAT | O_WRONLY, 0644)));
		R("mkdirat in removed dir", mkdirat(dfd, "x", 0755));
		char buf[4096];
		R("getdents64 on removed dir", syscall(SYS_getdents64, dfd, buf, sizeof(buf)));
		close(dfd);
	}
	ls(ctx, "host ls at end", ctx->host);
}

static void c_append_two_fds(struct ctx *ctx)
{
	int a = RFD("fd A O_APPEND", open("log", O_CREAT | O_WRONLY | O_APPEND, 0644));
	int b = RFD("fd B O_APPEND", open("log", O_WRONLY | O_APPEND));
	if (a < 0 || b < 0) {
		xclose(a);
		xclose(b);
		return;
	}
	bool ok = true;
	for (int i = 0; i < 50; i++) {
		char la[16], lb[24];
		int na = snprintf(la, sizeof(la), "A%02d\n", i);
		int nb = snprintf(lb, sizeof(lb), "B%02d-longer\n", i);
		ok = ok && write(a, la, (size_t)na) == na;
		ok = ok && write(b, lb, (size_t)nb) == nb;
	}
	obs(ctx, "100 interleaved appends: %s", ok ? "ok" : ename(errno));
	R("position A", lseek(a, 0, SEEK_CUR));
	R("position B", lseek(b, 0, SEEK_CUR));
	fst(ctx, "fstat A", a);
	/* a plain descriptor writes where it is, the appenders still append */
	int c = RFD("fd C plain", open("log", O_WRONLY));
	R("C write at 0", write(c, "C!", 2));
	R("A append", write(a, "A-end\n", 6));
	R("C write at its position", write(c, "C?", 2));
	R("B append", write(b, "B-end\n", 6));
	xclose(c);
	close(a);
	close(b);
	cat(ctx, "log", "log");
	host_same(ctx, "log");
}

#define APP_N	2000
#define APP_LEN 48

struct app_arg {
	const char *path;
	int who;
	int err;
};

static int app_writer(const char *path, int who)
{
	int fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0)
		return errno;
	for (int i = 0; i < APP_N; i++) {
		char rec[APP_LEN + 1];
		int n = snprintf(rec, sizeof(rec), "w%d r%06d ", who, i);
		memset(rec + n, 'a' + who, APP_LEN - 1 - (size_t)n);
		rec[APP_LEN - 1] = '\n';
		if (write(fd, rec, APP_LEN) != APP_LEN) {
			int e = errno ? errno : EIO;
			close(fd);
			return e;
		}
	}
	close(fd);
	return 0;
}

static void *app_thread(void *p)
{
	struct app_arg *a = p;
	a->err = app_writer(a->path, a->who);
	return NULL;
}

/* Checks a file of APP_LEN records from `writers` writers numbered from
 * `first`: none torn, none lost, none doubled. */
static void app_check(struct ctx *ctx, const char *label, const char *path, int first, int writers)
{
	char *d;
	size_t n;
	int e = slurp(path, &d, &n);
	if (e) {
		obs(ctx, "%s: %s", label, ename(e));
		return;
	}
	unsigned char *seen = calloc((size_t)writers * APP_N, 1);
	size_t torn = 0, dup = 0, missing = 0;
	for (size_t off = 0; off + APP_LEN <= n; off += APP_LEN) {
		int w, i, c;
		if (sscanf(d + off, "w%d r%06d %n", &w, &i, &c) != 2 || w < first ||
		    w >= first + writers || i < 0 || i >= APP_N || d[off + APP_LEN - 1] != '\n' ||
		    d[off + APP_LEN - 2] != 'a' + w) {
			torn++;
			continue;
		}
		unsigned char *sl = &seen[(size_t)(w - first) * APP_N + (size_t)i];
		if (*sl)
			dup++;
		*sl = 1;
	}
	for (size_t i = 0; i < (size_t)writers * APP_N; i++)
		if (!seen[i])
			missing++;
	obs(ctx, "%s: size=%zu (expected %d) torn=%zu duplicated=%zu missing=%zu", label, n,
	    writers * APP_N * APP_LEN, torn, dup, missing);
	free(seen);
	free(d);
}

static void c_append_concurrent(struct ctx *ctx)
{
	put(ctx, "procs", "", 0644);
	pid_t pids[2];
	for (int w = 0; w < 2; w++) {
		pids[w] = fork();
		if (pids[w] == 0)
			_exit(app_writer("procs", w) ? 1 : 0);
	}
	for (int w = 0; w < 2; w++)
		reap(ctx, "appending process", pids[w]);
	app_check(ctx, "two processes", "procs", 0, 2);
	app_check(ctx, "two processes (host)", hp(ctx, "procs"), 0, 2);

	put(ctx, "threads", "", 0644);
	pthread_t t[3];
	struct app_arg args[3];
	for (int w = 0; w < 3; w++) {
		args[w] = (struct app_arg){"threads", w, 0};
		if (pthread_create(&t[w], NULL, app_thread, &args[w]) != 0)
			abort();
	}
	for (int w = 0; w < 3; w++) {
		pthread_join(t[w], NULL);
		if (args[w].err)
			obs(ctx, "thread %d: %s", w, ename(args[w].err));
	}
	app_check(ctx, "three threads", "threads", 0, 3);
	host_same(ctx, "threads");
}

static void c_truncate(struct ctx *ctx)
{
	put(ctx, "f", "0123456789abcdef", 0644);
	R("truncate 10000", truncate("f", 10000));
	st(ctx, "f", "f");
	cat(ctx, "f", "f");
	R("truncate 5", truncate("f", 5));
	cat(ctx, "f", "f");
	R("truncate 5 (same)", truncate("f", 5));
	R("truncate 0", truncate("f", 0));
	st(ctx, "f", "f");
	R("truncate -1", truncate("f", -1));
	R("truncate dir", truncate(".", 0));
	R("truncate missing", truncate("missing", 0));
	must(ctx, symlink("f", "s") == 0, "symlink s");
	R("truncate via symlink", truncate("s", 3));
	st(ctx, "f", "f");
	st(ctx, "s", "s");
	int fd = RFD("open rw", open("f", O_RDWR));
	if (fd >= 0) {
		R("write", pwrite(fd, "abcdefgh", 8, 0));
		R("ftruncate 4", ftruncate(fd, 4));
		fdcat(ctx, "  content", fd);
		R("ftruncate 4097", ftruncate(fd, 4097));
		fdcat(ctx, "  content", fd);
		R("position unchanged", lseek(fd, 0, SEEK_CUR));
		R("write Z at the position (0)", write(fd, "Z", 1));
		R("ftruncate 2", ftruncate(fd, 2));
		R("write Y at the position (1)", write(fd, "Y", 1));
		fdcat(ctx, "  content", fd);
		R("lseek 100", lseek(fd, 100, SEEK_SET));
		R("ftruncate 1", ftruncate(fd, 1));
		R("write at 100 after shrink", write(fd, "W", 1));
		fst(ctx, "  fstat", fd);
		close(fd);
	}
	fd = RFD("open rdonly", open("f", O_RDONLY));
	if (fd >= 0) {
		R("ftruncate on O_RDONLY fd", ftruncate(fd, 0));
		close(fd);
	}
	fd = RFD("O_APPEND fd", open("f", O_WRONLY | O_APPEND));
	if (fd >= 0) {
		R("ftruncate on O_APPEND fd", ftruncate(fd, 50));
		close(fd);
	}
	fd = RFD("open O_TRUNC", open("f", O_WRONLY | O_TRUNC));
	if (fd >= 0) {
		fst(ctx, "  fstat", fd);
		close(fd);
	}
	cat(ctx, "f", "f");
	host_same(ctx, "f");
	/* a reader that had the data cached sees the truncation */
	put(ctx, "g", "cached data that will go away", 0644);
	int r = RFD("reader", open("g", O_RDONLY));
	char b[64];
	R("read it", pread(r, b, sizeof(b), 0));
	R("truncate 6 by path", truncate("g", 6));
	R("reader reads again", pread(r, b, sizeof(b), 0));
	obs(ctx, "  %s", show(b, 6));
	R("truncate 40 by path", truncate("g", 40));
	fdcat(ctx, "reader sees", r);
	xclose(r);
	host_same(ctx, "g");
	/* a mapped page beyond the new end */
	put(ctx, "m", "", 0644);
	fd = RFD("open m", open("m", O_RDWR));
	if (fd >= 0 && ftruncate(fd, 8192) == 0) {
		char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) {
			memset(p, 'm', 8192);
			R("ftruncate 100 with a mapping", ftruncate(fd, 100));
			R("ftruncate 8192", ftruncate(fd, 8192));
			obs(ctx, "  mapping byte 99: %c, byte 100: %d, byte 5000: %d", p[99],
			    p[100], p[5000]);
			munmap(p, 8192);
		}
	}
	xclose(fd);
	cat(ctx, "m", "m");
	host_same(ctx, "m");
}

/* ======================================================================== */
/* Cases: sparse files, fallocate, lseek, mmap */

static void blocks_rel(struct ctx *ctx, const char *label, int fd, long long lo, long long hi)
{
	struct stat s;
	if (fstat(fd, &s) != 0) {
		obs(ctx, "%s: %s", label, ename(errno));
		return;
	}
	obs(ctx, "%s: size=%jd blocks in [%lld,%lld]: %s", label, (intmax_t)s.st_size, lo, hi,
	    s.st_blocks >= lo && s.st_blocks <= hi ? "yes" : "no");
}

static bool all_zero(const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void c_sparse_5g(struct ctx *ctx)
{
	int fd = RFD("create", open("sparse", O_CREAT | O_EXCL | O_RDWR, 0644));
	if (fd < 0)
		return;
	R("pwrite hello @5GiB", pwrite(fd, "hello", 5, 5 * GIB));
	fst(ctx, "fstat", fd);
	/* before any fsync: the written page must already count as data */
	R("SEEK_DATA 0 before fsync", lseek(fd, 0, SEEK_DATA));
	R("SEEK_HOLE 0 before fsync", lseek(fd, 0, SEEK_HOLE));
	R("fsync", fsync(fd));
	blocks_rel(ctx, "after fsync", fd, 1, 64);
	R("SEEK_DATA 0", lseek(fd, 0, SEEK_DATA));
	R("SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
	R("SEEK_DATA 4GiB", lseek(fd, 4 * GIB, SEEK_DATA));
	R("SEEK_HOLE 5GiB", lseek(fd, 5 * GIB, SEEK_HOLE));
	R("SEEK_DATA 5GiB+2", lseek(fd, 5 * GIB + 2, SEEK_DATA));
	R("SEEK_DATA 5GiB+5 (EOF)", lseek(fd, 5 * GIB + 5, SEEK_DATA));
	R("SEEK_HOLE 6GiB (past EOF)", lseek(fd, 6 * GIB, SEEK_HOLE));
	R("SEEK_END", lseek(fd, 0, SEEK_END));
	char b[4096];
	R("pread 5@5GiB", pread(fd, b, 5, 5 * GIB));
	obs(ctx, "  %s", show(b, 5));
	R("pread 4096@4GiB", pread(fd, b, 4096, 4 * GIB));
	obs(ctx, "  zeros: %s", all_zero(b, 4096) ? "yes" : "no");
	R("pread 10@5GiB-5", pread(fd, b, 10, 5 * GIB - 5));
	obs(ctx, "  %s", show(b, 10));
	R("pwrite x @4GiB-1 (crosses 32 bits)", pwrite(fd, "xy", 2, 4 * GIB - 1));
	R("pread 2@4GiB-1", pread(fd, b, 2, 4 * GIB - 1));
	obs(ctx, "  %s", show(b, 2));
	R("fsync", fsync(fd));
	R("SEEK_DATA 0", lseek(fd, 0, SEEK_DATA));
	R("SEEK_HOLE 4GiB-4096", lseek(fd, 4 * GIB - 4096, SEEK_HOLE));
	blocks_rel(ctx, "two data blocks", fd, 1, 128);
	R("ftruncate 6GiB", ftruncate(fd, 6 * GIB));
	R("SEEK_HOLE 5GiB", lseek(fd, 5 * GIB, SEEK_HOLE));
	R("SEEK_DATA 5GiB+4096", lseek(fd, 5 * GIB + 4096, SEEK_DATA));
	R("SEEK_END", lseek(fd, 0, SEEK_END));
	R("ftruncate 3GiB", ftruncate(fd, 3 * GIB));
	R("SEEK_DATA 0 (no data left)", lseek(fd, 0, SEEK_DATA));
	R("SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
	fst(ctx, "fstat", fd);
	st(ctx, "host", hp(ctx, "sparse"));
	/* a write at an offset that does not fit in 32 bits through write() */
	R("lseek 4GiB+7", lseek(fd, 4 * GIB + 7, SEEK_SET));
	R("write", write(fd, "far", 3));
	R("position", lseek(fd, 0, SEEK_CUR));
	R("pread 3@4GiB+7", pread(fd, b, 3, 4 * GIB + 7));
	obs(ctx, "  %s", show(b, 3));
	R("close", close(fd));
	st(ctx, "sparse", "sparse");
	st(ctx, "host", hp(ctx, "sparse"));
	R("truncate to 8 EiB-1 (too big)", truncate("sparse", INT64_MAX));
	R("pwrite at 16TiB (ext4 limit)", ({
		  int f2 = open("sparse", O_WRONLY);
		  long r2 = f2 < 0 ? -1 : pwrite(f2, "z", 1, 16 * 1024 * GIB);
		  int e2 = errno;
		  xclose(f2);
		  errno = e2;
		  r2;
	  }));
}

static void c_fallocate(struct ctx *ctx)
{
	int fd = RFD("create", open("fa", O_CREAT | O_EXCL | O_RDWR, 0644));
	if (fd < 0)
		return;
	R("fallocate default 0+1MiB", fallocate(fd, 0, 0, MIB));
	blocks_rel(ctx, "  after", fd, 2048, 2048 + 64);
	fdcat(ctx, "  content", fd);
	R("KEEP_SIZE 1MiB+1MiB", fallocate(fd, FALLOC_FL_KEEP_SIZE, MIB, MIB));
	blocks_rel(ctx, "  after", fd, 4096, 4096 + 64);
	R("default 512KiB+1MiB (overlap, grows)", fallocate(fd, 0, 512 * KIB, MIB));
	blocks_rel(ctx, "  after", fd, 4096, 4096 + 64);
	char *buf = malloc(256 * KIB);
	if (!buf)
		abort();
	memset(buf, 'x', 256 * KIB);
	R("pwrite 256KiB of x", pwrite(fd, buf, 256 * KIB, 0));
	R("fsync", fsync(fd));
	R("PUNCH_HOLE|KEEP_SIZE 64KiB+64KiB",
	  fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 64 * KIB, 64 * KIB));
	blocks_rel(ctx, "  after", fd, 4096 - 128 - 64, 4096 - 128 + 64);
	fdcat(ctx, "  content", fd);
	R("  SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
	R("  SEEK_DATA 64KiB", lseek(fd, 64 * KIB, SEEK_DATA));
	char b[16];
	R("  pread 1@64KiB", pread(fd, b, 1, 64 * KIB));
	obs(ctx, "  %s", show(b, 1));
	R("PUNCH_HOLE|KEEP_SIZE unaligned 1000+5000",
	  fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, 5000));
	fdcat(ctx, "  content", fd);
	R("PUNCH_HOLE|KEEP_SIZE past EOF",
	  fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4 * MIB, MIB));
	fst(ctx, "  fstat", fd);
	R("ZERO_RANGE 128KiB+4196", fallocate(fd, FALLOC_FL_ZERO_RANGE, 128 * KIB, 4196));
	fdcat(ctx, "  content", fd);
	R("ZERO_RANGE|KEEP_SIZE past EOF",
	  fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 3 * MIB, 4096));
	fst(ctx, "  fstat", fd);
	R("ZERO_RANGE past EOF", fallocate(fd, FALLOC_FL_ZERO_RANGE, 3 * MIB, 4096));
	fst(ctx, "  fstat", fd);
	R("PUNCH_HOLE without KEEP_SIZE", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096));
	R("PUNCH_HOLE|ZERO_RANGE",
	  fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 0,
		    4096));
	R("UNSHARE_RANGE", fallocate(fd, FALLOC_FL_UNSHARE_RANGE, 0, 4096));
	R("unknown mode 0x8000", fallocate(fd, 0x8000, 0, 4096));
	R("len 0", fallocate(fd, 0, 0, 0));
	R("offset -1", fallocate(fd, 0, -1, 10));
	R("offset+len overflow", fallocate(fd, 0, INT64_MAX - 10, 100));
	fdcat(ctx, "content", fd);
	R("close", close(fd));
	host_same(ctx, "fa");
	host_attrs(ctx, "fa");
	fd = RFD("open O_RDONLY", open("fa", O_RDONLY));
	if (fd >= 0) {
		R("fallocate on O_RDONLY fd", fallocate(fd, 0, 0, 4096));
		close(fd);
	}
	fd = RFD("open O_APPEND", open("fa", O_WRONLY | O_APPEND));
	if (fd >= 0) {
		R("fallocate on O_APPEND fd", fallocate(fd, 0, 0, 4096));
		R("PUNCH_HOLE on O_APPEND fd",
		  fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096));
		close(fd);
	}
	fd = RFD("open dir", open(".", O_RDONLY | O_DIRECTORY));
	if (fd >= 0) {
		R("fallocate on a directory", fallocate(fd, 0, 0, 4096));
		close(fd);
	}
	must(ctx, mkfifo("p", 0644) == 0, "mkfifo");
	fd = RFD("open fifo", open("p", O_RDWR | O_NONBLOCK));
	if (fd >= 0) {
		R("fallocate on a fifo", fallocate(fd, 0, 0, 4096));
		close(fd);
	}
	/* posix_fallocate goes through fallocate */
	fd = RFD("posix_fallocate file", open("pf", O_CREAT | O_RDWR, 0644));
	if (fd >= 0) {
		obs(ctx, "posix_fallocate 0+100000: %s", ename(posix_fallocate(fd, 0, 100000)));
		fst(ctx, "  fstat", fd);
		close(fd);
	}
	free(buf);
}

/* FALLOC_FL_COLLAPSE_RANGE and FALLOC_FL_INSERT_RANGE: the kernel's FUSE
 * client does not forward them (it answers EOPNOTSUPP itself), so the only
 * thing that must hold on both sides is consistency: either the operation
 * happened exactly, or it was refused and nothing changed. What each side
 * did is printed as a note. */
static void c_fallocate_unforwarded(struct ctx *ctx)
{
	const size_t n = 16 * 4096;
	char *model = malloc(n + 4096), *got;
	if (!model)
		abort();
	for (size_t i = 0; i < n; i++)
		model[i] = (char)('a' + i / 4096);
	if (!putn(ctx, "f", model, n, 0644)) {
		free(model);
		return;
	}
	int fd = RFD("open", open("f", O_RDWR));
	if (fd < 0) {
		free(model);
		return;
	}
	size_t gn;
	/* collapse block 1 */
	int r = fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 4096, 4096);
	int e = errno;
	if (slurp_fd(fd, &got, &gn) == 0) {
		bool unchanged = gn == n && memcmp(got, model, n) == 0;
		memmove(model + 4096, model + 8192, n - 8192);
		bool applied = gn == n - 4096 && memcmp(got, model, n - 4096) == 0;
		obs(ctx, "COLLAPSE_RANGE: %s",
		    (r == 0 && applied) || (r != 0 && e == EOPNOTSUPP && unchanged)
			    ? "consistent"
			    : L("inconsistent (%s, %zu bytes)", r ? ename(e) : "ok", gn));
		obs(ctx, "# COLLAPSE_RANGE %s", r ? ename(e) : "applied");
		if (r != 0) /* keep the model in step with the file */
			memcpy(model, got, gn);
		free(got);
		size_t cur = r == 0 ? n - 4096 : n;
		/* insert a block at 8192 */
		r = fallocate(fd, FALLOC_FL_INSERT_RANGE, 8192, 4096);
		e = errno;
		if (slurp_fd(fd, &got, &gn) == 0) {
			unchanged = gn == cur && memcmp(got, model, cur) == 0;
			memmove(model + 12288, model + 8192, cur - 8192);
			memset(model + 8192, 0, 4096);
			applied = gn == cur + 4096 && memcmp(got, model, cur + 4096) == 0;
			obs(ctx, "INSERT_RANGE: %s",
			    (r == 0 && applied) || (r != 0 && e == EOPNOTSUPP && unchanged)
				    ? "consistent"
				    : L("inconsistent (%s, %zu bytes)", r ? ename(e) : "ok", gn));
			obs(ctx, "# INSERT_RANGE %s", r ? ename(e) : "applied");
			free(got);
		}
	}
	/* unaligned ranges are EINVAL natively; refused or EINVAL is fine */
	r = fallocate(fd, FALLOC_FL_COLLAPSE_RANGE, 100, 4096);
	e = errno;
	obs(ctx, "COLLAPSE_RANGE unaligned: %s",
	    r != 0 && (e == EINVAL || e == EOPNOTSUPP) ? "refused" : "accepted");
	close(fd);
	host_same(ctx, "f");
	free(model);
}

static void c_lseek(struct ctx *ctx)
{
	put(ctx, "f", "0123456789", 0644);
	int fd = RFD("open", open("f", O_RDWR));
	if (fd < 0)
		return;
	char b[32];
	R("SEEK_SET 3", lseek(fd, 3, SEEK_SET));
	R("read 2", read(fd, b, 2));
	obs(ctx, "  %s", show(b, 2));
	R("SEEK_CUR 2", lseek(fd, 2, SEEK_CUR));
	R("SEEK_END -1", lseek(fd, -1, SEEK_END));
	R("SEEK_END +10", lseek(fd, 10, SEEK_END));
	R("write X there", write(fd, "X", 1));
	fdcat(ctx, "content", fd);
	R("SEEK_SET -1", lseek(fd, -1, SEEK_SET));
	R("SEEK_CUR -1000", lseek(fd, -1000, SEEK_CUR));
	R("whence 99", lseek(fd, 0, 99));
	R("SEEK_DATA 0", lseek(fd, 0, SEEK_DATA));
	R("SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
	R("SEEK_DATA 20", lseek(fd, 20, SEEK_DATA));
	R("SEEK_DATA 21 (EOF)", lseek(fd, 21, SEEK_DATA));
	R("SEEK_HOLE 21 (EOF)", lseek(fd, 21, SEEK_HOLE));
	R("SEEK_HOLE 100", lseek(fd, 100, SEEK_HOLE));
	R("SEEK_DATA -1", lseek(fd, -1, SEEK_DATA));
	close(fd);

	put(ctx, "empty", "", 0644);
	fd = RFD("open empty", open("empty", O_RDONLY));
	if (fd >= 0) {
		R("SEEK_DATA 0", lseek(fd, 0, SEEK_DATA));
		R("SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
		R("SEEK_END 0", lseek(fd, 0, SEEK_END));
		close(fd);
	}
	fd = RFD("holey", open("holey", O_CREAT | O_RDWR, 0644));
	if (fd >= 0) {
		char *blk = malloc(8192);
		if (!blk)
			abort();
		memset(blk, 'h', 8192);
		R("pwrite 8KiB@0", pwrite(fd, blk, 8192, 0));
		R("pwrite 8KiB@1MiB", pwrite(fd, blk, 8192, MIB));
		R("pwrite 8KiB@3MiB", pwrite(fd, blk, 8192, 3 * MIB));
		R("ftruncate 5MiB", ftruncate(fd, 5 * MIB));
		/* without fsync first: dirty pages are data */
		R("SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
		R("SEEK_DATA 8192", lseek(fd, 8192, SEEK_DATA));
		R("fsync", fsync(fd));
		R("SEEK_HOLE 0", lseek(fd, 0, SEEK_HOLE));
		R("SEEK_DATA 8192", lseek(fd, 8192, SEEK_DATA));
		R("SEEK_HOLE 1MiB", lseek(fd, MIB, SEEK_HOLE));
		R("SEEK_DATA 1MiB+8192", lseek(fd, MIB + 8192, SEEK_DATA));
		R("SEEK_HOLE 3MiB+1", lseek(fd, 3 * MIB + 1, SEEK_HOLE));
		R("SEEK_DATA 3MiB+8192", lseek(fd, 3 * MIB + 8192, SEEK_DATA));
		R("SEEK_HOLE 4MiB", lseek(fd, 4 * MIB, SEEK_HOLE));
		R("position after SEEK_HOLE", lseek(fd, 0, SEEK_CUR));
		free(blk);
		close(fd);
	}
	must(ctx, mkdir("d", 0755) == 0, "mkdir d");
	fd = RFD("open dir", open("d", O_RDONLY | O_DIRECTORY));
	if (fd >= 0) {
		R("dir SEEK_SET 0", lseek(fd, 0, SEEK_SET));
		R("dir SEEK_CUR 0", lseek(fd, 0, SEEK_CUR));
		close(fd);
	}
	must(ctx, mkfifo("p", 0644) == 0, "mkfifo");
	fd = RFD("open fifo", open("p", O_RDWR | O_NONBLOCK));
	if (fd >= 0) {
		R("fifo SEEK_SET 0", lseek(fd, 0, SEEK_SET));
		R("fifo SEEK_DATA 0", lseek(fd, 0, SEEK_DATA));
		close(fd);
	}
}

static void c_mmap_shared(struct ctx *ctx)
{
	char init[8192];
	memset(init, '.', sizeof(init));
	putn(ctx, "m", init, sizeof(init), 0644);
	int fd = RFD("open", open("m", O_RDWR));
	if (fd < 0)
		return;
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	obs(ctx, "mmap MAP_SHARED rw: %s", p == MAP_FAILED ? ename(errno) : "ok");
	if (p == MAP_FAILED) {
		close(fd);
		return;
	}
	memcpy(p + 100, "through-mmap", 12);
	memcpy(p + 5000, "second-page", 11);
	R("msync MS_SYNC", msync(p, 8192, MS_SYNC));
	char *d;
	size_t n;
	if (slurp(hp(ctx, "m"), &d, &n) == 0) {
		obs(ctx, "host after msync: %zu bytes, page 1 %s, page 2 %s", n,
		    n == 8192 && !memcmp(d + 100, "through-mmap", 12) ? "written" : "not written",
		    n == 8192 && !memcmp(d + 5000, "second-page", 11) ? "written" : "not written");
		free(d);
	}
	int fd2 = RFD("second fd", open("m", O_RDONLY));
	char b[16];
	R("  pread 12@100", pread(fd2, b, 12, 100));
	obs(ctx, "  %s", show(b, 12));
	xclose(fd2);
	memcpy(p + 200, "after-msync", 11);
	R("munmap", munmap(p, 8192));
	R("close", close(fd));
	if (slurp(hp(ctx, "m"), &d, &n) == 0) {
		obs(ctx, "host after munmap+close: %s",
		    n == 8192 && !memcmp(d + 200, "after-msync", 11) ? "written" : "not written");
		free(d);
	}
	host_same(ctx, "m");

	/* write() is visible through an existing mapping, MAP_PRIVATE is not
	 * written back */
	fd = RFD("open again", open("m", O_RDWR));
	if (fd < 0)
		return;
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *q = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (p != MAP_FAILED && q != MAP_FAILED) {
		R("pwrite WRITE@300", pwrite(fd, "WRITE", 5, 300));
		obs(ctx, "shared mapping sees it: %s", memcmp(p + 300, "WRITE", 5) ? "no" : "yes");
		q[0] = 'Q';
		R("msync private", msync(q, 8192, MS_SYNC));
		R("munmap private", munmap(q, 8192));
		/* extend the file and write the new part through a mapping */
		R("ftruncate 16384", ftruncate(fd, 16384));
		char *r2 = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (r2 != MAP_FAILED) {
			memcpy(r2 + 12000, "extended", 8);
			R("msync extended", msync(r2, 16384, MS_SYNC));
			munmap(r2, 16384);
		}
		munmap(p, 8192);
	} else {
		obs(ctx, "mmap: %s", ename(errno));
	}
	close(fd);
	cat(ctx, "content", "m");
	host_same(ctx, "m");

	fd = RFD("open O_RDONLY", open("m", O_RDONLY));
	if (fd >= 0) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		obs(ctx, "MAP_SHARED rw on O_RDONLY fd: %s", p == MAP_FAILED ? ename(errno) : "ok");
		if (p != MAP_FAILED)
			munmap(p, 4096);
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		obs(ctx, "MAP_SHARED ro on O_RDONLY fd: %s", p == MAP_FAILED ? ename(errno) : "ok");
		if (p != MAP_FAILED)
			munmap(p, 4096);
		close(fd);
	}
	/* a mapping outlives its descriptor */
	fd = RFD("open for a mapping that outlives it", open("m", O_RDWR));
	if (fd >= 0) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (p != MAP_FAILED) {
			memcpy(p + 400, "fd-closed", 9);
			R("msync after close", msync(p, 4096, MS_SYNC));
			munmap(p, 4096);
		}
	}
	host_same(ctx, "m");
	if (slurp(hp(ctx, "m"), &d, &n) == 0) {
		obs(ctx, "host sees write through mapping after close+msync: %s",
		    n > 409 && !memcmp(d + 400, "fd-closed", 9) ? "yes" : "no");
		free(d);
	}
}

/* Data written through the mount reaches the host file. After close() it
 * must; before close() a native file shows it at once too. */
static void c_host_sees_writes(struct ctx *ctx)
{
	int fd = RFD("create", open("w", O_CREAT | O_EXCL | O_WRONLY, 0644));
	if (fd < 0)
		return;
	obs(ctx, "host sees the new file while open: %s",
	    access(hp(ctx, "w"), F_OK) == 0 ? "yes" : ename(errno));
	R("write", write(fd, "written, not yet closed", 23));
	cat(ctx, "host before close", hp(ctx, "w"));
	R("fsync", fsync(fd));
	cat(ctx, "host after fsync", hp(ctx, "w"));
	R("pwrite", pwrite(fd, "WRITTEN", 7, 0));
	R("fdatasync", fdatasync(fd));
	cat(ctx, "host after fdatasync", hp(ctx, "w"));
	R("write more", write(fd, " and more", 9));
	R("close", close(fd));
	cat(ctx, "host after close", hp(ctx, "w"));
	host_attrs(ctx, "w");
}

/* ======================================================================== */
/* Cases: rename */

static int ren2(const char *a, const char *b, unsigned flags)
{
	return renameat2(AT_FDCWD, a, AT_FDCWD, b, flags);
}

static void c_rename_over(struct ctx *ctx)
{
	put(ctx, "a", "AAA", 0644);
	put(ctx, "b", "B", 0600);
	must(ctx, link("b", "b2") == 0, "link b b2");
	ino_t ia = ino_of("a");
	R("rename a over b", rename("a", "b"));
	cat(ctx, "b", "b");
	st(ctx, "b", "b");
	st(ctx, "a", "a");
	obs(ctx, "ino follows the file: %s", ino_of("b") == ia ? "yes" : "no");
	st(ctx, "b2", "b2");
	cat(ctx, "b2", "b2");
	R("rename b b (itself)", rename("b", "b"));
	st(ctx, "b", "b");
	must(ctx, link("b", "c") == 0, "link b c");
	R("rename b over c (same inode)", rename("b", "c"));
	st(ctx, "b", "b");
	st(ctx, "c", "c");

	must(ctx, mkdir("d1", 0755) == 0, "mkdir d1");
	put(ctx, "d1/x", "x", 0644);
	must(ctx, mkdir("d2", 0700) == 0, "mkdir d2");
	ino_t id1 = ino_of("d1");
	R("rename dir over empty dir", rename("d1", "d2"));
	ls(ctx, "d2", "d2");
	st(ctx, "d2", "d2");
	st(ctx, "d1", "d1");
	obs(ctx, "ino follows the dir: %s", ino_of("d2") == id1 ? "yes" : "no");
	must(ctx, mkdir("p", 0755) == 0, "mkdir p");
	must(ctx, mkdir("p/empty", 0755) == 0, "mkdir p/empty");
	nl(ctx, "p");
	nl(ctx, ".");
	R("rename d2 over p/empty (other parent)", rename("d2", "p/empty"));
	nl(ctx, "p");
	nl(ctx, ".");
	cat(ctx, "p/empty/x", "p/empty/x");
	R("rename p/empty/ p/e2 (trailing slash on dir)", rename("p/empty/", "p/e2"));
	R("rename c/ z (trailing slash on file)", rename("c/", "z"));
	R("rename c z/ (trailing slash on target)", rename("c", "z/"));
	R("rename c p/c (file to other dir)", rename("c", "p/c"));
	cat(ctx, "p/c", "p/c");
	/* a symlink renamed over a file is the symlink, not its target */
	must(ctx, symlink("p/c", "sym") == 0, "symlink");
	put(ctx, "victim", "v", 0644);
	R("rename symlink over file", rename("sym", "victim"));
	st(ctx, "victim", "victim");
	cat(ctx, "p/c", "p/c");
	put(ctx, "file", "f", 0644);
	must(ctx, symlink("p", "sdir") == 0, "symlink sdir");
	R("rename file over symlink to dir", rename("file", "sdir"));
	st(ctx, "sdir", "sdir");
	ls(ctx, "p", "p");
	ls(ctx, "ls", ".");
	ls(ctx, "host ls", ctx->host);
	ls(ctx, "host ls p", hp(ctx, "p"));
}

static void c_rename_errors(struct ctx *ctx)
{
	must(ctx, mkdir("full", 0755) == 0, "mkdir full");
	put(ctx, "full/x", "x", 0644);
	must(ctx, mkdir("empty", 0755) == 0, "mkdir empty");
	put(ctx, "f", "f", 0644);
	must(ctx, mkdir("d", 0755) == 0, "mkdir d");
	must(ctx, mkdir("d/sub", 0755) == 0, "mkdir d/sub");
	R("dir over non-empty dir", rename("empty", "full"));
	R("file onto dir", rename("f", "empty"));
	R("file onto non-empty dir", rename("f", "full"));
	R("dir onto file", rename("empty", "f"));
	R("dir into its own subdir", rename("d", "d/sub/d"));
	R("dir into itself", rename("d", "d/d"));
	R("dir onto its own subdir", rename("d", "d/sub"));
	R("subdir onto its ancestor", rename("d/sub", "d"));
	R("missing source", rename("missing", "x"));
	R("into missing dir", rename("f", "missing/x"));
	R("under a file", rename("f", "f/x"));
	R("source under a file", rename("f/x", "y"));
	R("rename .", rename(".", "x"));
	R("rename d/..", rename("d/..", "x"));
	R("rename d/.", rename("d/.", "x"));
	R("rename onto .", rename("f", "."));
	R("rename onto d/..", rename("f", "d/.."));
	R("rename \"\"", rename("", "x"));
	R("NOREPLACE|EXCHANGE", ren2("f", "empty", RENAME_NOREPLACE | RENAME_EXCHANGE));
	R("unknown flag 0x80", ren2("f", "g", 0x80));
	R("EXCHANGE dir with its own child", ren2("d", "d/sub", RENAME_EXCHANGE));
	R("EXCHANGE child with its ancestor", ren2("d/sub", "d", RENAME_EXCHANGE));
	R("EXCHANGE with missing", ren2("f", "missing", RENAME_EXCHANGE));
	R("EXCHANGE missing with existing", ren2("missing", "f", RENAME_EXCHANGE));
	ls(ctx, "ls (nothing changed)", ".");
	ls(ctx, "ls full", "full");
	ls(ctx, "ls d", "d");
	ls(ctx, "host ls", ctx->host);
}

static void c_rename_noreplace(struct ctx *ctx)
{
	put(ctx, "a", "A", 0644);
	put(ctx, "b", "B", 0644);
	R("NOREPLACE onto existing file", ren2("a", "b", RENAME_NOREPLACE));
	cat(ctx, "a", "a");
	cat(ctx, "b", "b");
	R("NOREPLACE onto new name", ren2("a", "c", RENAME_NOREPLACE));
	cat(ctx, "c", "c");
	st(ctx, "a", "a");
	must(ctx, mkdir("d", 0755) == 0, "mkdir d");
	must(ctx, mkdir("e", 0755) == 0, "mkdir e");
	R("NOREPLACE dir onto empty dir", ren2("d", "e", RENAME_NOREPLACE));
	R("NOREPLACE dir onto file", ren2("d", "b", RENAME_NOREPLACE));
	must(ctx, symlink("nowhere", "dangling") == 0, "symlink");
	R("NOREPLACE onto dangling symlink", ren2("b", "dangling", RENAME_NOREPLACE));
	R("NOREPLACE onto itself", ren2("b", "b", RENAME_NOREPLACE));
	R("NOREPLACE dir to new name in other dir", ren2("d", "e/d", RENAME_NOREPLACE));
	nl(ctx, ".");
	nl(ctx, "e");
	ls(ctx, "ls", ".");
	ls(ctx, "host ls", ctx->host);
}

static void c_rename_exchange(struct ctx *ctx)
{
	put(ctx, "a", "AAA", 0644);
	put(ctx, "b", "bb", 0600);
	ino_t ia = ino_of("a"), ib = ino_of("b");
	R("EXCHANGE a b", ren2("a", "b", RENAME_EXCHANGE));
	cat(ctx, "a", "a");
	cat(ctx, "b", "b");
	st(ctx, "a", "a");
	st(ctx, "b", "b");
	obs(ctx, "ino follows the content: a has b's: %s, b has a's: %s",
	    ino_of("a") == ib ? "yes" : "no", ino_of("b") == ia ? "yes" : "no");
	host_same(ctx, "a");
	host_same(ctx, "b");
	must(ctx, mkdir("d", 0755) == 0, "mkdir d");
	put(ctx, "d/inner", "in", 0644);
	must(ctx, mkdir("d/sub", 0755) == 0, "mkdir d/sub");
	nl(ctx, ".");
	R("EXCHANGE file <-> dir", ren2("a", "d", RENAME_EXCHANGE));
	st(ctx, "a", "a");
	st(ctx, "d", "d");
	cat(ctx, "a/inner", "a/inner");
	cat(ctx, "d", "d");
	st(ctx, "d/inner", "d/inner");
	nl(ctx, ".");
	must(ctx, mkdir("p", 0755) == 0, "mkdir p");
	put(ctx, "p/f", "pf", 0644);
	nl(ctx, "p");
	R("EXCHANGE dir a <-> p/f (across parents)", ren2("a", "p/f", RENAME_EXCHANGE));
	nl(ctx, ".");
	nl(ctx, "p");
	st(ctx, "p/f", "p/f");
	cat(ctx, "a", "a");
	cat(ctx, "p/f/inner", "p/f/inner");
	nl(ctx, "p/f/sub/..");
	R("EXCHANGE b b", ren2("b", "b", RENAME_EXCHANGE));
	must(ctx, symlink("a", "sl") == 0, "symlink");
	R("EXCHANGE symlink <-> file", ren2("sl", "b", RENAME_EXCHANGE));
	st(ctx, "sl", "sl");
	st(ctx, "b", "b");
	must(ctx, link("sl", "hard") == 0, "link");
	R("EXCHANGE two links of one inode", ren2("sl", "hard", RENAME_EXCHANGE));
	st(ctx, "sl", "sl");
	st(ctx, "hard", "hard");
	ls(ctx, "ls", ".");
	ls(ctx, "host ls", ctx->host);
	ls(ctx, "host ls p", hp(ctx, "p"));
}

static void c_rename_dir_children(struct ctx *ctx)
{
	must(ctx, mkdir("a", 0755) == 0 && mkdir("a/b", 0755) == 0 && mkdir("a/b/c", 0755) == 0,
	     "mkdir a/b/c");
	put(ctx, "a/b/c/f", "deep", 0644);
	cat(ctx, "before", "a/b/c/f");
	int dfd = RFD("open a/b", open("a/b", O_RDONLY | O_DIRECTORY));
	ino_t ic = ino_of("a/b/c"), iff = ino_of("a/b/c/f");
	R("rename a z", rename("a", "z"));
	cat(ctx, "z/b/c/f", "z/b/c/f");
	st(ctx, "a", "a");
	st(ctx, "a/b/c/f", "a/b/c/f");
	obs(ctx, "inos stable: %s",
	    ino_of("z/b/c") == ic && ino_of("z/b/c/f") == iff ? "yes" : "no");
	if (dfd >= 0) {
		int f = RFD("openat(old dirfd, c/f)", openat(dfd, "c/f", O_RDONLY));
		if (f >= 0) {
			fdcat(ctx, "  content", f);
			close(f);
		}
		R("mkdirat(old dirfd, new)", mkdirat(dfd, "new", 0755));
		close(dfd);
	}
	st(ctx, "z/b/new", "z/b/new");
	/* a process whose cwd is inside the renamed tree keeps working */
	pid_t pid = fork();
	if (pid == 0) {
		if (!must(ctx, chdir("z/b/c") == 0, "chdir"))
			_exit(1);
		R("rename from inside", rename(L("%s/z", ctx->dir), L("%s/y", ctx->dir)));
		cat(ctx, "f relative to cwd", "f");
		char cwd[PATH_MAX];
		if (getcwd(cwd, sizeof(cwd))) {
			size_t n = strlen(ctx->dir);
			obs(ctx, "getcwd: %s",
			    !strncmp(cwd, ctx->dir, n) ? shows(cwd + n) : "outside the case dir");
		} else {
			obs(ctx, "getcwd: %s", ename(errno));
		}
		R("create relative to cwd", open("g", O_CREAT | O_WRONLY, 0644) >= 0 ? 0 : -1);
		_exit(0);
	}
	reap(ctx, "cwd process", pid);
	st(ctx, "y/b/c/g", "y/b/c/g");
	st(ctx, "z", "z");
	R("rename y/b/c y/c (move up)", rename("y/b/c", "y/c"));
	cat(ctx, "y/c/f", "y/c/f");
	R("rename y/c y/b/c2 (move down)", rename("y/c", "y/b/c2"));
	cat(ctx, "y/b/c2/f", "y/b/c2/f");
	st(ctx, "y/c", "y/c");
	ls(ctx, "y/b", "y/b");
	ls(ctx, "host y/b", hp(ctx, "y/b"));
	ls(ctx, "host .", ctx->host);
}

#define MANY 300

static void c_rename_many(struct ctx *ctx)
{
	must(ctx, mkdir("a", 0755) == 0 && mkdir("b", 0755) == 0, "mkdir a b");
	static ino_t inos[MANY];
	for (int i = 0; i < MANY; i++) {
		put(ctx, L("a/f%03d", i), L("content %d", i), 0644);
		inos[i] = ino_of(L("a/f%03d", i));
	}
	int errs = 0;
	for (int i = 0; i < MANY; i++)
		errs += rename(L("a/f%03d", i), L("b/g%03d", i)) != 0;
	for (int i = 0; i < MANY; i++)
		errs += rename(L("b/g%03d", i), L("a/h%03d", i)) != 0;
	for (int i = 0; i + 1 < MANY; i += 2)
		errs += ren2(L("a/h%03d", i), L("a/h%03d", i + 1), RENAME_EXCHANGE) != 0;
	obs(ctx, "renames failed: %d", errs);
	int bad = 0, badino = 0;
	for (int i = 0; i < MANY; i++) {
		int from = (i % 2) ? i - 1 : i + 1;
		if (from >= MANY)
			from = i;
		char *d;
		size_t n;
		const char *want = L("content %d", from);
		if (slurp(L("a/h%03d", i), &d, &n) != 0) {
			bad++;
			continue;
		}
		bad += n != strlen(want) || memcmp(d, want, n) != 0;
		badino += ino_of(L("a/h%03d", i)) != inos[from];
		free(d);
	}
	obs(ctx, "contents wrong: %d, inode numbers not following: %d", bad, badino);
	ls(ctx, "a", "a");
	ls(ctx, "b", "b");
	ls(ctx, "host a", hp(ctx, "a"));
	/* a directory renamed again and again, then used */
	must(ctx, mkdir("c0", 0755) == 0 && mkdir("c0/d", 0755) == 0, "mkdir c0/d");
	put(ctx, "c0/d/f", "deep", 0644);
	errs = 0;
	for (int i = 0; i < 50; i++)
		errs += rename(L("c%d", i), L("c%d", i + 1)) != 0;
	obs(ctx, "dir renames failed: %d", errs);
	cat(ctx, "c50/d/f", "c50/d/f");
	st(ctx, "c49", "c49");
	/* ping-pong with a stat of the name that must exist */
	put(ctx, "x", "ping", 0644);
	ino_t ix = ino_of("x");
	int statbad = 0;
	for (int i = 0; i < 500; i++) {
		const char *from = (i % 2) ? "y" : "x", *to = (i % 2) ? "x" : "y";
		errs += rename(from, to) != 0;
		struct stat s;
		statbad += lstat(to, &s) != 0 || s.st_ino != ix || lstat(from, &s) == 0;
	}
	obs(ctx, "ping-pong: stat mismatches %d", statbad);
	cat(ctx, "x", "x");
	/* rename across directories, many files, then list */
	for (int i = 0; i < MANY; i += 3)
		errs += rename(L("a/h%03d", i), L("b/k%03d", i)) != 0;
	obs(ctx, "errors: %d", errs);
	ls(ctx, "a", "a");
	ls(ctx, "b", "b");
	ls(ctx, "host b", hp(ctx, "b"));
	nl(ctx, "a");
	nl(ctx, ".");
}

/* ======================================================================== */
/* Cases: symlinks, hard links, FIFOs, device nodes, sockets */

static void c_symlink_targets(struct ctx *ctx)
{
	static char t4095[4096], t4096[4097], tlong_path[4000];
	memset(t4095, 'a', 4095);
	memset(t4096, 'b', 4096);
	for (size_t i = 0; i + 2 < sizeof(tlong_path); i += 2)
		memcpy(tlong_path + i, "x/", 2);
	tlong_path[sizeof(tlong_path) - 1] = 0;
	const char *targets[] = {
		"",
		"plain",
		"../up",
		"../../../../../../../..",
		"/etc/passwd",
		"/nonexistent/absolute",
		"dir/with space/x",
		"new\nline",
		"tab\there",
		"trailing/",
		".",
		"..",
		"a//b",
		"\xff\xfe",
		"-dash",
		"./f",
		t4095,
		t4096,
		tlong_path,
		"f",
	};
	put(ctx, "f", "target file", 0644);
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		const char *name = L("l%02zu", i);
		const char *t = targets[i];
		/* absolute targets and targets leaving SOURCE are made on the
		 * host side: the policy refuses to create them */
		bool on_host = t[0] == '/' || !strncmp(t, "../..", 5);
		if (R(L("%ssymlink %s", on_host ? "host " : "", show(t, strlen(t))),
		      symlink(t, on_host ? hp(ctx, name) : name)) != 0)
			continue;
		char b[8192];
		ssize_t n = readlink(name, b, sizeof(b));
		obs(ctx, "  readlink: %s",
		    n < 0						 ? ename(errno)
		    : (size_t)n == strlen(t) && !memcmp(b, t, (size_t)n) ? "same"
									 : show(b, (size_t)n));
		struct stat s;
		if (lstat(name, &s) == 0)
			obs(ctx, "  lstat: %s size=%s", ftype(s.st_mode),
			    (size_t)s.st_size == strlen(t) ? "target length"
							   : L("%jd", (intmax_t)s.st_size));
		stf(ctx, "  stat", name);
		n = readlink(hp(ctx, name), b, sizeof(b));
		obs(ctx, "  host readlink: %s",
		    n >= 0 && (size_t)n == strlen(t) && !memcmp(b, t, (size_t)n) ? "same"
		    : n < 0							 ? ename(errno)
										 : "differs");
	}
	char small[3];
	R("readlink into 3 bytes", readlink("l01", small, sizeof(small)));
	obs(ctx, "  %s", show(small, 3));
	R("readlink of a file", readlink("f", small, sizeof(small)));
	R("readlink missing", readlink("missing", small, sizeof(small)));
	R("readlink bufsiz 0", readlink("l01", small, 0));
	int pfd = RFD("O_PATH|O_NOFOLLOW", open("l01", O_PATH | O_NOFOLLOW));
	if (pfd >= 0) {
		char b[64];
		ssize_t n = readlinkat(pfd, "", b, sizeof(b));
		obs(ctx, "  readlinkat(fd, \"\"): %s", n < 0 ? ename(errno) : show(b, (size_t)n));
		close(pfd);
	}
	R("symlink over existing name", symlink("x", "f"));
	R("symlink over existing symlink", symlink("x", "l01"));
	/* loops and chains pass through existing symlinks: host side too */
	must(ctx,
	     symlink("loop2", hp(ctx, "loop1")) == 0 && symlink("loop1", hp(ctx, "loop2")) == 0,
	     "loop");
	stf(ctx, "stat loop1", "loop1");
	xclose(RFD("open loop1", open("loop1", O_RDONLY)));
	/* chains: 40 links are followed, 41 are not */
	for (int i = 0; i < 41; i++)
		must(ctx, symlink(i == 40 ? "f" : L("c%02d", i + 1), hp(ctx, L("c%02d", i))) == 0,
		     "chain");
	stf(ctx, "stat 41-link chain", "c00");
	stf(ctx, "stat 40-link chain", "c01");
	/* O_CREAT through a dangling symlink creates the target */
	must(ctx, symlink("created", "dangling") == 0, "symlink dangling");
	stf(ctx, "stat dangling", "dangling");
	int fd = RFD("O_CREAT through dangling", open("dangling", O_CREAT | O_WRONLY, 0600));
	xclose(fd);
	st(ctx, "created", "created");
	must(ctx, symlink("nowhere/deeper", "dangling2") == 0, "symlink dangling2");
	fd = RFD("O_CREAT through dangling into missing dir",
		 open("dangling2", O_CREAT | O_WRONLY, 0600));
	xclose(fd);
	/* directory symlinks with trailing slashes */
	must(ctx, mkdir("d", 0755) == 0 && symlink("d", "sd") == 0, "dir symlink");
	R("rmdir sd/", rmdir("sd/"));
	R("unlink sd/", unlink("sd/"));
	R("rmdir sd", rmdir("sd"));
	R("unlink sd", unlink("sd"));
	st(ctx, "d", "d");
	ls(ctx, "host ls", ctx->host);
}

static void c_symlink_attrs(struct ctx *ctx)
{
	put(ctx, "f", "target", 0644);
	must(ctx, symlink("f", "s") == 0, "symlink");
	struct stat before;
	must(ctx, stat("f", &before) == 0, "stat f");
	R("lchown s own gid", lchown("s", (uid_t)-1, getegid()));
	R("fchownat s AT_SYMLINK_NOFOLLOW",
	  fchownat(AT_FDCWD, "s", geteuid(), getegid(), AT_SYMLINK_NOFOLLOW));
	if (ctx->root && g_have_caller) {
		R("lchown s to the caller", lchown("s", g_cuid, g_cgid));
		st(ctx, "s", "s");
		st(ctx, "f", "f");
		host_attrs(ctx, "s");
	}
	struct timespec ts[2] = {{1111111111, 111}, {1222222222, 222222222}};
	R("utimensat s AT_SYMLINK_NOFOLLOW", utimensat(AT_FDCWD, "s", ts, AT_SYMLINK_NOFOLLOW));
	struct stat s, f;
	if (lstat("s", &s) == 0 && stat("f", &f) == 0) {
		obs(ctx, "  symlink atime %s mtime %s", ts_str(s.st_atim), ts_str(s.st_mtim));
		obs(ctx, "  target mtime unchanged: %s",
		    ts_eq(f.st_mtim, before.st_mtim) ? "yes" : "no");
	}
	host_attrs(ctx, "s");
	struct timespec t0 = now_rt();
	R("utimensat s NULL AT_SYMLINK_NOFOLLOW",
	  utimensat(AT_FDCWD, "s", NULL, AT_SYMLINK_NOFOLLOW));
	if (lstat("s", &s) == 0)
		obs(ctx, "  symlink mtime now: %s", near(s.st_mtim, t0, 5) ? "yes" : "no");
	struct timespec om[2] = {{0, UTIME_OMIT}, {1333333333, 0}};
	R("utimensat s OMIT/explicit NOFOLLOW", utimensat(AT_FDCWD, "s", om, AT_SYMLINK_NOFOLLOW));
	if (lstat("s", &s) == 0)
		obs(ctx, "  symlink mtime %s", ts_str(s.st_mtim));
	R("lutimes-like via utimensat follow", utimensat(AT_FDCWD, "s", ts, 0));
	if (stat("f", &f) == 0)
		obs(ctx, "  target mtime %s", ts_str(f.st_mtim));
	R("fchmodat s AT_SYMLINK_NOFOLLOW", fchmodat(AT_FDCWD, "s", 0600, AT_SYMLINK_NOFOLLOW));
	R("chmod s (follows)", chmod("s", 0640));
	st(ctx, "f", "f");
	st(ctx, "s", "s");
	R("lsetxattr s user.x", lsetxattr("s", "user.x", "v", 1, 0));
	char v[16];
	R("lgetxattr s user.x", lgetxattr("s", "user.x", v, sizeof(v)));
	R("llistxattr s", llistxattr("s", v, sizeof(v)));
	R("lremovexattr s user.x", lremovexattr("s", "user.x"));
	R("setxattr s (follows) user.y", setxattr("s", "user.y", "w", 1, 0));
	R("getxattr f user.y", getxattr("f", "user.y", v, sizeof(v)));
	int pfd = RFD("O_PATH|O_NOFOLLOW", open("s", O_PATH | O_NOFOLLOW));
	if (pfd >= 0) {
		R("fchownat(pfd, \"\", AT_EMPTY_PATH)",
		  fchownat(pfd, "", (uid_t)-1, getegid(), AT_EMPTY_PATH));
		R("utimensat(pfd, NULL ...)", syscall(SYS_utimensat, pfd, NULL, ts, 0));
		close(pfd);
	}
}

static void c_hardlinks(struct ctx *ctx)
{
	put(ctx, "f", "file", 0644);
	must(ctx, symlink("f", "s") == 0, "symlink");
	must(ctx, symlink("nowhere", "dl") == 0, "symlink dl");
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	R("linkat s s2 (no follow)", linkat(AT_FDCWD, "s", AT_FDCWD, "s2", 0));
	st(ctx, "s2", "s2");
	st(ctx, "s", "s");
	same_ino(ctx, "s vs s2", "s", "s2");
	char b[16];
	ssize_t n = readlink("s2", b, sizeof(b));
	obs(ctx, "readlink s2: %s", n < 0 ? ename(errno) : show(b, (size_t)n));
	R("linkat s s3 AT_SYMLINK_FOLLOW",
	  linkat(AT_FDCWD, "s", AT_FDCWD, "s3", AT_SYMLINK_FOLLOW));
	st(ctx, "s3", "s3");
	same_ino(ctx, "s3 vs f", "s3", "f");
	st(ctx, "f", "f");
	R("link() of a symlink", link("s", "s4"));
	st(ctx, "s4", "s4");
	R("link dangling symlink", link("dl", "dl2"));
	st(ctx, "dl2", "dl2");
	R("linkat dangling AT_SYMLINK_FOLLOW",
	  linkat(AT_FDCWD, "dl", AT_FDCWD, "dl3", AT_SYMLINK_FOLLOW));
	R("link a dir", link("d", "d2"));
	R("link missing", link("missing", "m2"));
	R("link onto existing", link("f", "s"));
	R("link into missing dir", link("f", "missing/x"));
	R("link f/", link("f/", "x"));
	R("link to f/ (trailing slash on new)", link("f", "x/"));
	R("link into subdir", link("f", "d/f"));
	nl(ctx, "f");
	R("unlink s", unlink("s"));
	st(ctx, "s2", "s2");
	cat(ctx, "via s2", "s2");
	host_attrs(ctx, "f");
	host_attrs(ctx, "s2");
	ls(ctx, "host ls", ctx->host);
	int fd = RFD("open f", open("f", O_RDONLY));
	if (fd >= 0) {
		R("linkat(fd, \"\", AT_EMPTY_PATH)", linkat(fd, "", AT_FDCWD, "e1", AT_EMPTY_PATH));
		R("linkat(/proc/self/fd/N, AT_SYMLINK_FOLLOW)",
		  linkat(AT_FDCWD, L("/proc/self/fd/%d", fd), AT_FDCWD, "e2", AT_SYMLINK_FOLLOW));
		close(fd);
	}
	st(ctx, "e2", "e2");
	nl(ctx, "f");
	/* every name of a file works, whichever others come and go */
	put(ctx, "h1", "one", 0644);
	R("link h1 h2", link("h1", "h2"));
	cat(ctx, "h2", "h2");
	R("rename h2 h3", rename("h2", "h3"));
	R("unlink h3", unlink("h3"));
	R("truncate h1 (its other name is gone)", truncate("h1", 2));
	R("append to h1", ({
		  int a = open("h1", O_WRONLY | O_APPEND);
		  long w = a < 0 ? -1 : write(a, "+", 1);
		  int e2 = errno;
		  xclose(a);
		  errno = e2;
		  w;
	  }));
	cat(ctx, "h1", "h1");
	put(ctx, "k1", "kay", 0644);
	R("link k1 h4", link("k1", "h4"));
	cat(ctx, "h4", "h4");
	R("unlink k1 (the first name)", unlink("k1"));
	R("chmod h4", chmod("h4", 0600));
	R("write h4", ({
		  int a = open("h4", O_WRONLY);
		  long w = a < 0 ? -1 : write(a, "H", 1);
		  int e2 = errno;
		  xclose(a);
		  errno = e2;
		  w;
	  }));
	st(ctx, "h4", "h4");
	cat(ctx, "h4", "h4");
	host_same(ctx, "h4");
}

static void c_fifo(struct ctx *ctx)
{
	R("mkfifo", mkfifo("p", 0644));
	st(ctx, "p", "p");
	st(ctx, "host", hp(ctx, "p"));
	R("mkfifo existing", mkfifo("p", 0644));
	R("mknod S_IFIFO", mknod("p2", S_IFIFO | 0600, 0));
	st(ctx, "p2", "p2");
	int fd = RFD("O_WRONLY|O_NONBLOCK without reader", open("p", O_WRONLY | O_NONBLOCK));
	xclose(fd);
	fd = RFD("O_RDONLY|O_NONBLOCK", open("p", O_RDONLY | O_NONBLOCK));
	if (fd >= 0) {
		char b[4];
		R("  read (no writer)", read(fd, b, sizeof(b)));
		close(fd);
	}
	/* a writer process and a reader through the directory */
	pid_t pid = fork();
	if (pid == 0) {
		int w = open("p", O_WRONLY);
		if (w < 0)
			_exit(2);
		for (int i = 0; i < 200; i++)
			if (write(w, "through the fifo\n", 17) != 17)
				_exit(3);
		close(w);
		_exit(0);
	}
	int r = RFD("open O_RDONLY (blocks for the writer)", open("p", O_RDONLY));
	if (r >= 0) {
		char *buf = malloc(65536);
		size_t got = 0;
		for (;;) {
			ssize_t n = read(r, buf + got, 65536 - got);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		obs(ctx, "  read until EOF: %zu bytes %016" PRIx64, got, fnv(buf, got));
		free(buf);
		close(r);
	}
	reap(ctx, "fifo writer", pid);
	/* reader first, writer in the parent */
	pid = fork();
	if (pid == 0) {
		int rr = open("p2", O_RDONLY);
		char b[64];
		ssize_t n = rr < 0 ? -1 : read(rr, b, sizeof(b));
		obs(ctx, "  child read: %s", n < 0 ? ename(errno) : show(b, (size_t)n));
		_exit(0);
	}
	/* observed after the reader is done, so the log order is fixed */
	int w = open("p2", O_WRONLY);
	int we = errno;
	ssize_t wr = -1;
	if (w >= 0) {
		sleep_ms(50);
		wr = write(w, "hello reader", 12);
		we = errno;
		close(w);
	}
	reap(ctx, "fifo reader", pid);
	obs(ctx, "open p2 O_WRONLY (blocks for the reader): %s, write: %s",
	    w < 0 ? ename(we) : "fd", wr < 0 ? ename(we) : L("%zd", wr));
	fd = RFD("O_RDWR", open("p", O_RDWR));
	if (fd >= 0) {
		char b[4];
		R("  write", write(fd, "xy", 2));
		R("  read", read(fd, b, 2));
		obs(ctx, "  %s", show(b, 2));
		fst(ctx, "  fstat", fd);
		R("  lseek", lseek(fd, 0, SEEK_SET));
		R("  ftruncate", ftruncate(fd, 0));
		close(fd);
	}
	R("truncate fifo", truncate("p", 0));
	st(ctx, "p", "p");
	R("unlink", unlink("p"));
	ls(ctx, "host ls", ctx->host);
}

static void c_mknod(struct ctx *ctx)
{
	R("mknod S_IFREG 0640", mknod("r", S_IFREG | 0640, 0));
	st(ctx, "r", "r");
	R("mknod type 0 (regular)", mknod("r0", 0600, 0));
	st(ctx, "r0", "r0");
	R("mknod S_IFSOCK", mknod("s", S_IFSOCK | 0600, 0));
	st(ctx, "s", "s");
	R("mknod S_IFIFO", mknod("p", S_IFIFO | 0600, 0));
	/* device nodes are made on the host side (the policy never creates
	 * them; root only) and served */
	R("host mknod S_IFCHR 1:3", mknod(hp(ctx, "c"), S_IFCHR | 0600, makedev(1, 3)));
	st(ctx, "c", "c");
	R("host mknod S_IFBLK 7:0", mknod(hp(ctx, "b"), S_IFBLK | 0600, makedev(7, 0)));
	st(ctx, "b", "b");
	R("host mknod S_IFCHR 0:0 (whiteout)", mknod(hp(ctx, "w"), S_IFCHR | 0600, makedev(0, 0)));
	st(ctx, "w", "w");
	R("mknod S_IFDIR", mknod("d", S_IFDIR | 0755, 0));
	R("mknod bad type", mknod("x", 0170000 | 0600, 0));
	R("mknod existing", mknod("r", S_IFREG | 0600, 0));
	R("mknod in missing dir", mknod("missing/r", S_IFREG | 0600, 0));
	ls(ctx, "ls", ".");
	ls(ctx, "host ls", ctx->host);
	st(ctx, "host s", hp(ctx, "s"));
	st(ctx, "host c", hp(ctx, "c"));
	int fd = RFD("open socket node", open("s", O_RDONLY));
	xclose(fd);
}

static void c_unix_socket(struct ctx *ctx)
{
	int s = RFD("socket", socket(AF_UNIX, SOCK_STREAM, 0));
	if (s < 0)
		return;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strcpy(a.sun_path, "sock");
	R("bind", bind(s, (struct sockaddr *)&a, sizeof(a)));
	R("listen", listen(s, 4));
	st(ctx, "sock", "sock");
	st(ctx, "host sock", hp(ctx, "sock"));
	pid_t pid = fork();
	if (pid == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		R("  child connect", connect(c, (struct sockaddr *)&a, sizeof(a)));
		R("  child write", write(c, "ping", 4));
		char b[8] = {0};
		R("  child read", read(c, b, 4));
		obs(ctx, "  child got %s", show(b, 4));
		close(c);
		_exit(0);
	}
	/* observed after the client is done, so the log order is fixed */
	int c = accept(s, NULL, NULL);
	int ce = errno;
	char got[8] = {0};
	ssize_t rn = -1, wn = -1;
	if (c >= 0) {
		rn = read(c, got, 4);
		wn = write(c, "pong", 4);
		close(c);
	}
	reap(ctx, "socket client", pid);
	obs(ctx, "accept: %s, read %zd %s, write %zd", c < 0 ? ename(ce) : "fd", rn, show(got, 4),
	    wn);
	int s2 = socket(AF_UNIX, SOCK_STREAM, 0);
	R("bind existing path", bind(s2, (struct sockaddr *)&a, sizeof(a)));
	close(s2);
	close(s);
	R("connect after close", ({
		  int c2 = socket(AF_UNIX, SOCK_STREAM, 0);
		  int r2 = connect(c2, (struct sockaddr *)&a, sizeof(a));
		  int e2 = errno;
		  close(c2);
		  errno = e2;
		  r2;
	  }));
	R("unlink", unlink("sock"));
	ls(ctx, "host ls", ctx->host);
	/* a datagram socket too */
	int d = socket(AF_UNIX, SOCK_DGRAM, 0);
	strcpy(a.sun_path, "dgram");
	R("bind dgram", bind(d, (struct sockaddr *)&a, sizeof(a)));
	int d2 = socket(AF_UNIX, SOCK_DGRAM, 0);
	R("sendto", sendto(d2, "dg", 2, 0, (struct sockaddr *)&a, sizeof(a)));
	char b[4];
	R("recv", recv(d, b, sizeof(b), MSG_DONTWAIT));
	close(d);
	close(d2);
}

/* ======================================================================== */
/* Cases: extended attributes and ACLs */

/* On the host, a file made through the mount carries sandyfs's ownership
 * mark (user.sandyfs), which the mount itself never shows: it is left out
 * of host-side listings. */
static void show_xlist(struct ctx *ctx, const char *label, ssize_t n, const char *buf)
{
	bool host = strncmp(label, "host ", 5) == 0;

	if (n < 0) {
		obs(ctx, "%s: %s", label, ename(errno));
		return;
	}
	struct strv v = {0};
	for (ssize_t o = 0; o < n; o += (ssize_t)strlen(buf + o) + 1)
		if (!host || strcmp(buf + o, "user.sandyfs") != 0)
			sv_add(&v, buf + o);
	sv_sort(&v);
	show_names(ctx, label, &v);
	sv_free(&v);
}

static void xlist(struct ctx *ctx, const char *label, const char *path, bool follow)
{
	char buf[65536];
	ssize_t n = follow ? listxattr(path, buf, sizeof(buf)) : llistxattr(path, buf, sizeof(buf));
	show_xlist(ctx, label, n, buf);
}

static void xget(struct ctx *ctx, const char *label, const char *path, const char *name)
{
	static char buf[70000];
	ssize_t n = getxattr(path, name, buf, sizeof(buf));
	if (n < 0)
		obs(ctx, "%s: %s", label, ename(errno));
	else
		obs(ctx, "%s: %s", label, show(buf, (size_t)n));
}

static void c_xattr_user(struct ctx *ctx)
{
	put(ctx, "f", "x", 0644);
	char b[256];
	R("setxattr user.a", setxattr("f", "user.a", "v1", 2, 0));
	R("size query", getxattr("f", "user.a", NULL, 0));
	R("getxattr into 1 byte", getxattr("f", "user.a", b, 1));
	xget(ctx, "getxattr", "f", "user.a");
	R("XATTR_CREATE existing", setxattr("f", "user.a", "v", 1, XATTR_CREATE));
	R("XATTR_REPLACE missing", setxattr("f", "user.b", "v", 1, XATTR_REPLACE));
	R("XATTR_REPLACE existing", setxattr("f", "user.a", "second value", 12, XATTR_REPLACE));
	xget(ctx, "getxattr", "f", "user.a");
	R("XATTR_CREATE new", setxattr("f", "user.c", "c", 1, XATTR_CREATE));
	R("XATTR_CREATE|XATTR_REPLACE",
	  setxattr("f", "user.c", "c", 1, XATTR_CREATE | XATTR_REPLACE));
	R("bad flags", setxattr("f", "user.c", "c", 1, 0x100));
	R("empty value", setxattr("f", "user.empty", "", 0, 0));
	R("size query of empty", getxattr("f", "user.empty", NULL, 0));
	xget(ctx, "getxattr empty", "f", "user.empty");
	R("binary value", setxattr("f", "user.bin", "\0\1\2\377\0", 5, 0));
	xget(ctx, "getxattr binary", "f", "user.bin");
	R("getxattr missing", getxattr("f", "user.missing", b, sizeof(b)));
	R("size query missing", getxattr("f", "user.missing", NULL, 0));
	R("removexattr missing", removexattr("f", "user.missing"));
	R("listxattr size query", listxattr("f", NULL, 0));
	R("listxattr into 3 bytes", listxattr("f", b, 3));
	xlist(ctx, "listxattr", "f", true);
	R("removexattr user.a", removexattr("f", "user.a"));
	R("getxattr removed", getxattr("f", "user.a", b, sizeof(b)));
	xlist(ctx, "listxattr", "f", true);
	static char big[65540];
	memset(big, 'v', sizeof(big));
	R("value of 3000 bytes", setxattr("f", "user.big", big, 3000, 0));
	R("  size query", getxattr("f", "user.big", NULL, 0));
	R("  remove it", removexattr("f", "user.big"));
	R("value of 65536 bytes", setxattr("f", "user.huge", big, 65536, 0));
	R("value of 65537 bytes", setxattr("f", "user.huger", big, 65537, 0));
	char name[300];
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[255] = 0;
	R("name of 255 bytes", setxattr("f", name, "v", 1, 0));
	R("  size query", getxattr("f", name, NULL, 0));
	R("  remove it", removexattr("f", name));
	name[255] = 'n';
	name[256] = 0;
	R("name of 256 bytes", setxattr("f", name, "v", 1, 0));
	R("getxattr name of 256 bytes", getxattr("f", name, b, sizeof(b)));
	R("name \"user.\"", setxattr("f", "user.", "v", 1, 0));
	R("empty name", setxattr("f", "", "v", 1, 0));
	R("name without namespace", setxattr("f", "noprefix", "v", 1, 0));
	int errs = 0;
	for (int i = 0; i < 40; i++)
		errs += setxattr("f", L("user.k%02d", i), L("value %d", i), 8, 0) != 0;
	obs(ctx, "40 more attributes: %d failed", errs);
	R("listxattr size query", listxattr("f", NULL, 0));
	xlist(ctx, "listxattr", "f", true);
	xlist(ctx, "host listxattr", hp(ctx, "f"), true);
	xget(ctx, "host user.bin", hp(ctx, "f"), "user.bin");
	xget(ctx, "host user.k07", hp(ctx, "f"), "user.k07");
	/* through descriptors */
	int fd = RFD("open O_RDONLY", open("f", O_RDONLY));
	if (fd >= 0) {
		R("fsetxattr", fsetxattr(fd, "user.fd", "by fd", 5, 0));
		R("fgetxattr", fgetxattr(fd, "user.fd", b, sizeof(b)));
		R("flistxattr size", flistxattr(fd, NULL, 0));
		R("fremovexattr", fremovexattr(fd, "user.k00"));
		R("fremovexattr missing", fremovexattr(fd, "user.k00"));
		close(fd);
	}
	fd = RFD("O_PATH fd", open("f", O_PATH));
	if (fd >= 0) {
		R("fgetxattr on O_PATH fd", fgetxattr(fd, "user.fd", b, sizeof(b)));
		close(fd);
	}
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	R("setxattr on a dir", setxattr("d", "user.d", "dir", 3, 0));
	xget(ctx, "getxattr on a dir", "d", "user.d");
	xlist(ctx, "listxattr on a dir", "d", true);
	must(ctx, mkfifo("p", 0644) == 0, "mkfifo");
	R("setxattr user.* on a fifo", setxattr("p", "user.p", "x", 1, 0));
	R("getxattr user.* on a fifo", getxattr("p", "user.p", b, sizeof(b)));
	xlist(ctx, "listxattr on a fifo", "p", false);
	must(ctx, symlink("f", "s") == 0, "symlink");
	R("lsetxattr user.* on a symlink", lsetxattr("s", "user.s", "x", 1, 0));
	xlist(ctx, "llistxattr on a symlink", "s", false);
	xlist(ctx, "listxattr through a symlink", "s", true);
	R("getxattr missing file", getxattr("missing", "user.a", b, sizeof(b)));
	/* attributes survive rename and are shared by hard links */
	R("rename", rename("f", "g"));
	R("link", link("g", "h"));
	xget(ctx, "user.bin after rename, via link", "h", "user.bin");
	R("setxattr via link", setxattr("h", "user.vialink", "L", 1, 0));
	xget(ctx, "seen via the other name", "g", "user.vialink");
	/* copying a file keeps nothing: a new file has no attributes */
	put(ctx, "new", "n", 0644);
	xlist(ctx, "new file", "new", true);
}

static void xlist_caller(struct ctx *ctx)
{
	put(ctx, "u/own", "mine", 0644);
	xlist(ctx, "caller listxattr", "f", true);
	char b[64];
	R("caller getxattr trusted.t", getxattr("f", "trusted.t", b, sizeof(b)));
	R("caller getxattr security.s", getxattr("f", "security.s", b, sizeof(b)));
	R("caller setxattr trusted.c", setxattr("u/own", "trusted.c", "x", 1, 0));
	R("caller setxattr security.c", setxattr("u/own", "security.c", "x", 1, 0));
	xlist(ctx, "caller listxattr own", "u/own", true);
}

static void c_xattr_namespaces(struct ctx *ctx)
{
	put(ctx, "f", "x", 0644);
	char b[256];
	R("setxattr trusted.t", setxattr("f", "trusted.t", "T", 1, 0));
	R("getxattr trusted.t", getxattr("f", "trusted.t", b, sizeof(b)));
	R("setxattr security.s", setxattr("f", "security.s", "S", 1, 0));
	R("getxattr security.s", getxattr("f", "security.s", b, sizeof(b)));
	R("setxattr user.u", setxattr("f", "user.u", "U", 1, 0));
	R("setxattr foo.bar", setxattr("f", "foo.bar", "x", 1, 0));
	R("getxattr foo.bar", getxattr("f", "foo.bar", b, sizeof(b)));
	R("getxattr system.posix_acl_access",
	  getxattr("f", "system.posix_acl_access", b, sizeof(b)));
	R("setxattr system.posix_acl_access garbage",
	  setxattr("f", "system.posix_acl_access", "garbage", 7, 0));
	R("setxattr system.unknown", setxattr("f", "system.unknown", "x", 1, 0));
	R("getxattr system.unknown", getxattr("f", "system.unknown", b, sizeof(b)));
	xlist(ctx, "listxattr", "f", true);
	xlist(ctx, "host listxattr", hp(ctx, "f"), true);
	R("removexattr trusted.t", removexattr("f", "trusted.t"));
	R("setxattr trusted.t again", setxattr("f", "trusted.t", "T", 1, 0));
	if (g_have_caller) {
		caller_dir(ctx, "u");
		as_caller(ctx, xlist_caller);
	}
}

/* A POSIX ACL in the kernel's xattr format (version 2, little endian). */
struct acl_ent {
	uint16_t tag, perm;
	uint32_t id;
};
#define ACL_USER_OBJ  0x01
#define ACL_USER      0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP     0x08
#define ACL_MASK      0x10
#define ACL_OTHER     0x20
#define ACL_NO_ID     0xffffffffu

static size_t acl_build(unsigned char *out, const struct acl_ent *e, size_t n)
{
	uint32_t v = 2;
	memcpy(out, &v, 4);
	for (size_t i = 0; i < n; i++) {
		memcpy(out + 4 + i * 8, &e[i].tag, 2);
		memcpy(out + 4 + i * 8 + 2, &e[i].perm, 2);
		memcpy(out + 4 + i * 8 + 4, &e[i].id, 4);
	}
	return 4 + n * 8;
}

static void acl_show(struct ctx *ctx, const char *label, const char *path, const char *name)
{
	unsigned char b[512];
	ssize_t n = getxattr(path, name, b, sizeof(b));
	if (n < 0) {
		obs(ctx, "%s: %s", label, ename(errno));
		return;
	}
	char line[1024];
	size_t o = 0;
	line[0] = 0;
	for (ssize_t i = 4; i + 8 <= n && o < sizeof(line) - 64; i += 8) {
		uint16_t tag, perm;
		uint32_t id;
		memcpy(&tag, b + i, 2);
		memcpy(&perm, b + i + 2, 2);
		memcpy(&id, b + i + 4, 4);
		const char *who = tag == ACL_USER ? who_u(id) : tag == ACL_GROUP ? who_g(id) : "";
		o += (size_t)snprintf(line + o, sizeof(line) - o, " %x:%s:%o", tag, who, perm);
	}
	obs(ctx, "%s:%s", label, line);
}

static void c_posix_acl(struct ctx *ctx)
{
	put(ctx, "f", "acl", 0640);
	unsigned char b[256];
	uint32_t uid = g_have_caller ? (uint32_t)g_cuid : 12345;
	struct acl_ent acc[] = {
		{ACL_USER_OBJ, 6, ACL_NO_ID},  {ACL_USER, 4, uid},
		{ACL_GROUP_OBJ, 4, ACL_NO_ID}, {ACL_MASK, 6, ACL_NO_ID},
		{ACL_OTHER, 0, ACL_NO_ID},
	};
	size_t n = acl_build(b, acc, 5);
	R("set access ACL", setxattr("f", "system.posix_acl_access", b, n, 0));
	acl_show(ctx, "access ACL", "f", "system.posix_acl_access");
	acl_show(ctx, "host access ACL", hp(ctx, "f"), "system.posix_acl_access");
	st(ctx, "f (group bits show the mask)", "f");
	R("chmod 0600 (sets the mask)", chmod("f", 0600));
	acl_show(ctx, "access ACL", "f", "system.posix_acl_access");
	xlist(ctx, "listxattr", "f", true);
	/* default ACL on a directory: inherited, umask not applied */
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	struct acl_ent def[] = {
		{ACL_USER_OBJ, 7, ACL_NO_ID},  {ACL_USER, 7, uid},
		{ACL_GROUP_OBJ, 5, ACL_NO_ID}, {ACL_MASK, 7, ACL_NO_ID},
		{ACL_OTHER, 5, ACL_NO_ID},
	};
	n = acl_build(b, def, 5);
	R("set default ACL", setxattr("d", "system.posix_acl_default", b, n, 0));
	umask(077);
	int fd = RFD("create in d with umask 077", open("d/new", O_CREAT | O_WRONLY, 0666));
	xclose(fd);
	R("mkdir in d with umask 077", mkdir("d/sub", 0777));
	umask(022);
	st(ctx, "d/new", "d/new");
	st(ctx, "d/sub", "d/sub");
	st(ctx, "host d/new", hp(ctx, "d/new"));
	acl_show(ctx, "d/new access ACL", "d/new", "system.posix_acl_access");
	acl_show(ctx, "d/sub default ACL", "d/sub", "system.posix_acl_default");
	R("remove default ACL", removexattr("d", "system.posix_acl_default"));
	R("set invalid ACL", setxattr("f", "system.posix_acl_access", "\2\0\0\0\1\0", 6, 0));
}

/* A file readable only through an ACL entry for the caller. */
static void prep_acl(struct ctx *ctx)
{
	put(ctx, "f", "acl-granted", 0600);
	unsigned char b[256];
	struct acl_ent acc[] = {
		{ACL_USER_OBJ, 6, ACL_NO_ID},  {ACL_USER, 4, (uint32_t)g_cuid},
		{ACL_GROUP_OBJ, 0, ACL_NO_ID}, {ACL_MASK, 4, ACL_NO_ID},
		{ACL_OTHER, 0, ACL_NO_ID},
	};
	size_t n = acl_build(b, acc, 5);
	must(ctx, setxattr("f", "system.posix_acl_access", b, n, 0) == 0, "set ACL");
	put(ctx, "g", "no acl", 0600);
	must(ctx, mkdir("d", 0700) == 0, "mkdir");
	struct acl_ent dacc[] = {
		{ACL_USER_OBJ, 7, ACL_NO_ID},  {ACL_USER, 7, (uint32_t)g_cuid},
		{ACL_GROUP_OBJ, 0, ACL_NO_ID}, {ACL_MASK, 7, ACL_NO_ID},
		{ACL_OTHER, 0, ACL_NO_ID},
	};
	n = acl_build(b, dacc, 5);
	must(ctx, setxattr("d", "system.posix_acl_access", b, n, 0) == 0, "set dir ACL");
}

static void acl_caller(struct ctx *ctx)
{
	cat(ctx, "read f (ACL grants r)", "f");
	int fd = RFD("open f O_WRONLY (ACL does not grant w)", open("f", O_WRONLY));
	xclose(fd);
	R("access f R_OK", access("f", R_OK));
	R("access f W_OK", access("f", W_OK));
	cat(ctx, "read g (no ACL)", "g");
	R("create in d (ACL grants rwx)", open("d/new", O_CREAT | O_WRONLY, 0644) >= 0 ? 0 : -1);
	ls(ctx, "ls d", "d");
	st(ctx, "d/new", "d/new");
}

static void c_perm_acl(struct ctx *ctx)
{
	as_caller(ctx, acl_caller);
	st(ctx, "host d/new", hp(ctx, "d/new"));
}

/* ======================================================================== */
/* Cases: times */

static void times_line(struct ctx *ctx, const char *label, const char *path)
{
	struct stat s;
	if (lstat(path, &s) != 0)
		obs(ctx, "%s: %s", label, ename(errno));
	else
		obs(ctx, "%s: atime %s mtime %s", label, ts_str(s.st_atim), ts_str(s.st_mtim));
}

static void c_utimensat(struct ctx *ctx)
{
	put(ctx, "f", "times", 0644);
	struct stat s, prev;
	struct timespec ts[2] = {{1000000000, 123456789}, {1200000000, 987654321}};
	R("explicit", utimensat(AT_FDCWD, "f", ts, 0));
	times_line(ctx, "  f", "f");
	times_line(ctx, "  host", hp(ctx, "f"));
	must(ctx, lstat("f", &prev) == 0, "lstat");
	sleep_ms(30);
	struct timespec om[2] = {{0, UTIME_OMIT}, {1300000000, 5}};
	R("atime OMIT, mtime explicit", utimensat(AT_FDCWD, "f", om, 0));
	times_line(ctx, "  f", "f");
	if (lstat("f", &s) == 0)
		obs(ctx, "  ctime advanced: %s",
		    ts_cmp(s.st_ctim, prev.st_ctim) > 0 ? "yes" : "no");
	struct timespec t0 = now_rt();
	struct timespec nw[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
	R("atime NOW, mtime OMIT", utimensat(AT_FDCWD, "f", nw, 0));
	if (lstat("f", &s) == 0)
		obs(ctx, "  atime near now: %s, mtime %s", near(s.st_atim, t0, 2) ? "yes" : "no",
		    ts_str(s.st_mtim));
	struct timespec both[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
	t0 = now_rt();
	R("both NOW", utimensat(AT_FDCWD, "f", both, 0));
	if (lstat("f", &s) == 0)
		obs(ctx, "  atime near now: %s, mtime near now: %s, mtime==ctime: %s",
		    near(s.st_atim, t0, 2) ? "yes" : "no", near(s.st_mtim, t0, 2) ? "yes" : "no",
		    ts_eq(s.st_mtim, s.st_ctim) ? "yes" : "no");
	must(ctx, lstat("f", &prev) == 0, "lstat");
	sleep_ms(30);
	struct timespec omit[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
	R("both OMIT", utimensat(AT_FDCWD, "f", omit, 0));
	if (lstat("f", &s) == 0)
		obs(ctx, "  nothing changed: %s",
		    ts_eq(s.st_atim, prev.st_atim) && ts_eq(s.st_mtim, prev.st_mtim) &&
				    ts_eq(s.st_ctim, prev.st_ctim)
			    ? "yes"
			    : "no");
	t0 = now_rt();
	R("NULL (now)", utimensat(AT_FDCWD, "f", NULL, 0));
	if (lstat("f", &s) == 0)
		obs(ctx, "  mtime near now: %s", near(s.st_mtim, t0, 2) ? "yes" : "no");
	struct timespec neg[2] = {{-1000000000, 5}, {-1, 999999999}};
	R("before 1970", utimensat(AT_FDCWD, "f", neg, 0));
	times_line(ctx, "  f", "f");
	struct timespec fut[2] = {{4102444800LL, 1}, {16725225600LL, 0}};
	R("year 2100 and 2500", utimensat(AT_FDCWD, "f", fut, 0));
	times_line(ctx, "  f", "f");
	times_line(ctx, "  host", hp(ctx, "f"));
	struct timespec bad[2] = {{0, 1000000000}, {0, 0}};
	R("tv_nsec 1e9", utimensat(AT_FDCWD, "f", bad, 0));
	struct timespec bad2[2] = {{0, 0}, {0, -1}};
	R("tv_nsec -1", utimensat(AT_FDCWD, "f", bad2, 0));
	R("missing file", utimensat(AT_FDCWD, "missing", ts, 0));
	R("bad flag", utimensat(AT_FDCWD, "f", ts, 0x1000000));
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	R("on a dir", utimensat(AT_FDCWD, "d", ts, 0));
	times_line(ctx, "  d", "d");
	/* through a descriptor */
	int fd = RFD("open O_RDONLY", open("f", O_RDONLY));
	if (fd >= 0) {
		R("futimens explicit", futimens(fd, ts));
		times_line(ctx, "  f", "f");
		R("futimens NULL", futimens(fd, NULL));
		close(fd);
	}
	/* the tar/rsync pattern: write, set mtime, close: the set mtime stays */
	fd = RFD("open O_WRONLY", open("g", O_CREAT | O_WRONLY | O_TRUNC, 0644));
	if (fd >= 0) {
		R("write", write(fd, "extracted", 9));
		struct timespec old[2] = {{946684800, 0}, {946684800, 500}};
		R("futimens after write", futimens(fd, old));
		R("close", close(fd));
		times_line(ctx, "  g", "g");
		times_line(ctx, "  host g", hp(ctx, "g"));
		sleep_ms(50);
		times_line(ctx, "  g a bit later", "g");
	}
	fd = RFD("open O_WRONLY again", open("g", O_WRONLY));
	if (fd >= 0) {
		R("pwrite", pwrite(fd, "E", 1, 0));
		struct timespec old[2] = {{946684800, 0}, {978307200, 7}};
		R("utimensat by path while open and dirty", utimensat(AT_FDCWD, "g", old, 0));
		R("fsync", fsync(fd));
		R("close", close(fd));
		times_line(ctx, "  g", "g");
		times_line(ctx, "  host g", hp(ctx, "g"));
	}
	cat(ctx, "g", "g");
	/* utime() and utimes() wrappers */
	struct timeval tv[2] = {{1500000000, 1}, {1500000001, 2}};
	R("utimes", utimes("f", tv));
	times_line(ctx, "  f", "f");
}

/* Which of mtime/ctime moved since the previous call. */
struct tstate {
	struct stat s;
};

static void tstep(struct ctx *ctx, const char *label, const char *path, struct tstate *t)
{
	struct stat s;
	if (lstat(path, &s) != 0) {
		obs(ctx, "%s: %s", label, ename(errno));
		return;
	}
	const char *m = ts_cmp(s.st_mtim, t->s.st_mtim) > 0    ? "advanced"
			: ts_cmp(s.st_mtim, t->s.st_mtim) == 0 ? "same"
							       : "went back";
	const char *c = ts_cmp(s.st_ctim, t->s.st_ctim) > 0    ? "advanced"
			: ts_cmp(s.st_ctim, t->s.st_ctim) == 0 ? "same"
							       : "went back";
	obs(ctx, "%s: mtime %s, ctime %s", label, m, c);
	t->s = s;
}

static void tinit(struct tstate *t, const char *path)
{
	if (lstat(path, &t->s) != 0)
		memset(t, 0, sizeof(*t));
	sleep_ms(25);
}

static void c_times_update(struct ctx *ctx)
{
	put(ctx, "f", "abc", 0644);
	put(ctx, "g", "linked", 0644);
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	struct tstate tf, tg, td;
	tinit(&tf, "f");
	tinit(&tg, "g");
	tinit(&td, "d");
	int fd = RFD("open O_APPEND", open("f", O_RDWR | O_APPEND));
	R("write", write(fd, "d", 1));
	tstep(ctx, "f after write (fd open)", "f", &tf);
	xclose(fd);
	tstep(ctx, "f after close", "f", &tf);
	sleep_ms(25);
	char b[8];
	fd = RFD("open O_RDONLY", open("f", O_RDONLY));
	R("read", read(fd, b, sizeof(b)));
	xclose(fd);
	tstep(ctx, "f after read", "f", &tf);
	sleep_ms(25);
	R("chmod", chmod("f", 0600));
	tstep(ctx, "f after chmod", "f", &tf);
	sleep_ms(25);
	R("chown to itself", chown("f", geteuid(), getegid()));
	tstep(ctx, "f after chown to itself", "f", &tf);
	sleep_ms(25);
	R("truncate 1", truncate("f", 1));
	tstep(ctx, "f after truncate", "f", &tf);
	sleep_ms(25);
	R("truncate 1 again", truncate("f", 1));
	tstep(ctx, "f after truncate to the same size", "f", &tf);
	sleep_ms(25);
	fd = RFD("open O_WRONLY", open("f", O_WRONLY));
	R("ftruncate 1", ftruncate(fd, 1));
	xclose(fd);
	tstep(ctx, "f after ftruncate to the same size", "f", &tf);
	sleep_ms(25);
	fd = RFD("open O_TRUNC", open("f", O_WRONLY | O_TRUNC));
	xclose(fd);
	tstep(ctx, "f after O_TRUNC", "f", &tf);
	sleep_ms(25);
	fd = RFD("open O_TRUNC", open("f", O_WRONLY | O_TRUNC));
	xclose(fd);
	tstep(ctx, "f after O_TRUNC of an empty file", "f", &tf);
	sleep_ms(25);
	R("setxattr", setxattr("f", "user.t", "1", 1, 0));
	tstep(ctx, "f after setxattr", "f", &tf);
	sleep_ms(25);
	fd = RFD("open O_RDWR", open("f", O_RDWR));
	R("fallocate KEEP_SIZE", fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 8192));
	tstep(ctx, "f after fallocate KEEP_SIZE", "f", &tf);
	sleep_ms(25);
	R("fallocate", fallocate(fd, 0, 0, 8192));
	tstep(ctx, "f after fallocate growing", "f", &tf);
	xclose(fd);
	/* hard links change the inode's ctime and the directories' times */
	sleep_ms(25);
	R("link g d/g2", link("g", "d/g2"));
	tstep(ctx, "g after link", "g", &tg);
	tstep(ctx, "d after link into it", "d", &td);
	sleep_ms(25);
	R("rename d/g2 d/g3", rename("d/g2", "d/g3"));
	tstep(ctx, "g after rename of its link", "g", &tg);
	tstep(ctx, "d after rename inside", "d", &td);
	sleep_ms(25);
	R("unlink d/g3", unlink("d/g3"));
	tstep(ctx, "g after unlink of its link", "g", &tg);
	tstep(ctx, "d after unlink", "d", &td);
	sleep_ms(25);
	R("truncate g (whose other link is gone)", truncate("g", 2));
	tstep(ctx, "g after truncate", "g", &tg);
	sleep_ms(25);
	R("mkdir d/sub", mkdir("d/sub", 0755));
	tstep(ctx, "d after mkdir inside", "d", &td);
	sleep_ms(25);
	R("rmdir d/sub", rmdir("d/sub"));
	tstep(ctx, "d after rmdir inside", "d", &td);
	sleep_ms(25);
	R("symlink d/l", symlink("x", "d/l"));
	tstep(ctx, "d after symlink inside", "d", &td);
	sleep_ms(25);
	fd = RFD("create d/new", open("d/new", O_CREAT | O_WRONLY, 0644));
	xclose(fd);
	tstep(ctx, "d after create inside", "d", &td);
	sleep_ms(25);
	fd = RFD("O_CREAT d/new again", open("d/new", O_CREAT | O_WRONLY, 0644));
	xclose(fd);
	tstep(ctx, "d after O_CREAT of an existing file", "d", &td);
	sleep_ms(25);
	R("rename d/new out", rename("d/new", "moved"));
	tstep(ctx, "d after rename out", "d", &td);
	/* mmap writes update mtime */
	put(ctx, "m", "mmmmmmmm", 0644);
	struct tstate tm;
	tinit(&tm, "m");
	fd = RFD("open m", open("m", O_RDWR));
	char *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		p[0] = 'M';
		R("msync", msync(p, 4096, MS_SYNC));
		munmap(p, 4096);
	}
	xclose(fd);
	tstep(ctx, "m after write through mmap + msync", "m", &tm);
	/* a fresh file: mtime == ctime, and it is near now */
	struct timespec t0 = now_rt();
	put(ctx, "fresh", "", 0644);
	struct stat s;
	if (lstat("fresh", &s) == 0)
		obs(ctx, "fresh file: mtime==ctime %s, near now %s",
		    ts_eq(s.st_mtim, s.st_ctim) ? "yes" : "no",
		    near(s.st_mtim, t0, 2) ? "yes" : "no");
	host_attrs(ctx, "f");
	host_attrs(ctx, "g");
	host_attrs(ctx, "d");
}

/* ======================================================================== */
/* Cases: ownership, chmod/chown, permissions */

static void own_caller(struct ctx *ctx)
{
	int fd = RFD("caller create", open("u/f", O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	R("caller mkdir", mkdir("u/d", 0755));
	R("caller symlink", symlink("f", "u/s"));
	R("caller mkfifo", mkfifo("u/p", 0644));
	R("caller mknod sock", mknod("u/k", S_IFSOCK | 0644, 0));
	R("caller link", link("u/f", "u/f2"));
	static const char *const names[] = {"u/f", "u/d", "u/s", "u/p", "u/k", "u/f2"};
	for (size_t i = 0; i < 6; i++) {
		st(ctx, names[i], names[i]);
		st(ctx, L("host %s", names[i]), hp(ctx, names[i]));
	}
	/* into the setgid directory */
	fd = RFD("caller create in setgid dir", open("sg/f", O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	R("caller mkdir in setgid dir", mkdir("sg/d", 0755));
	st(ctx, "sg/f", "sg/f");
	st(ctx, "sg/d", "sg/d");
	st(ctx, "host sg/f", hp(ctx, "sg/f"));
	st(ctx, "host sg/d", hp(ctx, "sg/d"));
}

static void c_ownership(struct ctx *ctx)
{
	caller_dir(ctx, "u");
	must(ctx, mkdir("sg", 0777) == 0, "mkdir sg");
	/* root can give the setgid directory a group the caller is not in; the
	 * set-gid bit is set on the host side (the policy never sets it) */
	if (ctx->root)
		must(ctx, chown("sg", g_cuid, XGID) == 0, "chown sg");
	host_chmod(ctx, "sg", 02777);
	st(ctx, "sg", "sg");
	as_caller(ctx, own_caller);
	put(ctx, "mine", "by the body", 0644);
	st(ctx, "mine", "mine");
	st(ctx, "host mine", hp(ctx, "mine"));
	R("mkdir by the body", mkdir("bd", 0755));
	st(ctx, "bd", "bd");
	st(ctx, "host bd", hp(ctx, "bd"));
	int fd = RFD("create in setgid dir by the body", open("sg/b", O_CREAT | O_WRONLY, 0644));
	xclose(fd);
	st(ctx, "sg/b", "sg/b");
}

static void chown_caller(struct ctx *ctx)
{
	put(ctx, "u/f", "caller's", 0644);
	R("chmod 0600 own file", chmod("u/f", 0600));
	st(ctx, "u/f", "u/f");
	R("chmod 01755 own file", chmod("u/f", 01755));
	st(ctx, "u/f", "u/f");
	R("chown own file to own gid", chown("u/f", (uid_t)-1, g_cgid));
	R("chown own file to own uid", chown("u/f", g_cuid, (gid_t)-1));
	R("chown -1 -1", chown("u/f", (uid_t)-1, (gid_t)-1));
	R("chown own file to uid 0", chown("u/f", 0, (gid_t)-1));
	R("chown own file to gid 0 (not a member)", chown("u/f", (uid_t)-1, 0));
	R("chown own file to another uid", chown("u/f", g_cuid + 1, (gid_t)-1));
	st(ctx, "u/f", "u/f");
	int fd = RFD("open own file", open("u/f", O_RDWR));
	if (fd >= 0) {
		R("fchown own gid", fchown(fd, (uid_t)-1, g_cgid));
		R("fchown uid 0", fchown(fd, 0, (gid_t)-1));
		R("fchmod 0640", fchmod(fd, 0640));
		close(fd);
	}
	/* a write by a non-root owner clears set-uid and set-gid (with group
	 * x); the bits are set on the host side */
	host_chmod(ctx, "u/f", 06755);
	st(ctx, "u/f before write", "u/f");
	fd = RFD("open", open("u/f", O_WRONLY));
	if (fd >= 0) {
		R("write", write(fd, "w", 1));
		fst(ctx, "fstat after write", fd);
		close(fd);
	}
	st(ctx, "u/f after write", "u/f");
	st(ctx, "host u/f after write", hp(ctx, "u/f"));
	host_chmod(ctx, "u/f", 06755);
	st(ctx, "u/f before truncate", "u/f");
	R("truncate", truncate("u/f", 0));
	st(ctx, "u/f after truncate", "u/f");
	host_chmod(ctx, "u/f", 06755);
	R("chown to own gid again", chown("u/f", (uid_t)-1, g_cgid));
	st(ctx, "u/f after chown", "u/f");
	host_chmod(ctx, "u/f", 02755);
	R("chmod 0755 removes set-gid", chmod("u/f", 0755));
	st(ctx, "u/f", "u/f");
	/* u/g has set-gid, group x, and a group the caller is not in (root
	 * mode): a chmod keeping the bit silently drops it */
	R("chmod 02711 file of a foreign group (set-gid already set)", chmod("u/g", 02711));
	st(ctx, "u/g", "u/g");
	st(ctx, "host u/g", hp(ctx, "u/g"));
	/* the caller's own symlink */
	R("symlink", symlink("f", "u/s"));
	R("lchown own symlink own gid", lchown("u/s", (uid_t)-1, g_cgid));
	R("lchown own symlink uid 0", lchown("u/s", 0, (gid_t)-1));
	R("chmod through symlink", chmod("u/s", 0644));
	st(ctx, "u/f", "u/f");
	/* ownership of the case dir's files by root */
	/* the body's file: root's in the root mode, the caller's otherwise */
	R("chmod the body's file", chmod("rootf", 0666));
	R("chown the body's file to the caller", chown("rootf", g_cuid, g_cgid));
	R("unlink in the case dir", unlink("rootf"));
}

static void c_chmod_chown_caller(struct ctx *ctx)
{
	caller_dir(ctx, "u");
	put(ctx, "rootf", "root's", 0644);
	put(ctx, "u/g", "foreign group", 0644);
	if (ctx->root)
		must(ctx, chown("u/g", g_cuid, 0) == 0, "chown u/g");
	host_chmod(ctx, "u/g", 02755);
	as_caller(ctx, chown_caller);
	st(ctx, "rootf", "rootf");
	/* as the body (root in the root mode) */
	put(ctx, "b", "body", 0644);
	host_chmod(ctx, "b", 06755);
	st(ctx, "b", "b");
	if (g_have_caller) {
		R("chown to the caller (root only)", chown("b", g_cuid, g_cgid));
		st(ctx, "b after chown (setuid cleared?)", "b");
		st(ctx, "host b", hp(ctx, "b"));
	}
	R("chown to uid 1 gid 1", chown("b", 1, 1));
	st(ctx, "b", "b");
	R("chmod 01777", chmod("b", 01777));
	st(ctx, "b", "b");
	R("chmod missing", chmod("missing", 0644));
	R("chown missing", chown("missing", 0, 0));
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	R("chmod dir 01777", chmod("d", 01777));
	st(ctx, "d", "d");
	host_chmod(ctx, "d", 02755);
	R("chmod dir 0755 (clears set-gid)", chmod("d", 0755));
	st(ctx, "d", "d");
	host_attrs(ctx, "d");
	host_attrs(ctx, "b");
}

static int run(const char *path, char *const argv[]);
static int copy_file(const char *from, const char *to, mode_t mode);

/* --- the caller against files of root ----------------------------------- */

static void prep_perm_open(struct ctx *ctx)
{
	put(ctx, "secret", "secret", 0600);
	put(ctx, "pub", "public", 0644);
	put(ctx, "wpub", "world-writable", 0666);
	put(ctx, "grp", "group", 0640);
	put(ctx, "none", "none", 0000);
	put(ctx, "exe", "#!/bin/sh\nexit 3\n", 0711);
	must(ctx, copy_file("/bin/true", "true", 0711) == 0 && chmod("true", 0711) == 0,
	     "copy /bin/true");
}

static void perm_open_caller(struct ctx *ctx)
{
	int fd;
	fd = RFD("open secret O_RDONLY", open("secret", O_RDONLY));
	expect(ctx, fd < 0 && errno == EACCES, "caller cannot read root's 0600 file");
	xclose(fd);
	fd = RFD("open secret O_WRONLY", open("secret", O_WRONLY));
	xclose(fd);
	fd = RFD("open secret O_PATH", open("secret", O_PATH));
	xclose(fd);
	st(ctx, "stat secret", "secret");
	cat(ctx, "read pub", "pub");
	fd = RFD("open pub O_WRONLY", open("pub", O_WRONLY));
	expect(ctx, fd < 0 && errno == EACCES, "caller cannot write root's 0644 file");
	xclose(fd);
	fd = RFD("open pub O_RDONLY|O_TRUNC", open("pub", O_RDONLY | O_TRUNC));
	xclose(fd);
	fd = RFD("open pub O_RDONLY|O_NOATIME", open("pub", O_RDONLY | O_NOATIME));
	xclose(fd);
	R("truncate pub", truncate("pub", 0));
	fd = RFD("open wpub O_RDWR", open("wpub", O_RDWR));
	if (fd >= 0) {
		R("  write", write(fd, "W", 1));
		close(fd);
	}
	R("truncate wpub", truncate("wpub", 5));
	fd = RFD("open grp O_RDONLY", open("grp", O_RDONLY));
	xclose(fd);
	fd = RFD("open none O_RDONLY", open("none", O_RDONLY));
	xclose(fd);
	R("access secret R_OK", access("secret", R_OK));
	R("access pub R_OK", access("pub", R_OK));
	R("access pub W_OK", access("pub", W_OK));
	if (!daemon_needs_read())
		R("access exe X_OK", access("exe", X_OK));
	else
		obs(ctx,
		    "# access exe X_OK: not compared, the daemon cannot read root's 0711 file");
	R("access exe R_OK", access("exe", R_OK));
	R("faccessat AT_EACCESS pub W_OK", faccessat(AT_FDCWD, "pub", W_OK, AT_EACCESS));
	/* execute-only script: exec needs read for the interpreter */
	/* exec needs only x: the kernel reads the file itself. An unprivileged
	 * daemon cannot read root's 0711 file for the caller, so this is only
	 * compared when the daemon runs as root. */
	char *argv[] = {"x", NULL};
	if (g_root) {
		obs(ctx, "exec of a 0711 script: %s", status_str(run("./exe", argv)));
		obs(ctx, "exec of a 0711 binary: %s", status_str(run("./true", argv)));
	} else {
		obs(ctx, "# exec of root's 0711 files: not compared with an unprivileged daemon");
	}
}

static void c_perm_open(struct ctx *ctx)
{
	if (ctx->root) {
		int fd = RFD("root opens secret O_RDWR", open("secret", O_RDWR));
		xclose(fd);
		fd = RFD("root opens none O_RDWR", open("none", O_RDWR));
		xclose(fd);
		R("root access none X_OK", access("none", X_OK));
		R("root access exe X_OK", access("exe", X_OK));
	}
	as_caller(ctx, perm_open_caller);
	cat(ctx, "wpub", "wpub");
	cat(ctx, "pub", "pub");
	host_same(ctx, "wpub");
}

static void prep_perm_dir(struct ctx *ctx)
{
	must(ctx, mkdir("rd", 0755) == 0 && mkdir("rd/sub", 0755) == 0, "mkdir rd");
	put(ctx, "rd/f", "root's", 0644);
	must(ctx, mkdir("rw", 0777) == 0 && chmod("rw", 0777) == 0, "mkdir rw");
	put(ctx, "rw/f", "root's in rw", 0644);
	must(ctx, mkdir("rw/sub", 0755) == 0, "mkdir rw/sub");
	put(ctx, "target", "t", 0600);
}

static void perm_dir_caller(struct ctx *ctx)
{
	int fd = RFD("create in root's 0755 dir", open("rd/new", O_CREAT | O_WRONLY, 0644));
	expect(ctx, fd < 0 && errno == EACCES, "caller cannot create in root's 0755 dir");
	xclose(fd);
	R("mkdir in it", mkdir("rd/nd", 0755));
	R("mkfifo in it", mkfifo("rd/p", 0644));
	R("symlink in it", symlink("x", "rd/sl"));
	R("link into it", link("own", "rd/own"));
	R("unlink in it", unlink("rd/f"));
	R("rmdir in it", rmdir("rd/sub"));
	R("rename in it", rename("rd/f", "rd/g"));
	R("rename out of it", rename("rd/f", "mine"));
	R("rename own file into it", rename("own", "rd/own"));
	R("hard link to root's file (protected_hardlinks)", link("rd/f", "hl"));
	R("hard link to root's 0600 file", link("target", "hl2"));
	ls(ctx, "readdir rd", "rd");
	st(ctx, "stat rd/f", "rd/f");
	R("create in world-writable dir", open("rw/new", O_CREAT | O_WRONLY, 0644) >= 0 ? 0 : -1);
	st(ctx, "rw/new", "rw/new");
	R("unlink root's file in world-writable dir", unlink("rw/f"));
	R("rename root's dir in world-writable dir", rename("rw/sub", "rw/sub2"));
	R("rename own file over it", rename("rw/new", "rw/sub2"));
	R("rmdir root's dir in world-writable dir", rmdir("rw/sub2"));
	ls(ctx, "readdir rw", "rw");
}

static void c_perm_dir(struct ctx *ctx)
{
	if (ctx->root) {
		put(ctx, "own", "caller's", 0644);
		must(ctx, chown("own", g_cuid, g_cgid) == 0, "chown own");
	} else {
		put(ctx, "own", "caller's", 0644);
	}
	as_caller(ctx, perm_dir_caller);
	ls(ctx, "ls", ".");
	ls(ctx, "host ls rd", hp(ctx, "rd"));
	ls(ctx, "host ls rw", hp(ctx, "rw"));
	st(ctx, "host rw/new", hp(ctx, "rw/new"));
}

static void prep_perm_sticky(struct ctx *ctx)
{
	must(ctx, mkdir("t", 0777) == 0 && chmod("t", 01777) == 0, "mkdir t");
	put(ctx, "t/rootf", "root's", 0666);
	must(ctx, mkdir("t/rootd", 0777) == 0 && chmod("t/rootd", 0777) == 0, "mkdir t/rootd");
	put(ctx, "t/rootg", "root's", 0644);
}

static void perm_sticky_caller(struct ctx *ctx)
{
	put(ctx, "t/mine", "caller's", 0644);
	put(ctx, "t/mine2", "caller's", 0644);
	R("unlink root's file in sticky dir", unlink("t/rootf"));
	R("rename root's file in sticky dir", rename("t/rootf", "t/x"));
	R("rename own file over root's file", rename("t/mine2", "t/rootg"));
	R("rmdir root's dir in sticky dir", rmdir("t/rootd"));
	R("rename own file over root's dir", rename("t/mine2", "t/rootd"));
	int fd = RFD("open root's 0666 file O_RDWR", open("t/rootf", O_RDWR));
	xclose(fd);
	fd = RFD("open root's file O_CREAT|O_RDWR", open("t/rootf", O_CREAT | O_RDWR, 0644));
	xclose(fd);
	R("create in root's 0777 subdir",
	  open("t/rootd/c", O_CREAT | O_WRONLY, 0644) >= 0 ? 0 : -1);
	R("rename own file", rename("t/mine", "t/mine3"));
	R("unlink own file", unlink("t/mine3"));
	ls(ctx, "readdir t", "t");
}

static void c_perm_sticky(struct ctx *ctx)
{
	as_caller(ctx, perm_sticky_caller);
	if (ctx->root) {
		R("root unlinks the caller's file in sticky dir", unlink("t/mine2"));
		R("root unlinks its own", unlink("t/rootg"));
	}
	ls(ctx, "ls t", "t");
	ls(ctx, "host ls t", hp(ctx, "t"));
}

static void prep_perm_search(struct ctx *ctx)
{
	must(ctx, mkdir("priv", 0700) == 0 && chmod("priv", 0700) == 0, "mkdir priv");
	put(ctx, "priv/f", "private", 0644);
	must(ctx, mkdir("priv/d", 0755) == 0, "mkdir priv/d");
	must(ctx, mkdir("xonly", 0711) == 0 && chmod("xonly", 0711) == 0, "mkdir xonly");
	put(ctx, "xonly/f", "reachable", 0644);
	must(ctx, mkdir("ronly", 0744) == 0 && chmod("ronly", 0744) == 0, "mkdir ronly");
	put(ctx, "ronly/f", "listed", 0644);
	must(ctx, mkdir("ronly/sub", 0755) == 0, "mkdir ronly/sub");
}

static void perm_search_caller(struct ctx *ctx)
{
	struct stat s;
	R("stat priv/f", stat("priv/f", &s));
	expect(ctx, errno == EACCES, "caller cannot search root's 0700 dir");
	xclose(RFD("open priv/f", open("priv/f", O_RDONLY)));
	R("opendir priv", ({
		  DIR *d = opendir("priv");
		  int e2 = errno;
		  if (d)
			  closedir(d);
		  errno = e2;
		  d ? 0 : -1;
	  }));
	R("chdir priv", chdir("priv"));
	R("access priv X_OK", access("priv", X_OK));
	R("stat priv/d/..", stat("priv/d/..", &s));
	st(ctx, "stat priv", "priv");
	if (!daemon_needs_read()) {
		cat(ctx, "xonly/f", "xonly/f");
		ls(ctx, "readdir xonly", "xonly");
		R("stat xonly/missing", stat("xonly/missing", &s));
	} else {
		obs(ctx,
		    "# xonly: not compared, the daemon cannot open a 0711 directory of root's");
	}
	ls(ctx, "readdir ronly", "ronly");
	st(ctx, "stat ronly/f after readdir", "ronly/f");
	cat(ctx, "read ronly/f", "ronly/f");
	R("chdir ronly/sub", chdir("ronly/sub"));
	/* listing with stat, as ls -l does */
	ls(ctx, "readdir ronly again", "ronly");
	st(ctx, "stat ronly/sub", "ronly/sub");
}

static void c_perm_search(struct ctx *ctx)
{
	if (ctx->root) {
		cat(ctx, "root reads priv/f", "priv/f");
		ls(ctx, "root lists ronly", "ronly");
	}
	as_caller(ctx, perm_search_caller);
}

static void prep_perm_chmod(struct ctx *ctx)
{
	put(ctx, "rootf", "root's", 0644);
	put(ctx, "rootw", "root's writable", 0666);
}

static void perm_chmod_caller(struct ctx *ctx)
{
	R("chmod root's file", chmod("rootf", 0600));
	expect(ctx, errno == EPERM, "chmod of another user's file is EPERM");
	R("chown root's file to caller", chown("rootf", g_cuid, (gid_t)-1));
	R("chown root's file -1 caller gid", chown("rootf", (uid_t)-1, g_cgid));
	R("chown root's file -1 -1", chown("rootf", (uid_t)-1, (gid_t)-1));
	struct timespec ts[2] = {{1000, 0}, {2000, 0}};
	R("utimensat explicit on root's file", utimensat(AT_FDCWD, "rootf", ts, 0));
	R("utimensat NULL on root's read-only file", utimensat(AT_FDCWD, "rootf", NULL, 0));
	R("utimensat NULL on root's writable file", utimensat(AT_FDCWD, "rootw", NULL, 0));
	struct timespec now[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
	R("utimensat NOW/NOW on root's writable file", utimensat(AT_FDCWD, "rootw", now, 0));
	struct timespec mix[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
	R("utimensat NOW/OMIT on root's writable file", utimensat(AT_FDCWD, "rootw", mix, 0));
	R("utimensat explicit on root's writable file", utimensat(AT_FDCWD, "rootw", ts, 0));
	R("setxattr user.* on root's read-only file", setxattr("rootf", "user.x", "v", 1, 0));
	R("setxattr user.* on root's writable file", setxattr("rootw", "user.x", "v", 1, 0));
	R("removexattr on root's writable file", removexattr("rootw", "user.x"));
	char b[8];
	R("getxattr on root's file", getxattr("rootf", "user.r", b, sizeof(b)));
	R("truncate root's writable file", truncate("rootw", 3));
	int fd = RFD("open root's writable file", open("rootw", O_RDWR));
	if (fd >= 0) {
		R("  fchmod", fchmod(fd, 0600));
		R("  fchown", fchown(fd, g_cuid, g_cgid));
		R("  futimens explicit", futimens(fd, ts));
		R("  futimens NULL", futimens(fd, NULL));
		close(fd);
	}
}

static void c_perm_chmod(struct ctx *ctx)
{
	if (ctx->root)
		must(ctx, setxattr("rootf", "user.r", "R", 1, 0) == 0, "setxattr");
	as_caller(ctx, perm_chmod_caller);
	st(ctx, "rootf", "rootf");
	st(ctx, "rootw", "rootw");
	host_attrs(ctx, "rootw");
}

static void perm_own_caller(struct ctx *ctx)
{
	static const mode_t dm[] = {0500, 0300, 0600, 0100};
	/* Without O_PATH (the portable flavour on Linux) an unprivileged
	 * daemon cannot hold a directory it may search but not read: a
	 * documented limit of that flavour, skipped in both runs alike. */
	bool no_search_only = daemon_needs_read();
	for (size_t i = 0; i < 4; i++) {
		if (no_search_only && !(dm[i] & 0400)) {
			obs(ctx, "# u/d%04o: skipped, the daemon cannot open it without O_PATH",
			    dm[i]);
			continue;
		}
		const char *d = L("u/d%04o", dm[i]);
		if (mkdir(d, 0755) != 0 || putn(ctx, L("%s/f", d), "x", 1, 0644) == false ||
		    chmod(d, dm[i]) != 0) {
			obs(ctx, "!setup %s: %s", d, ename(errno));
			continue;
		}
		R(L("create in %s", d),
		  open(L("%s/new", d), O_CREAT | O_WRONLY, 0644) >= 0 ? 0 : -1);
		R(L("unlink in %s", d), unlink(L("%s/f", d)));
		struct stat s;
		R(L("stat %s/f", d), stat(L("%s/f", d), &s));
		ls(ctx, L("readdir %s", d), d);
		R(L("chdir %s", d), ({
			  int cfd = open(".", O_RDONLY | O_DIRECTORY);
			  int r2 = chdir(d);
			  int e2 = errno;
			  if (r2 == 0)
				  ign(fchdir(cfd));
			  close(cfd);
			  errno = e2;
			  r2;
		  }));
	}
	static const mode_t fm[] = {0000, 0400, 0200, 0100, 0044};
	for (size_t i = 0; i < 5; i++) {
		const char *f = L("u/f%04o", fm[i]);
		if (!putn(ctx, f, "data", 4, 0600) || chmod(f, fm[i]) != 0)
			continue;
		int fd = RFD(L("open %s O_RDONLY", f), open(f, O_RDONLY));
		xclose(fd);
		fd = RFD(L("open %s O_WRONLY", f), open(f, O_WRONLY));
		xclose(fd);
		R(L("access %s R_OK", f), access(f, R_OK));
		R(L("access %s W_OK", f), access(f, W_OK));
		R(L("access %s X_OK", f), access(f, X_OK));
	}
	/* moving a directory to another parent needs write permission on it
	 * (its ".." changes) */
	if (mkdir("u/m", 0755) == 0 && mkdir("u/other", 0755) == 0 && chmod("u/m", 0555) == 0) {
		R("rename 0555 dir to another parent", rename("u/m", "u/other/m"));
		R("rename 0555 dir within its parent", rename("u/m", "u/m2"));
	}
}

static void c_perm_own_modes(struct ctx *ctx)
{
	caller_dir(ctx, "u");
	as_caller(ctx, perm_own_caller);
	if (ctx->root) {
		/* root bypasses all of it */
		cat(ctx, "root reads u/f0000", "u/f0000");
		R("root creates in u/d0500",
		  open("u/d0500/root", O_CREAT | O_WRONLY, 0644) >= 0 ? 0 : -1);
		R("root access X_OK on u/f0044", access("u/f0044", X_OK));
		R("root access X_OK on u/f0100", access("u/f0100", X_OK));
		ls(ctx, "root lists u/d0300", "u/d0300");
	}
	ls(ctx, "host ls u", hp(ctx, "u"));
}

static void supp_caller(struct ctx *ctx)
{
	int fd = RFD("open 0660 file of a supplementary group O_RDWR", open("gf", O_RDWR));
	if (fd >= 0) {
		R("  write", write(fd, "G", 1));
		close(fd);
	}
	cat(ctx, "read 0640 file of a supplementary group", "gf2");
	R("create in 0770 dir of a supplementary group",
	  open("gd/new", O_CREAT | O_WRONLY, 0644) >= 0 ? 0 : -1);
	st(ctx, "gd/new", "gd/new");
	st(ctx, "host gd/new", hp(ctx, "gd/new"));
	R("chown own file to the supplementary group", chown("gd/new", (uid_t)-1, XGID));
	R("chown own file to a group not held", chown("gd/new", (uid_t)-1, XGID + 1));
	st(ctx, "gd/new", "gd/new");
	R("access gf W_OK", access("gf", W_OK));
	ls(ctx, "readdir gd", "gd");
}

static void nosupp_caller(struct ctx *ctx)
{
	int fd = RFD("without the group: open gf", open("gf", O_RDONLY));
	expect(ctx, fd < 0 && errno == EACCES, "the group grants the access");
	xclose(fd);
}

static void c_perm_supplementary(struct ctx *ctx)
{
	put(ctx, "gf", "group file", 0660);
	put(ctx, "gf2", "group file 2", 0640);
	must(ctx, mkdir("gd", 0770) == 0, "mkdir");
	must(ctx,
	     chown("gf", 0, XGID) == 0 && chown("gf2", 0, XGID) == 0 && chown("gd", 0, XGID) == 0 &&
		     chmod("gd", 0770) == 0,
	     "chown to the extra group");
	gid_t x = XGID;
	as_caller_g(ctx, &x, 1, supp_caller);
	as_caller(ctx, nosupp_caller);
	cat(ctx, "gf", "gf");
}

static void prep_perm_symlink(struct ctx *ctx)
{
	must(ctx,
	     mkdir("tt", 0777) == 0 && chmod("tt", 01777) == 0 && chown("tt", g_cuid, g_cgid) == 0,
	     "mkdir tt");
	put(ctx, "target", "target", 0644);
	must(ctx, symlink("../target", "tt/l") == 0, "symlink");
	must(ctx, mkdir("ww", 0777) == 0 && chmod("ww", 01777) == 0, "mkdir ww");
	must(ctx, mkfifo("ww/fifo", 0666) == 0 && chmod("ww/fifo", 0666) == 0, "mkfifo");
	put(ctx, "ww/reg", "r", 0666);
}

static void perm_symlink_caller(struct ctx *ctx)
{
	/* fs.protected_symlinks, fs.protected_fifos, fs.protected_regular:
	 * whatever the host's settings, the same on both sides */
	cat(ctx, "follow root's symlink in caller's sticky dir", "tt/l");
	st(ctx, "lstat it", "tt/l");
	char b[32];
	R("readlink it", readlink("tt/l", b, sizeof(b)));
	int fd = RFD("O_CREAT open of root's fifo in sticky dir",
		     open("ww/fifo", O_CREAT | O_RDWR | O_NONBLOCK, 0644));
	xclose(fd);
	fd = RFD("O_CREAT open of root's file in sticky dir",
		 open("ww/reg", O_CREAT | O_RDWR, 0644));
	xclose(fd);
}

static void c_perm_symlink(struct ctx *ctx)
{
	as_caller(ctx, perm_symlink_caller);
}

/* ======================================================================== */
/* Cases: readdir */

static void big_name(char *b, size_t sz, int i)
{
	snprintf(b, sz, "e%05d-%.*s", i, i % 40, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

#define BIG_N 10000

/* Compares a sorted name list with the expected names: duplicates, missing
 * and extra entries. */
static void set_check(struct ctx *ctx, const char *label, struct strv *got)
{
	sv_sort(got);
	size_t dups = 0, missing = 0, extra = 0;
	struct strv want = {0};
	char n[64];
	for (int i = 0; i < BIG_N; i++) {
		big_name(n, sizeof(n), i);
		sv_add(&want, n);
	}
	sv_sort(&want);
	for (size_t i = 1; i < got->n; i++)
		dups += !strcmp(got->v[i], got->v[i - 1]);
	size_t a = 0, b = 0;
	while (a < got->n || b < want.n) {
		int c = a >= got->n ? 1 : b >= want.n ? -1 : strcmp(got->v[a], want.v[b]);
		if (c == 0) {
			a++;
			b++;
		} else if (c < 0) {
			if (!(a > 0 && !strcmp(got->v[a], got->v[a - 1])))
				extra++;
			a++;
		} else {
			missing++;
			b++;
		}
	}
	obs(ctx, "%s: %zu entries, %zu duplicated, %zu missing, %zu extra", label, got->n, dups,
	    missing, extra);
	sv_free(&want);
}

struct lde {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static void c_readdir_10000(struct ctx *ctx)
{
	must(ctx, mkdir("big", 0755) == 0, "mkdir");
	char n[64];
	int errs = 0;
	for (int i = 0; i < BIG_N; i++) {
		big_name(n, sizeof(n), i);
		int fd = open(L("big/%s", n), O_CREAT | O_EXCL | O_WRONLY, 0644);
		errs += fd < 0;
		xclose(fd);
	}
	obs(ctx, "created %d files, %d failed", BIG_N, errs);
	DIR *d = opendir("big");
	if (!must(ctx, d != NULL, "opendir"))
		return;
	struct strv all = {0}, rest1 = {0}, rest2 = {0};
	int dots = 0;
	long mid = -1;
	long spots[10];
	char spot_names[10][64];
	int nspots = 0;
	struct dirent *e;
	int k = 0;
	for (;;) {
		if (k > 0 && k % 997 == 0 && nspots < 10) {
			spots[nspots] = telldir(d);
			e = readdir(d);
			if (!e)
				break;
			snprintf(spot_names[nspots], 64, "%.63s", e->d_name);
			nspots++;
		} else {
			e = readdir(d);
			if (!e)
				break;
		}
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
			dots++;
			continue;
		}
		sv_add(&all, e->d_name);
		k++;
		if (k == BIG_N / 2)
			mid = telldir(d);
		if (k > BIG_N / 2)
			sv_add(&rest1, e->d_name);
	}
	obs(ctx, "dot entries: %d", dots);
	set_check(ctx, "readdir", &all);
	if (mid >= 0) {
		seekdir(d, mid);
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				sv_add(&rest2, e->d_name);
		bool same = rest1.n == rest2.n;
		for (size_t i = 0; same && i < rest1.n; i++)
			same = !strcmp(rest1.v[i], rest2.v[i]);
		obs(ctx,
		    "seekdir(telldir at the middle): the rest repeats exactly: %s (%zu vs %zu)",
		    same ? "yes" : "no", rest1.n, rest2.n);
	}
	int spot_ok = 0;
	for (int i = nspots - 1; i >= 0; i--) {
		seekdir(d, spots[i]);
		e = readdir(d);
		spot_ok += e && !strcmp(e->d_name, spot_names[i]);
	}
	obs(ctx, "seekdir to %d remembered positions (backwards): %d right", nspots, spot_ok);
	rewinddir(d);
	struct strv again = {0};
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			sv_add(&again, e->d_name);
	set_check(ctx, "after rewinddir", &again);
	closedir(d);
	sv_free(&all);
	sv_free(&rest1);
	sv_free(&rest2);
	sv_free(&again);
	/* getdents64 with a small buffer */
	int fd = RFD("open big", open("big", O_RDONLY | O_DIRECTORY));
	if (fd >= 0) {
		struct strv g = {0};
		char buf[256];
		long calls = 0;
		int bad_type = 0;
		for (;;) {
			long r = syscall(SYS_getdents64, fd, buf, sizeof(buf));
			if (r <= 0) {
				if (r < 0)
					obs(ctx, "getdents64: %s", ename(errno));
				break;
			}
			calls++;
			for (long o = 0; o < r;) {
				struct lde *de = (struct lde *)(buf + o);
				if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
					sv_add(&g, de->d_name);
					bad_type += de->d_type != DT_REG;
				}
				o += de->d_reclen;
			}
		}
		set_check(ctx, "getdents64 with a 256-byte buffer", &g);
		obs(ctx, "  d_type not DT_REG: %d, calls > 1000: %s", bad_type,
		    calls > 1000 ? "yes" : "no");
		sv_free(&g);
		R("getdents64 buffer too small for one entry", syscall(SYS_getdents64, fd, buf, 8));
		R("lseek 0", lseek(fd, 0, SEEK_SET));
		R("getdents64 buffer too small for one entry", syscall(SYS_getdents64, fd, buf, 8));
		close(fd);
	}
	/* a second listing from another process */
	pid_t pid = fork();
	if (pid == 0) {
		struct strv p = {0};
		int e2 = list_names("big", &p, false);
		if (e2)
			obs(ctx, "child listing: %s", ename(e2));
		set_check(ctx, "listing from another process", &p);
		_exit(0);
	}
	reap(ctx, "lister", pid);
	struct strv h = {0};
	int e2 = list_names(hp(ctx, "big"), &h, false);
	if (e2)
		obs(ctx, "host listing: %s", ename(e2));
	set_check(ctx, "host listing", &h);
	sv_free(&h);
	/* remove them all while reading, as rm -r does */
	d = opendir("big");
	int removed = 0, rmerr = 0;
	while (d && (e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			removed++;
		else
			rmerr++;
	}
	if (d)
		closedir(d);
	obs(ctx, "removed while reading: %d, errors %d", removed, rmerr);
	R("rmdir big", rmdir("big"));
}

static void c_readdir_rewind(struct ctx *ctx)
{
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	for (int i = 0; i < 10; i++)
		put(ctx, L("d/f%d", i), "", 0644);
	DIR *d = opendir("d");
	if (!must(ctx, d != NULL, "opendir"))
		return;
	int n = 0;
	while (readdir(d))
		n++;
	obs(ctx, "first pass: %d entries", n);
	put(ctx, "d/added", "", 0644);
	R("unlink d/f3", unlink("d/f3"));
	rewinddir(d);
	struct strv v = {0};
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		sv_add(&v, e->d_name);
	sv_sort(&v);
	show_names(ctx, "after rewinddir", &v);
	sv_free(&v);
	/* seekdir(0)... positions are opaque, but telldir at the start is a
	 * position too */
	rewinddir(d);
	long start = telldir(d);
	e = readdir(d);
	char first[256];
	snprintf(first, sizeof(first), "%s", e ? e->d_name : "(none)");
	while (readdir(d)) {
	}
	seekdir(d, start);
	e = readdir(d);
	obs(ctx, "seekdir(telldir at start) gives the first entry again: %s",
	    e && !strcmp(e->d_name, first) ? "yes" : "no");
	/* readdir on a directory removed while open */
	closedir(d);
	must(ctx, mkdir("gone", 0755) == 0, "mkdir");
	d = opendir("gone");
	R("rmdir gone", rmdir("gone"));
	n = 0;
	while (d && readdir(d))
		n++;
	obs(ctx, "entries of a removed dir: %d", n);
	if (d)
		closedir(d);
}

static void c_readdir_types(struct ctx *ctx)
{
	put(ctx, "f", "", 0644);
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	must(ctx, symlink("f", "l") == 0, "symlink");
	must(ctx, mkfifo("p", 0644) == 0, "mkfifo");
	must(ctx, mknod("s", S_IFSOCK | 0644, 0) == 0, "mknod sock");
	must(ctx, link("f", "f2") == 0, "link");
	for (int i = 0; i < 50; i++)
		putn(ctx, L("sized%02d", i),
		     "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefgh", (size_t)i, 0644);
	ls(ctx, "names and d_type", ".");
	DIR *d = opendir(".");
	if (!d)
		return;
	struct dirent *e;
	int ino_mismatch = 0, size_mismatch = 0, n = 0;
	while ((e = readdir(d)) != NULL) {
		struct stat s;
		if (fstatat(dirfd(d), e->d_name, &s, AT_SYMLINK_NOFOLLOW) != 0) {
			obs(ctx, "stat %s: %s", shows(e->d_name), ename(errno));
			continue;
		}
		n++;
		ino_mismatch += s.st_ino != e->d_ino;
		int idx;
		if (sscanf(e->d_name, "sized%d", &idx) == 1)
			size_mismatch += s.st_size != idx;
	}
	closedir(d);
	obs(ctx, "%d entries: d_ino != st_ino for %d, sizes wrong for %d (ls -l pattern)", n,
	    ino_mismatch, size_mismatch);
	ls(ctx, "host names and d_type", ctx->host);
}

static void c_readdir_unlink_during(struct ctx *ctx)
{
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	for (int i = 0; i < 2000; i++) {
		int fd = open(L("d/n%04d", i), O_CREAT | O_WRONLY, 0644);
		xclose(fd);
	}
	DIR *d = opendir("d");
	if (!must(ctx, d != NULL, "opendir"))
		return;
	struct strv seen = {0};
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sv_add(&seen, e->d_name);
		if (unlinkat(dirfd(d), e->d_name, 0) != 0)
			obs(ctx, "unlink %s: %s", e->d_name, ename(errno));
		/* and create one that must not matter for the ones not yet read */
		if (seen.n % 100 == 0) {
			int fd = openat(dirfd(d), L("late%04zu", seen.n), O_CREAT | O_WRONLY, 0644);
			xclose(fd);
		}
	}
	closedir(d);
	sv_sort(&seen);
	size_t dups = 0, orig = 0;
	for (size_t i = 0; i < seen.n; i++) {
		dups += i > 0 && !strcmp(seen.v[i], seen.v[i - 1]);
		orig += seen.v[i][0] == 'n' && !(i > 0 && !strcmp(seen.v[i], seen.v[i - 1]));
	}
	obs(ctx, "original entries seen: %zu of 2000, duplicates %zu", orig, dups);
	struct strv left = {0};
	list_names("d", &left, false);
	size_t left_orig = 0;
	for (size_t i = 0; i < left.n; i++)
		left_orig += left.v[i][0] == 'n';
	obs(ctx, "original entries left: %zu", left_orig);
	sv_free(&seen);
	sv_free(&left);
}

/* ======================================================================== */
/* Cases: statfs, fsync, copy_file_range, sendfile/splice */

static void c_statfs(struct ctx *ctx)
{
	struct statvfs a, h;
	if (R("statvfs .", statvfs(".", &a)) != 0 ||
	    !must(ctx, statvfs(ctx->host, &h) == 0, "statvfs host"))
		return;
	obs(ctx, "bsize=%lu frsize=%lu namemax=%lu blocks=%llu files=%llu", a.f_bsize, a.f_frsize,
	    a.f_namemax, (unsigned long long)a.f_blocks, (unsigned long long)a.f_files);
	obs(ctx, "equal to the host's: bsize %s frsize %s namemax %s blocks %s files %s",
	    a.f_bsize == h.f_bsize ? "yes" : "no", a.f_frsize == h.f_frsize ? "yes" : "no",
	    a.f_namemax == h.f_namemax ? "yes" : "no", a.f_blocks == h.f_blocks ? "yes" : "no",
	    a.f_files == h.f_files ? "yes" : "no");
	/* free counts move with everything else on the machine: near, not equal */
	unsigned long long tol = a.f_blocks / 100 + 256, ftol = a.f_files / 100 + 256;
#define NEAR_U(x, y, t) ((x) > (y) ? (x) - (y) <= (t) : (y) - (x) <= (t))
	obs(ctx, "near the host's: bfree %s bavail %s ffree %s favail %s",
	    NEAR_U((unsigned long long)a.f_bfree, (unsigned long long)h.f_bfree, tol) ? "yes"
										      : "no",
	    NEAR_U((unsigned long long)a.f_bavail, (unsigned long long)h.f_bavail, tol) ? "yes"
											: "no",
	    NEAR_U((unsigned long long)a.f_ffree, (unsigned long long)h.f_ffree, ftol) ? "yes"
										       : "no",
	    NEAR_U((unsigned long long)a.f_favail, (unsigned long long)h.f_favail, ftol) ? "yes"
											 : "no");
	obs(ctx, "relations: bavail<=bfree %s bfree<=blocks %s ffree<=files %s",
	    a.f_bavail <= a.f_bfree ? "yes" : "no", a.f_bfree <= a.f_blocks ? "yes" : "no",
	    a.f_ffree <= a.f_files ? "yes" : "no");
	obs(ctx, "read-only: %s", (a.f_flag & ST_RDONLY) ? "yes" : "no");
	put(ctx, "f", "x", 0644);
	int fd = RFD("open", open("f", O_RDONLY));
	struct statvfs b;
	if (fd >= 0 && R("fstatvfs", fstatvfs(fd, &b)) == 0)
		obs(ctx, "fstatvfs equals statvfs: %s",
		    b.f_bsize == a.f_bsize && b.f_blocks == a.f_blocks && b.f_files == a.f_files &&
				    b.f_namemax == a.f_namemax
			    ? "yes"
			    : "no");
	xclose(fd);
	struct statfs sf;
	if (R("statfs f", statfs("f", &sf)) == 0)
		obs(ctx, "statfs: bsize=%ld namelen=%ld blocks==statvfs %s", (long)sf.f_bsize,
		    (long)sf.f_namelen,
		    (unsigned long long)sf.f_blocks == (unsigned long long)a.f_blocks ? "yes"
										      : "no");
	R("statvfs missing", statvfs("missing", &b));
	R("statvfs f/", statvfs("f/", &b));
	/* an 8 MiB write is visible in bfree (coarsely); another process
	 * freeing space at that moment can hide one write, not three */
	fd = open("big", O_CREAT | O_WRONLY, 0644);
	if (fd >= 0) {
		char *buf = calloc(1, 8 * MIB);
		bool down = false;
		for (int i = 0; i < 3 && !down && buf; i++) {
			statvfs(".", &a);
			ign(write(fd, buf, 8 * MIB));
			fsync(fd);
			statvfs(".", &b);
			down = b.f_bfree < a.f_bfree;
		}
		close(fd);
		free(buf);
		obs(ctx, "bfree went down after writing 8 MiB (one of three tries): %s",
		    down ? "yes" : "no (other activity?)");
	}
}

static void c_fsync(struct ctx *ctx)
{
	put(ctx, "f", "data", 0644);
	int fd = RFD("open rw", open("f", O_RDWR));
	if (fd >= 0) {
		R("write", write(fd, "more", 4));
		R("fsync", fsync(fd));
		R("fdatasync", fdatasync(fd));
		R("sync_file_range WRITE", sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE));
		R("sync_file_range WAIT_BEFORE|WRITE|WAIT_AFTER",
		  sync_file_range(fd, 0, 4096,
				  SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
					  SYNC_FILE_RANGE_WAIT_AFTER));
		R("sync_file_range bad flags", sync_file_range(fd, 0, 0, 0x100));
		R("syncfs", syncfs(fd));
		close(fd);
	}
	fd = RFD("open rdonly", open("f", O_RDONLY));
	if (fd >= 0) {
		R("fsync on O_RDONLY fd", fsync(fd));
		R("fdatasync on O_RDONLY fd", fdatasync(fd));
		close(fd);
	}
	fd = RFD("open dir", open(".", O_RDONLY | O_DIRECTORY));
	if (fd >= 0) {
		R("fsync on dir", fsync(fd));
		R("fdatasync on dir", fdatasync(fd));
		close(fd);
	}
	fd = RFD("O_PATH fd", open("f", O_PATH));
	if (fd >= 0) {
		R("fsync on O_PATH fd", fsync(fd));
		close(fd);
	}
	must(ctx, mkfifo("p", 0644) == 0, "mkfifo");
	fd = RFD("open fifo", open("p", O_RDWR));
	if (fd >= 0) {
		R("fsync on fifo", fsync(fd));
		close(fd);
	}
	cat(ctx, "f", "f");
	host_same(ctx, "f");
	sync();
	obs(ctx, "sync: done");
}

static void c_copy_file_range(struct ctx *ctx)
{
	const size_t n = 100 * KIB + 7;
	char *src = malloc(n);
	if (!src)
		abort();
	for (size_t i = 0; i < n; i++)
		src[i] = (char)(i * 7 + i / 4096);
	putn(ctx, "src", src, n, 0644);
	int s = RFD("open src", open("src", O_RDONLY));
	int d = RFD("open dst", open("dst", O_CREAT | O_RDWR, 0644));
	if (s < 0 || d < 0)
		goto out;
	loff_t oi = 0, oo = 0;
	R("64KiB src@0 -> dst@0", copy_file_range(s, &oi, d, &oo, 64 * KIB, 0));
	obs(ctx, "  offsets now %lld %lld, file positions %ld %ld", (long long)oi, (long long)oo,
	    (long)lseek(s, 0, SEEK_CUR), (long)lseek(d, 0, SEEK_CUR));
	R("lseek src", lseek(s, 64 * KIB, SEEK_SET));
	R("lseek dst", lseek(d, 64 * KIB, SEEK_SET));
	size_t total = 0;
	for (;;) {
		ssize_t r = copy_file_range(s, NULL, d, NULL, MIB, 0);
		if (r <= 0) {
			if (r < 0)
				obs(ctx, "copy_file_range: %s", ename(errno));
			break;
		}
		total += (size_t)r;
	}
	obs(ctx, "rest with file positions: %zu bytes, positions %ld %ld", total,
	    (long)lseek(s, 0, SEEK_CUR), (long)lseek(d, 0, SEEK_CUR));
	obs(ctx, "dst equals src: %s", same_content("src", "dst"));
	oi = 200 * KIB;
	R("at src EOF", copy_file_range(s, &oi, d, NULL, 100, 0));
	oi = 0;
	oo = MIB;
	R("into dst@1MiB (leaves a hole)", copy_file_range(s, &oi, d, &oo, 10, 0));
	fst(ctx, "  dst", d);
	oi = 0;
	R("len 0", copy_file_range(s, &oi, d, NULL, 0, 0));
	R("flags 1", copy_file_range(s, NULL, d, NULL, 10, 1));
	close(d);
	int a = RFD("dst O_APPEND", open("dst", O_WRONLY | O_APPEND));
	oi = 0;
	R("to O_APPEND fd", copy_file_range(s, &oi, a, NULL, 10, 0));
	xclose(a);
	int ro = RFD("dst O_RDONLY", open("dst", O_RDONLY));
	oi = 0;
	R("to O_RDONLY fd", copy_file_range(s, &oi, ro, NULL, 10, 0));
	oi = 0;
	R("from O_WRONLY? (src fd is O_RDONLY) to itself read-only",
	  copy_file_range(ro, &oi, ro, NULL, 10, 0));
	xclose(ro);
	int wo = RFD("src O_WRONLY", open("src", O_WRONLY));
	oi = 0;
	int d2 = open("dst", O_WRONLY);
	R("from O_WRONLY fd", copy_file_range(wo, &oi, d2, NULL, 10, 0));
	xclose(wo);
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	oi = 0;
	R("from a directory", copy_file_range(dir, &oi, d2, NULL, 10, 0));
	xclose(dir);
	xclose(d2);
	/* within one file */
	int w = RFD("open src rw", open("src", O_RDWR));
	if (w >= 0) {
		oi = 0;
		oo = 8192;
		R("within one file, overlapping", copy_file_range(w, &oi, w, &oo, 16384, 0));
		oi = 0;
		oo = 50 * KIB;
		R("within one file, disjoint", copy_file_range(w, &oi, w, &oo, 4096, 0));
		oi = 0;
		oo = n;
		R("within one file, to its end", copy_file_range(w, &oi, w, &oo, 4096, 0));
		close(w);
	}
	st(ctx, "src", "src");
	cat(ctx, "src", "src");
	host_same(ctx, "src");
	host_same(ctx, "dst");
	st(ctx, "dst", "dst");
out:
	xclose(s);
	free(src);
}

static void c_sendfile_splice(struct ctx *ctx)
{
	const size_t n = 300 * KIB + 3;
	char *src = malloc(n);
	if (!src)
		abort();
	for (size_t i = 0; i < n; i++)
		src[i] = (char)(i ^ (i >> 9));
	putn(ctx, "src", src, n, 0644);
	int s = RFD("open src", open("src", O_RDONLY));
	int d = RFD("open dst", open("dst", O_CREAT | O_WRONLY | O_TRUNC, 0644));
	if (s >= 0 && d >= 0) {
		off_t off = 0;
		size_t total = 0;
		for (;;) {
			ssize_t r = sendfile(d, s, &off, 65536);
			if (r <= 0)
				break;
			total += (size_t)r;
		}
		obs(ctx, "sendfile: %zu bytes, offset %ld", total, (long)off);
		close(d);
		obs(ctx, "dst equals src: %s", same_content("src", "dst"));
		host_same(ctx, "dst");
		int p[2];
		if (pipe(p) == 0) {
			int d2 = RFD("open dst2", open("dst2", O_CREAT | O_WRONLY | O_TRUNC, 0644));
			loff_t in = 0, out = 0;
			total = 0;
			for (;;) {
				ssize_t r = splice(s, &in, p[1], NULL, 32768, 0);
				if (r <= 0)
					break;
				ssize_t m = 0;
				while (m < r) {
					ssize_t w =
						splice(p[0], NULL, d2, &out, (size_t)(r - m), 0);
					if (w <= 0)
						break;
					m += w;
				}
				total += (size_t)m;
			}
			obs(ctx, "splice file->pipe->file: %zu bytes", total);
			xclose(d2);
			close(p[0]);
			close(p[1]);
			obs(ctx, "dst2 equals src: %s", same_content("src", "dst2"));
			host_same(ctx, "dst2");
		}
	}
	xclose(s);
	free(src);
}

/* ======================================================================== */
/* Cases: locks */

/* A waiter child writes "r" to the pipe before it blocks and "a" once it
 * has the lock: it must not have the lock 150 ms later. */
static const char *waiter_blocked(int fd)
{
	char ch = 0;
	if (read(fd, &ch, 1) != 1 || ch != 'r')
		return "waiter did not start";
	sleep_ms(150);
	struct pollfd pf = {.fd = fd, .events = POLLIN};
	return poll(&pf, 1, 0) == 0 ? "yes" : "no, it got the lock while it was held";
}

static void c_flock(struct ctx *ctx)
{
	put(ctx, "f", "lock", 0644);
	int a = RFD("open A", open("f", O_RDWR));
	int b = RFD("open B", open("f", O_RDWR));
	if (a < 0 || b < 0) {
		xclose(a);
		xclose(b);
		return;
	}
	R("A LOCK_EX|LOCK_NB", flock(a, LOCK_EX | LOCK_NB));
	R("B LOCK_EX|LOCK_NB", flock(b, LOCK_EX | LOCK_NB));
	R("B LOCK_SH|LOCK_NB", flock(b, LOCK_SH | LOCK_NB));
	int c = dup(a);
	R("dup of A LOCK_UN", flock(c, LOCK_UN));
	close(c);
	R("B LOCK_EX|LOCK_NB after unlock via dup", flock(b, LOCK_EX | LOCK_NB));
	pid_t pid = fork();
	if (pid == 0) {
		int x = open("f", O_RDWR);
		R("  child LOCK_EX|LOCK_NB", flock(x, LOCK_EX | LOCK_NB));
		R("  child LOCK_SH|LOCK_NB", flock(x, LOCK_SH | LOCK_NB));
		_exit(0);
	}
	reap(ctx, "locker", pid);
	/* a blocking waiter gets the lock once it is released */
	int sync[2];
	if (pipe(sync) != 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(sync[0]);
		int x = open("f", O_RDWR);
		ign(write(sync[1], "r", 1));
		R("  child LOCK_EX (blocks)", flock(x, LOCK_EX));
		ign(write(sync[1], "a", 1));
		_exit(0);
	}
	close(sync[1]);
	obs(ctx, "waiter blocked until the release: %s", waiter_blocked(sync[0]));
	/* the waiter reports once it has the lock: log the release after it */
	int ur = flock(b, LOCK_UN), ue = errno;
	reap(ctx, "waiter", pid);
	close(sync[0]);
	obs(ctx, "(before that) B LOCK_UN: %s", ur ? ename(ue) : "0");
	R("A LOCK_SH|LOCK_NB", flock(a, LOCK_SH | LOCK_NB));
	R("B LOCK_SH|LOCK_NB", flock(b, LOCK_SH | LOCK_NB));
	R("A upgrade to LOCK_EX|LOCK_NB", flock(a, LOCK_EX | LOCK_NB));
	R("B LOCK_UN", flock(b, LOCK_UN));
	R("A upgrade to LOCK_EX|LOCK_NB", flock(a, LOCK_EX | LOCK_NB));
	close(a);
	R("B LOCK_EX|LOCK_NB after A closed", flock(b, LOCK_EX | LOCK_NB));
	close(b);
	int d = RFD("open dir", open(".", O_RDONLY | O_DIRECTORY));
	if (d >= 0) {
		R("flock on a dir", flock(d, LOCK_EX | LOCK_NB));
		close(d);
	}
	R("flock bad op", flock(0 > 1 ? 0 : -1, LOCK_EX));
}

static const char *lk_type(short t)
{
	return t == F_RDLCK ? "RD" : t == F_WRLCK ? "WR" : t == F_UNLCK ? "UN" : "?";
}

static int lk(int fd, int cmd, short type, off_t start, off_t len, struct flock *out)
{
	struct flock f = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
	int r = fcntl(fd, cmd, &f);
	if (out)
		*out = f;
	return r;
}

static void c_posix_locks(struct ctx *ctx)
{
	put(ctx, "f", "0123456789012345678901234567890123456789012345678901234567890123456789",
	    0644);
	int fd = RFD("open", open("f", O_RDWR));
	if (fd < 0)
		return;
	pid_t me = getpid();
	R("F_SETLK WR 0+50", lk(fd, F_SETLK, F_WRLCK, 0, 50, NULL));
	struct flock g;
	R("own F_GETLK WR 0+10", lk(fd, F_GETLK, F_WRLCK, 0, 10, &g));
	obs(ctx, "  -> %s", lk_type(g.l_type));
	pid_t pid = fork();
	if (pid == 0) {
		int x = open("f", O_RDWR);
		struct flock h;
		R("  child F_GETLK WR 0+10", lk(x, F_GETLK, F_WRLCK, 0, 10, &h));
		obs(ctx, "  -> %s %lld+%lld pid %s", lk_type(h.l_type), (long long)h.l_start,
		    (long long)h.l_len, h.l_pid == me ? "of the holder" : L("%d", h.l_pid));
		R("  child F_GETLK RD 49+1", lk(x, F_GETLK, F_RDLCK, 49, 1, &h));
		obs(ctx, "  -> %s", lk_type(h.l_type));
		R("  child F_GETLK WR 50+10", lk(x, F_GETLK, F_WRLCK, 50, 10, &h));
		obs(ctx, "  -> %s", lk_type(h.l_type));
		R("  child F_SETLK WR 10+10", lk(x, F_SETLK, F_WRLCK, 10, 10, NULL));
		R("  child F_SETLK RD 10+10", lk(x, F_SETLK, F_RDLCK, 10, 10, NULL));
		R("  child F_SETLK WR 60+10", lk(x, F_SETLK, F_WRLCK, 60, 10, NULL));
		R("  child F_SETLK WR 0+0 (to EOF and beyond)",
		  lk(x, F_SETLK, F_WRLCK, 0, 0, NULL));
		_exit(0);
	}
	reap(ctx, "child", pid);
	/* closing any descriptor of the file drops the process's locks */
	int other = RFD("open another fd", open("f", O_RDONLY));
	R("close it", close(other));
	pid = fork();
	if (pid == 0) {
		int x = open("f", O_RDWR);
		R("  child F_SETLK WR 0+10 after the holder closed another fd",
		  lk(x, F_SETLK, F_WRLCK, 0, 10, NULL));
		_exit(0);
	}
	reap(ctx, "child", pid);
	/* F_SETLKW waits for the release */
	R("F_SETLK RD 0+100", lk(fd, F_SETLK, F_RDLCK, 0, 100, NULL));
	int sync[2];
	if (pipe(sync) != 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(sync[0]);
		int x = open("f", O_RDWR);
		R("  child F_SETLK RD 0+100 (shared)", lk(x, F_SETLK, F_RDLCK, 0, 100, NULL));
		R("  child F_SETLK WR 0+100", lk(x, F_SETLK, F_WRLCK, 0, 100, NULL));
		ign(write(sync[1], "r", 1));
		R("  child F_SETLKW WR 0+100 (waits)", lk(x, F_SETLKW, F_WRLCK, 0, 100, NULL));
		ign(write(sync[1], "a", 1));
		_exit(0);
	}
	close(sync[1]);
	obs(ctx, "waiter blocked until the release: %s", waiter_blocked(sync[0]));
	/* the waiter reports once it has the lock: log the release after it */
	int ur = lk(fd, F_SETLK, F_UNLCK, 0, 100, NULL), ue = errno;
	reap(ctx, "waiter", pid);
	close(sync[0]);
	obs(ctx, "(before that) F_SETLK UN 0+100: %s", ur ? ename(ue) : "0");
	/* locks and lock types against the open mode */
	int ro = RFD("open O_RDONLY", open("f", O_RDONLY));
	R("F_SETLK WR on O_RDONLY fd", lk(ro, F_SETLK, F_WRLCK, 0, 1, NULL));
	R("F_SETLK RD on O_RDONLY fd", lk(ro, F_SETLK, F_RDLCK, 0, 1, NULL));
	xclose(ro);
	R("F_SETLK bad type", lk(fd, F_SETLK, 99, 0, 1, NULL));
	R("F_SETLK negative start", lk(fd, F_SETLK, F_WRLCK, -5, 1, NULL));
	/* OFD locks belong to the open file description */
	int o1 = RFD("OFD fd 1", open("f", O_RDWR));
	int o2 = RFD("OFD fd 2", open("f", O_RDWR));
	R("F_OFD_SETLK WR 0+10 on fd 1", lk(o1, F_OFD_SETLK, F_WRLCK, 0, 10, NULL));
	R("F_OFD_SETLK WR 5+10 on fd 2", lk(o2, F_OFD_SETLK, F_WRLCK, 5, 10, NULL));
	struct flock h;
	R("F_OFD_GETLK WR 0+20 on fd 2", lk(o2, F_OFD_GETLK, F_WRLCK, 0, 20, &h));
	obs(ctx, "  -> %s %lld+%lld pid %d", lk_type(h.l_type), (long long)h.l_start,
	    (long long)h.l_len, h.l_pid);
	R("F_OFD_SETLK UN on fd 1", lk(o1, F_OFD_SETLK, F_UNLCK, 0, 10, NULL));
	R("F_OFD_SETLK WR 5+10 on fd 2", lk(o2, F_OFD_SETLK, F_WRLCK, 5, 10, NULL));
	R("classic F_GETLK over an OFD lock", lk(fd, F_GETLK, F_WRLCK, 0, 20, &h));
	obs(ctx, "  -> %s", lk_type(h.l_type));
	xclose(o1);
	xclose(o2);
	close(fd);
	/* lockf */
	fd = RFD("open for lockf", open("f", O_RDWR));
	if (fd >= 0) {
		R("lockf F_TLOCK 10", lockf(fd, F_TLOCK, 10));
		pid = fork();
		if (pid == 0) {
			int x = open("f", O_RDWR);
			R("  child lockf F_TEST 10", lockf(x, F_TEST, 10));
			R("  child lockf F_TLOCK 10", lockf(x, F_TLOCK, 10));
			_exit(0);
		}
		reap(ctx, "child", pid);
		close(fd);
	}
}

/* ======================================================================== */
/* Cases: O_TMPFILE, directories, names */

/* O_TMPFILE: the mount may answer EOPNOTSUPP (an honest "not supported":
 * glibc's tmpfile() and others fall back); when a side supports it, the
 * case checks that it behaves and logs what it saw as notes, so both
 * outcomes give the same compared log. */
static void tmpfile_checks(struct ctx *ctx, int fd)
{
	struct stat s;
	ssize_t w = write(fd, "tmp data", 8);
	expect(ctx, w == 8, "write to the O_TMPFILE file");
	expect(ctx,
	       fstat(fd, &s) == 0 && S_ISREG(s.st_mode) && s.st_nlink == 0 &&
		       (s.st_mode & 07777) == 0600 && s.st_size == 8,
	       "fstat of the O_TMPFILE file: regular, nlink 0, 0600, 8 bytes");
	struct strv v = {0}, h = {0};
	expect(ctx, list_names("d", &v, false) == 0 && v.n == 0, "no name in d");
	expect(ctx, list_names(hp(ctx, "d"), &h, false) == 0 && h.n == 0, "no name on the host");
	sv_free(&v);
	sv_free(&h);
	int r = linkat(AT_FDCWD, L("/proc/self/fd/%d", fd), AT_FDCWD, "d/linked",
		       AT_SYMLINK_FOLLOW);
	obs(ctx, "# linkat /proc/self/fd/N: %s", r ? ename(errno) : "0");
	if (r == 0) {
		expect(ctx, fstat(fd, &s) == 0 && s.st_nlink == 1, "nlink 1 after linkat");
		expect(ctx, write(fd, " more", 5) == 5, "write after linkat");
		expect(ctx, !strcmp(same_content("d/linked", hp(ctx, "d/linked")), "same"),
		       "the linked file on the host");
		char *d;
		size_t n;
		int se = slurp("d/linked", &d, &n);
		expect(ctx, se == 0 && n == 13 && !memcmp(d, "tmp data more", 13),
		       "the linked file's content");
		if (se == 0)
			free(d);
	} else {
		obs(ctx, "!linkat of an O_TMPFILE file: %s", ename(errno));
	}
}

static void c_o_tmpfile(struct ctx *ctx)
{
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	umask(077);
	int fd = open("d", O_TMPFILE | O_RDWR, 0666);
	int e = errno;
	umask(022);
	obs(ctx, "O_TMPFILE|O_RDWR: %s",
	    fd >= 0 || e == EOPNOTSUPP ? "supported or EOPNOTSUPP" : ename(e));
	obs(ctx, "# O_TMPFILE: %s", fd >= 0 ? "supported" : ename(e));
	if (fd >= 0) {
		tmpfile_checks(ctx, fd);
		close(fd);
		fd = open("d", O_TMPFILE | O_WRONLY | O_EXCL, 0600);
		if (fd >= 0) {
			int r = linkat(AT_FDCWD, L("/proc/self/fd/%d", fd), AT_FDCWD, "d/excl",
				       AT_SYMLINK_FOLLOW);
			expect(ctx, r != 0 && errno == ENOENT,
			       "an O_EXCL tmpfile cannot be linked");
			close(fd);
		}
		expect(ctx, access("d/linked", F_OK) == 0, "d/linked exists");
		unlink("d/linked");
	}
	/* what must be refused either way */
	fd = RFD("O_TMPFILE|O_RDONLY", open("d", O_TMPFILE | O_RDONLY, 0600));
	xclose(fd);
	put(ctx, "f", "", 0644);
	fd = RFD("O_TMPFILE on a file", open("f", O_TMPFILE | O_RDWR, 0600));
	xclose(fd);
	fd = RFD("O_TMPFILE in missing dir", open("missing", O_TMPFILE | O_RDWR, 0600));
	xclose(fd);
	ls(ctx, "ls d at end", "d");
	ls(ctx, "host ls d at end", hp(ctx, "d"));
}

static void c_dir_errors(struct ctx *ctx)
{
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	put(ctx, "d/f", "x", 0644);
	put(ctx, "f", "x", 0644);
	must(ctx, mkdir("e", 0755) == 0, "mkdir");
	must(ctx, symlink("e", "se") == 0, "symlink");
	R("rmdir non-empty", rmdir("d"));
	R("mkdir existing dir", mkdir("d", 0755));
	R("mkdir existing file", mkdir("f", 0755));
	R("mkdir existing symlink", mkdir("se", 0755));
	R("mkdir dangling symlink name", symlink("nowhere", "dl") == 0 ? mkdir("dl", 0755) : -1);
	R("unlink a dir", unlink("d"));
	R("rmdir a file", rmdir("f"));
	R("rmdir a symlink to a dir", rmdir("se"));
	R("rmdir .", rmdir("."));
	R("rmdir e/.", rmdir("e/."));
	R("rmdir e/..", rmdir("e/.."));
	R("rmdir missing", rmdir("missing"));
	R("mkdir with trailing slash", mkdir("t/", 0755));
	st(ctx, "t", "t");
	R("mkdir with trailing slashes", mkdir("t2///", 0755));
	R("mkdir in missing parent", mkdir("missing/x", 0755));
	R("mkdir under a file", mkdir("f/x", 0755));
	R("unlink f/", unlink("f/"));
	R("unlink missing", unlink("missing"));
	R("unlink \"\"", unlink(""));
	R("mkdir \"\"", mkdir("", 0755));
	R("unlinkat AT_REMOVEDIR on a file", unlinkat(AT_FDCWD, "f", AT_REMOVEDIR));
	R("unlinkat AT_REMOVEDIR on a dir", unlinkat(AT_FDCWD, "e", AT_REMOVEDIR));
	R("unlinkat bad flag", unlinkat(AT_FDCWD, "f", 0x1));
	R("mkdir mode with type bits", mkdir("typed", S_IFREG | 0755));
	st(ctx, "typed", "typed");
	R("rmdir d/f/..", rmdir("d/f/.."));
	R("mkdir d/f/x/../y", mkdir("d/f/x/../y", 0755));
	R("rmdir t/ (trailing slash)", rmdir("t/"));
	ls(ctx, "ls", ".");
	ls(ctx, "host ls", ctx->host);
}

static void c_long_names(struct ctx *ctx)
{
	char n255[256], n256[257];
	memset(n255, 'a', 255);
	n255[255] = 0;
	memset(n256, 'b', 256);
	n256[256] = 0;
	int fd = RFD("create 255-byte name", open(n255, O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	st(ctx, "stat it", n255);
	host_attrs(ctx, n255);
	fd = RFD("create 256-byte name", open(n256, O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	struct stat s;
	R("stat 256-byte name", stat(n256, &s));
	R("mkdir 256-byte name", mkdir(n256, 0755));
	R("symlink named 256 bytes", symlink("x", n256));
	R("link to 256-byte name", link(n255, n256));
	R("rename to 256-byte name", rename(n255, n256));
	R("unlink 256-byte name", unlink(n256));
	R("mkfifo 256-byte name", mkfifo(n256, 0644));
	R("setxattr on 256-byte name", setxattr(n256, "user.x", "v", 1, 0));
	char m255[256];
	memset(m255, 'c', 255);
	m255[255] = 0;
	R("rename to another 255-byte name", rename(n255, m255));
	R("mkdir 255-byte name", mkdir(n255, 0755));
	char sub[600];
	snprintf(sub, sizeof(sub), "%s/%s", n255, m255);
	R("link into it with a 255-byte name", link(m255, sub));
	R("symlink named 255 bytes", symlink(n255, L("l%.254s", n255)));
	/* 255 bytes of UTF-8 (two-byte characters and one ASCII byte) */
	char u[256];
	for (int i = 0; i < 127; i++)
		memcpy(u + i * 2, "\xc3\xa9", 2);
	u[254] = 'x';
	u[255] = 0;
	fd = RFD("create 255-byte UTF-8 name", open(u, O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	char u2[258];
	memcpy(u2, u, 254);
	memcpy(u2 + 254, "\xc3\xa9", 2);
	u2[256] = 0;
	fd = RFD("create 256-byte UTF-8 name", open(u2, O_CREAT | O_EXCL | O_WRONLY, 0644));
	xclose(fd);
	ls(ctx, "ls", ".");
	ls(ctx, "host ls", ctx->host);
	/* a path longer than PATH_MAX */
	char *p = malloc(5000);
	size_t o = 0;
	while (o < 4200) {
		memcpy(p + o, "a/", 2);
		o += 2;
	}
	p[o] = 0;
	R("stat of a 4200-byte path", stat(p, &s));
	p[4095] = 0;
	R("stat of a 4095-byte path", stat(p, &s));
	free(p);
}

static void c_odd_names(struct ctx *ctx)
{
	static const char *const names[] = {
		"sp ace",
		" lead",
		"trail ",
		"new\nline",
		"tab\t",
		"\001ctl",
		"\xff\xfe",
		"\xc3\xa9",
		"e\xcc\x81",
		"Case",
		"case",
		"CASE",
		"-dash",
		"...",
		".hidden",
		"*?[x]",
		"back\\sl",
		"%s%n",
		"\xf0\x9f\x98\x80",
		"a:b",
		"\x7f",
		"q\"uote",
		"'",
		"\xe2\x80\x8b",
		"nul?\x1b[0m",
	};
	size_t n = sizeof(names) / sizeof(names[0]);
	int errs = 0;
	for (size_t i = 0; i < n; i++)
		errs += !put(ctx, names[i], names[i], 0644);
	obs(ctx, "created %zu, %d failed", n, errs);
	ls(ctx, "ls", ".");
	ls(ctx, "host ls", ctx->host);
	int bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += strcmp(same_content(names[i], hp(ctx, names[i])), "same") != 0;
	obs(ctx, "contents equal on the host: %zu of %zu", n - (size_t)bad, n);
	/* composed and decomposed e-acute, and case variants, are distinct */
	same_ino(ctx, "NFC vs NFD", "\xc3\xa9", "e\xcc\x81");
	same_ino(ctx, "Case vs case", "Case", "case");
	R("rename NFC to NFD (replaces it)", rename("\xc3\xa9", "e\xcc\x81"));
	cat(ctx, "NFD", "e\xcc\x81");
	R("mkdir odd", mkdir("dir\nwith newline", 0755));
	R("rename into it", rename("sp ace", "dir\nwith newline/sp ace"));
	ls(ctx, "ls it", "dir\nwith newline");
	for (size_t i = 0; i < n; i++)
		unlink(names[i]);
	ls(ctx, "ls after unlinking", ".");
	ls(ctx, "host ls after unlinking", ctx->host);
}

/* A 300-level tree (900-byte paths), used and renamed. */
static void c_deep_paths(struct ctx *ctx)
{
	int depth = 0;
	char *p = malloc(8192);
	size_t o = 0;
	for (; depth < 300; depth++) {
		memcpy(p + o, "dd", 2);
		p[o + 2] = 0;
		if (mkdir(p, 0755) != 0)
			break;
		p[o + 2] = '/';
		o += 3;
	}
	p[o] = 0;
	obs(ctx, "depth reached with relative mkdir: %d", depth);
	put(ctx, L("%sfile", p), "bottom", 0644);
	cat(ctx, "bottom via a 900-byte path", L("%sfile", p));
	pid_t pid = fork();
	if (pid == 0) {
		int ok = 0;
		for (int i = 0; i < depth; i++)
			ok += chdir("dd") == 0;
		obs(ctx, "chdir steps: %d", ok);
		cat(ctx, "file relative to the deep cwd", "file");
		char cwd[PATH_MAX];
		const char *c = getcwd(cwd, sizeof(cwd));
		size_t l = strlen(ctx->dir);
		obs(ctx, "getcwd: %s",
		    !c ? ename(errno)
		    : !strncmp(cwd, ctx->dir, l)
			    ? L("%zu bytes below the case dir", strlen(cwd + l))
			    : "outside");
		_exit(0);
	}
	reap(ctx, "walker", pid);
	/* The mount may refuse a directory rename it cannot check
	 * cheaply with EXDEV (mv then copies): accepted here, noted */
	int r = rename("dd", "top");
	int e = errno;
	obs(ctx, "rename the top of the tree: %s",
	    r == 0 || e == EXDEV ? "0 (or EXDEV)" : ename(e));
	obs(ctx, "# rename of the 300-level tree: %s", r == 0 ? "done" : ename(e));
	if (r == 0) {
		p[0] = 't';
		p[1] = 'o';
		memmove(p + 3, p + 2, o - 2 + 1);
		p[2] = 'p';
	}
	cat(ctx, "bottom after renaming the top", L("%sfile", p));
	free(p);
}

/* Directories deeper than PATH_MAX, reached step by step with relative
 * paths: Linux has no limit on depth, only on the length of one path. */
static void c_deep_paths_beyond_path_max(struct ctx *ctx)
{
	pid_t pid = fork();
	if (pid == 0) {
		int i = 0;
		for (; i < 1500; i++) {
			if (mkdir("ee", 0755) != 0 || chdir("ee") != 0) {
				obs(ctx, "deeper: stopped at %d: %s", i, ename(errno));
				break;
			}
		}
		obs(ctx, "levels: %d (%d bytes below the case dir)", i, 3 * i);
		put(ctx, "deepest", "very deep", 0644);
		cat(ctx, "deepest", "deepest");
		st(ctx, "stat deepest", "deepest");
		R("mkdir", mkdir("sub", 0755));
		R("rename", rename("deepest", "sub/moved"));
		cat(ctx, "moved", "sub/moved");
		R("symlink", symlink("moved", "sub/link"));
		cat(ctx, "through the link", "sub/link");
		char cwd[PATH_MAX];
		obs(ctx, "getcwd: %s", getcwd(cwd, sizeof(cwd)) ? "ok" : ename(errno));
		_exit(0);
	}
	reap(ctx, "walker", pid);
}

/* ======================================================================== */
/* Cases: exec, inode reuse, descriptors relative to directories */

static int copy_file(const char *from, const char *to, mode_t mode)
{
	char *d;
	size_t n;
	int e = slurp(from, &d, &n);
	if (e)
		return -1;
	int fd = open(to, O_CREAT | O_WRONLY | O_TRUNC, mode);
	ssize_t w = fd < 0 ? -1 : write(fd, d, n);
	free(d);
	if (fd >= 0)
		close(fd);
	return w == (ssize_t)n ? 0 : -1;
}

static void quiet(void)
{
	int fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
}

static int run(const char *path, char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		quiet();
		execv(path, argv);
		_exit(100 + (errno & 63));
	}
	return wait_for(pid);
}

static void c_exec(struct ctx *ctx)
{
	put(ctx, "script", "#!/bin/sh\nexit 7\n", 0755);
	char *argv[] = {"x", NULL};
	obs(ctx, "exec script: %s", status_str(run("./script", argv)));
	put(ctx, "noexec", "#!/bin/sh\nexit 7\n", 0644);
	obs(ctx, "exec 0644 script: %s", status_str(run("./noexec", argv)));
	put(ctx, "noshebang", "exit 7\n", 0755);
	obs(ctx, "exec without #!: %s", status_str(run("./noshebang", argv)));
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	obs(ctx, "exec a dir: %s", status_str(run("./d", argv)));
	must(ctx, copy_file("/bin/true", "true", 0755) == 0, "copy /bin/true");
	obs(ctx, "exec binary: %s", status_str(run("./true", argv)));
	/* ETXTBSY both ways */
	must(ctx, copy_file("/bin/sleep", "sleep", 0755) == 0, "copy /bin/sleep");
	int p[2];
	if (pipe2(p, O_CLOEXEC) == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			char *sargv[] = {"sleep", "10", NULL};
			execv("./sleep", sargv);
			int e = errno;
			ign(write(p[1], &e, sizeof(e)));
			_exit(1);
		}
		close(p[1]);
		int e = 0;
		ssize_t r = read(p[0], &e, sizeof(e));
		close(p[0]);
		obs(ctx, "exec sleep: %s", r == 0 ? "running" : ename(e));
		int fd = RFD("open the running binary O_WRONLY", open("sleep", O_WRONLY));
		xclose(fd);
		fd = RFD("open the running binary O_RDONLY", open("sleep", O_RDONLY));
		xclose(fd);
		R("unlink the running binary", unlink("sleep"));
		kill(pid, SIGKILL);
		wait_for(pid);
	}
	int fd = RFD("open script O_WRONLY", open("script", O_WRONLY));
	obs(ctx, "exec a script open for writing: %s", status_str(run("./script", argv)));
	obs(ctx, "exec a binary open for writing: %s", ({
		    int w = open("true", O_WRONLY);
		    int st2 = run("./true", argv);
		    xclose(w);
		    status_str(st2);
	    }));
	xclose(fd);
	/* a set-uid binary (made so on the host side) is served with its bit */
	host_chmod(ctx, "true", 04755);
	st(ctx, "true", "true");
	obs(ctx, "exec set-uid binary: %s", status_str(run("./true", argv)));
}

static void c_inode_reuse(struct ctx *ctx)
{
	int bad = 0;
	for (int i = 0; i < 100; i++) {
		const char *c1 = L("generation %d of a", i);
		put(ctx, "a", c1, (i % 2) ? 0600 : 0644);
		struct stat s;
		if (stat("a", &s) != 0)
			bad++;
		unlink("a");
		const char *c2 = L("b %d", i);
		put(ctx, "b", c2, 0640);
		if (stat("b", &s) != 0 || s.st_size != (off_t)strlen(c2) ||
		    (s.st_mode & 07777) != 0640)
			bad++;
		char *d;
		size_t n;
		if (slurp("b", &d, &n) != 0)
			bad++;
		else {
			bad += n != strlen(c2) || memcmp(d, c2, n) != 0;
			free(d);
		}
		unlink("b");
	}
	obs(ctx, "100 create/stat/unlink/create cycles: %d wrong", bad);
	/* directories and files trading places */
	bad = 0;
	for (int i = 0; i < 50; i++) {
		if (i % 2) {
			put(ctx, "x", "file", 0644);
			bad += (mode_of("x") & S_IFMT) != S_IFREG;
			unlink("x");
		} else {
			ign(mkdir("x", 0755));
			bad += (mode_of("x") & S_IFMT) != S_IFDIR;
			rmdir("x");
		}
	}
	obs(ctx, "file/dir alternation under one name: %d wrong", bad);
	/* a hard link keeps the old inode alive: the new file differs */
	put(ctx, "x", "old", 0644);
	must(ctx, link("x", "y") == 0, "link");
	unlink("x");
	put(ctx, "x", "new", 0644);
	same_ino(ctx, "new x vs y", "x", "y");
	cat(ctx, "y", "y");
	cat(ctx, "x", "x");
	nl(ctx, "y");
	/* a file replaced on the host side is another file */
	put(ctx, "h", "before", 0644);
	st(ctx, "h", "h");
	must(ctx, unlink(hp(ctx, "h")) == 0, "host unlink");
	must(ctx, put(ctx, hp(ctx, "h"), "after, longer", 0600), "host create");
	sleep_ms(1200);
	st(ctx, "h after host replaced it (1.2 s later)", "h");
	cat(ctx, "h", "h");
}

static void c_dirfd_ops(struct ctx *ctx)
{
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	int dfd = RFD("open d O_DIRECTORY", open("d", O_RDONLY | O_DIRECTORY));
	int pfd = RFD("open d O_PATH", open("d", O_PATH | O_DIRECTORY));
	if (dfd < 0 || pfd < 0)
		return;
	int fd = RFD("openat(dfd) O_CREAT", openat(dfd, "f", O_CREAT | O_WRONLY, 0644));
	if (fd >= 0) {
		R("write", write(fd, "dirfd", 5));
		close(fd);
	}
	R("mkdirat(pfd)", mkdirat(pfd, "sub", 0755));
	R("symlinkat(pfd)", symlinkat("f", pfd, "sl"));
	R("linkat(dfd -> pfd)", linkat(dfd, "f", pfd, "f2", 0));
	R("renameat(dfd -> pfd)", renameat(dfd, "f2", pfd, "f3"));
	R("fchmodat(pfd)", fchmodat(pfd, "f3", 0600, 0));
	R("fchownat(dfd)", fchownat(dfd, "f3", (uid_t)-1, getegid(), 0));
	R("mknodat(pfd) fifo", mknodat(pfd, "p", S_IFIFO | 0644, 0));
	struct stat s;
	R("fstatat(pfd, \"\", AT_EMPTY_PATH)", fstatat(pfd, "", &s, AT_EMPTY_PATH));
	char b[16];
	ssize_t n = readlinkat(dfd, "sl", b, sizeof(b));
	obs(ctx, "readlinkat(dfd): %s", n < 0 ? ename(errno) : show(b, (size_t)n));
	R("unlinkat(dfd)", unlinkat(dfd, "f3", 0));
	R("unlinkat(pfd, AT_REMOVEDIR)", unlinkat(pfd, "sub", AT_REMOVEDIR));
	R("openat(pfd) on O_PATH dirfd", openat(pfd, "f", O_RDONLY) >= 0 ? 0 : -1);
	R("getdents on O_PATH fd", syscall(SYS_getdents64, pfd, b, sizeof(b)));
	R("openat absolute path ignores dirfd", openat(dfd, "/", O_RDONLY) >= 0 ? 0 : -1);
	R("openat(dfd, \"..\")", openat(dfd, "..", O_RDONLY) >= 0 ? 0 : -1);
	R("openat on a file fd as dirfd", ({
		  int ff = openat(dfd, "f", O_RDONLY);
		  int r2 = openat(ff, "x", O_RDONLY);
		  int e2 = errno;
		  xclose(ff);
		  xclose(r2);
		  errno = e2;
		  r2 >= 0 ? 0 : -1;
	  }));
	ls(ctx, "ls d", "d");
	/* the descriptors follow a rename */
	R("rename d e", rename("d", "e"));
	fd = RFD("openat(old dfd, f)", openat(dfd, "f", O_RDONLY));
	if (fd >= 0) {
		fdcat(ctx, "  content", fd);
		close(fd);
	}
	R("mkdirat(old pfd, new)", mkdirat(pfd, "new", 0755));
	st(ctx, "e/new", "e/new");
	pid_t pid = fork();
	if (pid == 0) {
		R("  fchdir(dfd)", fchdir(dfd));
		char cwd[PATH_MAX];
		size_t l = strlen(ctx->dir);
		if (getcwd(cwd, sizeof(cwd)))
			obs(ctx, "  getcwd: %s",
			    !strncmp(cwd, ctx->dir, l) ? shows(cwd + l) : "outside");
		else
			obs(ctx, "  getcwd: %s", ename(errno));
		cat(ctx, "  f via cwd", "f");
		/* the cwd is removed under us */
		R("  unlink f", unlink("f"));
		R("  unlink sl", unlink("sl"));
		R("  unlink p", unlink("p"));
		R("  rmdir new", rmdir("new"));
		R("  rmdir the cwd", rmdir(L("%s/e", ctx->dir)));
		xclose(RFD("  create in the removed cwd", open("x", O_CREAT | O_WRONLY, 0644)));
		st(ctx, "  stat .", ".");
		obs(ctx, "  getcwd: %s", getcwd(cwd, sizeof(cwd)) ? "ok" : ename(errno));
		R("  chdir ..", chdir(".."));
		_exit(0);
	}
	reap(ctx, "cwd process", pid);
	close(dfd);
	close(pfd);
	ls(ctx, "host ls", ctx->host);
}

static void c_access_modes(struct ctx *ctx)
{
	static const mode_t fm[] = {0000, 0400, 0200, 0100, 0700, 0070, 0007, 0755, 04000, 02010};
	for (size_t i = 0; i < sizeof(fm) / sizeof(fm[0]); i++) {
		const char *f = L("f%04o", fm[i]);
		if (!put(ctx, f, "x", 0600) || !host_chmod(ctx, f, fm[i]))
			continue;
		obs(ctx, "%s: R %s W %s X %s, euid: R %s W %s X %s", f,
		    access(f, R_OK) ? ename(errno) : "ok", access(f, W_OK) ? ename(errno) : "ok",
		    access(f, X_OK) ? ename(errno) : "ok",
		    faccessat(AT_FDCWD, f, R_OK, AT_EACCESS) ? ename(errno) : "ok",
		    faccessat(AT_FDCWD, f, W_OK, AT_EACCESS) ? ename(errno) : "ok",
		    faccessat(AT_FDCWD, f, X_OK, AT_EACCESS) ? ename(errno) : "ok");
	}
	R("access bad mode", access("f0755", 0x100));
	R("faccessat bad flag", faccessat(AT_FDCWD, "f0755", R_OK, 0x10000));
	R("access through a file", access("f0755/x", F_OK));
	must(ctx, mkdir("d", 0755) == 0, "mkdir");
	R("access dir X_OK", access("d", X_OK));
	R("access dir W_OK", access("d", W_OK));
}

/* Files created for writing with a mode that forbids opening them again
 * (0400, 0444, 0000), then unlinked or replaced by a rename over their
 * name, and used through the descriptor that created them: the
 * permission was checked once, at the open, as natively. */
static void removed_readonly_body(struct ctx *ctx)
{
	static const mode_t modes[] = {0400, 0444, 0000};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (modes[i] == 0 && !g_root) {
			obs(ctx, "# mode 0000: not compared with an unprivileged daemon, which "
				 "cannot open the file to keep it (docs/DESIGN.md, Credentials)");
			continue;
		}
		for (int replace = 0; replace < 2; replace++) {
			obs(ctx, "mode %04o, %s:", (unsigned)modes[i],
			    replace ? "renamed over" : "unlinked");
			int fd = RFD("create", open("u/f", O_CREAT | O_EXCL | O_RDWR, modes[i]));
			if (fd < 0)
				continue;
			R("write", write(fd, "first", 5));
			if (replace) {
				int o = RFD("create other",
					    open("u/o", O_CREAT | O_EXCL | O_WRONLY, 0644));
				if (o >= 0)
					close(o);
				R("rename over", rename("u/o", "u/f"));
			} else {
				R("unlink", unlink("u/f"));
			}
			fst(ctx, "fstat", fd);
			R("write", write(fd, "+second", 7));
			R("pwrite", pwrite(fd, "F", 1, 0));
			R("fsync", fsync(fd));
			R("fdatasync", fdatasync(fd));
			R("ftruncate", ftruncate(fd, 9));
			R("fchmod 0600", fchmod(fd, 0600));
			struct timespec ts[2] = {{1000, 0}, {2000, 0}};
			R("futimens", futimens(fd, ts));
			fst(ctx, "fstat", fd);
			fdcat(ctx, "read", fd);
			R("close", close(fd));
			unlink("u/f");
		}
	}
	ls(ctx, "host ls", hp(ctx, "u"));
}

/* An open file whose directory its owner can no longer search, and a
 * second hard link's name outside it: what goes through the descriptor
 * or the other name needs no search of that directory, as natively. */
static void unsearchable_fd(struct ctx *ctx)
{
	struct timespec ts[2] = {{1000, 0}, {2000, 0}};
	int fd = RFD("create", open("u/d/f", O_CREAT | O_EXCL | O_RDWR, 0644));
	if (fd < 0)
		return;
	R("chmod u/d 0", chmod("u/d", 0));
	R("write", write(fd, "data", 4));
	R("fchmod 0600", fchmod(fd, 0600));
	R("futimens", futimens(fd, ts));
	R("fsetxattr", fsetxattr(fd, "user.k", "v", 1, 0));
	char v[8];
	R("fgetxattr", fgetxattr(fd, "user.k", v, sizeof(v)));
	R("fchown own ids", fchown(fd, geteuid(), getegid()));
	R("fsync", fsync(fd));
	R("ftruncate", ftruncate(fd, 2));
	fst(ctx, "fstat", fd);
	R("close", close(fd));
	R("chmod u/d back", chmod("u/d", 0755));
	st(ctx, "host f", hp(ctx, "u/d/f"));
}

/* The other name made first, the first name looked up last. */
static void unsearchable_other_name(struct ctx *ctx)
{
	struct timespec ts[2] = {{1000, 0}, {2000, 0}};
	put(ctx, "u/d/g", "g", 0644);
	R("link", link("u/d/g", "u/h"));
	struct stat s;
	R("stat the first name", stat("u/d/g", &s));
	R("chmod u/d 0", chmod("u/d", 0));
	R("chmod the other name 0640", chmod("u/h", 0640));
	char list[64];
	R("listxattr the other name", listxattr("u/h", list, sizeof(list)));
	R("setxattr the other name", setxattr("u/h", "user.k", "w", 1, 0));
	R("utimensat the other name", utimensat(AT_FDCWD, "u/h", ts, 0));
	st(ctx, "stat the other name", "u/h");
	R("chmod u/d back", chmod("u/d", 0755));
	st(ctx, "host g", hp(ctx, "u/d/g"));
}

static void unsearchable_dir_body(struct ctx *ctx)
{
	must(ctx, mkdir("u/d", 0755) == 0, "mkdir u/d");
	if (g_root)
		unsearchable_fd(ctx);
	else
		obs(ctx, "# changes through a descriptor in an unsearchable directory: not "
			 "compared with an unprivileged daemon, which cannot search it either "
			 "(docs/DESIGN.md, Credentials)");
	unsearchable_other_name(ctx);
}

static void c_unsearchable_dir(struct ctx *ctx)
{
	if (daemon_needs_read()) {
		obs(ctx, "# not compared with the portable flavour's unprivileged daemon, which "
			 "cannot open a mode-0 directory to change it");
		return;
	}
	caller_dir(ctx, "u");
	if (ctx->root)
		as_caller(ctx, unsearchable_dir_body);
	else
		unsearchable_dir_body(ctx);
}

/* A directory open while it is removed: fsync and fstat still answer. */
static void c_fsync_removed_dir(struct ctx *ctx)
{
	must(ctx, mkdir("d", 0755) == 0, "mkdir d");
	int fd = RFD("open d", open("d", O_RDONLY | O_DIRECTORY));
	if (fd < 0)
		return;
	R("rmdir d", rmdir("d"));
	R("fsync", fsync(fd));
	R("fdatasync", fdatasync(fd));
	fst(ctx, "fstat", fd);
	R("close", close(fd));
}

/* Files whose mode bars their owner, written through the descriptors
 * that were allowed: created 0444 for writing, fchmod'ed 0444 while open,
 * chmod'ed 0 by name while open; many other files made in between. */
static void kept_open_body(struct ctx *ctx)
{
	must(ctx, mkdir("u/k", 0755) == 0, "mkdir u/k");
	int f = RFD("create f 0444 O_WRONLY|O_EXCL",
		    open("u/k/f", O_WRONLY | O_CREAT | O_EXCL, 0444));
	int g = RFD("create g 0644 O_RDWR", open("u/k/g", O_RDWR | O_CREAT | O_EXCL, 0644));
	int h = RFD("create h 0644 O_RDWR", open("u/k/h", O_RDWR | O_CREAT | O_EXCL, 0644));
	R("fchmod g 0444", fchmod(g, 0444));
	R("chmod h 0 by name", chmod("u/k/h", 0));
	int made = 0;
	for (int i = 0; i < 200; i++) {
		int fd = open(L("u/k/n%03d", i), O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0 && write(fd, "x", 1) == 1)
			made++;
		xclose(fd);
	}
	obs(ctx, "other files made: %d", made);
	int fds[] = {f, g, h};
	for (int i = 0; i < 3; i++) {
		if (fds[i] < 0)
			continue;
		const char *n = i == 0 ? "f" : i == 1 ? "g" : "h";
		R(L("write %s", n), write(fds[i], "data", 4));
		R(L("pwrite %s", n), pwrite(fds[i], "D", 1, 0));
		R(L("fsync %s", n), fsync(fds[i]));
		R(L("ftruncate %s", n), ftruncate(fds[i], 3));
		fst(ctx, L("fstat %s", n), fds[i]);
		if (i > 0)
			fdcat(ctx, L("read %s", n), fds[i]);
		R(L("close %s", n), close(fds[i]));
	}
	R("chmod h back", chmod("u/k/h", 0644));
	cat(ctx, "host f", hp(ctx, "u/k/f"));
	cat(ctx, "host g", hp(ctx, "u/k/g"));
	cat(ctx, "host h", hp(ctx, "u/k/h"));
	st(ctx, "host f", hp(ctx, "u/k/f"));
}

static void c_kept_open(struct ctx *ctx)
{
	caller_dir(ctx, "u");
	if (ctx->root)
		as_caller(ctx, kept_open_body);
	else
		kept_open_body(ctx);
}

/* A directory its owner may read but not search (r--), listed after one
 * of its entries was looked up: the names, as natively. */
static void readable_unsearchable_body(struct ctx *ctx)
{
	must(ctx, mkdir("u/r", 0755) == 0, "mkdir u/r");
	put(ctx, "u/r/a", "a", 0644);
	put(ctx, "u/r/b", "b", 0644);
	must(ctx, mkdir("u/r/s", 0755) == 0, "mkdir u/r/s");
	struct stat s;
	R("stat u/r/a", stat("u/r/a", &s));
	R("chmod u/r 0444", chmod("u/r", 0444));
	ls(ctx, "list u/r", "u/r");
	ls(ctx, "list u/r again", "u/r");
	R("stat u/r/b", stat("u/r/b", &s));
	R("chmod u/r back", chmod("u/r", 0755));
	ls(ctx, "host u/r", hp(ctx, "u/r"));
}

static void c_readable_unsearchable(struct ctx *ctx)
{
	caller_dir(ctx, "u");
	if (ctx->root)
		as_caller(ctx, readable_unsearchable_body);
	else
		readable_unsearchable_body(ctx);
}

/* Symlinks that loop lead nowhere, natively as through the mount: made,
 * moved with their directory (rename, exchange), and followed (ELOOP). */
static void c_symlink_loops(struct ctx *ctx)
{
	must(ctx, mkdir("a", 0755) == 0 && mkdir("b", 0755) == 0, "mkdir a b");
	R("symlink a/self -> self", symlink("self", "a/self"));
	R("symlink b/x -> y", symlink("y", "b/x"));
	R("symlink b/y -> x", symlink("x", "b/y"));
	R("symlink l -> b/x, into the loop", symlink("b/x", "l"));
	R("open l", open("l", O_RDONLY));
	R("exchange a and b", ren2("a", "b", RENAME_EXCHANGE));
	R("rename a c", rename("a", "c"));
	R("rename b/self b/self2", rename("b/self", "b/self2"));
	ls(ctx, "host c", hp(ctx, "c"));
	ls(ctx, "host b", hp(ctx, "b"));
	char t[64];
	ssize_t n = readlink("c/x", t, sizeof(t) - 1);
	obs(ctx, "readlink c/x: %s", n < 0 ? ename(errno) : L("%.*s", (int)n, t));
	/* A link that moves is judged where it arrives, in the tree as the
	 * rename leaves it, not in the one it replaces: here a looping link
	 * holds the place the moving directory's link will pass. */
	must(ctx,
	     mkdir("m", 0755) == 0 && mkdir("m/d5", 0755) == 0 && mkdir("m/d5/d5", 0755) == 0 &&
		     mkdir("m/d7", 0755) == 0,
	     "mkdir m/d5/d5 m/d7");
	R("symlink m/d5/d5/f -> d2", symlink("d2", "m/d5/d5/f"));
	R("symlink m/d7/d5 -> d5, a loop", symlink("d5", "m/d7/d5"));
	R("rename m/d5 over m/d7, not empty", rename("m/d5", "m/d7"));
	must(ctx, mkdir("x", 0755) == 0 && mkdir("x/d1", 0755) == 0 && mkdir("x/d1/d6", 0755) == 0,
	     "mkdir x/d1/d6");
	R("symlink x/d1/d6/d5 -> f0", symlink("f0", "x/d1/d6/d5"));
	R("symlink x/d2 -> d2, a loop", symlink("d2", "x/d2"));
	R("exchange x/d2 and x/d1/d6", ren2("x/d2", "x/d1/d6", RENAME_EXCHANGE));
	ls(ctx, "host x/d1", hp(ctx, "x/d1"));
	ls(ctx, "host x/d2", hp(ctx, "x/d2"));
}

static void c_removed_readonly(struct ctx *ctx)
{
	caller_dir(ctx, "u");
	if (ctx->root)
		as_caller(ctx, removed_readonly_body);
	else
		removed_readonly_body(ctx);
}

/* ======================================================================== */
/* The case table */

static const struct tcase cases[] = {
	{"getattr", c_getattr, NULL, 0, 0},
	{"create_modes_umask", c_create_modes, NULL, 0, 0},
	{"open_flags", c_open_flags, NULL, 0, 0},
	{"read_write", c_read_write, NULL, 0, 0},
	{"large_io", c_large_io, NULL, 0, 0},
	{"o_direct", c_o_direct, NULL, 0, 0},
	{"link_counts", c_link_counts, NULL, 0, 0},
	{"unlink_open_file", c_unlink_open, NULL, 0, 0},
	{"removed_readonly_open", c_removed_readonly, NULL, 0, NEED_CALLER},
	{"fsync_removed_dir", c_fsync_removed_dir, NULL, 0, 0},
	{"kept_open_barred_mode", c_kept_open, NULL, 0, NEED_CALLER},
	{"readable_unsearchable_dir", c_readable_unsearchable, NULL, 0, NEED_CALLER},
	{"symlink_loops", c_symlink_loops, NULL, 0, 0},
	{"open_file_unsearchable_dir", c_unsearchable_dir, NULL, 0, NEED_CALLER},
	{"append_two_fds", c_append_two_fds, NULL, 0, 0},
	{"append_concurrent", c_append_concurrent, NULL, 0, 0},
	{"truncate", c_truncate, NULL, 0, 0},
	{"sparse_5g", c_sparse_5g, NULL, 0, 0},
	{"fallocate", c_fallocate, NULL, 0, 0},
	{"fallocate_unforwarded", c_fallocate_unforwarded, NULL, 0, 0},
	{"lseek", c_lseek, NULL, 0, 0},
	{"mmap_shared", c_mmap_shared, NULL, 0, 0},
	{"host_sees_writes", c_host_sees_writes, NULL, 0, 0},
	{"rename_over", c_rename_over, NULL, 0, 0},
	{"rename_errors", c_rename_errors, NULL, 0, 0},
	{"rename_noreplace", c_rename_noreplace, NULL, 0, 0},
	{"rename_exchange", c_rename_exchange, NULL, 0, 0},
	{"rename_dir_children", c_rename_dir_children, NULL, 0, 0},
	{"rename_many", c_rename_many, NULL, 0, 0},
	{"symlink_targets", c_symlink_targets, NULL, 0, 0},
	{"symlink_attrs", c_symlink_attrs, NULL, 0, 0},
	{"hardlinks", c_hardlinks, NULL, 0, 0},
	{"fifo", c_fifo, NULL, 0, 0},
	{"mknod", c_mknod, NULL, 0, 0},
	{"unix_socket", c_unix_socket, NULL, 0, 0},
	{"xattr_user", c_xattr_user, NULL, 0, 0},
	{"xattr_namespaces", c_xattr_namespaces, NULL, 0, 0},
	{"posix_acl", c_posix_acl, NULL, 0, 0},
	{"utimensat", c_utimensat, NULL, 0, 0},
	{"times_update", c_times_update, NULL, 0, 0},
	{"ownership", c_ownership, NULL, 0, NEED_CALLER},
	{"chmod_chown_caller", c_chmod_chown_caller, NULL, 0, NEED_CALLER},
	{"perm_open", c_perm_open, prep_perm_open, 0, NEED_CALLER},
	{"perm_dir", c_perm_dir, prep_perm_dir, 0, NEED_CALLER},
	{"perm_sticky", c_perm_sticky, prep_perm_sticky, 0, NEED_CALLER},
	{"perm_search", c_perm_search, prep_perm_search, 0, NEED_CALLER},
	{"perm_chmod_other", c_perm_chmod, prep_perm_chmod, 0, NEED_CALLER},
	{"perm_own_modes", c_perm_own_modes, NULL, 0, NEED_CALLER},
	{"perm_supplementary_group", c_perm_supplementary, NULL, 0, NEED_CALLER | NEED_ROOT},
	{"perm_protected_links", c_perm_symlink, prep_perm_symlink, 0, NEED_CALLER},
	{"perm_acl", c_perm_acl, prep_acl, 0, NEED_CALLER},
	{"access_modes", c_access_modes, NULL, 0, 0},
	{"readdir_10000", c_readdir_10000, NULL, 300, 0},
	{"readdir_rewind", c_readdir_rewind, NULL, 0, 0},
	{"readdir_types", c_readdir_types, NULL, 0, 0},
	{"readdir_unlink_during", c_readdir_unlink_during, NULL, 0, 0},
	{"statfs", c_statfs, NULL, 0, 0},
	{"fsync", c_fsync, NULL, 0, 0},
	{"copy_file_range", c_copy_file_range, NULL, 0, 0},
	{"sendfile_splice", c_sendfile_splice, NULL, 0, 0},
	{"flock", c_flock, NULL, 0, 0},
	{"posix_locks", c_posix_locks, NULL, 0, 0},
	{"o_tmpfile", c_o_tmpfile, NULL, 0, 0},
	{"dir_errors", c_dir_errors, NULL, 0, 0},
	{"long_names", c_long_names, NULL, 0, 0},
	{"odd_names", c_odd_names, NULL, 0, 0},
	{"deep_paths", c_deep_paths, NULL, 0, 0},
	{"deep_paths_beyond_path_max", c_deep_paths_beyond_path_max, NULL, 0, 0},
	{"exec", c_exec, NULL, 0, 0},
	{"inode_reuse", c_inode_reuse, NULL, 0, 0},
	{"dirfd_ops", c_dirfd_ops, NULL, 0, 0},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* ======================================================================== */
/* The runner */

/* Runs fn for one side in a child process (its own process group, a time
 * bound) and returns everything it observed. */
struct side_log {
	char *buf;
	size_t len;
};

static void log_add(struct side_log *l, const char *p, size_t n)
{
	l->buf = realloc(l->buf, l->len + n + 1);
	if (!l->buf)
		abort();
	memcpy(l->buf + l->len, p, n);
	l->len += n;
	l->buf[l->len] = 0;
}

static double mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return ts_d(t);
}

static void child_setup(void)
{
	signal(SIGPIPE, SIG_DFL);
	signal(SIGALRM, SIG_DFL);
	umask(022);
}

static void run_side(const struct tcase *tc, bool native, struct side_log *log)
{
	const char *dir = L("%s/%s", native ? g_native : g_mount, tc->name);
	const char *host = L("%s/%s", native ? g_native : g_source, tc->name);
	char dirb[PATH_MAX], hostb[PATH_MAX];
	snprintf(dirb, sizeof(dirb), "%s", dir);
	snprintf(hostb, sizeof(hostb), "%s", host);
	unsigned timeout = tc->timeout ? tc->timeout : DEFAULT_TIMEOUT;
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		log_add(log, "!pipe failed\n", 13);
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		log_add(log, "!fork failed\n", 13);
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		setpgid(0, 0);
		child_setup();
		alarm(timeout);
		struct ctx c = {.out = p[1],
				.native = native,
				.root = geteuid() == 0,
				.dir = dirb,
				.host = hostb};
		struct ctx *ctx = &c;
		if (tc->prep && g_root) {
			/* fixtures on the host side, then the body through dir */
			if (!must(ctx, mkdir(hostb, 0755) == 0, "mkdir %s", hostb))
				_exit(1);
			if (g_have_caller && !must(ctx, chown(hostb, g_cuid, g_cgid) == 0, "chown"))
				_exit(1);
			if (!must(ctx, chdir(hostb) == 0, "chdir %s", hostb))
				_exit(1);
			tc->prep(ctx);
		} else if (!tc->prep) {
			if (!must(ctx, mkdir(dirb, 0755) == 0, "mkdir %s", dirb))
				_exit(1);
		}
		if (!must(ctx, chdir(dirb) == 0, "chdir %s", dirb))
			_exit(1);
		tc->body(ctx);
		_exit(0);
	}
	close(p[1]);
	double deadline = mono() + timeout + 10;
	bool killed = false;
	char buf[65536];
	for (;;) {
		double left = deadline - mono();
		if (left <= 0) {
			if (killed)
				break; /* unkillable: give up on the output */
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = true;
			log_add(log, "!timed out\n", 11);
			deadline = mono() + 10;
			continue;
		}
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		int r = poll(&pf, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t n = read(p[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		log_add(log, buf, (size_t)n);
	}
	close(p[0]);
	/* the case is over: nothing of it may survive */
	kill(-pid, SIGKILL);
	int st = 0;
	double until = mono() + 10;
	pid_t w;
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && mono() < until)
		sleep_ms(10);
	if (w == 0) {
		log_add(log, "!case process cannot be reaped\n", 31);
	} else if (w == pid && !killed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		const char *s = L("!case process ended with %s\n", status_str(st));
		log_add(log, s, strlen(s));
	}
	/* orphans of the case were re-parented to us (subreaper) */
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
}

/* Splits a log into lines (in place). */
static size_t split_lines(char *buf, char ***out)
{
	size_t n = 0, cap = 64;
	char **v = malloc(cap * sizeof(*v));
	if (!v)
		abort();
	char *s = buf;
	while (s && *s) {
		char *e = strchr(s, '\n');
		if (e)
			*e = 0;
		if (n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				abort();
		}
		v[n++] = s;
		s = e ? e + 1 : NULL;
	}
	*out = v;
	return n;
}

/* Compared lines: everything but notes ("#..."). */
static size_t compared(char **all, size_t n, char ***out)
{
	char **v = malloc((n + 1) * sizeof(*v));
	if (!v)
		abort();
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (all[i][0] != '#')
			v[k++] = all[i];
	*out = v;
	return k;
}

static void print_lines(const char *who, char **v, size_t from, size_t to, size_t cap)
{
	size_t shown = 0;
	for (size_t i = from; i < to; i++, shown++) {
		if (shown == cap) {
			printf("# %s: ... (%zu more lines)\n", who, to - i);
			break;
		}
		printf("# %s: %s\n", who, v[i]);
	}
}

/* The differing lines of the two logs, hunk by hunk (a longest common
 * subsequence diff), with one line of context and at most ~80 lines. */
static void print_diff(char **a, size_t na, char **b, size_t nb, size_t pre)
{
	size_t suf = 0;
	while (suf < na - pre && suf < nb - pre && !strcmp(a[na - 1 - suf], b[nb - 1 - suf]))
		suf++;
	size_t n = na - pre - suf, m = nb - pre - suf;
	char **x = a + pre, **y = b + pre;
	if (n * m > 4000000) {
		printf("# first difference at line %zu:\n", pre + 1);
		print_lines("native", x, 0, n, 40);
		print_lines("mount ", y, 0, m, 40);
		return;
	}
	/* lcs[i][j]: LCS length of x[i..] and y[j..] */
	unsigned *lcs = calloc((n + 1) * (m + 1), sizeof(*lcs));
	if (!lcs)
		abort();
#define LCS(i, j) lcs[(i) * (m + 1) + (j)]
	for (size_t i = n; i-- > 0;)
		for (size_t j = m; j-- > 0;)
			LCS(i, j) = !strcmp(x[i], y[j])		    ? LCS(i + 1, j + 1) + 1
				    : LCS(i + 1, j) > LCS(i, j + 1) ? LCS(i + 1, j)
								    : LCS(i, j + 1);
	size_t i = 0, j = 0, printed = 0;
	bool in_hunk = false;
	const char *last_same = pre > 0 ? a[pre - 1] : NULL;
	while ((i < n || j < m) && printed < 80) {
		if (i < n && j < m && !strcmp(x[i], y[j])) {
			if (in_hunk) {
				printf("# both:   %s\n", x[i]);
				printed++;
			}
			in_hunk = false;
			last_same = x[i];
			i++;
			j++;
			continue;
		}
		if (!in_hunk) {
			printf("# at line %zu:\n", pre + i + 1);
			if (last_same)
				printf("# both:   %s\n", last_same);
			in_hunk = true;
			printed += 2;
		}
		if (j >= m || (i < n && LCS(i + 1, j) >= LCS(i, j + 1)))
			printf("# native: %s\n", x[i++]);
		else
			printf("# mount:  %s\n", y[j++]);
		printed++;
	}
	if (i < n || j < m)
		printf("# ... (more differences)\n");
#undef LCS
	free(lcs);
}

static const char *skip_reason(const struct tcase *tc)
{
	if ((tc->flags & NEED_ROOT) && !g_root)
		return "needs the suite to run as root (it gives the caller a supplementary group)";
	if ((tc->flags & NEED_CALLER) && !g_have_caller)
		return "needs an unprivileged caller (--as-uid/--as-gid when run as root)";
	if (tc->prep && !g_root) {
		struct stat s;
		if (lstat(L("%s/%s", g_native, tc->name), &s) != 0 ||
		    lstat(L("%s/%s", g_source, tc->name), &s) != 0)
			return "its fixtures owned by root are not prepared (run --prepare as "
			       "root)";
	}
	return NULL;
}

/* Notes ("#..." lines): once when both runs wrote the same ones, else per
 * side. */
static void print_notes(char **na, size_t nn, char **ma, size_t mn)
{
	char **a, **b;
	size_t an = 0, bn = 0;
	a = malloc((nn + 1) * sizeof(*a));
	b = malloc((mn + 1) * sizeof(*b));
	if (!a || !b)
		abort();
	for (size_t i = 0; i < nn; i++)
		if (na[i][0] == '#')
			a[an++] = na[i] + 1 + (na[i][1] == ' ');
	for (size_t i = 0; i < mn; i++)
		if (ma[i][0] == '#')
			b[bn++] = ma[i] + 1 + (ma[i][1] == ' ');
	bool same = an == bn;
	for (size_t i = 0; same && i < an; i++)
		same = !strcmp(a[i], b[i]);
	for (size_t i = 0; i < an; i++)
		printf("# %s%s\n", same ? "note: " : "native note: ", a[i]);
	for (size_t i = 0; !same && i < bn; i++)
		printf("# mount note: %s\n", b[i]);
	free(a);
	free(b);
}

/* Returns 0 pass, 1 fail, 2 skip. */
static int run_case(const struct tcase *tc)
{
	const char *why = skip_reason(tc);
	if (why) {
		printf("# skip %s%s: %s\n", g_prefix, tc->name, why);
		return 2;
	}
	double t0 = mono();
	struct side_log nl_ = {0}, ml = {0};
	run_side(tc, true, &nl_);
	run_side(tc, false, &ml);
	log_add(&nl_, "", 0);
	log_add(&ml, "", 0);
	char **na, **ma, **nv, **mv;
	size_t nn_all = split_lines(nl_.buf, &na), mn_all = split_lines(ml.buf, &ma);
	size_t nn = compared(na, nn_all, &nv), mn = compared(ma, mn_all, &mv);
	bool bang = false;
	for (size_t i = 0; i < nn; i++)
		bang |= nv[i][0] == '!';
	for (size_t i = 0; i < mn; i++)
		bang |= mv[i][0] == '!';
	size_t pre = 0;
	while (pre < nn && pre < mn && !strcmp(nv[pre], mv[pre]))
		pre++;
	bool same = pre == nn && pre == mn;
	int result = same && !bang ? 0 : 1;
	printf("%s - %s%s\n", result ? "not ok" : "ok", g_prefix, tc->name);
	if (!same)
		print_diff(nv, nn, mv, mn, pre);
	if (bang) {
		for (size_t i = 0; i < nn; i++)
			if (nv[i][0] == '!')
				printf("# native: %s\n", nv[i]);
		for (size_t i = 0; i < mn; i++)
			if (mv[i][0] == '!')
				printf("# mount:  %s\n", mv[i]);
	}
	print_notes(na, nn_all, ma, mn_all);
	if (g_verbose) {
		printf("# %.1f s\n", mono() - t0);
		if (g_verbose > 1) {
			print_lines("native (full)", na, 0, nn_all, SIZE_MAX);
			print_lines("mount (full)", ma, 0, mn_all, SIZE_MAX);
		}
	}
	fflush(stdout);
	free(na);
	free(ma);
	free(nv);
	free(mv);
	free(nl_.buf);
	free(ml.buf);
	return result;
}

/* Whether a case is selected by CASES: a comma-separated list of
 * substrings, any of which selects; one starting with '-' excludes. */
static bool selected(const char *name, const char *filter)
{
	if (!filter || !*filter)
		return true;
	bool any_include = false, included = false;
	const char *p = filter;
	while (*p) {
		size_t n = strcspn(p, ",");
		bool exclude = *p == '-';
		const char *w = p + exclude;
		size_t wn = n - exclude;
		char word[128];
		snprintf(word, sizeof(word), "%.*s", (int)(wn < 127 ? wn : 127), w);
		if (wn > 0 && strstr(name, word)) {
			if (exclude)
				return false;
			included = true;
		}
		any_include |= !exclude && wn > 0;
		p += n + (p[n] == ',');
	}
	return included || !any_include;
}

/* `--prepare`: the root-owned fixtures of every case that has them, in
 * NATIVE_DIR/CASE and SOURCE_DIR/CASE, the case directory owned by the
 * caller. */
static int prepare(const char *filter)
{
	int bad = 0;
	for (size_t i = 0; i < NCASES; i++) {
		const struct tcase *tc = &cases[i];
		if (!tc->prep || !selected(tc->name, filter))
			continue;
		for (int side = 0; side < 2; side++) {
			const char *d = L("%s/%s", side ? g_source : g_native, tc->name);
			pid_t pid = fork();
			if (pid == 0) {
				child_setup();
				alarm(60);
				struct ctx c = {.out = 2,
						.native = !side,
						.root = true,
						.dir = d,
						.host = d};
				struct ctx *ctx = &c;
				g_prep_failed = false;
				if (!must(ctx, mkdir(d, 0755) == 0, "mkdir %s", d) ||
				    !must(ctx, chown(d, g_cuid, g_cgid) == 0, "chown %s", d) ||
				    !must(ctx, chdir(d) == 0, "chdir %s", d))
					_exit(1);
				tc->prep(ctx);
				_exit(g_prep_failed ? 1 : 0);
			}
			int st = wait_for(pid);
			if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
				fprintf(stderr, "conformance: preparing %s in '%s' failed (%s)\n",
					tc->name, d, status_str(st));
				bad = 1;
			}
		}
	}
	return bad;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: conformance [OPTIONS] [--] NATIVE_DIR MOUNT_DIR SOURCE_DIR [CASES]\n"
		   "       conformance --prepare --as-uid UID --as-gid GID NATIVE_DIR SOURCE_DIR "
		   "[CASES]\n"
		   "       conformance --list\n"
		   "Runs every case in a fresh NATIVE_DIR/CASE and MOUNT_DIR/CASE and compares\n"
		   "what the two runs observe. MOUNT_DIR is a sandyfs mount of SOURCE_DIR;\n"
		   "NATIVE_DIR and SOURCE_DIR are on the same filesystem.\n"
		   "  --as-uid UID, --as-gid GID  the unprivileged caller (when run as root)\n"
		   "  --prepare                   as root: make the fixtures owned by root for a\n"
		   "                              later run by the unprivileged caller itself\n"
		   "  --prefix TEXT               put TEXT before every case name in the output\n"
		   "  --allow-plain               MOUNT_DIR need not be a FUSE mount (self-check)\n"
		   "  -v, -vv                     timings and the native log / both full logs\n");
}

static bool parse_id(const char *s, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || !*s || *end || v >= 0xffffffffUL)
		return false;
	*out = v;
	return true;
}

static const char *absdir(const char *what, const char *p)
{
	char *r = realpath(p, NULL);
	struct stat s;
	if (!r || stat(r, &s) != 0 || !S_ISDIR(s.st_mode)) {
		fprintf(stderr, "conformance: %s '%s' is not a directory\n", what, p);
		exit(2);
	}
	return r;
}

int main(int argc, char **argv)
{
	bool prep = false, plain = false, have_uid = false, have_gid = false;
	unsigned long uid = 0, gid = 0;
	const char *pos[5];
	int npos = 0;
	bool opts = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!opts || a[0] != '-' || !a[1]) {
			if (npos == 5)
				goto bad;
			pos[npos++] = a;
		} else if (!strcmp(a, "--")) {
			opts = false;
		} else if (!strcmp(a, "--as-uid") && i + 1 < argc) {
			if (!parse_id(argv[++i], &uid))
				goto bad;
			have_uid = true;
		} else if (!strcmp(a, "--as-gid") && i + 1 < argc) {
			if (!parse_id(argv[++i], &gid))
				goto bad;
			have_gid = true;
		} else if (!strcmp(a, "--prefix") && i + 1 < argc) {
			g_prefix = argv[++i];
		} else if (!strcmp(a, "--prepare")) {
			prep = true;
		} else if (!strcmp(a, "--allow-plain")) {
			plain = true;
		} else if (!strcmp(a, "-v")) {
			g_verbose = 1;
		} else if (!strcmp(a, "-vv")) {
			g_verbose = 2;
		} else if (!strcmp(a, "--list")) {
			for (size_t k = 0; k < NCASES; k++)
				printf("%s\n", cases[k].name);
			return 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else {
			goto bad;
		}
	}
	if (have_uid != have_gid)
		goto bad;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	g_root = geteuid() == 0;
	if (have_uid) {
		if (!g_root) {
			fprintf(stderr, "conformance: --as-uid needs root\n");
			return 2;
		}
		if (uid == 0) {
			fprintf(stderr, "conformance: the caller must not be root\n");
			return 2;
		}
		g_have_caller = true;
		g_cuid = (uid_t)uid;
		g_cgid = (gid_t)gid;
	} else if (!g_root) {
		g_have_caller = true;
		g_cuid = getuid();
		g_cgid = getgid();
	}
	if (prep) {
		if (npos < 2 || npos > 3 || !g_root || !have_uid)
			goto bad;
		g_native = absdir("NATIVE_DIR", pos[0]);
		g_source = absdir("SOURCE_DIR", pos[1]);
		return prepare(npos == 3 ? pos[2] : NULL);
	}
	if (npos < 3 || npos > 4)
		goto bad;
	g_native = absdir("NATIVE_DIR", pos[0]);
	g_mount = absdir("MOUNT_DIR", pos[1]);
	g_source = absdir("SOURCE_DIR", pos[2]);
	const char *filter = npos == 4 ? pos[3] : NULL;
	if (!strcmp(g_native, g_mount) || !strcmp(g_native, g_source)) {
		fprintf(stderr,
			"conformance: NATIVE_DIR must differ from MOUNT_DIR and SOURCE_DIR\n");
		return 2;
	}
	struct statfs mf;
	if (!plain && (statfs(g_mount, &mf) != 0 || mf.f_type != FUSE_SUPER_MAGIC)) {
		fprintf(stderr,
			"conformance: '%s' is not a FUSE mount (--allow-plain for a self-check)\n",
			g_mount);
		return 2;
	}
	struct stat a, b;
	if (stat(g_native, &a) != 0 || stat(g_source, &b) != 0 || a.st_dev != b.st_dev) {
		fprintf(stderr,
			"conformance: NATIVE_DIR and SOURCE_DIR must be on one filesystem\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		perror("conformance: PR_SET_CHILD_SUBREAPER");
	if (g_root && !g_have_caller)
		printf("# running as root without --as-uid: the cases needing a caller are "
		       "skipped\n");
	int pass = 0, fail = 0, skip = 0;
	for (size_t i = 0; i < NCASES; i++) {
		if (!selected(cases[i].name, filter))
			continue;
		int r = run_case(&cases[i]);
		pass += r == 0;
		fail += r == 1;
		skip += r == 2;
	}
	printf("# %s%d passed, %d failed, %d skipped\n", g_prefix, pass, fail, skip);
	if (pass + fail == 0 && skip == 0) {
		fprintf(stderr, "conformance: no case matches '%s'\n", filter ? filter : "");
		return 2;
	}
	return fail ? 1 : 0;
bad:
	usage(stderr);
	return 2;
}
