/* inode.c - see inode.h. One mutex guards the whole table: every critical
 * section is a few pointer updates, and host calls are made outside it. */
#include "inode.h"
#include "common/path.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#ifdef __linux__
#include <sys/inotify.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 4096

struct sfs_node {
	struct sfs_node *parent; /* holds a reference; NULL for the root and when detached */
	char *name;		 /* NULL when detached */
	dev_t dev;
	ino_t ino;
	uint64_t btime_ns;
	uint64_t generation;
	mode_t type;

	uint64_t nlookup; /* the kernel's references */
	uint64_t refs;	  /* 1 while nlookup > 0, +1 per child, +1 per pin */

	int anchor_fd; /* cached directory fd, or -1 */
	unsigned anchor_pins;
	struct sfs_node *lru_prev, *lru_next;

	struct sfs_node *hash_next;
	bool hashed;
	bool is_root;
	bool removed; /* its name went through the mount (not behind our back) */
	/* In the project's store (a private directory or below one), not in
	 * SOURCE; a store base is the private directory itself, reached from
	 * the store's root rather than from its parent. */
	bool in_store, store_base;
	signed char owned;  /* -1 unknown, 0 no, 1 created by the agent */
	signed char mirror; /* a directory's store mirror: -1 unknown, 0 no, 1 yes */
	uint64_t placed_at; /* the table's moves + 1 when its place was last checked */

	struct sfs_node *all_prev, *all_next; /* every live node, for teardown */

	/* Other names of a file with hard links, most recent first: the
	 * primary name above is the one used, these keep it reachable when
	 * that one goes, and the policy judges them all. */
	struct alias {
		struct sfs_node *parent; /* holds a reference */
		char *name;
	} * aliases;
	unsigned naliases;

	int wd;		   /* inotify watch descriptor, 0 when not watched */
	int overlay_fd;	   /* served instead of SOURCE's file, or -1 (not owned) */
	int orphan_fd;	   /* the file after its last name went, or -1 (owned) */
	unsigned handles;  /* file handles the kernel holds (open, create) */
	unsigned removing; /* removals of a name of it under way */
	/* An fd of the file opened as the daemon while it could be, for the
	 * writes the kernel allowed when it could (sfs_node_keep_fd); -1. */
	int kept_fd, kept_accmode;
	struct sfs_node *kept_prev, *kept_next;
	struct sfs_node *wd_next;
};

struct sfs_table {
	pthread_mutex_t lock;
	pthread_cond_t removed; /* a node's removing went to 0 */
	struct sfs_node root;
	struct sfs_node **buckets;
	size_t nbuckets; /* a power of two */
	size_t nhashed;
	uint64_t next_generation;

	struct sfs_node **wd_buckets; /* watch descriptor -> node */
	size_t nwd_buckets, nwatched;
	int inotify_fd;

	int store_fd;	/* anchor on the store's tree, not owned; -1 without one */
	uint64_t moves; /* renames heard on the host so far (watch.c) */

	struct sfs_node lru; /* sentinel: lru.lru_next is the most recent */
	struct sfs_node all; /* sentinel of the list of every live node */
	unsigned anchors, anchor_limit;
	uint64_t anchor_opens, anchor_hits, nodes;

	struct sfs_node kept; /* sentinel: kept.kept_next is the most recent */
	unsigned nkept, kept_limit;
	uint64_t kept_evicted;
};

static size_t hash_key(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
	return (size_t)(h ^ (h >> 29));
}

static struct sfs_node **bucket_of(struct sfs_table *t, dev_t dev, ino_t ino)
{
	return &t->buckets[hash_key(dev, ino) & (t->nbuckets - 1)];
}

static void hash_insert(struct sfs_table *t, struct sfs_node *n)
{
	if (t->nhashed + 1 > t->nbuckets / 4 * 3) {
		size_t nb = t->nbuckets * 2;
		struct sfs_node **b = calloc(nb, sizeof(*b));
		if (b) {
			for (size_t i = 0; i < t->nbuckets; i++) {
				struct sfs_node *m = t->buckets[i], *next;
				for (; m; m = next) {
					next = m->hash_next;
					size_t j = hash_key(m->dev, m->ino) & (nb - 1);
					m->hash_next = b[j];
					b[j] = m;
				}
			}
			free(t->buckets);
			t->buckets = b;
			t->nbuckets = nb;
		}
	}
	struct sfs_node **b = bucket_of(t, n->dev, n->ino);
	n->hash_next = *b;
	*b = n;
	n->hashed = true;
	t->nhashed++;
}

static void hash_remove(struct sfs_table *t, struct sfs_node *n)
{
	if (!n->hashed)
		return;
	for (struct sfs_node **p = bucket_of(t, n->dev, n->ino); *p; p = &(*p)->hash_next) {
		if (*p == n) {
			*p = n->hash_next;
			break;
		}
	}
	n->hashed = false;
	t->nhashed--;
}

static struct sfs_node *hash_find(struct sfs_table *t, const struct sfs_stat *st)
{
	struct sfs_node *n = *bucket_of(t, st->st.st_dev, st->st.st_ino);

	for (; n; n = n->hash_next)
		if (n->ino == st->st.st_ino && n->dev == st->st.st_dev)
			return n;
	return NULL;
}

static bool same_inode(const struct sfs_node *n, const struct sfs_stat *st)
{
	return n->dev == st->st.st_dev && n->ino == st->st.st_ino &&
	       n->type == (st->st.st_mode & S_IFMT) &&
	       (!n->btime_ns || !st->btime_ns || n->btime_ns == st->btime_ns);
}

