/*
 * tests/fs/fsx.c: a single-file exerciser in the spirit of xfstests' fsx
 * (written from scratch for this project).
 *
 * One file gets a random sequence of operations: pwrite at random offsets
 * and lengths (past the end too, leaving holes), pread, writes and reads
 * through a shared mapping, ftruncate up and down, fallocate (mode 0 and
 * KEEP_SIZE), PUNCH_HOLE, ZERO_RANGE, copy_file_range within the file and
 * from a second file, fsync/fdatasync, and closing and reopening it. A model
 * in memory says what the file must hold; every read is compared with it, the
 * whole file after every reopen and at the end, and fstat's st_size after
 * every operation. The sequence depends on the seed alone, so a run that
 * fails on a mount replays with the same seed on a native directory.
 *
 * usage: fsx [-N OPS] [-S SEED] [-l MAXLEN] [-t SECONDS] FILE
 *   -N OPS      operations to run (default 10000)
 *   -S SEED     the seed of the sequence (default: from the clock)
 *   -l MAXLEN   the largest size the file reaches (default 262144)
 *   -t SECONDS  stop after this long, even if fewer operations ran
 * FILE is created or truncated; FILE.src next to it is the other file the
 * copies read from. E.g. `fsx -N 100000 -S 42 /mnt/x/file`.
 *
 * An fallocate mode or copy_file_range that the filesystem refuses as
 * unsupported (EOPNOTSUPP, ENOSYS, or EINVAL for arguments that are valid) is
 * left out for the rest of the run and said once as "# fsx: disabled: NAME
 * (why)": two filesystems that support different sets are told apart by those
 * lines (tests/fs/exercisers.sh compares them).
 *
 * Output: "fsx: SEED N ops ok (FILE)" and exit status 0. On a mismatch or an
 * unexpected error, what went wrong, the first offset that differs, and the
 * last 50 operations, on stderr; exit status 1. Bad usage: exit status 2.
 *
 * gnu11, libc only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include <sys/types.h>

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE 0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE 0x02
#endif
#ifndef FALLOC_FL_ZERO_RANGE
#define FALLOC_FL_ZERO_RANGE 0x10
#endif

#define LOG_LEN	   50
#define LOG_TEXT   192
#define MAX_OPLEN  (64 * 1024)
#define DEFAULT_N  10000
#define DEFAULT_ML (256 * 1024)

enum op {
	OP_READ,
	OP_WRITE,
	OP_MAPREAD,
	OP_MAPWRITE,
	OP_TRUNCATE,
	OP_FALLOCATE,
	OP_PUNCH,
	OP_ZERO,
	OP_COPY,
	OP_COPY_FROM,
	OP_FSYNC,
	OP_REOPEN,
	OP_COUNT
};

/* Reads and writes come most often: they are what checks everything else. */
static const unsigned op_weight[OP_COUNT] = {
	[OP_READ] = 8,	   [OP_WRITE] = 8,     [OP_MAPREAD] = 4, [OP_MAPWRITE] = 4,
	[OP_TRUNCATE] = 3, [OP_FALLOCATE] = 2, [OP_PUNCH] = 2,	 [OP_ZERO] = 2,
	[OP_COPY] = 2,	   [OP_COPY_FROM] = 2, [OP_FSYNC] = 1,	 [OP_REOPEN] = 1,
};

/* What a filesystem may not support, each on its own: a filesystem can have
 * fallocate and not ZERO_RANGE. */
enum feature {
	F_FALLOC,
	F_FALLOC_KEEP,
	F_PUNCH,
	F_ZERO,
	F_ZERO_KEEP,
	F_COPY,
	F_COPY_FROM,
	F_COUNT
};

static const char *const feature_name[F_COUNT] = {
	[F_FALLOC] = "fallocate",
	[F_FALLOC_KEEP] = "fallocate-keep-size",
	[F_PUNCH] = "punch-hole",
	[F_ZERO] = "zero-range",
	[F_ZERO_KEEP] = "zero-range-keep-size",
	[F_COPY] = "copy-range",
	[F_COPY_FROM] = "copy-range-from",
};

static bool disabled[F_COUNT];

static unsigned long long seed;
static const char *path;
static char *src_path;
static int fd = -1, src_fd = -1;
static size_t maxlen = DEFAULT_ML, maxoplen;
static size_t pagesize;

/* The model: good[0, size) is what the file holds; good[size, maxlen) stays
 * zero, so that growing the file needs no work here. */
