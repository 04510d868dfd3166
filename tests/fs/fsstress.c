/*
 * tests/fs/fsstress.c: a multi-process stress of the namespace and of file
 * data, in the spirit of xfstests' fsstress (written from scratch for this
 * project).
 *
 * PROCS processes work in one directory tree at once, each a random sequence
 * of operations on names from a small pool (directories d0..d7, files
 * f0..f31, up to three directories deep), so that they collide: create and
 * write, append, read, truncate, mkdir, rmdir, unlink, rename (plain,
 * RENAME_NOREPLACE, RENAME_EXCHANGE), link, symlink, readlink, chmod,
 * utimensat, user.* xattrs (set, get, list, remove), fsync, fdatasync,
 * readdir, stat, lstat and reads through a mapping. Racing makes some
 * errors the normal outcome (ENOENT, EEXIST, ENOTEMPTY, ENOTDIR, EISDIR,
 * EXDEV, ENODATA, EMLINK, ENOSPC, EINVAL, ELOOP, and SIGBUS for a mapping
 * whose file shrank; EPERM from link() of what is a directory): those are
 * counted. Once a file is open, what is done through its descriptor (read,
 * write, ftruncate, fstat, fchmod, fsync, a mapping) acts on the file
 * opened whatever became of its name: there only EISDIR (a directory read)
 * and ENOSPC are normal. Any other errno is a failure (EIO, ESTALE, EBADF,
 * ENOTCONN, EPERM, EACCES, EROFS, and ENOENT through a descriptor, ...):
 * the processes run as the owner of the tree (or root), every mode keeps
 * the owner's rw (rwx for directories), and symlink targets are one name,
 * so they never lead out of the tree, so nothing may be refused to them.
 *
 * When every process is done, the tree is walked (to any depth: renames
 * carry subtrees down): every name readdir lists can be lstat'ed, with the
 * type d_type says, and every pool name lstat finds is listed; ".." leads
 * back up; a non-directory's st_nlink is the number of its names in the
 * tree; a regular file's st_size is what read() returns up to the end.
 *
 * usage: fsstress [-p PROCS] [-n OPS] [-t SECONDS] [-S SEED] DIR
 *   -p PROCS    processes (default 4)
 *   -n OPS      operations per process (default 10000)
 *   -t SECONDS  stop after this long, even if fewer operations ran
 *   -S SEED     the seed (default: from the clock); process i uses its own
 *               sequence derived from it
 * DIR must exist; the tree is made in it and left there.
 * E.g. `fsstress -p 8 -t 60 -S 7 /mnt/x/stress`.
 *
 * Output: per operation the counts of successes and of each errno as "# "
 * lines, then "fsstress: SEED P procs N ops, K unexpected errors (DIR)";
 * each unexpected error and each broken invariant on stderr as it is found.
 * Exit status 0 when there was none, 1 otherwise, 2 for bad usage.
 *
 * gnu11, libc only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define MAX_PROCS  64
#define NDIRS	   8
#define NFILES	   32
#define MAX_DEPTH  3
#define NXATTRS	   8
#define NERR	   256
#define PATH_LEN   64
#define MAX_WRITE  (16 * 1024)
#define MAX_OFFSET (64 * 1024)
#define IO_BUF	   (64 * 1024)
#define DEFAULT_N  10000
/* How long past the time limit a process may take before it is taken for
 * hung (an operation that never returns is a failure too). */
#define GRACE_SECONDS 60

enum op {
	OP_CREATE,
	OP_APPEND,
	OP_READ,
	OP_TRUNCATE,
	OP_MKDIR,
	OP_RMDIR,
	OP_UNLINK,
	OP_RENAME,
	OP_RENAME_NOREPLACE,
	OP_RENAME_EXCHANGE,
	OP_LINK,
	OP_SYMLINK,
	OP_READLINK,
	OP_CHMOD,
	OP_UTIMES,
	OP_SETXATTR,
	OP_GETXATTR,
	OP_LISTXATTR,
	OP_REMOVEXATTR,
	OP_FSYNC,
	OP_FDATASYNC,
	OP_READDIR,
	OP_STAT,
	OP_LSTAT,
	OP_MMAPREAD,
	OP_COUNT
};

static const struct {
	const char *name;
	unsigned weight;
} opdef[OP_COUNT] = {
	[OP_CREATE] = {"create", 6},
	[OP_APPEND] = {"append", 3},
	[OP_READ] = {"read", 3},
	[OP_TRUNCATE] = {"truncate", 2},
	[OP_MKDIR] = {"mkdir", 4},
	[OP_RMDIR] = {"rmdir", 2},
	[OP_UNLINK] = {"unlink", 3},
	[OP_RENAME] = {"rename", 3},
	[OP_RENAME_NOREPLACE] = {"rename-noreplace", 2},
	[OP_RENAME_EXCHANGE] = {"rename-exchange", 2},
	[OP_LINK] = {"link", 3},
	[OP_SYMLINK] = {"symlink", 2},
	[OP_READLINK] = {"readlink", 1},
	[OP_CHMOD] = {"chmod", 1},
	[OP_UTIMES] = {"utimensat", 1},
	[OP_SETXATTR] = {"setxattr", 2},
	[OP_GETXATTR] = {"getxattr", 1},
	[OP_LISTXATTR] = {"listxattr", 1},
	[OP_REMOVEXATTR] = {"removexattr", 1},
	[OP_FSYNC] = {"fsync", 1},
	[OP_FDATASYNC] = {"fdatasync", 1},
	[OP_READDIR] = {"readdir", 2},
	[OP_STAT] = {"stat", 2},
	[OP_LSTAT] = {"lstat", 2},
	[OP_MMAPREAD] = {"mmap-read", 2},
};

