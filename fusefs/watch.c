/* watch.c - see watch.h. One thread reads inotify events in batches and
 * sends the kernel the matching invalidations. It never holds the table
 * lock while talking to the kernel: an invalidation may wait for a
 * directory lock that a request in flight holds, and that request may need
 * the table. */
#include "watch.h"
#include "common/path.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__) && !defined(SANDYFS_PORTABLE_FALLBACK)
#include <linux/magic.h>
#include <sys/inotify.h>
#include <sys/statfs.h>
#define HAVE_INOTIFY 1
#endif

#ifdef HAVE_INOTIFY
#define BATCH_BYTES (64 * 1024)

enum pending_kind {
	PENDING_SELF,  /* the watched directory's own attributes */
	PENDING_NAME,  /* a name created, removed or moved in it */
	PENDING_ATTRS, /* a child's content or attributes */
};

#define BATCH_MAX_EVENTS (BATCH_BYTES / sizeof(struct inotify_event))
#define BATCH_SLOTS	 8192 /* a power of two, at least twice BATCH_MAX_EVENTS */

struct pending {
	int wd;
	enum pending_kind kind;
	const char *name; /* in the batch's buffer; "" for PENDING_SELF */
};

_Static_assert(BATCH_SLOTS >= 2 * BATCH_MAX_EVENTS, "the batch's table has room to spare");

struct batch {
	struct pending items[BATCH_MAX_EVENTS];
	size_t n;
	uint32_t slots[BATCH_SLOTS]; /* index into items + 1; 0 is free */
};

#endif

struct sfs_watch {
	struct sfs_table *table;
	struct fuse_session *se;
	int fd;
	int stop[2];
	pthread_t thread;
	bool started;
	struct sfs_stats *stats;
	atomic_bool expire_only;
	void (*on_name)(void *ctx, const char *relpath, int parentfd);
	void *on_name_ctx;
	struct batch *batch; /* the events read but not yet acted on */
	/* The names for on_name, told by a thread of their own: the index
	 * walks a new directory's whole tree, which took seconds for the
	 * deep trees of a build, and the expiries must not wait for it. */
	pthread_mutex_t tell_mu;
	pthread_cond_t tell_cv;
	char **tell_paths;
	size_t tell_n, tell_cap;
	bool tell_all;	       /* too many waited: SOURCE walked again instead */
	atomic_bool tell_stop; /* the watch is being freed */
	bool tell_started;
	pthread_t tell_thread;
};

#ifdef HAVE_INOTIFY

#define WATCH_MASK                                                                                 \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_ATTRIB |             \
	 IN_ONLYDIR | IN_EXCL_UNLINK)

/* Filesystems whose every change inotify reports. Network and FUSE
 * filesystems change behind the kernel's back. */
static bool reports_all_changes(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return false;
	switch ((unsigned long)sf.f_type) {
	case EXT4_SUPER_MAGIC: /* also ext2 and ext3 */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
	case 0x2fc12fc1: /* zfs */
	case 0xca451a4e: /* bcachefs */
		return true;
	default:
		return false;
	}
}

int sfs_watch_new(struct sfs_table *t, int rootfd, struct sfs_stats *stats, struct sfs_watch **out)
{
	if (!reports_all_changes(rootfd))
		return -EOPNOTSUPP;
	struct sfs_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->table = t;
	w->stats = stats;
	pthread_mutex_init(&w->tell_mu, NULL);
	pthread_cond_init(&w->tell_cv, NULL);
	w->batch = calloc(1, sizeof(*w->batch));
	w->fd = w->batch ? inotify_init1(IN_NONBLOCK | IN_CLOEXEC) : -1;
	if (w->fd < 0 || pipe2(w->stop, O_CLOEXEC) < 0) {
		int e = w->batch ? errno : ENOMEM;
		if (w->fd >= 0)
			close(w->fd);
		free(w->batch);
		free(w);
		return -e;
	}
	sfs_table_set_inotify(t, w->fd);
	*out = w;
	return 0;
}

bool sfs_watch_dir(struct sfs_watch *w, struct sfs_node *n, int dirfd, const char *name)
{
	char path[64 + NAME_MAX];

	if (!w)
		return false;
	/* DIRFD's magic link must be followed; NAME must not be (it could
	 * have become a symlink since it was looked up). */
	uint32_t mask = WATCH_MASK;
	if (name) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
		mask |= IN_DONT_FOLLOW;
	} else {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", dirfd);
	}
	int wd = inotify_add_watch(w->fd, path, mask);
	if (wd < 0)
		return false;
	sfs_table_watch_set(w->table, n, wd);
	return true;
}

/* A name in DIR may have changed on the host. Expiring (not unhashing) it
 * makes the kernel look it up again at the next use and keep it if it is
 * still the same file: a change of our own (a mkdir, then a chdir into
 * it) must not turn a process's working directory into a deleted one. */