static unsigned char *good, *src_good, *buf, *tmp;
static size_t size;

static unsigned long opnum;
static char oplog[LOG_LEN][LOG_TEXT];
static unsigned long logged;

/* splitmix64: the same sequence from a seed on every libc. */
static uint64_t rng_state;

static uint64_t rnd64(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t rnd(size_t n)
{
	return n ? (size_t)(rnd64() % n) : 0;
}

/* Never zero, so a write that is lost does not read back as a hole, and it
 * depends on the position, so data that lands shifted does not match. */
static unsigned char pattern(unsigned long n, size_t pos)
{
	return (unsigned char)(1 + (n * 31 + pos) % 255);
}

static void log_op(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void log_op(const char *fmt, ...)
{
	char *line = oplog[logged % LOG_LEN];
	int n = snprintf(line, LOG_TEXT, "%lu ", opnum);
	va_list ap;

	va_start(ap, fmt);
	if (n > 0 && n < LOG_TEXT)
		vsnprintf(line + n, LOG_TEXT - (size_t)n, fmt, ap);
	va_end(ap);
	logged++;
}

/* Adds to the entry of the operation in progress: what it found. */
static void log_more(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void log_more(const char *fmt, ...)
{
	char *line = oplog[(logged - 1) % LOG_LEN];
	size_t n = strlen(line);
	va_list ap;

	va_start(ap, fmt);
	if (n < LOG_TEXT)
		vsnprintf(line + n, LOG_TEXT - n, fmt, ap);
	va_end(ap);
}

static void dump_log(void)
{
	unsigned long first = logged > LOG_LEN ? logged - LOG_LEN : 0;

	fprintf(stderr, "fsx: the last %lu operations (seed %llu, file %s):\n", logged - first,
		seed, path);
	for (unsigned long i = first; i < logged; i++)
		fprintf(stderr, "  %s\n", oplog[i % LOG_LEN]);
	fprintf(stderr, "fsx: replay: fsx -N %lu -S %llu -l %zu FILE\n", opnum + 1, seed, maxlen);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fsx: seed %llu op %lu: ", seed, opnum);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	dump_log();
	exit(1);
}

/* Says where what was read first differs from the model, with the bytes
 * from there, and which operation (modulo 255) would have written the first
 * bad byte there: a hint at stale or misplaced data. */
static void check_bytes(const unsigned char *got, size_t off, size_t len, const char *what)
{
	size_t i, end;

	if (memcmp(got, good + off, len) == 0)
		return;
	for (i = 0; got[i] == good[off + i]; i++)
		;
	fprintf(stderr,
		"fsx: seed %llu op %lu: %s: data differ at offset 0x%zx (read 0x%zx thru 0x%zx)\n",
		seed, opnum, what, off + i, off, off + len - 1);
	end = i + 16 < len ? i + 16 : len;
	fprintf(stderr, "fsx:   offset   good bad\n");
	for (size_t j = i; j < end; j++) {
		fprintf(stderr, "fsx:   0x%06zx 0x%02x 0x%02x", off + j, good[off + j], got[j]);
		if (j == i && got[j] != 0) {
			unsigned k = (unsigned)((got[j] + 254u * 255 - 1 - (off + j) % 255) % 255);
			fprintf(stderr, " (as op %u mod 255 would write here)", k * 181 % 255);
		}
		fputc('\n', stderr);
	}
	dump_log();
	exit(1);
}

static void check_size(const char *what)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		fail("fstat after %s: %s", what, strerror(errno));
	if ((unsigned long long)st.st_size != size)
		fail("after %s: st_size 0x%llx, expected 0x%zx", what,
		     (unsigned long long)st.st_size, size);
}

/* Reads [off, off + len) with pread, expecting the model's bytes up to its
 * size and the end of the file there. */
static void read_check(size_t off, size_t len, const char *what)
{
	size_t want = off < size ? (len < size - off ? len : size - off) : 0;
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, tmp + done, len - done, (off_t)(off + done));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			fail("%s: pread: %s", what, strerror(errno));
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	if (done != want)
		fail("%s: pread at 0x%zx of 0x%zx bytes returned 0x%zx, the model has 0x%zx (size "
		     "0x%zx)",
		     what, off, len, done, want, size);
	check_bytes(tmp, off, done, what);
}

static void write_all(const unsigned char *p, size_t len, size_t off, const char *what)
{
	while (len) {
		ssize_t r = pwrite(fd, p, len, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			fail("%s: pwrite: %s", what, strerror(errno));
		}
		if (r == 0)
			fail("%s: pwrite wrote nothing", what);
		p += r, off += (size_t)r, len -= (size_t)r;
	}
}

static void grow_model(size_t end)
{
	if (end > size)
		size = end;
}

/* Shrinking zeroes what is cut off, keeping good[size, maxlen) zero. */
static void set_size_model(size_t newsize)
{
	if (newsize < size)
		memset(good + newsize, 0, size - newsize);
	size = newsize;
}

/* Lengths: tiny ones and page multiples as well as any, because the edges
 * of pages and blocks are where filesystems go wrong. */
static size_t pick_len(void)
{
	switch (rnd(8)) {
	case 0:
		return 1 + rnd(16);
	case 1:
		/* below a page when the file may not reach one */
		if (maxoplen < pagesize)
			return maxoplen;
		return pagesize * (1 + rnd(maxoplen / pagesize));
	default:
		return 1 + rnd(maxoplen);
	}
}

static size_t pick_off(size_t limit)
{
	size_t off = rnd(limit);

	if (rnd(8) == 0)
		off &= ~(pagesize - 1);
	return off;
}

static size_t cap(size_t off, size_t len, size_t limit)
{
	return off + len > limit ? limit - off : len;
}

static void fill(unsigned char *p, size_t off, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(opnum, off + i);
}

static bool unsupported(int e)
{
	return e == EOPNOTSUPP || e == ENOSYS || e == EINVAL;
}

static void disable(enum feature f, int e)
{
	disabled[f] = true;
	printf("# fsx: disabled: %s (%s)\n", feature_name[f], strerror(e));
	fflush(stdout);
	log_more(" -> %s, disabled", strerror(e));
}

static void op_read(void)
{
	size_t off = size ? pick_off(size) : 0, len = pick_len();

	log_op("read 0x%zx thru 0x%zx (0x%zx bytes), size 0x%zx", off, off + len - 1, len, size);
	read_check(off, len, "read");
}

static void op_write(void)
{
	size_t off, len;

	/* Now and then right at or just past the end: appends, small holes. */
	if (rnd(8) == 0 && size < maxlen)
		off = size + rnd(maxlen - size < 4096 ? maxlen - size : 4096);
	else
		off = pick_off(maxlen);
	len = cap(off, pick_len(), maxlen);
	log_op("write 0x%zx thru 0x%zx (0x%zx bytes), size 0x%zx", off, off + len - 1, len, size);
	fill(buf, off, len);
	write_all(buf, len, off, "write");
	memcpy(good + off, buf, len);
	grow_model(off + len);
	log_more(" -> 0x%zx", size);
}

static void op_mapread(void)
{
	size_t off, len, pg;
	unsigned char *p;

	if (size == 0) {
		log_op("mapread skipped: size 0");
		return;
	}
	off = pick_off(size);
	len = cap(off, pick_len(), size);
	pg = off & ~(pagesize - 1);
	log_op("mapread 0x%zx thru 0x%zx (0x%zx bytes), size 0x%zx", off, off + len - 1, len, size);
	p = mmap(NULL, off + len - pg, PROT_READ, MAP_SHARED, fd, (off_t)pg);
	if (p == MAP_FAILED)
		fail("mapread: mmap: %s", strerror(errno));
	check_bytes(p + (off - pg), off, len, "mapread");
	if (munmap(p, off + len - pg) < 0)
		fail("mapread: munmap: %s", strerror(errno));
}

static void op_mapwrite(void)
{
	size_t off, len, pg;
	unsigned char *p;

	if (size == 0) {
		log_op("mapwrite skipped: size 0");
		return;
	}
	off = pick_off(maxlen);
	len = cap(off, pick_len(), maxlen);
	pg = off & ~(pagesize - 1);
	log_op("mapwrite 0x%zx thru 0x%zx (0x%zx bytes), size 0x%zx", off, off + len - 1, len,
	       size);
	/* A mapping cannot extend the file: storing past the end is SIGBUS. */
	if (off + len > size) {
		if (ftruncate(fd, (off_t)(off + len)) < 0)
			fail("mapwrite: ftruncate to 0x%zx: %s", off + len, strerror(errno));
		set_size_model(off + len);
		log_more(", grown to 0x%zx", size);
		check_size("mapwrite's ftruncate");
	}
	p = mmap(NULL, off + len - pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)pg);
	if (p == MAP_FAILED)
		fail("mapwrite: mmap: %s", strerror(errno));
	fill(p + (off - pg), off, len);
	if (msync(p, off + len - pg, MS_SYNC) < 0)
		fail("mapwrite: msync: %s", strerror(errno));
	if (munmap(p, off + len - pg) < 0)
		fail("mapwrite: munmap: %s", strerror(errno));
	fill(good + off, off, len);
}