/* Each process's counts, in memory shared with the parent, which adds them
 * up: ok[op], normal[op][errno], bad[op][errno]. */
struct counts {
	unsigned long ok[OP_COUNT];
	unsigned long normal[OP_COUNT][NERR];
	unsigned long bad[OP_COUNT][NERR];
	unsigned long sigbus;
	unsigned long ops;
	unsigned long unexpected;
};

static struct counts *counts;
static int proc;
static unsigned long long seed;
static unsigned long opnum;
static char iobuf[IO_BUF];

static uint64_t rng_state;

static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned rnd(unsigned n)
{
	return n ? (unsigned)(rnd64() % n) : 0;
}

/* An errno and its name. */
#define E(e) e, #e
static const struct {
	int e;
	const char *name;
} errnames[] = {{E(EPERM)},   {E(ENOENT)},	 {E(EINTR)},	  {E(EIO)},	  {E(ENXIO)},
		{E(E2BIG)},   {E(EBADF)},	 {E(EAGAIN)},	  {E(ENOMEM)},	  {E(EACCES)},
		{E(EFAULT)},  {E(EBUSY)},	 {E(EEXIST)},	  {E(EXDEV)},	  {E(ENODEV)},
		{E(ENOTDIR)}, {E(EISDIR)},	 {E(EINVAL)},	  {E(ENFILE)},	  {E(EMFILE)},
		{E(ETXTBSY)}, {E(EFBIG)},	 {E(ENOSPC)},	  {E(EROFS)},	  {E(EMLINK)},
		{E(ERANGE)},  {E(ENAMETOOLONG)}, {E(ENOSYS)},	  {E(ENOTEMPTY)}, {E(ELOOP)},
		{E(ENODATA)}, {E(EOVERFLOW)},	 {E(EOPNOTSUPP)}, {E(ENOTCONN)},  {E(ESTALE)},
		{E(EDQUOT)},  {E(ECONNABORTED)}};
#undef E

static const char *errname(int e)
{
	static char other[32];

	for (size_t i = 0; i < sizeof(errnames) / sizeof(errnames[0]); i++)
		if (errnames[i].e == e)
			return errnames[i].name;
	snprintf(other, sizeof(other), "errno %d", e);
	return other;
}

/* What racing processes make each other see. */
static bool normal_errno(int e)
{
	switch (e) {
	case ENOENT:
	case EEXIST:
	case ENOTEMPTY:
	case ENOTDIR:
	case EISDIR:
	case EXDEV:
	case ENODATA:
	case EMLINK:
	case ENOSPC:
	case EINVAL:
	case ELOOP:
		return true;
	default:
		return false;
	}
}

/* Records the outcome of one operation: 0 or an errno. NORMAL says whether
 * an errno is a possible outcome of the race, normal_errno() mostly;
 * THROUGH_FD, that it came after the open succeeded. */
static void outcome_as(enum op op, int e, bool normal, bool through_fd, const char *a,
		       const char *b)
{
	int slot = e > 0 && e < NERR ? e : NERR - 1;

	if (e == 0) {
		counts->ok[op]++;
		return;
	}
	if (normal) {
		counts->normal[op][slot]++;
		return;
	}
	counts->bad[op][slot]++;
	counts->unexpected++;
	fprintf(stderr, "fsstress: seed %llu proc %d op %lu: %s '%s'%s%s%s%s: %s (%s)\n", seed,
		proc, opnum, opdef[op].name, a, b ? " '" : "", b ? b : "", b ? "'" : "",
		through_fd ? " through the open descriptor" : "", strerror(e), errname(e));
}

static void outcome(enum op op, int e, const char *a, const char *b)
{
	outcome_as(op, e, normal_errno(e), false, a, b);
}

/* The outcome of what was done through a descriptor once the open
 * succeeded: whatever happened to the name since, the file is the one
 * opened, so no race explains an ENOENT, ENOTDIR or ESTALE there. Only a
 * read of a directory (EISDIR) and a full filesystem are normal. */
static void outcome_fd(enum op op, int e, const char *a)
{
	outcome_as(op, e, e == EISDIR || e == ENOSPC || e == EDQUOT, true, a, NULL);
}

static int err(int r)
{
	return r < 0 ? errno : 0;
}

enum kind { K_FILE, K_DIR, K_ANY };

/* Directories deep in the tree exist less often: a path is mostly shallow,
 * so that operations meet something rather than ENOENT. */
