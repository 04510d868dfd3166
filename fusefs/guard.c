/* guard.c - see guard.h. */
#include "guard.h"
#include "host/compat.h"
#include "policy/gitshape.h"
#include "links.h"
#include "policy/symchain.h"
#include "common/path.h"
#include "common/err.h"
#include "common/util.h"


#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A directory rename whose subtrees hold more than this many entries, or
 * nest deeper, answers EXDEV: mv then copies file by file. */
#define RENAME_SCAN_MAX_ENTRIES 20000
#define RENAME_SCAN_MAX_DEPTH	64

struct overlay {
	const char *file; /* as the policy names it */
	int fd;
};

struct sfs_guard {
	struct sfs_policy *policy;
	struct sfs_owner *owner;
	struct sfs_audit *audit;
	struct sfs_table *table;
	pthread_rwlock_t mutation;
	/* Held from a change's links check to its end (sfs_guard_links_done). */
	pthread_mutex_t links_mu;
	struct overlay *overlays;
	size_t noverlays;
	/* Every symlink of SOURCE, for the links a change redirects. */
	struct sfs_links *links;
};

int sfs_guard_new(struct sfs_policy *policy, struct sfs_audit *audit, struct sfs_owner *owner,
		  struct sfs_table *table, struct sfs_guard **out, char **err)
{
	struct sfs_guard *g = calloc(1, sizeof(*g));

	*err = NULL;
	if (!g) {
		sfs_audit_close(audit);
		sfs_policy_free(policy);
		sfs_owner_free(owner);
		return -ENOMEM;
	}
	g->policy = policy;
	g->owner = owner;
	g->audit = audit;
	g->table = table;
	pthread_rwlock_init(&g->mutation, NULL);
	pthread_mutex_init(&g->links_mu, NULL);
	int lr = sfs_links_new(sfs_table_rootfd(table), &g->links);
	if (lr < 0) {
		sfs_guard_free(g);
		return lr;
	}
	size_t n = sfs_policy_rule_count(policy);
	g->overlays = calloc(n ? n : 1, sizeof(*g->overlays));
	if (!g->overlays) {
		sfs_guard_free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sfs_rule *r = sfs_policy_rule(policy, i);
		if (r->cls != SFS_CLASS_OVERLAY || !r->overlay_file || r->released_by)
			continue;
		int fd = open(r->overlay_file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			int e = err_set(
				err, errno, "cannot open overlay file '%s' (for '%s', %s:%d): %s",
				r->overlay_file, r->pattern, r->file, r->line, strerror(errno));
			sfs_guard_free(g);
			return e;
		}
		g->overlays[g->noverlays++] = (struct overlay){r->overlay_file, fd};
	}
	*out = g;
	return 0;
}

void sfs_guard_free(struct sfs_guard *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->noverlays; i++)
		close(g->overlays[i].fd);
	free(g->overlays);
	sfs_links_free(g->links);
	pthread_rwlock_destroy(&g->mutation);
	pthread_mutex_destroy(&g->links_mu);
	sfs_audit_close(g->audit);
	sfs_policy_free(g->policy);
	sfs_owner_free(g->owner);
	free(g);
}

enum sfs_class sfs_verdict_class(const struct sfs_verdict *v)
{
	/* Owned is what an inode makes of a readonly path, not the path's. */
	return v->d.cls == SFS_CLASS_OWNED ? SFS_CLASS_READONLY : v->d.cls;
}

bool sfs_verdict_private(const struct sfs_verdict *v)
{
	return sfs_verdict_class(v) == SFS_CLASS_PRIVATE;
}

bool sfs_verdict_writable(const struct sfs_verdict *v)
{
	enum sfs_class cls = sfs_verdict_class(v);

	return cls == SFS_CLASS_WRITABLE || cls == SFS_CLASS_PRIVATE;
}

int sfs_guard_view(struct sfs_guard *g, const struct sfs_verdict *v, int *overlay_fd, bool *private)
{
	enum sfs_class cls = sfs_verdict_class(v);

	*overlay_fd = -1;
	*private = cls == SFS_CLASS_PRIVATE;
	if (cls == SFS_CLASS_HIDDEN)
		return -ENOENT;
	if (cls == SFS_CLASS_OVERLAY && v->d.overlay_file) {
		for (size_t i = 0; i < g->noverlays; i++)
			if (strcmp(g->overlays[i].file, v->d.overlay_file) == 0)
				*overlay_fd = g->overlays[i].fd;
	}
	return 0;
}