static void op_truncate(void)
{
	size_t newsize;

	/* Near the current size half the time: cuts within the last page. */
	if (rnd(2) && size)
		newsize = size - rnd(size < 2 * pagesize ? size : 2 * pagesize) +
			  rnd(pagesize) % (maxlen - size + 1);
	else
		newsize = rnd(maxlen + 1);
	if (newsize > maxlen)
		newsize = maxlen;
	log_op("truncate from 0x%zx to 0x%zx", size, newsize);
	if (ftruncate(fd, (off_t)newsize) < 0)
		fail("truncate: ftruncate: %s", strerror(errno));
	set_size_model(newsize);
}

static bool pick_feature(enum feature a, enum feature b, enum feature *f)
{
	if (disabled[a] && disabled[b])
		return false;
	*f = disabled[a] ? b : disabled[b] ? a : rnd(2) ? a : b;
	return true;
}

static void op_fallocate(void)
{
	enum feature f;
	size_t off, len;

	if (!pick_feature(F_FALLOC, F_FALLOC_KEEP, &f))
		return;
	off = pick_off(maxlen);
	len = cap(off, pick_len(), maxlen);
	log_op("fallocate%s 0x%zx thru 0x%zx (0x%zx bytes), size 0x%zx",
	       f == F_FALLOC_KEEP ? " KEEP_SIZE" : "", off, off + len - 1, len, size);
	if (fallocate(fd, f == F_FALLOC_KEEP ? FALLOC_FL_KEEP_SIZE : 0, (off_t)off, (off_t)len) <
	    0) {
		if (!unsupported(errno))
			fail("fallocate: %s", strerror(errno));
		disable(f, errno);
		return;
	}
	if (f == F_FALLOC)
		grow_model(off + len);
}