static size_t pick_dir(char *p, size_t sz)
{
	unsigned r = rnd(100);
	unsigned depth = r < 35 ? 0 : r < 70 ? 1 : r < 90 ? 2 : MAX_DEPTH;
	size_t n = 0;

	p[0] = 0;
	for (unsigned i = 0; i < depth; i++)
		n += (size_t)snprintf(p + n, sz - n, "%sd%u", i ? "/" : "", rnd(NDIRS));
	return n;
}

static void pick_name(char *p, size_t sz, enum kind k)
{
	if (k == K_ANY)
		k = rnd(2) ? K_FILE : K_DIR;
	if (k == K_DIR)
		snprintf(p, sz, "d%u", rnd(NDIRS));
	else
		snprintf(p, sz, "f%u", rnd(NFILES));
}

static void pick_path(char *p, size_t sz, enum kind k)
{
	size_t n = pick_dir(p, sz);

	if (n)
		p[n++] = '/';
	pick_name(p + n, sz - n, k);
}

/* File-ish operations meet a directory now and then, and the other way
 * round: the EISDIR/ENOTDIR paths are exercised too. */
static enum kind mostly(enum kind k)
{
	return rnd(10) ? k : K_ANY;
}

static void fill(size_t len)
{
	unsigned char c = (unsigned char)rnd(256);

	for (size_t i = 0; i < len; i++)
		iobuf[i] = (char)(c + i);
}

