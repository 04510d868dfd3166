/* links.c - see links.h. The index is one vector sorted by path, so that a
 * path and everything below it are a contiguous run ("a/b", then the
 * "a/b/..." that follow it once names sorting between them, "a/b-c", are
 * skipped), under one mutex. */
#include "links.h"
#include "host/compat.h"
#include "common/path.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Deeper than this the walk does not go: one fd is open per level. */
#define WALK_MAX_DEPTH 128

struct sfs_links {
	int rootfd;
	bool own_rootfd; /* a quiet view of SOURCE (sfs_quiet_view), closed at free */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool threaded; /* the walk runs (ran) in THREAD */
	bool walking;  /* the walk has begun, in the thread or in a caller */
	bool ready, overflow;
	struct sfs_link *v; /* sorted by path; strings owned */
	size_t n, cap, bytes;
};

static size_t cost_of(const char *path, const char *target)
{
	return strlen(path) + strlen(target) + 2 + sizeof(struct sfs_link);
}

/* The index of the first entry whose path is not less than PATH. */
static size_t lower_bound(const struct sfs_links *l, const char *path)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(l->v[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void drop_at(struct sfs_links *l, size_t i)
{
	l->bytes -= cost_of(l->v[i].path, l->v[i].target);
	free((char *)l->v[i].path);
	free((char *)l->v[i].target);
	memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
	l->n--;
}

/* Sets PATH -> TARGET, taking both strings; with the lock held. */
static void put_locked(struct sfs_links *l, char *path, char *target)
{
	size_t i = lower_bound(l, path);

	if (i < l->n && !strcmp(l->v[i].path, path))
		drop_at(l, i);
	size_t cost = cost_of(path, target);
	if (l->n >= SFS_LINKS_MAX || l->bytes + cost > SFS_LINKS_MAX_BYTES) {
		l->overflow = true;
		free(path);
		free(target);
		return;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct sfs_link *v = realloc(l->v, cap * sizeof(*v));
		if (!v) {
			l->overflow = true;
			free(path);
			free(target);
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	memmove(&l->v[i + 1], &l->v[i], (l->n - i) * sizeof(*l->v));
	l->v[i] = (struct sfs_link){path, target};
	l->n++;
	l->bytes += cost;
}

static void put(struct sfs_links *l, const char *path, const char *target)
{
	char *p = strdup(path), *t = strdup(target);

	pthread_mutex_lock(&l->mu);
	if (p && t)
		put_locked(l, p, t);
	else {
		l->overflow = true;
		free(p);
		free(t);
	}
	pthread_mutex_unlock(&l->mu);
}

/* Removes PATH and what is below it; with the lock held. */
static void remove_locked(struct sfs_links *l, const char *path)
{
	size_t i = lower_bound(l, path);

	if (!*path) {
		while (l->n)
			drop_at(l, l->n - 1);
		return;
	}
	while (i < l->n) {
		const char *below = path_below(l->v[i].path, path);
		if (below)
			drop_at(l, i);
		else if (strncmp(l->v[i].path, path, strlen(path)) == 0)
			i++; /* "a/b-c" between "a/b" and "a/b/x" */
		else
			break;
	}
}

/* ---- the walk ----------------------------------------------------------- */

struct walk {
	struct sfs_links *l;
	char path[PATH_REL_MAX];
	char target[PATH_MAX + 1];
};

static void add_link(struct walk *w, int dirfd, const char *name)
{
	ssize_t n = readlinkat(dirfd, name, w->target, sizeof(w->target) - 1);

	if (n < 0)
		return;
	w->target[n] = '\0';
	put(w->l, w->path, w->target);
}

/* The links in directory FD (at W->path, LEN bytes) and below it. */
static void walk_dir(struct walk *w, int fd, size_t len, int depth)
{
	int dupfd = dup(fd);
	DIR *d = dupfd >= 0 ? fdopendir(dupfd) : NULL;
	struct dirent *e;
	char **subdirs = NULL;
	size_t nsub = 0;

	if (!d) {
		if (dupfd >= 0)
			close(dupfd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		unsigned char type = e->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		size_t sub = len;
		if (type == DT_LNK) {
			if (path_append(w->path, sizeof(w->path), &sub, e->d_name,
					    strlen(e->d_name)) == 0)
				add_link(w, fd, e->d_name);
			w->path[len] = '\0';
		} else if (type == DT_DIR && strcmp(e->d_name, ".git") != 0 &&
			   depth < WALK_MAX_DEPTH) {
			char **s = realloc(subdirs, (nsub + 1) * sizeof(*s));
			if (s && (s[nsub] = strdup(e->d_name))) {
				subdirs = s;
				nsub++;
			} else if (s) {
				subdirs = s;
			}
		}
	}
	closedir(d);
	/* One fd per level: the directory's own, while its children are walked. */
	for (size_t i = 0; i < nsub; i++) {
		size_t sub = len;
		int cfd = -1;
		if (path_append(w->path, sizeof(w->path), &sub, subdirs[i],
				    strlen(subdirs[i])) == 0)
			cfd = openat(fd, subdirs[i],
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (cfd >= 0) {
			walk_dir(w, cfd, sub, depth + 1);
			close(cfd);
		}
		w->path[len] = '\0';
		free(subdirs[i]);
	}
	free(subdirs);
}

/* The directory PATH (relative to SOURCE, "" for SOURCE) opened with no
 * symlink followed on the way, as the daemon reaches everything in
 * SOURCE: an fd or -errno. */
static int open_dir(int rootfd, const char *path)
{
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK;

	if (!*path) {
		int fd = openat(rootfd, ".", flags);
		return fd < 0 ? -errno : fd;
	}
	return sfs_open_beneath(rootfd, path, flags, 0);
}

/* Walks the directory at PATH (relative to SOURCE; FD, when not -1, is it,
 * and stays the caller's) and what is below it. */
static void walk_at(struct sfs_links *l, const char *path, int dirfd)
{
	struct walk *w = calloc(1, sizeof(*w));
	int fd;

	if (!w)
		return;
	w->l = l;
	size_t len = strlen(path);
	if (len >= sizeof(w->path)) {
		free(w);
		return;
	}
	memcpy(w->path, path, len + 1);
	fd = dirfd >= 0 ? dirfd : open_dir(l->rootfd, path);
	if (fd >= 0) {
		walk_dir(w, fd, len, 0);
		if (fd != dirfd)
			close(fd);
	}
	free(w);
}

static void seed(struct sfs_links *l)
{
	walk_at(l, "", -1);
	pthread_mutex_lock(&l->mu);
	l->ready = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

static void *seed_thread(void *arg)
{
	seed(arg);
	return NULL;
}

/* With the lock held: returns once the first walk is over, making it here
 * when no thread was started. */
static void wait_ready(struct sfs_links *l)
{
	if (!l->walking) {
		l->walking = true;
		pthread_mutex_unlock(&l->mu);
		seed(l);
		pthread_mutex_lock(&l->mu);
	}
	while (!l->ready)
		pthread_cond_wait(&l->cv, &l->mu);
}

/* ---- the interface ------------------------------------------------------ */

int sfs_links_new(int rootfd, struct sfs_links **out)
{
	struct sfs_links *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	/* The index reads every symlink of SOURCE, when the daemon starts
	 * and whenever the host changes a name: on a quiet view, that
	 * changes no link's access time. */
	int quiet = sfs_quiet_view(rootfd);
	l->rootfd = quiet >= 0 ? quiet : rootfd;
	l->own_rootfd = quiet >= 0;
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	*out = l;
	return 0;
}

int sfs_links_start(struct sfs_links *l)
{
	int r = 0;

	pthread_mutex_lock(&l->mu);
	if (!l->walking) {
		r = -pthread_create(&l->thread, NULL, seed_thread, l);
		l->walking = l->threaded = r == 0;
	}
	pthread_mutex_unlock(&l->mu);
	return r;
}

void sfs_links_free(struct sfs_links *l)
{
	if (!l)
		return;
	if (l->threaded)
		pthread_join(l->thread, NULL);
	sfs_links_release(l->v, l->n);
	if (l->own_rootfd)
		close(l->rootfd);
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	free(l);
}

void sfs_links_release(struct sfs_link *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((char *)v[i].path);
		free((char *)v[i].target);
	}
	free(v);
}

int sfs_links_affected(struct sfs_links *l, const char *const *changed, size_t m,
		       struct sfs_link **out, size_t *n)
{
	int r = 0;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&l->mu);
	wait_ready(l);
	if (l->overflow) {
		pthread_mutex_unlock(&l->mu);
		return -EOVERFLOW;
	}
	bool *hit = calloc(l->n ? l->n : 1, sizeof(*hit));
	if (!hit) {
		pthread_mutex_unlock(&l->mu);
		return -ENOMEM;
	}
	size_t k = sfs_symlink_affected(l->v, l->n, changed, m, hit);
	struct sfs_link *v = k ? calloc(k, sizeof(*v)) : NULL;
	if (k && !v)
		r = -ENOMEM;
	for (size_t i = 0; r == 0 && i < l->n; i++) {
		if (!hit[i])
			continue;
		v[*n].path = strdup(l->v[i].path);
		v[*n].target = strdup(l->v[i].target);
		(*n)++;
		if (!v[*n - 1].path || !v[*n - 1].target)
			r = -ENOMEM;
	}
	pthread_mutex_unlock(&l->mu);
	free(hit);
	if (r < 0) {
		sfs_links_release(v, *n);
		*n = 0;
		return r;
	}
	*out = v;
	return 0;
}

void sfs_links_set(struct sfs_links *l, const char *path, const char *target)
{
	put(l, path, target);
}

void sfs_links_remove(struct sfs_links *l, const char *path)
{
	pthread_mutex_lock(&l->mu);
	remove_locked(l, path);
	pthread_mutex_unlock(&l->mu);
}

/* Takes the entries at and below FROM out of the index, with the lock held:
 * *V (*N of them) with their paths re-rooted at TO. */
static int take_locked(struct sfs_links *l, const char *from, const char *to, struct sfs_link **v,
		       size_t *n)
{
	size_t i = lower_bound(l, from);

	*v = NULL;
	*n = 0;
	while (i < l->n) {
		const char *below = path_below(l->v[i].path, from);
		if (!below) {
			if (*from && strncmp(l->v[i].path, from, strlen(from)) == 0) {
				i++;
				continue;
			}
			break;
		}
		char *p = NULL;
		if (asprintf(&p, "%s%s%s", to, *below && *to ? "/" : "", below) < 0)
			return -ENOMEM;
		struct sfs_link *a = realloc(*v, (*n + 1) * sizeof(*a));
		if (!a) {
			free(p);
			return -ENOMEM;
		}
		*v = a;
		a[*n].path = p;
		a[*n].target = l->v[i].target;
		(*n)++;
		/* The entry leaves the vector; its target goes with it. */
		l->bytes -= cost_of(l->v[i].path, l->v[i].target);
		free((char *)l->v[i].path);
		memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
		l->n--;
	}
	return 0;
}

static void put_all_locked(struct sfs_links *l, struct sfs_link *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_locked(l, (char *)v[i].path, (char *)v[i].target);
	free(v);
}

void sfs_links_move(struct sfs_links *l, const char *from, const char *to)
{
	struct sfs_link *v;
	size_t n;

	pthread_mutex_lock(&l->mu);
	if (take_locked(l, from, to, &v, &n) < 0)
		l->overflow = true;
	remove_locked(l, to);
	put_all_locked(l, v, n);
	pthread_mutex_unlock(&l->mu);
}

void sfs_links_exchange(struct sfs_links *l, const char *a, const char *b)
{
	struct sfs_link *va, *vb;
	size_t na, nb;

	pthread_mutex_lock(&l->mu);
	/* Both are taken before either is put back, so that a's entries,
	 * renamed under b, are not taken again with b's. */
	int ra = take_locked(l, a, b, &va, &na);
	int rb = take_locked(l, b, a, &vb, &nb);
	if (ra < 0 || rb < 0)
		l->overflow = true;
	put_all_locked(l, va, na);
	put_all_locked(l, vb, nb);
	pthread_mutex_unlock(&l->mu);
}

void sfs_links_host_changed(struct sfs_links *l, const char *path, int parentfd)
{
	struct stat st;
	char target[PATH_MAX + 1];

	pthread_mutex_lock(&l->mu);
	wait_ready(l);
	pthread_mutex_unlock(&l->mu);
	sfs_links_remove(l, path);
	if (!*path) {
		/* SOURCE itself: everything is walked again. */
		walk_at(l, "", -1);
		return;
	}
	const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
	/* Through the quiet view, when there is one, not the caller's. */
	int dfd = l->own_rootfd ? -1 : parentfd;
	if (dfd < 0) {
		char *parent = strndup(path, slash ? (size_t)(slash - path) : 0);
		dfd = parent ? open_dir(l->rootfd, parent) : -ENOMEM;
		free(parent);
	}
	if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		/* Gone: nothing more to know. */
	} else if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = '\0';
			put(l, path, target);
		}
	} else if (S_ISDIR(st.st_mode)) {
		int fd = openat(dfd, name,
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			walk_at(l, path, fd);
			close(fd);
		}
	}
	if (dfd >= 0 && dfd != parentfd)
		close(dfd);
}

size_t sfs_links_count(struct sfs_links *l, bool *overflowed)
{
	pthread_mutex_lock(&l->mu);
	wait_ready(l);
	size_t n = l->n;
	if (overflowed)
		*overflowed = l->overflow;
	pthread_mutex_unlock(&l->mu);
	return n;
}