static void op_punch(void)
{
	size_t off, len;

	if (disabled[F_PUNCH])
		return;
	off = pick_off(size ? size : maxlen);
	len = cap(off, pick_len(), maxlen);
	log_op("punch_hole 0x%zx thru 0x%zx (0x%zx bytes), size 0x%zx", off, off + len - 1, len,
	       size);
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0) {
		if (!unsupported(errno))
			fail("punch_hole: %s", strerror(errno));
		disable(F_PUNCH, errno);
		return;
	}
	if (off < size)
		memset(good + off, 0, cap(off, len, size));
}

static void op_zero(void)
{
	enum feature f;
	size_t off, len;
	int mode = FALLOC_FL_ZERO_RANGE;

	if (!pick_feature(F_ZERO, F_ZERO_KEEP, &f))
		return;
	if (f == F_ZERO_KEEP)
		mode |= FALLOC_FL_KEEP_SIZE;
	off = pick_off(size && rnd(4) ? size : maxlen);
	len = cap(off, pick_len(), maxlen);
	log_op("zero_range%s 0x%zx thru 0x%zx (0x%zx bytes), size 0x%zx",
	       f == F_ZERO_KEEP ? " KEEP_SIZE" : "", off, off + len - 1, len, size);
	if (fallocate(fd, mode, (off_t)off, (off_t)len) < 0) {
		if (!unsupported(errno))
			fail("zero_range: %s", strerror(errno));
		disable(f, errno);
		return;
	}
	if (f == F_ZERO) {
		memset(good + off, 0, len);
		grow_model(off + len);
	} else if (off < size) {
		memset(good + off, 0, cap(off, len, size));
	}
}

/* Copies until LEN bytes are done: copy_file_range may copy less than asked.
 * Returns false when the first call said the operation is unsupported. */
static bool copy_all(int from, size_t soff, size_t doff, size_t len, const char *what)
{
	loff_t s = (loff_t)soff, d = (loff_t)doff;
	size_t done = 0;

	while (done < len) {
		ssize_t r = copy_file_range(from, &s, fd, &d, len - done, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (done == 0 && unsupported(errno))
				return false;
			fail("%s: copy_file_range: %s", what, strerror(errno));
		}
		if (r == 0)
			fail("%s: copy_file_range stopped after 0x%zx of 0x%zx bytes", what, done,
			     len);
		done += (size_t)r;
	}
	if ((size_t)s != soff + len || (size_t)d != doff + len)
		fail("%s: copy_file_range left the offsets at 0x%llx and 0x%llx, expected 0x%zx "
		     "and "
		     "0x%zx",
		     what, (unsigned long long)s, (unsigned long long)d, soff + len, doff + len);
	return true;
}