static void lru_unlink(struct sfs_node *n)
{
	n->lru_prev->lru_next = n->lru_next;
	n->lru_next->lru_prev = n->lru_prev;
	n->lru_prev = n->lru_next = NULL;
}

static void lru_push_front(struct sfs_table *t, struct sfs_node *n)
{
	n->lru_next = t->lru.lru_next;
	n->lru_prev = &t->lru;
	t->lru.lru_next->lru_prev = n;
	t->lru.lru_next = n;
}

/* Drops the cached anchor of N; returns the fd for the caller to close
 * once the lock is released. */
static int anchor_uncache(struct sfs_table *t, struct sfs_node *n)
{
	int fd = n->anchor_fd;

	if (fd >= 0) {
		lru_unlink(n);
		n->anchor_fd = -1;
		t->anchors--;
	}
	return fd;
}

static struct sfs_node **wd_bucket(struct sfs_table *t, int wd)
{
	return &t->wd_buckets[((unsigned)wd * 2654435761u) & (t->nwd_buckets - 1)];
}

static void wd_remove(struct sfs_table *t, struct sfs_node *n)
{
	if (!n->wd)
		return;
	for (struct sfs_node **p = wd_bucket(t, n->wd); *p; p = &(*p)->wd_next) {
		if (*p == n) {
			*p = n->wd_next;
			t->nwatched--;
			break;
		}
	}
	n->wd = 0;
}

static struct sfs_node *wd_find(struct sfs_table *t, int wd)
{
	struct sfs_node *n = *wd_bucket(t, wd);

	while (n && n->wd != wd)
		n = n->wd_next;
	return n;
}

static void node_unref(struct sfs_table *t, struct sfs_node *n);

/* ---- kept fds: a list, most recently used first, of at most kept_limit */

static void kept_unlink(struct sfs_table *t, struct sfs_node *n)
{
	n->kept_prev->kept_next = n->kept_next;
	n->kept_next->kept_prev = n->kept_prev;
	n->kept_prev = n->kept_next = NULL;
	t->nkept--;
}

static void kept_push(struct sfs_table *t, struct sfs_node *n)
{
	n->kept_next = t->kept.kept_next;
	n->kept_prev = &t->kept;
	t->kept.kept_next->kept_prev = n;
	t->kept.kept_next = n;
	t->nkept++;
}

/* The fd N keeps, if any, to close once the lock is dropped. */
static int kept_take(struct sfs_table *t, struct sfs_node *n)
{
	int fd = n->kept_fd;

	if (fd >= 0) {
		kept_unlink(t, n);
		n->kept_fd = -1;
	}
	return fd;
}

#define MAX_ALIASES 8