int sfs_guard_visible(struct sfs_guard *g, const char *relpath, int *overlay_fd, bool *private)
{
	struct sfs_verdict v;

	sfs_guard_judge(g, relpath, SFS_OP_LOOKUP, NULL, &v);
	return sfs_guard_view(g, &v, overlay_fd, private);
}

bool sfs_guard_private(struct sfs_guard *g, const char *relpath)
{
	struct sfs_verdict v;

	sfs_guard_judge(g, relpath, SFS_OP_LOOKUP, NULL, &v);
	return sfs_verdict_private(&v);
}

bool sfs_guard_writable(struct sfs_guard *g, const char *relpath)
{
	struct sfs_verdict v;

	sfs_guard_judge(g, relpath, SFS_OP_LOOKUP, NULL, &v);
	return sfs_verdict_writable(&v);
}

int sfs_guard_owned(struct sfs_guard *g, struct sfs_subject *who)
{
	if (who->owned >= 0)
		return who->owned;
	who->owned = 0;
	if (who->node) {
		struct sfs_node_info info;
		sfs_node_info(g->table, who->node, &info);
		if (info.owned >= 0) {
			who->owned = info.owned;
			return who->owned;
		}
		cleanup_location struct sfs_location loc = {0};
		struct sfs_stat st;
		if (sfs_locate(g->table, who->node, &loc) < 0 ||
		    sfs_node_found(g->table, who->node, &loc, -1, &st) < 0)
			return 0; /* asked again next time */
		who->owned = sfs_owner_check(g->owner, loc.dir.fd, loc.name, &st);
		sfs_node_set_owned(g->table, who->node, who->owned);
	} else if (who->name) {
		struct sfs_stat st;
		if (!who->st && sfs_stat_at(who->dirfd, who->name, &st) < 0)
			return 0;
		who->owned =
			sfs_owner_check(g->owner, who->dirfd, who->name, who->st ? who->st : &st);
	}
	return who->owned;
}

void sfs_guard_mark_owned(struct sfs_guard *g, int fd, int dirfd, const char *name,
			  const struct sfs_stat *st, bool fresh)
{
	/* Unmarked (a full disk, say), the file stays writable where write
	 * globs say so and readonly elsewhere: nothing is let through. */
	sfs_owner_mark(g->owner, fd, dirfd, name, st, fresh);
}

void sfs_guard_forget_owned(struct sfs_guard *g, const struct sfs_stat *st)
{
	sfs_owner_forget(g->owner, st);
}

static int deny(struct sfs_guard *g, const struct sfs_caller *c, const char *relpath,
		const char *opname, const char *target, const struct sfs_decision *d, int err)
{
	struct sfs_audit_record rec = {
		.op = opname,
		.path = relpath,
		.target = target,
		.cls = sfs_class_name(d->cls),
		.rule_file = d->rule_file,
		.rule = d->rule_text,
		.why = d->why,
		.pid = c->pid,
		.uid = c->uid,
		.err = err,
	};
	sfs_audit_denial(g->audit, &rec);
	return -err;
}

/* The parts of a git directory (gitshape.h) that directory DIR[0..LEN) of
 * SOURCE holds, as git's access() would find them; 0 when it cannot be
 * opened (absent, or no directory). */