static int write_all(int fd, size_t len, off_t off, bool append)
{
	const char *p = iobuf;

	while (len) {
		ssize_t r = append ? write(fd, p, len) : pwrite(fd, p, len, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += r, off += r, len -= (size_t)r;
	}
	return 0;
}

static int close_err(int fd, int e)
{
	if (close(fd) < 0 && e == 0)
		return errno;
	return e;
}

static void op_create(void)
{
	char p[PATH_LEN];
	int flags = O_WRONLY | O_CREAT, fd, e;
	size_t len = rnd(MAX_WRITE + 1);

	pick_path(p, sizeof(p), mostly(K_FILE));
	if (rnd(4) == 0)
		flags |= O_TRUNC;
	if (rnd(8) == 0)
		flags |= O_EXCL;
	fd = open(p, flags, 0600 | (rnd(8) << 3) | rnd(8));
	if (fd < 0) {
		outcome(OP_CREATE, errno, p, NULL);
		return;
	}
	fill(len);
	e = write_all(fd, len, rnd(2) ? 0 : (off_t)rnd(MAX_OFFSET), false);
	outcome_fd(OP_CREATE, close_err(fd, e), p);
}

static void op_append(void)
{
	char p[PATH_LEN];
	size_t len = 1 + rnd(4096);
	int fd, e;

	pick_path(p, sizeof(p), mostly(K_FILE));
	fd = open(p, O_WRONLY | O_APPEND);
	if (fd < 0) {
		outcome(OP_APPEND, errno, p, NULL);
		return;
	}
	fill(len);
	e = write_all(fd, len, 0, true);
	outcome_fd(OP_APPEND, close_err(fd, e), p);
}

static void op_read(void)
{
	char p[PATH_LEN];
	int fd, e = 0;
	ssize_t r;

	pick_path(p, sizeof(p), mostly(K_FILE));
	fd = open(p, O_RDONLY);
	if (fd < 0) {
		outcome(OP_READ, errno, p, NULL);
		return;
	}
	while ((r = read(fd, iobuf, sizeof(iobuf))) != 0) {
		if (r < 0 && errno != EINTR) {
			e = errno;
			break;
		}
	}
	outcome_fd(OP_READ, close_err(fd, e), p);
}

static void op_truncate(void)
{
	char p[PATH_LEN];
	off_t len = (off_t)rnd(MAX_OFFSET + 1);
	int fd;

	pick_path(p, sizeof(p), mostly(K_FILE));
	if (rnd(2)) {
		outcome(OP_TRUNCATE, err(truncate(p, len)), p, NULL);
		return;
	}
	fd = open(p, O_WRONLY);
	if (fd < 0) {
		outcome(OP_TRUNCATE, errno, p, NULL);
		return;
	}
	outcome_fd(OP_TRUNCATE, close_err(fd, err(ftruncate(fd, len))), p);
}

static void op_mkdir(void)
{
	char p[PATH_LEN];

	pick_path(p, sizeof(p), mostly(K_DIR));
	outcome(OP_MKDIR, err(mkdir(p, 0700 | (rnd(8) << 3) | rnd(8))), p, NULL);
}

static void op_rmdir(void)
{
	char p[PATH_LEN];

	pick_path(p, sizeof(p), mostly(K_DIR));
	outcome(OP_RMDIR, err(rmdir(p)), p, NULL);
}

static void op_unlink(void)
{
	char p[PATH_LEN];

	pick_path(p, sizeof(p), mostly(K_FILE));
	outcome(OP_UNLINK, err(unlink(p)), p, NULL);
}

static void op_rename(enum op op)
{
	static const unsigned flags[] = {
		[OP_RENAME] = 0,
		[OP_RENAME_NOREPLACE] = RENAME_NOREPLACE,
		[OP_RENAME_EXCHANGE] = RENAME_EXCHANGE,
	};
	char a[PATH_LEN], b[PATH_LEN];
	enum kind k = rnd(2) ? K_FILE : K_DIR;

	pick_path(a, sizeof(a), k);
	/* Mostly to a name of the same kind; the rest mixes the kinds up. */
	pick_path(b, sizeof(b), mostly(k));
	outcome(op, err((int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags[op])), a, b);
}

/* link() of a directory is EPERM, and a name of the file pool can be a
 * directory after a rename. Another process can put one there and take it
 * away again around the call, so the name is looked at before and after:
 * EPERM is a failure only when it was the same non-directory both times. */
static void op_link(void)
{
	char a[PATH_LEN], b[PATH_LEN];
	struct stat before, after;
	bool known;
	int e;

	pick_path(a, sizeof(a), K_FILE);
	pick_path(b, sizeof(b), mostly(K_FILE));
	known = lstat(a, &before) == 0 && !S_ISDIR(before.st_mode);
	e = err(link(a, b));
	if (e == EPERM)
		known = known && lstat(a, &after) == 0 && after.st_ino == before.st_ino &&
			after.st_dev == before.st_dev && !S_ISDIR(after.st_mode);
	outcome_as(OP_LINK, e, normal_errno(e) || (e == EPERM && !known), false, a, b);
}

/* Targets are one name, resolved in the link's own directory: wherever a
 * rename carries the link, it stays inside the tree, and no chain of links
 * can grow without end (sandyfs refuses a link whose chain passes through
 * more than 40 links without coming round, docs/DESIGN.md: Symlink targets,
 * where the host would make it and answer ELOOP on use). */
static void op_symlink(void)
{
	char target[PATH_LEN], p[PATH_LEN];

	pick_name(target, sizeof(target), K_ANY);
	pick_path(p, sizeof(p), mostly(K_FILE));
	outcome(OP_SYMLINK, err(symlink(target, p)), target, p);
}

static void op_readlink(void)
{
	char p[PATH_LEN], t[PATH_MAX];

	pick_path(p, sizeof(p), K_ANY);
	outcome(OP_READLINK, readlink(p, t, sizeof(t)) < 0 ? errno : 0, p, NULL);
}

/* Owner rwx on whatever the name is, as chmod() cannot know what it will
 * meet; through a descriptor the type is known and files get rw- and x or
 * not. */
static void op_chmod(void)
{
	char p[PATH_LEN];
	struct stat st;
	mode_t low = (mode_t)rnd(0100);
	int fd, e;

	pick_path(p, sizeof(p), K_ANY);
	if (rnd(2)) {
		outcome(OP_CHMOD, err(chmod(p, 0700 | low)), p, NULL);
		return;
	}
	fd = open(p, O_RDONLY | O_NOFOLLOW);
	if (fd < 0) {
		outcome(OP_CHMOD, errno, p, NULL);
		return;
	}
	e = err(fstat(fd, &st));
	if (e == 0)
		e = err(fchmod(fd, (S_ISDIR(st.st_mode) ? 0700 : 0600 | (rnd(2) << 6)) | low));
	outcome_fd(OP_CHMOD, close_err(fd, e), p);
}

static void pick_time(struct timespec *ts)
{
	switch (rnd(4)) {
	case 0:
		ts->tv_sec = 0, ts->tv_nsec = UTIME_NOW;
		break;
	case 1:
		ts->tv_sec = 0, ts->tv_nsec = UTIME_OMIT;
		break;
	default:
		ts->tv_sec = (time_t)(1000000000 + rnd(700000000));
		ts->tv_nsec = (long)rnd(1000000000);
	}
}

static void op_utimes(void)
{
	char p[PATH_LEN];
	struct timespec ts[2];

	pick_path(p, sizeof(p), K_ANY);
	pick_time(&ts[0]);
	pick_time(&ts[1]);
	outcome(OP_UTIMES, err(utimensat(AT_FDCWD, p, ts, rnd(2) ? AT_SYMLINK_NOFOLLOW : 0)), p,
		NULL);
}

/* The forms that follow symlinks: user.* xattrs exist on files and
 * directories only, a symlink's own are EPERM to set by definition. */
static void op_setxattr(void)
{
	static const int flags[] = {0, XATTR_CREATE, XATTR_REPLACE};
	char p[PATH_LEN], name[16];
	size_t len = rnd(257);

	pick_path(p, sizeof(p), K_ANY);
	snprintf(name, sizeof(name), "user.x%u", rnd(NXATTRS));
	fill(len);
	outcome(OP_SETXATTR, err(setxattr(p, name, iobuf, len, flags[rnd(3)])), p, name);
}

static void op_getxattr(void)
{
	char p[PATH_LEN], name[16];

	pick_path(p, sizeof(p), K_ANY);
	snprintf(name, sizeof(name), "user.x%u", rnd(NXATTRS));
	outcome(OP_GETXATTR, getxattr(p, name, iobuf, sizeof(iobuf)) < 0 ? errno : 0, p, name);
}

static void op_listxattr(void)
{
	char p[PATH_LEN];

	pick_path(p, sizeof(p), K_ANY);
	outcome(OP_LISTXATTR, listxattr(p, iobuf, sizeof(iobuf)) < 0 ? errno : 0, p, NULL);
}

static void op_removexattr(void)
{
	char p[PATH_LEN], name[16];

	pick_path(p, sizeof(p), K_ANY);
	snprintf(name, sizeof(name), "user.x%u", rnd(NXATTRS));
	outcome(OP_REMOVEXATTR, err(removexattr(p, name)), p, name);
}

static void op_sync(enum op op)
{
	char p[PATH_LEN];
	int fd;

	pick_path(p, sizeof(p), K_ANY);
	fd = open(p, rnd(2) ? O_RDONLY : O_RDWR);
	if (fd < 0 && errno == EISDIR)
		fd = open(p, O_RDONLY);
	if (fd < 0) {
		outcome(op, errno, p, NULL);
		return;
	}
	outcome_fd(op, close_err(fd, err(op == OP_FSYNC ? fsync(fd) : fdatasync(fd))), p);
}

static void op_readdir(void)
{
	char p[PATH_LEN];
	DIR *d;
	int e = 0;

	if (pick_dir(p, sizeof(p)) == 0)
		strcpy(p, ".");
	d = opendir(p);
	if (!d) {
		outcome(OP_READDIR, errno, p, NULL);
		return;
	}
	for (;;) {
		errno = 0;
		if (!readdir(d)) {
			e = errno;
			break;
		}
	}
	if (closedir(d) < 0 && e == 0)
		e = errno;
	outcome(OP_READDIR, e, p, NULL);
}

static void op_stat(enum op op)
{
	char p[PATH_LEN];
	struct stat st;

	pick_path(p, sizeof(p), K_ANY);
	outcome(op, err(op == OP_STAT ? stat(p, &st) : lstat(p, &st)), p, NULL);
}

/* Another process may cut the file while it is mapped: touching the pages
 * beyond its new end is SIGBUS, a normal outcome of the race. */
static sigjmp_buf bus_jmp;
static volatile sig_atomic_t in_map;

static void on_sigbus(int sig)
{
	if (in_map)
		siglongjmp(bus_jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static volatile unsigned char map_sink;

static bool touch_pages(const volatile unsigned char *m, size_t len, size_t step)
{
	if (sigsetjmp(bus_jmp, 1)) {
		in_map = 0;
		return false;
	}
	in_map = 1;
	for (size_t i = 0; i < len; i += step)
		map_sink ^= m[i];
	map_sink ^= m[len - 1];
	in_map = 0;
	return true;
}

static void op_mmapread(void)
{
	char p[PATH_LEN];
	struct stat st;
	void *m;
	size_t len;
	int fd, e;

	pick_path(p, sizeof(p), K_FILE);
	fd = open(p, O_RDONLY);
	if (fd < 0) {
		outcome(OP_MMAPREAD, errno, p, NULL);
		return;
	}
	e = err(fstat(fd, &st));
	if (e || !S_ISREG(st.st_mode) || st.st_size == 0) {
		outcome_fd(OP_MMAPREAD, close_err(fd, e), p);
		return;
	}
	len = (size_t)st.st_size;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		outcome_fd(OP_MMAPREAD, close_err(fd, errno), p);
		return;
	}
	if (!touch_pages(m, len, (size_t)sysconf(_SC_PAGESIZE)))
		counts->sigbus++;
	e = err(munmap(m, len));
	outcome_fd(OP_MMAPREAD, close_err(fd, e), p);
}

static void do_op(enum op op)
{
	switch (op) {
	case OP_CREATE:
		op_create();
		break;
	case OP_APPEND:
		op_append();
		break;
	case OP_READ:
		op_read();
		break;
	case OP_TRUNCATE:
		op_truncate();
		break;
	case OP_MKDIR:
		op_mkdir();
		break;
	case OP_RMDIR:
		op_rmdir();
		break;
	case OP_UNLINK:
		op_unlink();
		break;
	case OP_RENAME:
	case OP_RENAME_NOREPLACE:
	case OP_RENAME_EXCHANGE:
		op_rename(op);
		break;
	case OP_LINK:
		op_link();
		break;
	case OP_SYMLINK:
		op_symlink();
		break;
	case OP_READLINK:
		op_readlink();
		break;
	case OP_CHMOD:
		op_chmod();
		break;
	case OP_UTIMES:
		op_utimes();
		break;
	case OP_SETXATTR:
		op_setxattr();
		break;
	case OP_GETXATTR:
		op_getxattr();
		break;
	case OP_LISTXATTR:
		op_listxattr();
		break;
	case OP_REMOVEXATTR:
		op_removexattr();
		break;
	case OP_FSYNC:
	case OP_FDATASYNC:
		op_sync(op);
		break;
	case OP_READDIR:
		op_readdir();
		break;
	case OP_STAT:
	case OP_LSTAT:
		op_stat(op);
		break;
	case OP_MMAPREAD:
		op_mmapread();
		break;
	case OP_COUNT:
		break;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child(unsigned long nops, double deadline)
{
	unsigned total = 0;
	struct sigaction sa = {.sa_handler = on_sigbus};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	rng_state = seed + 0x632be59bd9b4e019ULL * (uint64_t)(proc + 1);
	rnd64();
	for (int i = 0; i < OP_COUNT; i++)
		total += opdef[i].weight;
	for (opnum = 1; opnum <= nops; opnum++) {
		unsigned r = rnd(total);
		int i = 0;

		while (r >= opdef[i].weight)
			r -= opdef[i++].weight;
		do_op((enum op)i);
		counts->ops++;
		if (deadline && now() >= deadline)
			break;
	}
	_exit(counts->unexpected ? 1 : 0);
}

/* --- the walk of the tree once every process is done ---------------------- */

struct name_rec {
	dev_t dev;
	ino_t ino;
	nlink_t nlink;
	char *path;
};

static struct name_rec *names;
static size_t nnames, names_cap;
static unsigned long broken;

static void invariant(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void invariant(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fsstress: seed %llu: invariant: ", seed);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	broken++;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fprintf(stderr, "fsstress: out of memory\n");
		exit(1);
	}
	return p;
}

static void add_name(const struct stat *st, const char *path)
{
	if (nnames == names_cap) {
		names_cap = names_cap ? 2 * names_cap : 1024;
		names = xrealloc(names, names_cap * sizeof(*names));
	}
	names[nnames].dev = st->st_dev;
	names[nnames].ino = st->st_ino;
	names[nnames].nlink = st->st_nlink;
	names[nnames].path = strdup(path);
	if (!names[nnames].path) {
		fprintf(stderr, "fsstress: out of memory\n");
		exit(1);
	}
	nnames++;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_name(const void *a, const void *b)
{
	const struct name_rec *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->path, y->path);
}

static bool listed(char **list, size_t n, const char *name)
{
	return n && bsearch(&name, list, n, sizeof(*list), cmp_str) != NULL;
}

static mode_t dtype_mode(unsigned char t)
{
	switch (t) {
	case DT_REG:
		return S_IFREG;
	case DT_DIR:
		return S_IFDIR;
	case DT_LNK:
		return S_IFLNK;
	case DT_FIFO:
		return S_IFIFO;
	case DT_SOCK:
		return S_IFSOCK;
	case DT_CHR:
		return S_IFCHR;
	case DT_BLK:
		return S_IFBLK;
	default:
		return 0;
	}
}

static void check_file_size(int dfd, const char *name, const char *path, const struct stat *st)
{
	long long got = 0;
	ssize_t r;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW);

	if (fd < 0) {
		invariant("cannot open '%s': %s", path, strerror(errno));
		return;
	}
	while ((r = read(fd, iobuf, sizeof(iobuf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			invariant("cannot read '%s': %s", path, strerror(errno));
			break;
		}
		got += r;
	}
	if (r == 0 && got != (long long)st->st_size)
		invariant("'%s': st_size %lld, read() returns %lld bytes", path,
			  (long long)st->st_size, got);
	close(fd);
}

/* The path of the directory the walk is in, for the messages: the tree can
 * grow deeper than PATH_MAX (renames carry subtrees down, and the operations
 * reach only the top levels, where nothing deep is ever removed). */
static char *cur;
static size_t cur_len, cur_cap;

static void cur_set_len(size_t len)
{
	cur_len = len;
	cur[len] = 0;
}

static void cur_append(const char *name)
{
	size_t n = strlen(name);

	if (cur_len + n + 2 > cur_cap) {
		cur_cap = 2 * (cur_len + n + 2);
		cur = xrealloc(cur, cur_cap);
	}
	cur[cur_len++] = '/';
	memcpy(cur + cur_len, name, n + 1);
	cur_len += n;
}

/* One directory of the walk: what it holds left to visit. */
struct level {
	char **subdirs;
	size_t n, next;
	size_t path_len;
	dev_t dev;
	ino_t ino;
};

/* Checks the entries of the directory DFD (at cur) and collects its
 * subdirectories into L. */
static void scan_dir(int dfd, struct level *l)
{
	char **list = NULL;
	unsigned char *types = NULL;
	size_t n = 0, cap = 0, sub_cap = 0;
	struct dirent *de;
	struct stat st;
	int fd = dup(dfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		invariant("cannot list '%s': %s", cur, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			list = xrealloc(list, cap * sizeof(*list));
			types = xrealloc(types, cap);
		}
		list[n] = strdup(de->d_name);
		if (!list[n]) {
			fprintf(stderr, "fsstress: out of memory\n");
			exit(1);
		}
		types[n++] = de->d_type;
	}
	if (errno)
		invariant("readdir '%s': %s", cur, strerror(errno));
	closedir(d);

	for (size_t i = 0; i < n; i++) {
		size_t len = cur_len;

		cur_append(list[i]);
		if (fstatat(dfd, list[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			invariant("readdir lists '%s', lstat: %s", cur, strerror(errno));
		} else if (dtype_mode(types[i]) && dtype_mode(types[i]) != (st.st_mode & S_IFMT)) {
			invariant("'%s': readdir's d_type %u, lstat's mode 0%o", cur, types[i],
				  (unsigned)st.st_mode);
		} else if (S_ISDIR(st.st_mode)) {
			if (l->n == sub_cap) {
				sub_cap = sub_cap ? 2 * sub_cap : 16;
				l->subdirs = xrealloc(l->subdirs, sub_cap * sizeof(*l->subdirs));
			}
			l->subdirs[l->n] = strdup(list[i]);
			if (!l->subdirs[l->n++]) {
				fprintf(stderr, "fsstress: out of memory\n");
				exit(1);
			}
		} else {
			add_name(&st, cur);
			if (S_ISREG(st.st_mode))
				check_file_size(dfd, list[i], cur, &st);
		}
		cur_set_len(len);
	}

	if (n)
		qsort(list, n, sizeof(*list), cmp_str);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(list[i - 1], list[i]))
			invariant("readdir lists '%s/%s' twice", cur, list[i]);
	for (int i = 0; i < NDIRS + NFILES; i++) {
		char name[8];

		snprintf(name, sizeof(name), i < NDIRS ? "d%d" : "f%d", i < NDIRS ? i : i - NDIRS);
		if (listed(list, n, name))
			continue;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			invariant("lstat finds '%s/%s', readdir does not list it", cur, name);
		else if (errno != ENOENT)
			invariant("lstat '%s/%s' (not listed): %s", cur, name, strerror(errno));
	}
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
	free(types);
}

/* Depth first with one directory open at a time, whatever the depth: down
 * by name, up by "..", which must lead back to the directory left. */
static void walk(void)
{
	struct level *stack = NULL;
	size_t depth = 0, cap = 0;
	struct stat st;
	int dfd = open(".", O_RDONLY | O_DIRECTORY);

	if (dfd < 0 || fstat(dfd, &st) < 0) {
		invariant("cannot open the tree: %s", strerror(errno));
		return;
	}
	cur = xrealloc(NULL, cur_cap = 256);
	strcpy(cur, ".");
	cur_len = 1;
	for (;;) {
		struct level *l;

		if (depth == cap) {
			cap = cap ? 2 * cap : 64;
			stack = xrealloc(stack, cap * sizeof(*stack));
		}
		l = &stack[depth++];
		*l = (struct level){.path_len = cur_len, .dev = st.st_dev, .ino = st.st_ino};
		scan_dir(dfd, l);
		for (;;) {
			int next;

			l = &stack[depth - 1];
			if (l->next < l->n) {
				const char *name = l->subdirs[l->next++];

				next = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
				if (next < 0) {
					invariant("cannot open directory '%s/%s': %s", cur, name,
						  strerror(errno));
					continue;
				}
				close(dfd);
				dfd = next;
				cur_append(name);
				if (fstat(dfd, &st) < 0)
					invariant("fstat '%s': %s", cur, strerror(errno));
				break;
			}
			for (size_t i = 0; i < l->n; i++)
				free(l->subdirs[i]);
			free(l->subdirs);
			if (--depth == 0) {
				close(dfd);
				free(stack);
				free(cur);
				return;
			}
			next = openat(dfd, "..", O_RDONLY | O_DIRECTORY);
			cur_set_len(stack[depth - 1].path_len);
			if (next < 0 || fstat(next, &st) < 0) {
				invariant("cannot go back up to '%s': %s", cur, strerror(errno));
				free(stack);
				free(cur);
				return;
			}
			close(dfd);
			dfd = next;
			if (st.st_dev != stack[depth - 1].dev ||
			    st.st_ino != stack[depth - 1].ino) {
				invariant("'..' of a directory in '%s' is not '%s'", cur, cur);
				close(dfd);
				free(stack);
				free(cur);
				return;
			}
		}
	}
}

/* Every link of every file is inside the tree: st_nlink counts its names. */
static void check_links(void)
{
	if (nnames)
		qsort(names, nnames, sizeof(*names), cmp_name);
	for (size_t i = 0, j; i < nnames; i = j) {
		for (j = i + 1;
		     j < nnames && names[j].dev == names[i].dev && names[j].ino == names[i].ino;
		     j++)
			if (names[j].nlink != names[i].nlink)
				invariant("'%s' and '%s' are one inode with st_nlink %lu and %lu",
					  names[i].path, names[j].path,
					  (unsigned long)names[i].nlink,
					  (unsigned long)names[j].nlink);
		if (names[i].nlink != j - i) {
			invariant("inode %llu has st_nlink %lu and %zu name%s in the tree:",
				  (unsigned long long)names[i].ino, (unsigned long)names[i].nlink,
				  j - i, j - i == 1 ? "" : "s");
			for (size_t k = i; k < j; k++)
				fprintf(stderr, "fsstress:   '%s'\n", names[k].path);
		}
	}
}

static void report(struct counts *all, int nprocs)
{
	struct counts *sum = calloc(1, sizeof(*sum));

	if (!sum) {
		fprintf(stderr, "fsstress: out of memory\n");
		exit(1);
	}
	for (int p = 0; p < nprocs; p++) {
		sum->ops += all[p].ops;
		sum->unexpected += all[p].unexpected;
		sum->sigbus += all[p].sigbus;
		for (int o = 0; o < OP_COUNT; o++) {
			sum->ok[o] += all[p].ok[o];
			for (int e = 0; e < NERR; e++) {
				sum->normal[o][e] += all[p].normal[o][e];
				sum->bad[o][e] += all[p].bad[o][e];
			}
		}
	}
	for (int o = 0; o < OP_COUNT; o++) {
		printf("# fsstress: %s: ok %lu", opdef[o].name, sum->ok[o]);
		for (int e = 1; e < NERR; e++)
			if (sum->normal[o][e])
				printf(", %s %lu", errname(e), sum->normal[o][e]);
		for (int e = 1; e < NERR; e++)
			if (sum->bad[o][e])
				printf(", unexpected %s %lu", errname(e), sum->bad[o][e]);
		if (o == OP_MMAPREAD && sum->sigbus)
			printf(" (of which SIGBUS %lu)", sum->sigbus);
		putchar('\n');
	}
	all[0] = *sum;
	free(sum);
}

static void usage(void) __attribute__((noreturn));

static void usage(void)
{
	fprintf(stderr, "usage: fsstress [-p PROCS] [-n OPS] [-t SECONDS] [-S SEED] DIR\n");
	exit(2);
}

static unsigned long long number(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "fsstress: bad %s '%s'\n", what, s);
		usage();
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned long long nops = DEFAULT_N, seconds = 0;
	int nprocs = 4, c, running = 0, failed = 0;
	pid_t pids[MAX_PROCS];
	bool have_seed = false, killed = false;
	double deadline = 0;
	struct counts *all;
	const char *dir;

	while ((c = getopt(argc, argv, "p:n:t:S:")) != -1) {
		switch (c) {
		case 'p':
			nprocs = (int)number(optarg, "number of processes");
			if (nprocs < 1 || nprocs > MAX_PROCS) {
				fprintf(stderr, "fsstress: processes must be 1..%d\n", MAX_PROCS);
				usage();
			}
			break;
		case 'n':
			nops = number(optarg, "number of operations");
			break;
		case 't':
			seconds = number(optarg, "number of seconds");
			break;
		case 'S':
			seed = number(optarg, "seed");
			have_seed = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	dir = argv[optind];
	if (!have_seed)
		seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 16);
	if (chdir(dir) < 0) {
		fprintf(stderr, "fsstress: cannot enter '%s': %s\n", dir, strerror(errno));
		return 1;
	}
	/* The modes the operations choose are the modes the tree gets. */
	umask(0);
	all = mmap(NULL, sizeof(*all) * (size_t)nprocs, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (all == MAP_FAILED) {
		fprintf(stderr, "fsstress: mmap: %s\n", strerror(errno));
		return 1;
	}
	printf("# fsstress: seed %llu, %d procs, %llu ops each, %s\n", seed, nprocs, nops, dir);
	fflush(stdout);
	if (seconds)
		deadline = now() + (double)seconds;

	for (int p = 0; p < nprocs; p++) {
		pids[p] = fork();
		if (pids[p] < 0) {
			fprintf(stderr, "fsstress: fork: %s\n", strerror(errno));
			failed = 1;
			break;
		}
		if (pids[p] == 0) {
			proc = p;
			counts = &all[p];
			child((unsigned long)nops, deadline);
		}
		running++;
	}

	while (running) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid > 0) {
			int p = 0;

			while (p < nprocs && pids[p] != pid)
				p++;
			running--;
			if (WIFSIGNALED(status)) {
				fprintf(stderr,
					"fsstress: seed %llu proc %d: killed by signal %d\n", seed,
					p, WTERMSIG(status));
				failed = 1;
			} else if (WEXITSTATUS(status) != 0 && all[p].unexpected == 0) {
				fprintf(stderr, "fsstress: seed %llu proc %d: exit status %d\n",
					seed, p, WEXITSTATUS(status));
				failed = 1;
			}
			pids[p] = 0;
			continue;
		}
		if (pid < 0 && errno != EINTR)
			break;
		if (deadline && now() > deadline + GRACE_SECONDS) {
			if (killed) {
				fprintf(stderr,
					"fsstress: seed %llu: %d process%s hung, giving up\n", seed,
					running, running == 1 ? "" : "es");
				return 1;
			}
			for (int p = 0; p < nprocs; p++) {
				if (pids[p] <= 0)
					continue;
				fprintf(stderr,
					"fsstress: seed %llu proc %d: still running %d s past the "
					"time "
					"limit, killed\n",
					seed, p, GRACE_SECONDS);
				kill(pids[p], SIGKILL);
			}
			killed = true;
			failed = 1;
			deadline += 10;
		}
		nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
	}

	report(all, nprocs);
	fflush(stdout);
	walk();
	check_links();
	printf("# fsstress: the tree: %zu names of files and links, %lu broken invariants\n",
	       nnames, broken);
	printf("fsstress: %llu %d procs %lu ops, %lu unexpected errors (%s)\n", seed, nprocs,
	       all[0].ops, all[0].unexpected, dir);
	return failed || broken || all[0].unexpected ? 1 : 0;
}