static void name_changed(struct sfs_watch *w, uint64_t dir, const char *name)
{
#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 17)
	/* libfuse 3.17 split the call: expiring has a function of its own. */
	if (atomic_load(&w->expire_only))
		fuse_lowlevel_notify_expire_entry(w->se, dir, name, strlen(name));
	else
		fuse_lowlevel_notify_inval_entry(w->se, dir, name, strlen(name));
#else
	fuse_lowlevel_notify_expire_entry(w->se, dir, name, strlen(name),
					  atomic_load(&w->expire_only) ? FUSE_LL_EXPIRE_ONLY : 0);
#endif
}

struct entry_list {
	size_t len, cap;
	struct entry_ref {
		uint64_t parent, id;
		char *name;
	} * items;
};

static void collect_entry(void *ctx, uint64_t parent, uint64_t id, const char *name)
{
	struct entry_list *l = ctx;

	if (l->len == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		struct entry_ref *items = realloc(l->items, cap * sizeof(*items));
		if (!items)
			return;
		l->items = items;
		l->cap = cap;
	}
	char *copy = strdup(name);
	if (copy)
		l->items[l->len++] = (struct entry_ref){parent, id, copy};
}

/* Events were lost: forget everything the kernel caches. */
static void invalidate_all(struct sfs_watch *w)
{
	struct entry_list l = {0};

	atomic_fetch_add(&w->stats->host_overflows, 1);
	sfs_table_for_each_entry(w->table, collect_entry, &l);
	for (size_t i = 0; i < l.len; i++) {
		fuse_lowlevel_notify_inval_inode(w->se, l.items[i].id, 0, 0);
		name_changed(w, l.items[i].parent, l.items[i].name);
		free(l.items[i].name);
	}
	fuse_lowlevel_notify_inval_inode(w->se, FUSE_ROOT_ID, 0, 0);
	free(l.items);
}

/* A file's content or attributes changed: its cached attributes go, and
 * with them (auto_inval_data) its pages when the mtime moved. */
static void invalidate_child_attrs(struct sfs_watch *w, struct sfs_node *dir, const char *name)
{
	cleanup_anchor struct sfs_anchor a = {0};
	struct sfs_stat st;

	if (sfs_anchor_get(w->table, dir, &a) < 0 || sfs_stat_at(a.fd, name, &st) < 0)
		return;
	struct sfs_node *child = sfs_table_find(w->table, &st);
	if (child) {
		fuse_lowlevel_notify_inval_inode(w->se, sfs_node_id(child), -1, 0);
		atomic_fetch_add(&w->stats->host_invalidations, 1);
		sfs_node_unpin(w->table, child);
	}
}

/* More names waiting than this, and the index is told to walk SOURCE
 * again, once, instead. */
#define TELL_MAX 65536

/* Queues for the listener a name changed in DIR, when DIR is in SOURCE.
 * A name queued just before is not queued again. */
static void tell_name(struct sfs_watch *w, struct sfs_node *dir, const char *name)
{
	struct sfs_node_info info;
	char path[PATH_REL_MAX];

	if (!w->on_name)
		return;
	sfs_node_info(w->table, dir, &info);
	if (info.in_store || sfs_node_relpath(w->table, dir, name, path, sizeof(path)) < 0)
		return;
	pthread_mutex_lock(&w->tell_mu);
	bool queued = w->tell_all;
	for (size_t i = w->tell_n; !queued && i > 0 && w->tell_n - i < 64; i--)
		queued = !strcmp(w->tell_paths[i - 1], path);
	if (!queued && w->tell_n == TELL_MAX) {
		for (size_t i = 0; i < w->tell_n; i++)
			free(w->tell_paths[i]);
		w->tell_n = 0;
		w->tell_all = queued = true;
	}
	if (!queued && w->tell_n == w->tell_cap) {
		size_t cap = w->tell_cap ? w->tell_cap * 2 : 256;
		char **paths = realloc(w->tell_paths, cap * sizeof(*paths));
		if (paths) {
			w->tell_paths = paths;
			w->tell_cap = cap;
		}
	}
	char *copy = queued || w->tell_n == w->tell_cap ? NULL : strdup(path);
	if (copy)
		w->tell_paths[w->tell_n++] = copy;
	else if (!queued)
		w->tell_all = true; /* out of memory: walk everything later */
	pthread_cond_signal(&w->tell_cv);
	pthread_mutex_unlock(&w->tell_mu);
}