static unsigned gitdir_parts(int rootfd, const char *dir, size_t len)
{
	cleanup_free char *copy = strndup(dir, len);
	unsigned parts = 0;
	struct stat st;
	int fd;

	if (!copy)
		return SFS_GITDIR_HEAD | SFS_GITDIR_COMMONDIR; /* cannot tell: complete */
	fd = len ? sfs_open_beneath(rootfd, copy, O_PATH | O_DIRECTORY | O_CLOEXEC, 0)
		 : dup(rootfd);
	if (fd < 0)
		return 0;
	for (unsigned i = 0; i < SFS_GITDIR_NPARTS; i++)
		if (fstatat(fd, sfs_gitdir_part_names[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			parts |= 1u << i;
	close(fd);
	return parts;
}

static bool op_makes_name(enum sfs_op op)
{
	return op == SFS_OP_CREATE || op == SFS_OP_MKDIR || op == SFS_OP_MKNOD ||
	       op == SFS_OP_SYMLINK || op == SFS_OP_LINK_TARGET || op == SFS_OP_RENAME_TO;
}

int sfs_gitdir_judge(int rootfd, const char *relpath, enum sfs_op op, struct sfs_decision *out)
{
	size_t start = 0, len = strlen(relpath);

	if (op == SFS_OP_LOOKUP || op == SFS_OP_READ)
		return 0;
	while (start < len) {
		const char *slash = memchr(relpath + start, '/', len - start);
		size_t end = slash ? (size_t)(slash - relpath) : len;
		size_t dirlen = start ? start - 1 : 0;
		const char *name = relpath + start;
		size_t n = end - start;

		/* config, hooks/...: what git runs, if the directory above
		 * is a git directory already; and the last name, made now:
		 * would it complete one? The host is asked once for both. */
		bool command = sfs_gitdir_command_name(name, n);
		unsigned part = end == len && op_makes_name(op) ? sfs_gitdir_part(name, n) : 0;
		unsigned have = command || part ? gitdir_parts(rootfd, relpath, dirlen) : 0;
		if (command && sfs_gitdir_complete(have)) {
			sfs_gitdir_refuse(out, false);
			return 1;
		}
		if (part && !(have & part) && sfs_gitdir_complete(have | part)) {
			sfs_gitdir_refuse(out, true);
			return 1;
		}
		start = end + 1;
	}
	return 0;
}

/* Whether the agent owns WHO, when that is known without asking the host:
 * 1 or 0, else -1. */
static int owned_known(struct sfs_guard *g, struct sfs_subject *who)
{
	struct sfs_node_info info;

	if (!who)
		return 0;
	if (who->owned < 0 && who->node) {
		sfs_node_info(g->table, who->node, &info);
		who->owned = info.owned;
	}
	return who->owned;
}

void sfs_guard_judge(struct sfs_guard *g, const char *relpath, enum sfs_op op,
		     struct sfs_subject *who, struct sfs_verdict *v)
{
	v->path = relpath;
	v->op = op;
	/* Ownership already known decides at once: the policy's answer
	 * without it, then with it, is this one. */
	sfs_policy_decide_owned(g->policy, relpath, op, owned_known(g, who) > 0, &v->d);
}

int sfs_guard_conclude(struct sfs_guard *g, const struct sfs_caller *c, struct sfs_verdict *v,
		       const char *opname, const char *target, struct sfs_subject *who)
{
	struct sfs_decision *d = &v->d;

	if (!d->allowed && d->owner_decides && who && sfs_guard_owned(g, who) > 0)
		sfs_policy_decide_owned(g->policy, v->path, v->op, true, d);
	/* The store is no git directory to the host's git. */
	if (d->allowed && (d->cls == SFS_CLASS_PRIVATE ||
			   !sfs_gitdir_judge(sfs_table_rootfd(g->table), v->path, v->op, d)))
		return 0;
	return deny(g, c, v->path, opname, target, d, d->err ? d->err : EROFS);
}

int sfs_guard_check(struct sfs_guard *g, const struct sfs_caller *c, const char *relpath,
		    enum sfs_op op, const char *opname, const char *target, struct sfs_subject *who)
{
	struct sfs_verdict v;

	sfs_guard_judge(g, relpath, op, who, &v);
	return sfs_guard_conclude(g, c, &v, opname, target, who);
}

/* A refusal by a built-in reason WHY, answered ERR. */
static int deny_builtin(struct sfs_guard *g, const struct sfs_caller *c, const char *relpath,
			const char *opname, const char *target, const char *why, int err)
{
	struct sfs_decision d;

	sfs_policy_decide(g->policy, relpath, SFS_OP_LOOKUP, &d);
	d.rule_file = "(built-in)";
	d.rule_text = "";
	d.why = why;
	return deny(g, c, relpath, opname, target, &d, err);
}

int sfs_guard_deny_builtin(struct sfs_guard *g, const struct sfs_caller *c, const char *relpath,
			   const char *opname, const char *why)
{
	return deny_builtin(g, c, relpath, opname, NULL, why, EROFS);
}

int sfs_guard_deny_judged(struct sfs_guard *g, const struct sfs_caller *c,
			  const struct sfs_verdict *v, const char *opname, const char *why)
{
	struct sfs_decision d = v->d;

	d.cls = sfs_verdict_class(v);
	d.rule_file = "(built-in)";
	d.rule_text = "";
	d.why = why;
	return deny(g, c, v->path, opname, NULL, &d, EROFS);
}

/* sfs_guard_symlink_name, PRIVATE saying whether LINKPATH is private. */
static int symlink_name(struct sfs_guard *g, const struct sfs_caller *c, const char *linkpath,
			bool private, const char *opname)
{
	const char *slash = strrchr(linkpath, '/');
	const char *name = slash ? slash + 1 : linkpath;
	struct sfs_decision d;

	/* A symlink in the store gives nothing of SOURCE a second name. */
	if (private)
		return 0;
	if (!sfs_policy_shadow_name(g->policy, name, strlen(name), &d))
		return 0;
	return deny(g, c, linkpath, opname, NULL, &d, EROFS);
}

int sfs_guard_symlink_name(struct sfs_guard *g, const struct sfs_caller *c, const char *linkpath,
			   const char *opname)
{
	return symlink_name(g, c, linkpath, sfs_guard_private(g, linkpath), opname);
}

int sfs_guard_symlink_name_judged(struct sfs_guard *g, const struct sfs_caller *c,
				  const struct sfs_verdict *v, const char *opname)
{
	return symlink_name(g, c, v->path, sfs_verdict_private(v), opname);
}

/* lstat of PREFIX beneath ROOTFD one component at a time, for a path
 * longer than one system call takes. Every directory on the way was asked
 * about before (and was no symlink), so O_NOFOLLOW only guards races. */
static int stat_by_walk(int rootfd, const char *prefix, struct stat *st)
{
	cleanup_free char *path = strdup(prefix);
	int cur = -1, r = 0;

	if (!path)
		return -ENOMEM;
	char *comp = path, *slash;
	while ((slash = strchr(comp, '/'))) {
		*slash = '\0';
		int fd = openat(cur < 0 ? rootfd : cur, comp, sfs_anchor_flags());
		if (fd < 0)
			r = -errno;
		if (cur >= 0)
			close(cur);
		if (r < 0)
			return r;
		cur = fd;
		comp = slash + 1;
	}
	r = fstatat(cur < 0 ? rootfd : cur, comp, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	if (cur >= 0)
		close(cur);
	return r;
}

/* Whether PREFIX is a symlink in SOURCE now, and its target
 * (sfs_symlink_probe). Each prefix is asked before the ones below it, so a
 * symlink is found at the first component that is one, and the resolution
 * goes on from its target: none before it is followed. */
static int probe_symlink(void *ctx, const char *prefix, char *target, size_t cap)
{
	struct sfs_guard *g = ctx;
	int rootfd = sfs_table_rootfd(g->table);
	struct stat st;
	int r = fstatat(rootfd, prefix, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;

	if (r == -ENAMETOOLONG && strlen(prefix) >= PATH_MAX)
		r = stat_by_walk(rootfd, prefix, &st);
	/* Absent, or a name no filesystem holds (longer than NAME_MAX). */
	if (r == -ENOENT || r == -ENOTDIR || r == -ENAMETOOLONG)
		return 0;
	if (r < 0 || !S_ISLNK(st.st_mode))
		return r;
	/* Every directory on the way was just found to be none. */
	ssize_t n = readlinkat(rootfd, prefix, target, cap);
	if (n < 0)
		return errno == ENOENT || errno == EINVAL ? 0 : -errno;
	if ((size_t)n >= cap)
		return -ENAMETOOLONG;
	target[n] = '\0';
	return 1;
}

int sfs_guard_symlink_target(struct sfs_guard *g, const struct sfs_caller *c, const char *linkpath,
			     const char *target, const char *opname)
{
	struct sfs_decision d;

	sfs_policy_check_symlink(g->policy, linkpath, target, probe_symlink, g, &d);
	if (!d.allowed)
		return deny(g, c, linkpath, opname, target, &d, d.err ? d.err : EROFS);
	return 0;
}

int sfs_guard_symlink_judged(struct sfs_guard *g, const struct sfs_caller *c,
			     const struct sfs_verdict *v, const char *target)
{
	const char *linkpath = v->path;
	bool private = sfs_verdict_private(v);
	int r = sfs_guard_symlink_target(g, c, linkpath, target, "symlink");
	struct sfs_decision d;

	if (r == 0)
		r = symlink_name(g, c, linkpath, private, "symlink");
	/* git's access() follows a link: HEAD -> refs/heads/main counts. */
	if (r == 0 && !private &&
	    sfs_gitdir_judge(sfs_table_rootfd(g->table), linkpath, SFS_OP_SYMLINK, &d))
		r = deny(g, c, linkpath, "symlink", target, &d, EROFS);
	return r;
}

int sfs_guard_symlink(struct sfs_guard *g, const struct sfs_caller *c, const char *linkpath,
		      const char *target)
{
	struct sfs_verdict v;

	sfs_guard_judge(g, linkpath, SFS_OP_SYMLINK, NULL, &v);
	return sfs_guard_symlink_judged(g, c, &v, target);
}

/* SOURCE as it will be once a change is made (below, with the links a
 * change redirects). */
struct after_change {
	struct sfs_guard *g;
	const struct sfs_link_change *ch;
};

static int probe_after(void *ctx, const char *prefix, char *target, size_t cap);

/* The symlink NAME in DIRFD arrives at LINKPATH by CH (a rename; NULL: a
 * second name, SOURCE otherwise as it is): its target is judged there, in
 * SOURCE as it will be once CH is made. A rename that takes a directory
 * over one holding a looping link, or exchanges two, is judged by where
 * its links will lead, not by what it replaces. */
static int symlink_arrives(struct sfs_guard *g, const struct sfs_caller *c, int dirfd,
			   const char *name, const char *linkpath, const char *opname,
			   const struct sfs_link_change *ch)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target));
	struct after_change a = {g, ch};
	struct sfs_decision d;

	if (n < 0)
		return -errno;
	if ((size_t)n == sizeof(target))
		return -ENAMETOOLONG;
	target[n] = '\0';
	if (!ch)
		return sfs_guard_symlink_target(g, c, linkpath, target, opname);
	sfs_policy_check_symlink(g->policy, linkpath, target, probe_after, &a, &d);
	if (!d.allowed)
		return deny(g, c, linkpath, opname, target, &d, d.err ? d.err : EROFS);
	return 0;
}

int sfs_guard_symlink_arrives(struct sfs_guard *g, const struct sfs_caller *c, int dirfd,
			      const char *name, const char *linkpath, const char *opname)
{
	return symlink_arrives(g, c, dirfd, name, linkpath, opname, NULL);
}

struct scan {
	struct sfs_guard *g;
	const struct sfs_caller *c;
	const struct sfs_link_change *ch; /* the rename */
	bool leaving;			  /* into the store: only what leaves SOURCE is judged */
	char from[PATH_REL_MAX];
	char to[PATH_REL_MAX];
	size_t entries;
};

/* SUBJECT moves from FROM to TO: a directory as if removed and made
 * (with the ownership of the directory itself), anything else renamed.
 * LEAVING: TO is in the store, which takes anything. */
static int check_one_move(struct sfs_guard *g, const struct sfs_caller *c, const char *from,
			  const char *to, bool is_dir, bool leaving, struct sfs_subject *subject)
{
	int r = sfs_guard_check(g, c, from, is_dir ? SFS_OP_RMDIR : SFS_OP_RENAME_FROM, "rename",
				to, subject);
	if (r == 0 && !leaving)
		r = sfs_guard_check(g, c, to, is_dir ? SFS_OP_MKDIR : SFS_OP_RENAME_TO, "rename",
				    from, subject);
	return r;
}

static bool is_symlink(DIR *dp, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type == DT_LNK;
	return fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/* A directory the rename moves that the daemon cannot list or search: what
 * it holds cannot be judged at its new place, so the rename is refused, as
 * the host said, and the audit log says why. Only a daemon without
 * CAP_DAC_OVERRIDE meets one (the user's own, mode 0 or r-- or -wx). */
static int refuse_unlistable(struct scan *s, int err)
{
	if (err != EACCES && err != EPERM)
		return -err;
	return deny_builtin(s->g, s->c, s->from, "rename", s->to,
			    "a directory the rename moves cannot be listed and searched by the "
			    "daemon, so what it holds cannot be judged where it would arrive",
			    err);
}

/* Checks that every entry below FROM may leave it and arrive below TO. */
static int scan_subtree(struct scan *s, int at_fd, size_t from_len, size_t to_len, int depth)
{
	if (depth > RENAME_SCAN_MAX_DEPTH)
		return -EXDEV;
	int fd = openat(at_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return refuse_unlistable(s, errno);
	DIR *dp = fdopendir(fd);
	if (!dp) {
		close_keep_errno(fd);
		return -errno;
	}
	int r = 0;
	while (r == 0) {
		errno = 0;
		struct dirent *de = readdir(dp);
		if (!de) {
			/* Entries not read are entries not judged. */
			if (errno)
				r = refuse_unlistable(s, errno);
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++s->entries > RENAME_SCAN_MAX_ENTRIES) {
			r = -EXDEV;
			break;
		}
		size_t nl = strlen(de->d_name), from_sub = from_len, to_sub = to_len;
		r = path_append(s->from, sizeof(s->from), &from_sub, de->d_name, nl);
		if (r == 0)
			r = path_append(s->to, sizeof(s->to), &to_sub, de->d_name, nl);
		if (r < 0)
			break;
		bool is_dir = de->d_type == DT_DIR;
		if (de->d_type == DT_UNKNOWN) {
			struct stat st;
			is_dir = fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				 S_ISDIR(st.st_mode);
		}
		struct sfs_subject entry = SFS_SUBJECT_AT(dirfd(dp), de->d_name, NULL);
		r = check_one_move(s->g, s->c, s->from, s->to, is_dir, s->leaving, &entry);
		if (r == 0 && !s->leaving && is_symlink(dp, de))
			r = symlink_arrives(s->g, s->c, dirfd(dp), de->d_name, s->to, "rename",
					    s->ch);
		if (r == 0 && is_dir) {
			int sub = openat(dirfd(dp), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				r = errno == ENOENT ? 0 : refuse_unlistable(s, errno);
			} else {
				r = scan_subtree(s, sub, from_sub, to_sub, depth + 1);
				close(sub);
			}
		}
		s->from[from_len] = '\0';
		s->to[to_len] = '\0';
	}
	closedir(dp);
	return r;
}

/* SUBJECT (in directory SUBJECT->dirfd) moves from FROM to TO, with what
 * is below it. */
static int check_move(struct sfs_guard *g, const struct sfs_caller *c, const char *from,
		      const char *to, bool leaving, struct sfs_subject *subject,
		      const struct sfs_link_change *ch)
{
	bool is_dir = S_ISDIR(subject->st->st.st_mode);
	int r = check_one_move(g, c, from, to, is_dir, leaving, subject);

	if (r < 0 || !is_dir)
		return r;
	struct scan *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->g = g;
	s->c = c;
	s->ch = ch;
	s->leaving = leaving;
	snprintf(s->from, sizeof(s->from), "%s", from);
	snprintf(s->to, sizeof(s->to), "%s", to);
	int fd = openat(subject->dirfd, subject->name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = refuse_unlistable(s, errno);
	} else {
		r = scan_subtree(s, fd, strlen(s->from), strlen(s->to), 0);
		close(fd);
	}
	free(s);
	return r;
}

/* A writable file taken from FROM to TO (V: their verdicts), a name
 * where only ownership lets it in: the agent could copy it there and
 * remove the original, so it is its own there (`sed -i.bak` moves the
 * original to the backup name). */
static bool taken_as_own(struct sfs_guard *g, const struct sfs_verdict *from,
			 const struct sfs_verdict *to, struct sfs_subject *subject)
{
	if (S_ISDIR(subject->st->st.st_mode) || !sfs_policy_ownership(g->policy) ||
	    !sfs_verdict_writable(from) || sfs_verdict_writable(to) ||
	    sfs_guard_owned(g, subject) > 0)
		return false;
	subject->owned = 1;
	return true;
}

int sfs_guard_rename(struct sfs_guard *g, const struct sfs_caller *c, const char *oldpath,
		     struct sfs_subject *old, const char *newpath, struct sfs_subject *new,
		     unsigned int flags, unsigned *after)
{
	struct sfs_verdict oldv, newv;

	sfs_guard_judge(g, oldpath, SFS_OP_LOOKUP, NULL, &oldv);
	sfs_guard_judge(g, newpath, SFS_OP_LOOKUP, NULL, &newv);
	return sfs_guard_rename_judged(g, c, &oldv, old, &newv, new, flags, after);
}

int sfs_guard_rename_judged(struct sfs_guard *g, const struct sfs_caller *c,
			    const struct sfs_verdict *oldv, struct sfs_subject *old,
			    const struct sfs_verdict *newv, struct sfs_subject *new,
			    unsigned int flags, unsigned *after)
{
	const char *oldpath = oldv->path, *newpath = newv->path;
	bool exchange = flags & RENAME_EXCHANGE;
	bool old_private = sfs_verdict_private(oldv);
	bool new_private = sfs_verdict_private(newv);

	*after = 0;
	if (!old->st)
		return -ENOENT;
	if (old_private && new_private)
		return 0;
	/* The store and SOURCE are two trees. What leaves SOURCE for the
	 * store is judged as removed (cargo makes target/ as a temporary
	 * directory renamed into place); nothing of the store comes into
	 * SOURCE (mv then copies, and each copy is judged). */
	if (old_private || (new_private && exchange))
		return -EXDEV;
	if (new_private) {
		*after = SFS_INTO_STORE;
		return check_move(g, c, oldpath, newpath, true, old, NULL);
	}
	if (taken_as_own(g, oldv, newv, old))
		*after |= SFS_MARK_OLD;
	struct sfs_link_change ch = {.kind = exchange ? SFS_LINK_EXCHANGE : SFS_LINK_MOVE,
				     .path = oldpath,
				     .to = newpath};
	int r = check_move(g, c, oldpath, newpath, false, old, &ch);
	if (r == 0 && new->st && !exchange)
		r = sfs_guard_check(g, c, newpath,
				    S_ISDIR(new->st->st.st_mode) ? SFS_OP_RMDIR : SFS_OP_UNLINK,
				    "rename", oldpath, new);
	if (r == 0 && S_ISLNK(old->st->st.st_mode))
		r = symlink_name(g, c, newpath, new_private, "rename");
	if (r == 0 && S_ISLNK(old->st->st.st_mode))
		r = symlink_arrives(g, c, old->dirfd, old->name, newpath, "rename", &ch);
	if (r == 0 && exchange) {
		if (!new->st)
			return -ENOENT;
		if (taken_as_own(g, newv, oldv, new))
			*after |= SFS_MARK_NEW;
		r = check_move(g, c, newpath, oldpath, false, new, &ch);
		if (r == 0 && S_ISLNK(new->st->st.st_mode))
			r = symlink_name(g, c, oldpath, old_private, "rename");
		if (r == 0 && S_ISLNK(new->st->st.st_mode))
			r = symlink_arrives(g, c, new->dirfd, new->name, oldpath, "rename", &ch);
	}
	return r;
}

void sfs_guard_lock(struct sfs_guard *g, bool exclusive)
{
	if (exclusive)
		pthread_rwlock_wrlock(&g->mutation);
	else
		pthread_rwlock_rdlock(&g->mutation);
}

int sfs_guard_start(struct sfs_guard *g)
{
	return sfs_links_start(g->links);
}

void sfs_guard_unlock(struct sfs_guard *g)
{
	pthread_rwlock_unlock(&g->mutation);
}

/* ---- the links a change redirects -------------------------------------- */

static const struct sfs_rule rule_links_overflow = {
	.cls = SFS_CLASS_PROTECTED,
	.file = "(built-in)",
	.key = "symlink",
	.index = 5,
	.pattern = "",
	.why = "SOURCE holds more symlinks than sandyfs keeps track of, so the links this change "
	       "would redirect cannot all be judged",
};

/* PATH's place before CH, when CH moves it: *OUT (in BUF) and 1; 0 when
 * CH does not move it; -1 when CH removes it. */
static int place_before(const struct sfs_link_change *ch, const char *path, char *buf, size_t cap,
			const char **out)
{
	const char *rest;

	switch (ch->kind) {
	case SFS_LINK_SET:
		return 0;
	case SFS_LINK_REMOVE:
		return path_below(path, ch->path) ? -1 : 0;
	case SFS_LINK_MOVE:
		if ((rest = path_below(path, ch->to))) {
			if ((size_t)snprintf(buf, cap, "%s%s%s", ch->path, *rest ? "/" : "",
					     rest) >= cap)
				return -1;
			*out = buf;
			return 1;
		}
		return path_below(path, ch->path) ? -1 : 0;
	case SFS_LINK_EXCHANGE:
		for (int side = 0; side < 2; side++) {
			const char *from = side ? ch->to : ch->path, *to = side ? ch->path : ch->to;
			if ((rest = path_below(path, to))) {
				if ((size_t)snprintf(buf, cap, "%s%s%s", from, *rest ? "/" : "",
						     rest) >= cap)
					return -1;
				*out = buf;
				return 1;
			}
		}
		return 0;
	}
	return 0;
}

static int probe_after(void *ctx, const char *prefix, char *target, size_t cap)
{
	const struct after_change *a = ctx;
	char buf[PATH_REL_MAX];
	const char *real = prefix;

	if (a->ch->kind == SFS_LINK_SET && !strcmp(prefix, a->ch->path)) {
		if (strlen(a->ch->target) >= cap)
			return -ENAMETOOLONG;
		strcpy(target, a->ch->target);
		return 1;
	}
	int r = place_before(a->ch, prefix, buf, sizeof(buf), &real);
	if (r < 0)
		return 0; /* gone once the change is made */
	return probe_symlink(a->g, real, target, cap);
}

/* Where the link at PATH will be once CH is made (in BUF), or NULL. */
static const char *place_after(const struct sfs_link_change *ch, const char *path, char *buf,
			       size_t cap)
{
	const char *rest;

	switch (ch->kind) {
	case SFS_LINK_SET:
		return path;
	case SFS_LINK_REMOVE:
		return path_below(path, ch->path) ? NULL : path;
	case SFS_LINK_MOVE:
	case SFS_LINK_EXCHANGE:
		for (int side = 0; side < (ch->kind == SFS_LINK_EXCHANGE ? 2 : 1); side++) {
			const char *from = side ? ch->to : ch->path, *to = side ? ch->path : ch->to;
			if ((rest = path_below(path, from))) {
				if ((size_t)snprintf(buf, cap, "%s%s%s", to, *rest ? "/" : "",
						     rest) >= cap)
					return NULL;
				return buf;
			}
		}
		/* Replaced by what moves there. */
		if (ch->kind == SFS_LINK_MOVE && path_below(path, ch->to))
			return NULL;
		return path;
	}
	return path;
}

int sfs_guard_links_check(struct sfs_guard *g, const struct sfs_caller *c,
			  const struct sfs_link_change *ch, const char *opname)
{
	const char *changed[2] = {ch->path, ch->to};
	size_t m = ch->to ? 2 : 1, n = 0;
	struct sfs_link *v = NULL;
	struct after_change a = {g, ch};
	char buf[PATH_REL_MAX];

	pthread_mutex_lock(&g->links_mu);
	int r = sfs_links_affected(g->links, changed, m, &v, &n);

	if (r == -EOVERFLOW) {
		struct sfs_decision d = {0};
		sfs_symlink_refuse(&d, &rule_links_overflow);
		pthread_mutex_unlock(&g->links_mu);
		return deny(g, c, ch->path, opname, ch->to, &d, EROFS);
	}
	if (r < 0) {
		pthread_mutex_unlock(&g->links_mu);
		return r;
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		const char *at = place_after(ch, v[i].path, buf, sizeof(buf));
		if (!at)
			continue;
		struct sfs_decision d = {.allowed = true};
		sfs_policy_check_symlink_target(g->policy, at, v[i].target, probe_after, &a, &d);
		/* The change is refused, named with the link it would
		 * redirect to where the policy says no. */
		if (!d.allowed)
			r = deny(g, c, ch->path, opname, v[i].path, &d, EROFS);
	}
	sfs_links_release(v, n);
	if (r < 0)
		pthread_mutex_unlock(&g->links_mu);
	return r;
}

void sfs_guard_links_done(struct sfs_guard *g, const struct sfs_link_change *ch, bool made)
{
	if (!made) {
		pthread_mutex_unlock(&g->links_mu);
		return;
	}
	switch (ch->kind) {
	case SFS_LINK_SET:
		sfs_links_set(g->links, ch->path, ch->target);
		break;
	case SFS_LINK_REMOVE:
		sfs_links_remove(g->links, ch->path);
		break;
	case SFS_LINK_MOVE:
		sfs_links_move(g->links, ch->path, ch->to);
		break;
	case SFS_LINK_EXCHANGE:
		sfs_links_exchange(g->links, ch->path, ch->to);
		break;
	}
	pthread_mutex_unlock(&g->links_mu);
}

void sfs_guard_links_host_changed(struct sfs_guard *g, const char *relpath, int parentfd)
{
	/* Under the links lock: a change judged meanwhile would see the
	 * index between forgetting RELPATH and reading it again. */
	pthread_mutex_lock(&g->links_mu);
	sfs_links_host_changed(g->links, relpath, parentfd);
	pthread_mutex_unlock(&g->links_mu);
}