static void op_copy(void)
{
	size_t soff, doff, len;
	int tries;

	if (disabled[F_COPY])
		return;
	if (size == 0) {
		log_op("copy_range skipped: size 0");
		return;
	}
	soff = pick_off(size);
	len = cap(soff, pick_len(), size);
	/* Overlapping ranges within one file are EINVAL by definition. */
	for (tries = 0; tries < 8; tries++) {
		doff = pick_off(maxlen - len + 1);
		if (doff >= soff + len || soff >= doff + len)
			break;
	}
	if (tries == 8) {
		log_op("copy_range skipped: no range apart from 0x%zx+0x%zx", soff, len);
		return;
	}
	log_op("copy_range 0x%zx thru 0x%zx (0x%zx bytes) to 0x%zx thru 0x%zx, size 0x%zx", soff,
	       soff + len - 1, len, doff, doff + len - 1, size);
	if (!copy_all(fd, soff, doff, len, "copy_range")) {
		disable(F_COPY, errno);
		return;
	}
	memmove(good + doff, good + soff, len);
	grow_model(doff + len);
	log_more(" -> 0x%zx", size);
}

static void op_copy_from(void)
{
	size_t soff, doff, len;

	if (disabled[F_COPY_FROM])
		return;
	soff = pick_off(maxlen);
	doff = pick_off(maxlen);
	len = cap(soff, cap(doff, pick_len(), maxlen), maxlen);
	log_op("copy_range_from %s 0x%zx thru 0x%zx (0x%zx bytes) to 0x%zx thru 0x%zx, size 0x%zx",
	       src_path, soff, soff + len - 1, len, doff, doff + len - 1, size);
	if (!copy_all(src_fd, soff, doff, len, "copy_range_from")) {
		disable(F_COPY_FROM, errno);
		return;
	}
	memcpy(good + doff, src_good + soff, len);
	grow_model(doff + len);
	log_more(" -> 0x%zx", size);
}

static void op_fsync(void)
{
	bool data = rnd(2);

	log_op("%s", data ? "fdatasync" : "fsync");
	if ((data ? fdatasync(fd) : fsync(fd)) < 0)
		fail("%s: %s", data ? "fdatasync" : "fsync", strerror(errno));
}

static void open_file(int flags)
{
	fd = open(path, O_RDWR | flags, 0644);
	if (fd < 0)
		fail("cannot open '%s': %s", path, strerror(errno));
}

/* A reopen drops what the open file kept (a FUSE file handle, cached
 * attributes): the whole file is read back through the new one. */
static void op_reopen(void)
{
	log_op("close and reopen, size 0x%zx", size);
	if (close(fd) < 0)
		fail("close: %s", strerror(errno));
	open_file(0);
	check_size("reopen");
	read_check(0, size + 1, "reopen");
}

static void (*const op_fn[OP_COUNT])(void) = {
	[OP_READ] = op_read,	       [OP_WRITE] = op_write,	    [OP_MAPREAD] = op_mapread,
	[OP_MAPWRITE] = op_mapwrite,   [OP_TRUNCATE] = op_truncate, [OP_FALLOCATE] = op_fallocate,
	[OP_PUNCH] = op_punch,	       [OP_ZERO] = op_zero,	    [OP_COPY] = op_copy,
	[OP_COPY_FROM] = op_copy_from, [OP_FSYNC] = op_fsync,	    [OP_REOPEN] = op_reopen,
};

static const char *const op_name[OP_COUNT] = {
	[OP_READ] = "read",	    [OP_WRITE] = "write",
	[OP_MAPREAD] = "mapread",   [OP_MAPWRITE] = "mapwrite",
	[OP_TRUNCATE] = "truncate", [OP_FALLOCATE] = "fallocate",
	[OP_PUNCH] = "punch_hole",  [OP_ZERO] = "zero_range",
	[OP_COPY] = "copy_range",   [OP_COPY_FROM] = "copy_range_from",
	[OP_FSYNC] = "fsync",	    [OP_REOPEN] = "reopen",
};