static void *tell_thread(void *arg)
{
	struct sfs_watch *w = arg;

	pthread_mutex_lock(&w->tell_mu);
	for (;;) {
		while (!w->tell_n && !w->tell_all && !w->tell_stop)
			pthread_cond_wait(&w->tell_cv, &w->tell_mu);
		if (w->tell_stop)
			break;
		char **paths = w->tell_paths;
		size_t n = w->tell_n;
		bool all = w->tell_all;
		w->tell_paths = NULL;
		w->tell_n = w->tell_cap = 0;
		w->tell_all = false;
		pthread_mutex_unlock(&w->tell_mu);
		if (all)
			w->on_name(w->on_name_ctx, "", -1);
		/* Whatever is left when the watch is freed is never told:
		 * the daemon is going away and must not wait for walks. */
		for (size_t i = 0; i < n; i++) {
			if (!all && !atomic_load(&w->tell_stop))
				w->on_name(w->on_name_ctx, paths[i], -1);
			free(paths[i]);
		}
		free(paths);
		pthread_mutex_lock(&w->tell_mu);
	}
	pthread_mutex_unlock(&w->tell_mu);
	return NULL;
}

/* One batch's work, each name once. A burst (rm -rf, git checkout, a
 * build or an install through the mount) repeats the same names many
 * times, and every expiry waits in the kernel for the directory's lock,
 * which the burst's own requests hold in turn: done once per event, the
 * watcher fell seconds behind the host (a batch of 1,131 events from a
 * create/unlink loop took 2.1 s), and a host change made just after the
 * burst stayed hidden that long behind the 60-second timeouts. Work for
 * one name after all of its events is the same work: an expiry or an
 * invalidation says "ask again", and what is asked then is the host's
 * state after the batch. */
static uint32_t pending_hash(int wd, enum pending_kind kind, const char *name)
{
	uint32_t h = 2166136261u ^ (uint32_t)wd ^ ((uint32_t)kind << 24);

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

static void batch_add(struct batch *b, int wd, enum pending_kind kind, const char *name)
{
	uint32_t i = pending_hash(wd, kind, name) & (BATCH_SLOTS - 1);

	for (; b->slots[i]; i = (i + 1) & (BATCH_SLOTS - 1)) {
		const struct pending *p = &b->items[b->slots[i] - 1];
		if (p->wd == wd && p->kind == kind && !strcmp(p->name, name))
			return;
	}
	if (b->n == BATCH_MAX_EVENTS)
		return; /* cannot happen: one item per event at most */
	b->items[b->n++] = (struct pending){wd, kind, name};
	b->slots[i] = (uint32_t)b->n;
}

/* Does the batch's work (expiries, invalidations, names queued for the
 * index of SOURCE's symlinks), then forgets the batch. */
static void batch_flush(struct sfs_watch *w, struct batch *b)
{
	uint64_t last_dir_inval = 0;

	for (size_t i = 0; i < b->n; i++) {
		const struct pending *p = &b->items[i];
		struct sfs_node *dir = sfs_table_watch_node(w->table, p->wd);
		if (!dir)
			continue;
		uint64_t dir_id = sfs_node_id(dir);
		switch (p->kind) {
		case PENDING_SELF:
			fuse_lowlevel_notify_inval_inode(w->se, dir_id, -1, 0);
			break;
		case PENDING_NAME:
			name_changed(w, dir_id, p->name);
			/* The listing cached in the directory's pages is
			 * stale too; once per directory is enough. */
			if (last_dir_inval != dir_id) {
				fuse_lowlevel_notify_inval_inode(w->se, dir_id, 0, 0);
				last_dir_inval = dir_id;
			}
			tell_name(w, dir, p->name);
			break;
		case PENDING_ATTRS:
			invalidate_child_attrs(w, dir, p->name);
			break;
		}
		atomic_fetch_add(&w->stats->host_invalidations, 1);
		sfs_node_unpin(w->table, dir);
	}
	for (size_t i = 0; i < b->n; i++) {
		const struct pending *p = &b->items[i];
		uint32_t s = pending_hash(p->wd, p->kind, p->name) & (BATCH_SLOTS - 1);
		while (b->slots[s] != i + 1)
			s = (s + 1) & (BATCH_SLOTS - 1);
		b->slots[s] = 0;
	}
	b->n = 0;
}

/* Adds an event to the batch. Lost events and removed watches are handled
 * in order: what was gathered before them is done first. */
static void handle_event(struct sfs_watch *w, struct batch *b, const struct inotify_event *ev)
{
	atomic_fetch_add(&w->stats->host_events, 1);
	if (ev->mask & IN_Q_OVERFLOW) {
		batch_flush(w, b);
		invalidate_all(w);
	} else if (ev->mask & IN_IGNORED) {
		batch_flush(w, b);
		sfs_table_watch_gone(w->table, ev->wd);
	} else if (ev->len == 0) {
		batch_add(b, ev->wd, PENDING_SELF, "");
	} else if (ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)) {
		batch_add(b, ev->wd, PENDING_NAME, ev->name);
	} else {
		batch_add(b, ev->wd, PENDING_ATTRS, ev->name);
	}
}

