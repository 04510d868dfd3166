/* owner.c - see owner.h. */
#include "owner.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define RECORDS "owned"

/* A record's identity: the inode's number, birth time (0 where the
 * filesystem has none) and type, so that a recorded symlink never stands
 * for a file that reuses its number. */
struct ident {
	uint64_t ino, btime_ns;
	unsigned type;
};

struct sfs_owner {
	pthread_mutex_t lock;
	int store_fd;	/* -1: no records */
	int records_fd; /* STORE/owned, opened for appending; -1 when none */
	/* The records as a set: open addressing, ino 0 marks a free slot
	 * (no inode has number 0), a tombstone keeps probe chains whole. */
	struct ident *slots;
	size_t cap, used, live;
};

static const struct ident tombstone = {0, 1, 0};

static bool is_free(const struct ident *s)
{
	return s->ino == 0 && s->btime_ns == 0;
}

static bool is_tombstone(const struct ident *s)
{
	return s->ino == 0 && s->btime_ns == 1;
}

static bool same_ident(const struct ident *a, const struct ident *b)
{
	return a->ino == b->ino && a->btime_ns == b->btime_ns && a->type == b->type;
}

static size_t slot_of(const struct sfs_owner *o, const struct ident *id)
{
	uint64_t h =
		id->ino * 0x9e3779b97f4a7c15ull ^ id->btime_ns * 0xc2b2ae3d27d4eb4full ^ id->type;
	return (size_t)(h ^ (h >> 31)) & (o->cap - 1);
}

static struct ident *set_find(const struct sfs_owner *o, const struct ident *id)
{
	if (!o->cap)
		return NULL;
	for (size_t i = slot_of(o, id), n = 0; n < o->cap; i = (i + 1) & (o->cap - 1), n++) {
		struct ident *s = &o->slots[i];
		if (is_free(s))
			return NULL;
		if (same_ident(s, id))
			return s;
	}
	return NULL;
}

static int set_add(struct sfs_owner *o, const struct ident *id);

static int set_grow(struct sfs_owner *o)
{
	struct ident *old = o->slots;
	size_t oldcap = o->cap;

	o->cap = o->cap ? o->cap * 2 : 256;
	o->slots = calloc(o->cap, sizeof(*o->slots));
	if (!o->slots) {
		o->slots = old;
		o->cap = oldcap;
		return -ENOMEM;
	}
	o->used = o->live = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (!is_free(&old[i]) && !is_tombstone(&old[i]))
			set_add(o, &old[i]);
	free(old);
	return 0;
}

static int set_add(struct sfs_owner *o, const struct ident *id)
{
	if (set_find(o, id))
		return 0;
	if ((o->used + 1) * 4 > o->cap * 3 && set_grow(o) < 0)
		return -ENOMEM;
	size_t i = slot_of(o, id);
	while (!is_free(&o->slots[i]) && !is_tombstone(&o->slots[i]))
		i = (i + 1) & (o->cap - 1);
	if (is_free(&o->slots[i]))
		o->used++;
	o->slots[i] = *id;
	o->live++;
	return 1;
}

static bool set_remove(struct sfs_owner *o, const struct ident *id)
{
	struct ident *s = set_find(o, id);

	if (!s)
		return false;
	*s = tombstone;
	o->live--;
	return true;
}

static struct ident ident_of(const struct sfs_stat *st)
{
	return (struct ident){(uint64_t)st->st.st_ino, st->btime_ns, st->st.st_mode & S_IFMT};
}

/* The mark's value: a hash of the identity, little-endian. */
static void mark_value(const struct sfs_stat *st, unsigned char out[8])
{
	uint64_t h = 0xcbf29ce484222325ull, v[2] = {(uint64_t)st->st.st_ino, st->btime_ns};

	for (int i = 0; i < 2; i++)
		for (int b = 0; b < 8; b++)
			h = (h ^ ((v[i] >> (8 * b)) & 0xff)) * 0x100000001b3ull;
	for (int b = 0; b < 8; b++)
		out[b] = (unsigned char)(h >> (8 * b));
}

/* Reads the records file: "+INO:BTIME:TYPE" adds, "-INO:BTIME:TYPE"
 * removes. Writes it anew when removals make up most of it. */