static bool op_enabled(enum op op)
{
	switch (op) {
	case OP_FALLOCATE:
		return !disabled[F_FALLOC] || !disabled[F_FALLOC_KEEP];
	case OP_PUNCH:
		return !disabled[F_PUNCH];
	case OP_ZERO:
		return !disabled[F_ZERO] || !disabled[F_ZERO_KEEP];
	case OP_COPY:
		return !disabled[F_COPY];
	case OP_COPY_FROM:
		return !disabled[F_COPY_FROM];
	default:
		return true;
	}
}

static enum op pick_op(void)
{
	unsigned total = 0;

	for (int i = 0; i < OP_COUNT; i++)
		total += op_weight[i];
	for (;;) {
		unsigned r = (unsigned)rnd(total);
		int i = 0;

		while (r >= op_weight[i])
			r -= op_weight[i++];
		if (op_enabled((enum op)i))
			return (enum op)i;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void) __attribute__((noreturn));

static void usage(void)
{
	fprintf(stderr, "usage: fsx [-N OPS] [-S SEED] [-l MAXLEN] [-t SECONDS] FILE\n");
	exit(2);
}

static unsigned long long number(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "fsx: bad %s '%s'\n", what, s);
		usage();
	}
	return v;
}

static void *alloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		fprintf(stderr, "fsx: out of memory (%zu bytes)\n", n);
		exit(1);
	}
	return p;
}

/* The other file's content is fixed and from a stream of its own, so that
 * it does not shift the sequence of operations. */
static void make_src(void)
{
	uint64_t keep = rng_state;
	size_t done = 0;

	rng_state = seed ^ 0x5eed5eed5eed5eedULL;
	for (size_t i = 0; i < maxlen; i++)
		src_good[i] = (unsigned char)rnd64();
	rng_state = keep;
	src_fd = open(src_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (src_fd < 0) {
		fprintf(stderr, "fsx: cannot open '%s': %s\n", src_path, strerror(errno));
		exit(1);
	}
	while (done < maxlen) {
		ssize_t r = pwrite(src_fd, src_good + done, maxlen - done, (off_t)done);

		if (r <= 0) {
			fprintf(stderr, "fsx: cannot write '%s': %s\n", src_path,
				r < 0 ? strerror(errno) : "wrote nothing");
			exit(1);
		}
		done += (size_t)r;
	}
}

int main(int argc, char **argv)
{
	unsigned long long nops = DEFAULT_N, seconds = 0;
	bool have_seed = false;
	double start, deadline = 0;
	int c;

	while ((c = getopt(argc, argv, "N:S:l:t:")) != -1) {
		switch (c) {
		case 'N':
			nops = number(optarg, "number of operations");
			break;
		case 'S':
			seed = number(optarg, "seed");
			have_seed = true;
			break;
		case 'l':
			maxlen = (size_t)number(optarg, "maximum length");
			if (maxlen == 0 || maxlen > (1u << 30)) {
				fprintf(stderr, "fsx: the maximum length must be 1..%u\n",
					1u << 30);
				usage();
			}
			break;
		case 't':
			seconds = number(optarg, "number of seconds");
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	path = argv[optind];
	if (!have_seed)
		seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 16);
	rng_state = seed;
	pagesize = (size_t)sysconf(_SC_PAGESIZE);
	maxoplen = maxlen < MAX_OPLEN ? maxlen : MAX_OPLEN;
	good = alloc(maxlen);
	src_good = alloc(maxlen);
	buf = alloc(maxlen);
	tmp = alloc(maxlen + 1);
	src_path = alloc(strlen(path) + sizeof(".src"));
	sprintf(src_path, "%s.src", path);

	printf("# fsx: seed %llu, %llu ops, max size %zu, %s\n", seed, nops, maxlen, path);
	fflush(stdout);
	open_file(O_CREAT | O_TRUNC);
	make_src();
	start = now();
	if (seconds)
		deadline = start + (double)seconds;
	for (opnum = 1; opnum <= nops; opnum++) {
		enum op op = pick_op();

		op_fn[op]();
		check_size(op_name[op]);
		if (deadline && now() >= deadline) {
			opnum++;
			break;
		}
	}
	opnum--;
	read_check(0, size + 1, "the final read of the whole file");
	if (close(fd) < 0)
		fail("close: %s", strerror(errno));
	close(src_fd);
	unlink(src_path);
	printf("fsx: %llu %lu ops ok (%s)\n", seed, opnum, path);
	return 0;
}