static const struct timespec batch_window = {0, 10 * 1000 * 1000};

/* Tells the table of renames among the LEN bytes of events at BUF (or of
 * events lost). */
static void note_moves(struct sfs_watch *w, const char *buf, size_t len)
{
	for (const char *p = buf; p < buf + len;) {
		const struct inotify_event *ev = (const struct inotify_event *)p;
		if (ev->mask & (IN_Q_OVERFLOW | IN_MOVED_FROM | IN_MOVED_TO)) {
			sfs_table_note_host_moves(w->table);
			return;
		}
		p += sizeof(*ev) + ev->len;
	}
}

static void *watch_thread(void *arg)
{
	struct sfs_watch *w = arg;
	char buf[BATCH_BYTES] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd pfd[2] = {{.fd = w->fd, .events = POLLIN},
				{.fd = w->stop[0], .events = POLLIN}};

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		/* Renames are noted at once: a change to a node whose place
		 * may have moved is checked again (sfs_node_check_place). */
		ssize_t n = read(w->fd, buf, sizeof(buf));
		if (n < 0)
			n = 0;
		note_moves(w, buf, (size_t)n);
		/* Then let a burst gather (rm -rf, git checkout, a build):
		 * a batch invalidates each directory's attributes once (each
		 * invalidation costs the kernel a GETATTR at its next
		 * permission check there), and events of a directory already
		 * removed and forgotten cost nothing. rm -rf of 10,000 files
		 * through the mount: 1.18 s without the wait, 0.89 s with
		 * 2 ms, 0.75 s with 10 ms; host changes still show within
		 * tens of milliseconds. */
		nanosleep(&batch_window, NULL);
		ssize_t more = read(w->fd, buf + n, sizeof(buf) - (size_t)n);
		if (more > 0) {
			note_moves(w, buf + n, (size_t)more);
			n += more;
		}
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			handle_event(w, w->batch, ev);
			p += sizeof(*ev) + ev->len;
		}
		batch_flush(w, w->batch);
	}
	return NULL;
}

int sfs_watch_start(struct sfs_watch *w, struct fuse_session *se)
{
	w->se = se;
	int r = 0;
	if (w->on_name) {
		r = pthread_create(&w->tell_thread, NULL, tell_thread, w);
		w->tell_started = r == 0;
	}
	if (r == 0)
		r = pthread_create(&w->thread, NULL, watch_thread, w);
	if (r != 0)
		return -r;
	w->started = true;
	return 0;
}

void sfs_watch_free(struct sfs_watch *w)
{
	if (!w)
		return;
	if (w->started) {
		if (write(w->stop[1], "x", 1) == 1)
			pthread_join(w->thread, NULL);
	}
	if (w->tell_started) {
		pthread_mutex_lock(&w->tell_mu);
		w->tell_stop = true;
		pthread_cond_signal(&w->tell_cv);
		pthread_mutex_unlock(&w->tell_mu);
		pthread_join(w->tell_thread, NULL);
	}
	for (size_t i = 0; i < w->tell_n; i++)
		free(w->tell_paths[i]);
	free(w->tell_paths);
	pthread_mutex_destroy(&w->tell_mu);
	pthread_cond_destroy(&w->tell_cv);
	sfs_table_set_inotify(w->table, -1);
	close(w->stop[0]);
	close(w->stop[1]);
	close(w->fd);
	free(w->batch);
	free(w);
}

#else /* no inotify: the portable flavour */

int sfs_watch_new(struct sfs_table *t, int rootfd, struct sfs_stats *stats, struct sfs_watch **out)
{
	(void)t;
	(void)rootfd;
	(void)stats;
	*out = NULL;
	return -EOPNOTSUPP;
}

int sfs_watch_start(struct sfs_watch *w, struct fuse_session *se)
{
	(void)w;
	(void)se;
	return 0;
}

void sfs_watch_free(struct sfs_watch *w)
{
	(void)w;
}

bool sfs_watch_dir(struct sfs_watch *w, struct sfs_node *n, int dirfd, const char *name)
{
	(void)w;
	(void)n;
	(void)dirfd;
	(void)name;
	return false;
}

#endif

void sfs_watch_on_name(struct sfs_watch *w,
		       void (*fn)(void *ctx, const char *relpath, int parentfd), void *ctx)
{
	if (!w)
		return;
	w->on_name = fn;
	w->on_name_ctx = ctx;
}

void sfs_watch_set_expire_only(struct sfs_watch *w, bool expire_only)
{
	if (w)
		atomic_store(&w->expire_only, expire_only);
}