static int load_records(struct sfs_owner *o)
{
	int fd = openat(o->store_fd, RECORDS, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close_keep_errno(fd);
		return -errno;
	}
	char line[96];
	size_t lines = 0;
	while (fgets(line, sizeof(line), f)) {
		struct ident id;
		char op;
		lines++;
		if (sscanf(line, "%c%" SCNu64 ":%" SCNu64 ":%o", &op, &id.ino, &id.btime_ns,
			   &id.type) != 4 ||
		    id.ino == 0)
			continue;
		if (op == '+' && set_add(o, &id) < 0) {
			fclose(f);
			return -ENOMEM;
		}
		if (op == '-')
			set_remove(o, &id);
	}
	fclose(f);
	if (lines <= 2 * o->live + 64)
		return 0;
	/* Compacted through a new file renamed over the old one. */
	int tmp = openat(o->store_fd, RECORDS ".new",
			 O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (tmp < 0)
		return 0;
	FILE *w = fdopen(tmp, "w");
	if (!w) {
		close(tmp);
		return 0;
	}
	for (size_t i = 0; i < o->cap; i++)
		if (!is_free(&o->slots[i]) && !is_tombstone(&o->slots[i]))
			fprintf(w, "+%" PRIu64 ":%" PRIu64 ":%o\n", o->slots[i].ino,
				o->slots[i].btime_ns, o->slots[i].type);
	if (fclose(w) == 0)
		renameat(o->store_fd, RECORDS ".new", o->store_fd, RECORDS);
	return 0;
}

int sfs_owner_new(int store_dir_fd, struct sfs_owner **out)
{
	struct sfs_owner *o = calloc(1, sizeof(*o));

	*out = NULL;
	if (!o)
		return -ENOMEM;
	pthread_mutex_init(&o->lock, NULL);
	o->store_fd = store_dir_fd;
	o->records_fd = -1;
	if (store_dir_fd >= 0) {
		int r = load_records(o);
		if (r < 0) {
			sfs_owner_free(o);
			return r;
		}
	}
	*out = o;
	return 0;
}

void sfs_owner_free(struct sfs_owner *o)
{
	if (!o)
		return;
	if (o->records_fd >= 0)
		close(o->records_fd);
	pthread_mutex_destroy(&o->lock);
	free(o->slots);
	free(o);
}

/* Appends one record line; lock held. */
static int append(struct sfs_owner *o, char op, const struct ident *id)
{
	char line[64];

	if (o->store_fd < 0)
		return -ENOENT;
	if (o->records_fd < 0) {
		o->records_fd =
			openat(o->store_fd, RECORDS,
			       O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (o->records_fd < 0)
			return -errno;
	}
	int n = snprintf(line, sizeof(line), "%c%" PRIu64 ":%" PRIu64 ":%o\n", op, id->ino,
			 id->btime_ns, id->type);
	return write(o->records_fd, line, (size_t)n) == n ? 0 : -EIO;
}

static int record(struct sfs_owner *o, const struct sfs_stat *st)
{
	struct ident id = ident_of(st);

	pthread_mutex_lock(&o->lock);
	int r = o->store_fd < 0 ? -ENOENT : set_add(o, &id);
	if (r > 0)
		r = append(o, '+', &id);
	pthread_mutex_unlock(&o->lock);
	return r < 0 ? r : 0;
}

static bool recorded(struct sfs_owner *o, const struct sfs_stat *st)
{
	struct ident id = ident_of(st);

	pthread_mutex_lock(&o->lock);
	bool r = set_find(o, &id) != NULL;
	pthread_mutex_unlock(&o->lock);
	return r;
}

static bool carries_mark(const struct sfs_stat *st)
{
	return S_ISREG(st->st.st_mode) || S_ISDIR(st->st.st_mode);
}

int sfs_owner_mark(struct sfs_owner *o, int fd, int dirfd, const char *name,
		   const struct sfs_stat *st, bool fresh)
{
	static const struct timespec now[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_NOW}};
	unsigned char value[8];
	int r = -ENOTSUP;

	mark_value(st, value);
	if (carries_mark(st)) {
		if (fd >= 0)
			r = fsetxattr(fd, SFS_OWNER_XATTR, value, sizeof(value), 0) < 0 ? -errno
											: 0;
		else
			r = sfs_setxattr_at(dirfd, name, SFS_OWNER_XATTR, value, sizeof(value), 0);
	}
	if (r < 0)
		return record(o, st);
	/* mtime = ctime again, as a file just made has natively. */
	if (fresh &&
	    (fd >= 0 ? futimens(fd, now) : utimensat(dirfd, name, now, AT_SYMLINK_NOFOLLOW))) {
		/* Only the times differ: ctime a moment after mtime. */
	}
	return 0;
}

int sfs_owner_check(struct sfs_owner *o, int dirfd, const char *name, const struct sfs_stat *st)
{
	unsigned char want[8], got[8];

	mark_value(st, want);
	if (carries_mark(st)) {
		ssize_t n = sfs_getxattr_at(dirfd, name, SFS_OWNER_XATTR, got, sizeof(got));
		if (n == (ssize_t)sizeof(got) && memcmp(got, want, sizeof(got)) == 0)
			return 1;
	}
	return recorded(o, st) ? 1 : 0;
}

void sfs_owner_forget(struct sfs_owner *o, const struct sfs_stat *st)
{
	struct ident id = ident_of(st);

	pthread_mutex_lock(&o->lock);
	if (set_remove(o, &id))
		append(o, '-', &id);
	pthread_mutex_unlock(&o->lock);
}

bool sfs_owner_is_mark(const char *xattr_name)
{
	return strcmp(xattr_name, SFS_OWNER_XATTR) == 0;
}