static int alias_find(const struct sfs_node *n, const struct sfs_node *parent, const char *name)
{
	for (unsigned i = 0; i < n->naliases; i++)
		if (n->aliases[i].parent == parent && strcmp(n->aliases[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void alias_remove(struct sfs_table *t, struct sfs_node *n, unsigned i)
{
	struct sfs_node *parent = n->aliases[i].parent;

	free(n->aliases[i].name);
	memmove(&n->aliases[i], &n->aliases[i + 1], (n->naliases - i - 1) * sizeof(*n->aliases));
	n->naliases--;
	node_unref(t, parent);
}

static void aliases_clear(struct sfs_table *t, struct sfs_node *n)
{
	while (n->naliases)
		alias_remove(t, n, n->naliases - 1);
	free(n->aliases);
	n->aliases = NULL;
}

/* Keeps N's primary name as an alias (taking over its reference); the
 * oldest alias goes when there are too many. */
static void alias_push_primary(struct sfs_table *t, struct sfs_node *n)
{
	if (!n->aliases) {
		n->aliases = calloc(MAX_ALIASES, sizeof(*n->aliases));
		if (!n->aliases)
			return;
	}
	if (n->naliases == MAX_ALIASES)
		alias_remove(t, n, MAX_ALIASES - 1);
	memmove(&n->aliases[1], &n->aliases[0], n->naliases * sizeof(*n->aliases));
	n->aliases[0] = (struct alias){n->parent, n->name};
	n->naliases++;
	n->parent = NULL;
	n->name = NULL;
}

static void node_unref(struct sfs_table *t, struct sfs_node *n)
{
	while (n && n != &t->root && --n->refs == 0) {
		struct sfs_node *parent = n->parent;
		aliases_clear(t, n);
		if (n->wd) {
#ifdef __linux__
			inotify_rm_watch(t->inotify_fd, n->wd);
#endif
			wd_remove(t, n);
		}
		hash_remove(t, n);
		int fd = anchor_uncache(t, n);
		if (fd >= 0)
			close(fd);
		if (n->orphan_fd >= 0)
			close(n->orphan_fd);
		fd = kept_take(t, n);
		if (fd >= 0)
			close(fd);
		n->all_prev->all_next = n->all_next;
		n->all_next->all_prev = n->all_prev;
		free(n->name);
		free(n);
		t->nodes--;
		n = parent;
	}
}

static void node_detach(struct sfs_table *t, struct sfs_node *n, bool removed)
{
	struct sfs_node *parent = n->parent;

	n->removed = removed;
	aliases_clear(t, n);

	free(n->name);
	n->name = NULL;
	n->parent = NULL;
	node_unref(t, parent);
}

/* Moves N to PARENT/NAME. If PARENT's recorded ancestry runs through N (the
 * host moved directories around behind our back), the stale link in that
 * chain is cut rather than letting the table grow a cycle. */
static void node_set_location(struct sfs_table *t, struct sfs_node *n, struct sfs_node *parent,
			      const char *name)
{
	char *copy = strdup(name);

	if (!copy)
		return; /* the old name stays; it is verified on every use */
	for (struct sfs_node *a = parent; a; a = a->parent) {
		if (a->parent == n) {
			node_detach(t, a, false);
			break;
		}
	}
	parent->refs++;
	struct sfs_node *old_parent = n->parent;
	free(n->name);
	n->name = copy;
	n->removed = false;
	n->parent = parent;
	node_unref(t, old_parent);
}

int sfs_table_new(int rootfd, const struct sfs_stat *root_st, unsigned anchor_limit,
		  struct sfs_table **out)
{
	struct sfs_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->nbuckets = 1024;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	t->nwd_buckets = 1024;
	t->wd_buckets = calloc(t->nwd_buckets, sizeof(*t->wd_buckets));
	if (!t->buckets || !t->wd_buckets) {
		free(t->buckets);
		free(t->wd_buckets);
		free(t);
		return -ENOMEM;
	}
	t->inotify_fd = -1;
	t->store_fd = -1;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->removed, NULL);
	t->lru.lru_next = t->lru.lru_prev = &t->lru;
	t->all.all_next = t->all.all_prev = &t->all;
	t->anchor_limit = anchor_limit < 4 ? 4 : anchor_limit;
	t->kept.kept_next = t->kept.kept_prev = &t->kept;
	t->kept_limit = t->anchor_limit;
	t->next_generation = 1;
	t->root.anchor_fd = rootfd;
	t->root.refs = 1;
	t->root.nlookup = 1;
	t->root.dev = root_st->st.st_dev;
	t->root.ino = root_st->st.st_ino;
	t->root.btime_ns = root_st->btime_ns;
	t->root.type = S_IFDIR;
	t->root.is_root = true;
	t->root.overlay_fd = -1;
	t->root.orphan_fd = -1;
	t->root.kept_fd = -1;
	t->root.owned = 0;
	t->root.mirror = -1;
	*out = t;
	return 0;
}

void sfs_table_free(struct sfs_table *t)
{
	if (!t)
		return;
	/* The kernel is gone: whatever it still referenced goes now. */
	while (t->all.all_next != &t->all) {
		struct sfs_node *n = t->all.all_next;
		n->all_prev->all_next = n->all_next;
		n->all_next->all_prev = n->all_prev;
		if (n->anchor_fd >= 0)
			close(n->anchor_fd);
		if (n->orphan_fd >= 0)
			close(n->orphan_fd);
		if (n->kept_fd >= 0)
			close(n->kept_fd);
		/* Their parents go in this same walk: only the names. */
		for (unsigned i = 0; i < n->naliases; i++)
			free(n->aliases[i].name);
		free(n->aliases);
		free(n->name);
		free(n);
	}
	close(t->root.anchor_fd);
	free(t->buckets);
	free(t->wd_buckets);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->removed);
	free(t);
}

int sfs_table_rootfd(const struct sfs_table *t)
{
	return t->root.anchor_fd;
}

struct sfs_node *sfs_table_root(struct sfs_table *t)
{
	return &t->root;
}

uint64_t sfs_node_id(const struct sfs_node *n)
{
	return n->is_root ? 1 : (uint64_t)(uintptr_t)n;
}

struct sfs_node *sfs_node_from_id(struct sfs_table *t, uint64_t id)
{
	return id == 1 ? &t->root : (struct sfs_node *)(uintptr_t)id;
}

void sfs_node_info(struct sfs_table *t, const struct sfs_node *n, struct sfs_node_info *out)
{
	pthread_mutex_lock(&t->lock);
	out->type = n->type;
	out->dev = n->dev;
	out->ino = n->ino;
	out->generation = n->generation;
	out->covered = n->wd || (n->parent && n->parent->wd);
	out->overlay_fd = n->overlay_fd;
	out->orphan_fd = n->orphan_fd;
	out->handles = n->handles;
	out->in_store = n->in_store;
	out->store_base = n->store_base;
	out->owned = n->owned;
	out->mirror = n->mirror;
	pthread_mutex_unlock(&t->lock);
}

int sfs_node_found(struct sfs_table *t, struct sfs_node *n, const struct sfs_location *loc, int fd,
		   struct sfs_stat *st)
{
	int r = fd >= 0 ? sfs_stat_fd(fd, st) : sfs_stat_at(loc->dir.fd, loc->name, st);

	(void)t;
	if (r == -ENOENT)
		return -ESTALE;
	if (r < 0)
		return r;
	return same_inode(n, st) ? 0 : -ESTALE;
}

/* N was looked up as PARENT/NAME: that becomes its primary name. A file
 * with several links keeps its other known names as aliases; otherwise the
 * old name is stale (moved on the host) and goes. */
static void node_add_name(struct sfs_table *t, struct sfs_node *n, struct sfs_node *parent,
			  const char *name, nlink_t nlink)
{
	int i = alias_find(n, parent, name);

	if (i >= 0) {
		struct alias a = n->aliases[i];
		n->aliases[i] = (struct alias){n->parent, n->name};
		n->parent = a.parent;
		n->name = a.name;
		if (!n->name) /* the primary was gone: drop the empty slot */
			alias_remove(t, n, (unsigned)i);
		return;
	}
	if (n->type == S_IFDIR || nlink <= 1 || !n->name) {
		aliases_clear(t, n);
		node_set_location(t, n, parent, name);
		return;
	}
	char *copy = strdup(name);
	if (!copy)
		return;
	alias_push_primary(t, n);
	parent->refs++;
	n->parent = parent;
	n->name = copy;
	n->removed = false;
}

/* What a node found in PARENT now records as its last checked place: the
 * current epoch when PARENT's own place is known in it (the root's always
 * is), since the node was just found there. Lock held. */
static uint64_t place_below(const struct sfs_table *t, const struct sfs_node *parent)
{
	uint64_t now = t->moves + 1;

	return parent->is_root || parent->placed_at == now ? now : 0;
}

struct sfs_node *sfs_table_intern(struct sfs_table *t, struct sfs_node *parent, const char *name,
				  const struct sfs_stat *st, bool store_base, unsigned handles)
{
	pthread_mutex_lock(&t->lock);
	struct sfs_node *n = hash_find(t, st);
	bool in_store = store_base || parent->in_store;
	/* The host reused the inode number, or the inode moved between
	 * SOURCE and the store (a directory renamed to a private name, as
	 * cargo makes target/): the old node lives on until the kernel
	 * forgets it, but is never found again. A new node is a new inode
	 * to the kernel, which drops what it cached of the old one. */
	if (n && (!same_inode(n, st) || n->in_store != in_store || n->store_base != store_base)) {
		hash_remove(t, n);
		n = NULL;
	}
	if (n) {
		if (n->nlookup++ == 0)
			n->refs++;
		if (n->parent != parent || !n->name || strcmp(n->name, name) != 0)
			node_add_name(t, n, parent, name, st->st.st_nlink);
		n->placed_at = place_below(t, parent);
	} else {
		n = calloc(1, sizeof(*n));
		if (n)
			n->name = strdup(name);
		if (!n || !n->name) {
			free(n);
			pthread_mutex_unlock(&t->lock);
			return NULL;
		}
		n->parent = parent;
		parent->refs++;
		n->dev = st->st.st_dev;
		n->ino = st->st.st_ino;
		n->btime_ns = st->btime_ns;
		n->type = st->st.st_mode & S_IFMT;
		n->generation = t->next_generation++;
		n->nlookup = 1;
		n->refs = 1;
		n->anchor_fd = -1;
		n->overlay_fd = -1;
		n->orphan_fd = -1;
		n->kept_fd = -1;
		n->store_base = store_base;
		n->in_store = in_store;
		/* Nothing in the store is owned: everything there is private. */
		n->owned = n->in_store ? 0 : -1;
		n->mirror = n->in_store ? 0 : -1;
		n->placed_at = place_below(t, parent);
		hash_insert(t, n);
		n->all_next = t->all.all_next;
		n->all_prev = &t->all;
		t->all.all_next->all_prev = n;
		t->all.all_next = n;
		t->nodes++;
	}
	if (n)
		n->handles += handles;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void sfs_table_forget(struct sfs_table *t, struct sfs_node *n, uint64_t nlookup)
{
	if (n == &t->root)
		return;
	pthread_mutex_lock(&t->lock);
	if (nlookup >= n->nlookup) {
		n->nlookup = 0;
		node_unref(t, n);
	} else {
		n->nlookup -= nlookup;
	}
	pthread_mutex_unlock(&t->lock);
}

static bool is_at(const struct sfs_node *n, const struct sfs_node *parent, const char *name)
{
	return n->parent == parent && n->name && strcmp(n->name, name) == 0;
}

/* PARENT/NAME went: N falls back on another of its names, or has none
 * (REMOVED: it is gone; else it is elsewhere, unknown to the table). */
static void name_gone(struct sfs_table *t, struct sfs_node *n, struct sfs_node *parent,
		      const char *name, bool removed)
{
	int i;

	if (is_at(n, parent, name)) {
		if (n->naliases == 0) {
			node_detach(t, n, removed);
			return;
		}
		struct sfs_node *old_parent = n->parent;
		free(n->name);
		n->parent = n->aliases[0].parent;
		n->name = n->aliases[0].name;
		memmove(&n->aliases[0], &n->aliases[1], (n->naliases - 1) * sizeof(*n->aliases));
		n->naliases--;
		node_unref(t, old_parent);
	} else if ((i = alias_find(n, parent, name)) >= 0) {
		alias_remove(t, n, (unsigned)i);
	}
}

/* The name OLDPARENT/OLDNAME of N is now NEWPARENT/NEWNAME. */
static void name_moved(struct sfs_table *t, struct sfs_node *n, struct sfs_node *oldparent,
		       const char *oldname, struct sfs_node *newparent, const char *newname)
{
	int i = alias_find(n, oldparent, oldname);

	if (i < 0) {
		node_set_location(t, n, newparent, newname);
		return;
	}
	char *copy = strdup(newname);
	if (!copy) {
		alias_remove(t, n, (unsigned)i);
		return;
	}
	struct alias *a = &n->aliases[i];
	struct sfs_node *old = a->parent;
	newparent->refs++;
	free(a->name);
	a->name = copy;
	a->parent = newparent;
	node_unref(t, old);
}

static bool has_name(const struct sfs_node *n, const struct sfs_node *parent, const char *name)
{
	return is_at(n, parent, name) || alias_find(n, parent, name) >= 0;
}

void sfs_table_note_unlink(struct sfs_table *t, struct sfs_node *parent, const char *name,
			   const struct sfs_stat *st)
{
	pthread_mutex_lock(&t->lock);
	struct sfs_node *n = st ? hash_find(t, st) : NULL;
	if (n)
		name_gone(t, n, parent, name, true);
	pthread_mutex_unlock(&t->lock);
}

/* Whether A is N or lies below it. Lock held. */
static bool is_below(const struct sfs_node *a, const struct sfs_node *n)
{
	for (int depth = 0; a && depth <= MAX_DEPTH; a = a->parent, depth++)
		if (a == n)
			return true;
	return false;
}

void sfs_table_note_moved_away(struct sfs_table *t, struct sfs_node *parent, const char *name,
			       const struct sfs_stat *st, struct sfs_node *newparent,
			       const char *newname)
{
	pthread_mutex_lock(&t->lock);
	struct sfs_node *n = st ? hash_find(t, st) : NULL;
	if (n && !has_name(n, parent, name))
		n = NULL;
	if (n && n->type == S_IFDIR && n->naliases == 0) {
		name_moved(t, n, parent, name, newparent, newname);
		n->store_base = !newparent->in_store;
		/* Everything in the store is private: nothing owned, no
		 * mirror of its own. */
		for (struct sfs_node *m = t->all.all_next; m != &t->all; m = m->all_next) {
			if (m->in_store || !is_below(m, n))
				continue;
			m->in_store = true;
			m->owned = 0;
			m->mirror = 0;
		}
	} else if (n) {
		name_gone(t, n, parent, name, false);
	}
	pthread_mutex_unlock(&t->lock);
}

void sfs_table_note_rename(struct sfs_table *t, struct sfs_node *oldparent, const char *oldname,
			   const struct sfs_stat *old_st, struct sfs_node *newparent,
			   const char *newname, const struct sfs_stat *new_st, bool exchange)
{
	pthread_mutex_lock(&t->lock);
	struct sfs_node *moved = old_st ? hash_find(t, old_st) : NULL;
	struct sfs_node *target = new_st ? hash_find(t, new_st) : NULL;
	if (moved && !has_name(moved, oldparent, oldname))
		moved = NULL;
	if (target && !has_name(target, newparent, newname))
		target = NULL;
	if (moved == target)
		target = NULL; /* rename of a name onto a hard link of itself */
	/* Pin both so that detaching one cannot free the other's parent. */
	if (moved)
		moved->refs++;
	if (target)
		target->refs++;
	if (target && !exchange)
		name_gone(t, target, newparent, newname, true);
	if (moved)
		name_moved(t, moved, oldparent, oldname, newparent, newname);
	if (target && exchange)
		name_moved(t, target, newparent, newname, oldparent, oldname);
	node_unref(t, moved);
	node_unref(t, target);
	pthread_mutex_unlock(&t->lock);
}

/* A node without a name: removed through the mount, it is gone (ENOENT,
 * as natively); cut loose because the host moved things, the kernel
 * should look again (ESTALE). */
static int gone_error(const struct sfs_node *n)
{
	return n->removed ? -ENOENT : -ESTALE;
}

/* Joins the names from BASE (exclusive) down to N into BUF. Lock held. */
static int node_path_below(const struct sfs_node *base, const struct sfs_node *n, char *buf,
			   size_t size)
{
	const struct sfs_node *chain[MAX_DEPTH];
	size_t depth = 0, len = 0;

	for (const struct sfs_node *a = n; a != base; a = a->parent) {
		if (!a->name || depth == MAX_DEPTH)
			return a->name ? -ELOOP : gone_error(a);
		chain[depth++] = a;
	}
	if (size == 0)
		return -ENAMETOOLONG;
	buf[0] = '\0';
	while (depth > 0) {
		const char *name = chain[--depth]->name;
		int r = path_append(buf, size, &len, name, strlen(name));

		if (r < 0)
			return r;
	}
	return 0;
}

/* The same into a buffer of the right size, for paths of any length. */
static int node_path_below_alloc(const struct sfs_node *base, const struct sfs_node *n,
				 char **out)
{
	size_t len = 1, depth = 0;

	for (const struct sfs_node *a = n; a != base; a = a->parent) {
		if (!a->name || ++depth > MAX_DEPTH)
			return a->name ? -ELOOP : gone_error(a);
		len += strlen(a->name) + 1;
	}
	*out = malloc(len);
	if (!*out)
		return -ENOMEM;
	return node_path_below(base, n, *out, len);
}

int sfs_node_relpath(struct sfs_table *t, struct sfs_node *n, const char *name, char *buf,
		     size_t size)
{
	pthread_mutex_lock(&t->lock);
	int r = node_path_below(&t->root, n, buf, size);
	pthread_mutex_unlock(&t->lock);
	if (r == 0 && name) {
		size_t len = strlen(buf);

		r = path_append(buf, size, &len, name, strlen(name));
	}
	return r;
}

int sfs_node_alias_relpath(struct sfs_table *t, struct sfs_node *n, unsigned i, char *buf,
			   size_t size)
{
	pthread_mutex_lock(&t->lock);
	int r = -ENOENT;
	if (i < n->naliases) {
		r = node_path_below(&t->root, n->aliases[i].parent, buf, size);
		if (r == 0) {
			size_t len = strlen(buf);
			const char *name = n->aliases[i].name;

			r = path_append(buf, size, &len, name, strlen(name));
		}
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

/* The root's anchor is never evicted, so only other nodes are pinned. */
static void pin(struct sfs_table *t, struct sfs_node *n, struct sfs_anchor *out)
{
	out->table = t;
	out->node = n->is_root ? NULL : n;
	out->fd = n->anchor_fd;
	out->own_fd = false;
	if (!n->is_root) {
		n->anchor_pins++;
		n->refs++;
	}
}

void sfs_anchor_put(struct sfs_anchor *a)
{
	if (a->own_fd && a->fd >= 0)
		close(a->fd);
	a->own_fd = false;
	if (!a->node) {
		a->fd = -1;
		return;
	}
	pthread_mutex_lock(&a->table->lock);
	a->node->anchor_pins--;
	node_unref(a->table, a->node);
	pthread_mutex_unlock(&a->table->lock);
	a->node = NULL;
	a->fd = -1;
}

/* Evicts least recently used unpinned anchors down to the limit; the fds
 * are closed by the caller after unlocking. */
static size_t evict(struct sfs_table *t, int *fds, size_t max)
{
	size_t n = 0;
	struct sfs_node *v = t->lru.lru_prev;

	while (t->anchors > t->anchor_limit && v != &t->lru && n < max) {
		struct sfs_node *prev = v->lru_prev;
		if (v->anchor_pins == 0)
			fds[n++] = anchor_uncache(t, v);
		v = prev;
	}
	return n;
}

int sfs_anchor_get(struct sfs_table *t, struct sfs_node *dir, struct sfs_anchor *out)
{
	cleanup_free char *path = NULL;
	struct sfs_anchor base;
	struct sfs_stat got;

	*out = (struct sfs_anchor){.table = t, .fd = -1};
	pthread_mutex_lock(&t->lock);
	if (dir->anchor_fd >= 0) {
		if (!dir->is_root) {
			lru_unlink(dir);
			lru_push_front(t, dir);
		}
		t->anchor_hits++;
		pin(t, dir, out);
		pthread_mutex_unlock(&t->lock);
		return 0;
	}
	if (dir->type != S_IFDIR) {
		pthread_mutex_unlock(&t->lock);
		return -ENOTDIR;
	}
	/* Opened beneath the nearest directory with an fd, or, when the way
	 * up meets a private directory first, beneath the store's root by
	 * the whole path (the private directory's parent is in SOURCE). */
	struct sfs_node *b = dir->store_base ? NULL : dir->parent;
	while (b && b->anchor_fd < 0 && !b->store_base)
		b = b->parent;
	bool from_store = dir->in_store && (!b || b->anchor_fd < 0);
	if (from_store && t->store_fd < 0) {
		pthread_mutex_unlock(&t->lock);
		return -ESTALE;
	}
	int r = node_path_below_alloc(from_store ? &t->root : b, dir, &path);
	if (r < 0) {
		pthread_mutex_unlock(&t->lock);
		return r;
	}
	if (from_store)
		base = (struct sfs_anchor){.table = t, .node = NULL, .fd = t->store_fd};
	else
		pin(t, b, &base);
	dir->refs++; /* keeps DIR alive while unlocked */
	t->anchor_opens++;
	pthread_mutex_unlock(&t->lock);

	int fd = sfs_open_beneath(base.fd, path, sfs_anchor_flags(), 0);
	sfs_anchor_put(&base);
	if (fd >= 0 && ((r = sfs_stat_fd(fd, &got)) < 0 || !same_inode(dir, &got))) {
		close(fd);
		fd = r < 0 ? r : -ESTALE;
	}
	int victims[8];
	size_t nvictims = 0;
	pthread_mutex_lock(&t->lock);
	if (fd < 0) {
		node_unref(t, dir);
		pthread_mutex_unlock(&t->lock);
		/* The name no longer leads to this directory. */
		return fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP ? -ESTALE : fd;
	}
	if (dir->anchor_fd >= 0) {
		victims[nvictims++] = fd; /* another thread cached it meanwhile */
	} else {
		dir->anchor_fd = fd;
		lru_push_front(t, dir);
		t->anchors++;
	}
	pin(t, dir, out);
	node_unref(t, dir);
	nvictims += evict(t, victims + nvictims, ARRAY_SIZE(victims) - nvictims);
	pthread_mutex_unlock(&t->lock);
	for (size_t i = 0; i < nvictims; i++)
		close(victims[i]);
	return 0;
}

int sfs_locate(struct sfs_table *t, struct sfs_node *n, struct sfs_location *out)
{
	if (n == &t->root) {
		out->dir = (struct sfs_anchor){.table = t, .node = NULL, .fd = t->root.anchor_fd};
		strcpy(out->name, ".");
		return 0;
	}
	/* A private directory's parent is in SOURCE, where its name leads
	 * to SOURCE's own copy: it is reached as itself. */
	if (n->store_base) {
		strcpy(out->name, ".");
		return sfs_anchor_get(t, n, &out->dir);
	}
	pthread_mutex_lock(&t->lock);
	struct sfs_node *parent = n->parent;
	if (!parent || !n->name) {
		int err = gone_error(n);
		pthread_mutex_unlock(&t->lock);
		out->dir = (struct sfs_anchor){.table = t, .node = NULL, .fd = -1};
		return err;
	}
	size_t len = strlen(n->name);
	memcpy(out->name, n->name, len + 1);
	parent->refs++;
	pthread_mutex_unlock(&t->lock);

	int r = sfs_anchor_get(t, parent, &out->dir);
	pthread_mutex_lock(&t->lock);
	node_unref(t, parent);
	pthread_mutex_unlock(&t->lock);
	return r;
}

void sfs_node_set_overlay(struct sfs_table *t, struct sfs_node *n, int overlay_fd)
{
	pthread_mutex_lock(&t->lock);
	n->overlay_fd = overlay_fd;
	pthread_mutex_unlock(&t->lock);
}

void sfs_node_handles(struct sfs_table *t, struct sfs_node *n, int delta)
{
	pthread_mutex_lock(&t->lock);
	while (delta > 0 && n->removing > 0)
		pthread_cond_wait(&t->removed, &t->lock);
	if (delta > 0 || n->handles > 0)
		n->handles += (unsigned)delta;
	pthread_mutex_unlock(&t->lock);
}

bool sfs_node_removal_begin(struct sfs_table *t, struct sfs_node *n)
{
	pthread_mutex_lock(&t->lock);
	n->removing++;
	bool open = n->handles > 0;
	pthread_mutex_unlock(&t->lock);
	return open;
}

void sfs_node_removal_wait(struct sfs_table *t, struct sfs_node *n)
{
	pthread_mutex_lock(&t->lock);
	while (n->removing > 0)
		pthread_cond_wait(&t->removed, &t->lock);
	pthread_mutex_unlock(&t->lock);
}

void sfs_node_removal_end(struct sfs_table *t, struct sfs_node *n)
{
	pthread_mutex_lock(&t->lock);
	if (--n->removing == 0)
		pthread_cond_broadcast(&t->removed);
	pthread_mutex_unlock(&t->lock);
}

bool sfs_node_adopt_orphan_fd(struct sfs_table *t, struct sfs_node *n, int fd)
{
	pthread_mutex_lock(&t->lock);
	bool taken = n->orphan_fd < 0 && !n->name;
	if (taken)
		n->orphan_fd = fd;
	pthread_mutex_unlock(&t->lock);
	return taken;
}

void sfs_node_keep_fd(struct sfs_table *t, struct sfs_node *n, int fd, int accmode)
{
	int drop = -1;

	pthread_mutex_lock(&t->lock);
	/* One that serves both ways, or writes, is not given up for a
	 * narrower one: a write the mode forbids is what it is kept for. */
	if (n->kept_fd >= 0 && accmode != O_RDWR &&
	    (n->kept_accmode == O_RDWR || n->kept_accmode == O_WRONLY)) {
		drop = fd;
		kept_unlink(t, n);
	} else {
		drop = kept_take(t, n);
		n->kept_fd = fd;
		n->kept_accmode = accmode;
	}
	kept_push(t, n);
	pthread_mutex_unlock(&t->lock);
	if (drop >= 0)
		close(drop);
	/* Over the budget: the least recently used go, closed outside the
	 * lock, one at a time. */
	for (;;) {
		pthread_mutex_lock(&t->lock);
		int old = -1;
		if (t->nkept > t->kept_limit) {
			old = kept_take(t, t->kept.kept_prev);
			t->kept_evicted++;
		}
		pthread_mutex_unlock(&t->lock);
		if (old < 0)
			break;
		close(old);
	}
}

int sfs_node_kept_dup(struct sfs_table *t, struct sfs_node *n, int accmode)
{
	int fd = -1;

	pthread_mutex_lock(&t->lock);
	if (n->kept_fd >= 0 &&
	    (accmode < 0 || n->kept_accmode == accmode || n->kept_accmode == O_RDWR)) {
		fd = fcntl(n->kept_fd, F_DUPFD_CLOEXEC, 3);
		kept_unlink(t, n);
		kept_push(t, n);
	}
	pthread_mutex_unlock(&t->lock);
	return fd;
}

int sfs_node_kept_accmode(struct sfs_table *t, const struct sfs_node *n)
{
	pthread_mutex_lock(&t->lock);
	int accmode = n->kept_fd >= 0 ? n->kept_accmode : -1;
	pthread_mutex_unlock(&t->lock);
	return accmode;
}

void sfs_node_drop_kept(struct sfs_table *t, struct sfs_node *n)
{
	pthread_mutex_lock(&t->lock);
	int fd = kept_take(t, n);
	pthread_mutex_unlock(&t->lock);
	if (fd >= 0)
		close(fd);
}

void sfs_table_kept_counts(struct sfs_table *t, unsigned *kept, uint64_t *evicted)
{
	pthread_mutex_lock(&t->lock);
	*kept = t->nkept;
	*evicted = t->kept_evicted;
	pthread_mutex_unlock(&t->lock);
}

void sfs_table_set_kept_limit(struct sfs_table *t, unsigned limit)
{
	pthread_mutex_lock(&t->lock);
	t->kept_limit = limit;
	pthread_mutex_unlock(&t->lock);
}

void sfs_table_set_store(struct sfs_table *t, int store_fd)
{
	t->store_fd = store_fd;
}

int sfs_node_verify(struct sfs_table *t, struct sfs_node *dir, int anchor_fd)
{
	cleanup_free char *path = NULL;
	struct sfs_stat want, got;

	if (dir == &t->root)
		return 0;
	pthread_mutex_lock(&t->lock);
	int base = dir->in_store ? t->store_fd : t->root.anchor_fd;
	int r = base < 0 ? -ESTALE : node_path_below_alloc(&t->root, dir, &path);
	pthread_mutex_unlock(&t->lock);
	if (r < 0)
		return r;
	int fd = sfs_open_beneath(base, path, sfs_anchor_flags(), 0);
	/* A daemon that is not root, on the portable flavour (anchors opened
	 * for reading), cannot open a directory its owner closed: it says
	 * so, rather than that the directory moved. */
	if (fd < 0)
		return fd == -EACCES ? -EACCES : -ESTALE;
	r = sfs_stat_fd(fd, &got);
	close(fd);
	if (r < 0 || sfs_stat_fd(anchor_fd, &want) < 0)
		return -ESTALE;
	return want.st.st_dev == got.st.st_dev && want.st.st_ino == got.st.st_ino ? 0 : -ESTALE;
}

/* Whether a rename of N or of a directory above it would have been heard:
 * every directory from N's up to the root is watched. Lock held. */
static bool moves_heard(struct sfs_table *t, const struct sfs_node *n)
{
	if (t->inotify_fd < 0)
		return false;
	for (const struct sfs_node *a = n->parent; a; a = a->parent)
		if (!a->wd)
			return false;
	return true;
}

void sfs_table_note_host_moves(struct sfs_table *t)
{
	pthread_mutex_lock(&t->lock);
	t->moves++;
	pthread_mutex_unlock(&t->lock);
}

int sfs_node_check_place(struct sfs_table *t, struct sfs_node *n)
{
	cleanup_location struct sfs_location loc = {0};
	struct sfs_stat st;

	pthread_mutex_lock(&t->lock);
	/* Nothing in the store is judged by its place; and where every
	 * rename would have been heard, none was since the last check. */
	uint64_t now = t->moves + 1;
	bool known = n == &t->root || n->in_store || (n->placed_at == now && moves_heard(t, n));
	pthread_mutex_unlock(&t->lock);
	if (known)
		return 0;
	int r = sfs_locate(t, n, &loc);
	if (r == 0)
		r = sfs_node_verify(t, loc.dir.node ? loc.dir.node : &t->root, loc.dir.fd);
	if (r == 0)
		r = sfs_node_found(t, n, &loc, -1, &st);
	if (r < 0)
		return r == -ENOENT ? -ESTALE : r;
	pthread_mutex_lock(&t->lock);
	n->placed_at = now;
	if (loc.dir.node && loc.dir.node != n)
		loc.dir.node->placed_at = now; /* its path was checked too */
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void sfs_node_set_owned(struct sfs_table *t, struct sfs_node *n, bool owned)
{
	pthread_mutex_lock(&t->lock);
	if (!n->in_store)
		n->owned = owned;
	pthread_mutex_unlock(&t->lock);
}

void sfs_node_set_mirror(struct sfs_table *t, struct sfs_node *n, bool exists)
{
	pthread_mutex_lock(&t->lock);
	if (!n->in_store)
		n->mirror = exists;
	pthread_mutex_unlock(&t->lock);
}

void sfs_table_set_inotify(struct sfs_table *t, int inotify_fd)
{
	t->inotify_fd = inotify_fd;
}

void sfs_table_watch_set(struct sfs_table *t, struct sfs_node *n, int wd)
{
	pthread_mutex_lock(&t->lock);
	/* One watch per host inode: a stale node of the same directory
	 * must not remove it when it goes. */
	struct sfs_node *prev = wd_find(t, wd);
	if (prev && prev != n)
		wd_remove(t, prev);
	if (n->wd != wd) {
		wd_remove(t, n);
		if (t->nwatched + 1 > t->nwd_buckets / 4 * 3) {
			size_t nb = t->nwd_buckets * 2;
			struct sfs_node **b = calloc(nb, sizeof(*b));
			if (b) {
				for (size_t i = 0; i < t->nwd_buckets; i++) {
					struct sfs_node *m = t->wd_buckets[i], *next;
					for (; m; m = next) {
						next = m->wd_next;
						size_t j =
							((unsigned)m->wd * 2654435761u) & (nb - 1);
						m->wd_next = b[j];
						b[j] = m;
					}
				}
				free(t->wd_buckets);
				t->wd_buckets = b;
				t->nwd_buckets = nb;
			}
		}
		n->wd = wd;
		struct sfs_node **b = wd_bucket(t, wd);
		n->wd_next = *b;
		*b = n;
		t->nwatched++;
	}
	pthread_mutex_unlock(&t->lock);
}

struct sfs_node *sfs_table_watch_node(struct sfs_table *t, int wd)
{
	pthread_mutex_lock(&t->lock);
	struct sfs_node *n = wd_find(t, wd);
	if (n)
		n->refs++;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void sfs_table_watch_gone(struct sfs_table *t, int wd)
{
	pthread_mutex_lock(&t->lock);
	struct sfs_node *n = wd_find(t, wd);
	if (n)
		wd_remove(t, n);
	pthread_mutex_unlock(&t->lock);
}

bool sfs_node_watched(struct sfs_table *t, struct sfs_node *n)
{
	pthread_mutex_lock(&t->lock);
	bool w = n->wd != 0;
	pthread_mutex_unlock(&t->lock);
	return w;
}

struct sfs_node *sfs_table_find(struct sfs_table *t, const struct sfs_stat *st)
{
	pthread_mutex_lock(&t->lock);
	struct sfs_node *n = hash_find(t, st);
	if (n && !same_inode(n, st))
		n = NULL;
	if (n)
		n->refs++;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void sfs_node_unpin(struct sfs_table *t, struct sfs_node *n)
{
	if (!n)
		return;
	pthread_mutex_lock(&t->lock);
	node_unref(t, n);
	pthread_mutex_unlock(&t->lock);
}

void sfs_table_for_each_entry(struct sfs_table *t,
			      void (*fn)(void *ctx, uint64_t parent_id, uint64_t id,
					 const char *name),
			      void *ctx)
{
	pthread_mutex_lock(&t->lock);
	for (struct sfs_node *n = t->all.all_next; n != &t->all; n = n->all_next)
		if (n->parent && n->name)
			fn(ctx, sfs_node_id(n->parent), sfs_node_id(n), n->name);
	pthread_mutex_unlock(&t->lock);
}

void sfs_table_stats(struct sfs_table *t, struct sfs_table_stats *out)
{
	pthread_mutex_lock(&t->lock);
	out->nodes = t->nodes;
	out->anchors_cached = t->anchors;
	out->anchor_opens = t->anchor_opens;
	out->anchor_hits = t->anchor_hits;
	pthread_mutex_unlock(&t->lock);
}
