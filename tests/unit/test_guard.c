/* test_guard.c - enforcement (fusefs/guard.c) on real parts: a scratch
 * SOURCE, a policy loaded from rule text, an inode table, a store, an
 * owner and an audit log file. Each operation is turned into the right
 * policy questions: writable paths allowed, protected, immutable and
 * hidden ones denied (present or absent) with one audit record each;
 * ownership asked only when it decides, cached, forgotten; renames judged
 * name by name and through the subtrees they move, between SOURCE and the
 * store; symlink targets judged lexically and through the host's symlinks,
 * and symlink names against the directories stricter rules pass through.
 * The guard only decides: nothing on disk moves. */
#include "guard.h"
#include "config.h"
#include "policy/rules.h"
#include "scratch.h"
#include "host/store.h"
#include "tap.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char rules[] =
	"{\n"
	"  \"write\": [\"src/\", \"notes.txt\"],\n"
	"  \"private\": [\"node_modules/\"],\n"
	"  \"protect\": [\n"
	"    {\"path\": \".envrc\", \"why\": \"direnv runs it\"},\n"
	"    {\"path\": \"**/.cargo/config.toml\", \"why\": \"cargo reads it\"}\n"
	"  ],\n"
	"  \"hide\": [{\"path\": \".env\", \"why\": \"secrets\"}],\n"
	"  \"overlay\": [{\"path\": \"masked.env\", \"file\": \"env-masked\", \"why\": \"a "
	"stand-in\"}]\n"
	"}\n";

static const struct sfs_caller caller = {.pid = 4242, .uid = 1000};
static struct sfs_guard *g;
static struct sfs_table *table;
static struct sfs_store *store;
static int src;	  /* SOURCE */
static int nmdir; /* the store's mirror of node_modules/ */
static char audit_path[512];
static long audit_seen; /* bytes of the audit log already read */
static cJSON *last_record;

/* ---- SOURCE ---- */

static void make(const char *rel)
{
	int fd = openat(src, rel, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, "x\n", 2) != 2) {
		perror(rel);
		exit(1);
	}
	close(fd);
}

static void make_dir(const char *rel)
{
	if (mkdirat(src, rel, 0755) < 0) {
		perror(rel);
		exit(1);
	}
}

static bool exists(const char *rel)
{
	struct stat st;

	return fstatat(src, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static struct sfs_stat stat_of(int dirfd, const char *name)
{
	struct sfs_stat st = {0};

	if (sfs_stat_at(dirfd, name, &st) < 0)
		printf("#   stat %s: %s\n", name, strerror(errno));
	return st;
}

/* The directory REL lies in (SOURCE's, or the store's for node_modules/),
 * open; *NAME is REL's last component. */
static int open_parent(const char *rel, const char **name)
{
	const char *slash = strrchr(rel, '/');
	char dir[512];
	int at = src;

	*name = slash ? slash + 1 : rel;
	if (!strncmp(rel, "node_modules/", 13)) {
		at = nmdir;
		rel += 13;
		slash = strrchr(rel, '/');
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - rel) : 1, slash ? rel : ".");
	int fd = openat(at, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		perror(dir);
		exit(1);
	}
	return fd;
}

/* ---- the audit log ---- */

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool str_is(const cJSON *o, const char *key, const char *want)
{
	const char *v = str_of(o, key);

	return v && !strcmp(v, want);
}

/* The records appended since the last call; the last one, parsed, is
 * kept in last_record. */
static int audit_new(void)
{
	FILE *f = fopen(audit_path, "r");
	char line[8192];
	int n = 0;

	cJSON_Delete(last_record);
	last_record = NULL;
	if (!f)
		return -1;
	fseek(f, audit_seen, SEEK_SET);
	while (fgets(line, sizeof(line), f)) {
		n++;
		cJSON_Delete(last_record);
		last_record = cJSON_Parse(line);
		if (!last_record)
			printf("#   not JSON: %s", line);
	}
	audit_seen = ftell(f);
	fclose(f);
	return n;
}

static void show_record(int n)
{
	char *text = last_record ? cJSON_PrintUnformatted(last_record) : NULL;

	printf("#   %d new audit records; the last: %s\n", n, text ? text : "none");
	free(text);
}

/* One case: R is WANT (a negative errno) and exactly one audit record was
 * appended, for OPNAME at PATH (and TARGET unless NULL), with that errno. */
static bool denied(int r, int want, const char *opname, const char *path, const char *target,
		   const char *desc)
{
	int n = audit_new();
	const char *errname = want == -ENOENT ? "ENOENT" : want == -EXDEV ? "EXDEV" : "EROFS";
	bool good = n == 1 && last_record && str_is(last_record, "op", opname) &&
		    str_is(last_record, "path", path) && str_is(last_record, "errno", errname) &&
		    (target ? str_is(last_record, "target", target)
			    : !cJSON_GetObjectItem(last_record, "target"));

	if (!ok(r == want && good, "%s", desc)) {
		printf("#   returned %d (%s), expected %d\n", r, strerror(-r), want);
		show_record(n);
	}
	return r == want && good;
}

/* One case: COND holds and nothing was audited. */
static bool quiet_ok(bool cond, const char *desc)
{
	int n = audit_new();

	if (!ok(cond && n == 0, "%s", desc))
		show_record(n);
	return cond && n == 0;
}

/* One case: R is WANT and nothing was audited. */
static bool quiet(int r, int want, const char *desc)
{
	if (r != want)
		printf("#   returned %d (%s), expected %d\n", r, strerror(-r), want);
	return quiet_ok(r == want, desc);
}

static bool num_is(const cJSON *o, const char *key, double want)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);

	return cJSON_IsNumber(v) && v->valuedouble == want;
}

/* ---- calls as ops.c makes them ---- */

static int check(const char *relpath, enum sfs_op op, const char *opname)
{
	return sfs_guard_check(g, &caller, relpath, op, opname, NULL, NULL);
}

/* A check about the entry at RELPATH, its ownership asked from the host;
 * *OWNED (unless NULL) is what the subject learnt (-1: never asked). */
static int check_at(const char *relpath, enum sfs_op op, const char *opname, int *owned)
{
	const char *name;
	int dir = open_parent(relpath, &name);
	struct sfs_stat st = stat_of(dir, name);
	struct sfs_subject who = SFS_SUBJECT_AT(dir, name, &st);
	int r = sfs_guard_check(g, &caller, relpath, op, opname, NULL, &who);

	if (owned)
		*owned = who.owned;
	close(dir);
	return r;
}

static void mark(const char *relpath)
{
	const char *name;
	int dir = open_parent(relpath, &name);
	struct sfs_stat st = stat_of(dir, name);

	sfs_guard_mark_owned(g, -1, dir, name, &st, true);
	close(dir);
}

/* rename(FROM, TO, FLAGS) as sfs_rename asks it: the entries at both
 * names, NEW's st NULL when nothing is there. */
static int rename_(const char *from, const char *to, unsigned flags, unsigned *after)
{
	const char *oname, *nname;
	int odir = open_parent(from, &oname), ndir = open_parent(to, &nname);
	struct sfs_stat ost, nst;
	bool have_old = sfs_stat_at(odir, oname, &ost) == 0;
	bool have_new = sfs_stat_at(ndir, nname, &nst) == 0;
	struct sfs_subject old = SFS_SUBJECT_AT(odir, oname, have_old ? &ost : NULL);
	struct sfs_subject new = SFS_SUBJECT_AT(ndir, nname, have_new ? &nst : NULL);

	*after = 0xdead;
	int r = sfs_guard_rename(g, &caller, from, &old, to, &new, flags, after);
	close(odir);
	close(ndir);
	return r;
}

/* ---- the cases ---- */

static void test_visible(void)
{
	int fd = -2;
	bool private = true;
	int r = sfs_guard_visible(g, "src/main.c", &fd, &private);

	quiet_ok(r == 0 && fd == -1 && !private,
		 "visible: a writable file is shown, as itself, from SOURCE");
	r = sfs_guard_visible(g, ".env", &fd, &private);
	quiet(r, -ENOENT, "visible: a hidden file is ENOENT, and looking is not audited");
	r = sfs_guard_visible(g, "src/a/.env", &fd, &private);
	quiet(r, -ENOENT, "visible: ... at any depth, present or not");

	char want[256] = "", got[256] = "", path[512];
	snprintf(path, sizeof(path), "%s/env-masked", SANDY_SOURCE_OVERLAYS_DIR);
	FILE *f = fopen(path, "r");
	size_t wn = f ? fread(want, 1, sizeof(want) - 1, f) : 0;
	if (f)
		fclose(f);
	r = sfs_guard_visible(g, "masked.env", &fd, &private);
	ssize_t gn = fd >= 0 ? pread(fd, got, sizeof(got) - 1, 0) : -1;
	ok(r == 0 && fd >= 0 && wn > 0 && gn == (ssize_t)wn && !memcmp(want, got, wn),
	   "visible: an overlay path is served from the overlay file (%zd of %zu bytes alike)", gn,
	   wn);
	r = sfs_guard_visible(g, "node_modules/x/index.js", &fd, &private);
	quiet_ok(r == 0 && fd == -1 && private,
		 "visible: what is below a private directory is private");
	ok(sfs_guard_private(g, "node_modules") && sfs_guard_private(g, "src/node_modules/a") &&
		   !sfs_guard_private(g, "src/main.c"),
	   "private: the private directory and below it, at any depth, nothing else");
	ok(sfs_guard_writable(g, "src/main.c") && sfs_guard_writable(g, "node_modules/x") &&
		   sfs_guard_writable(g, "notes.txt") && !sfs_guard_writable(g, "README") &&
		   !sfs_guard_writable(g, "src/.envrc") && !sfs_guard_writable(g, ".git/config"),
	   "writable: write globs and private directories, not readonly or protected paths");
}

static void test_check(void)
{
	int owned = 0;

	int r = check_at("src/main.c", SFS_OP_WRITE, "write", &owned);
	quiet_ok(r == 0 && owned == -1,
		 "check: a write to a writable file is allowed, ownership never asked");
	quiet(check("src/new.c", SFS_OP_CREATE, "create"), 0,
	      "check: creating an absent writable file is allowed");
	if (denied(check(".envrc", SFS_OP_WRITE, "write"), -EROFS, "write", ".envrc", NULL,
		   "check: a write to a protected file: EROFS, one audit record"))
		ok(str_is(last_record, "class", "protected") &&
			   str_is(last_record, "rule", ".envrc") &&
			   str_is(last_record, "why", "direnv runs it") &&
			   str_is(last_record, "rule_file", "t.json") &&
			   num_is(last_record, "pid", 4242) && num_is(last_record, "uid", 1000),
		   "... the record names the class, the rule, its file, why, and the caller");
	else
		ok(false,
		   "... the record names the class, the rule, its file, why, and the caller");
	denied(check("src/deep/.envrc", SFS_OP_CREATE, "create"), -EROFS, "create",
	       "src/deep/.envrc", NULL,
	       "check: creating an absent protected name deeper down: EROFS");
	denied(check("src/.ENVRC", SFS_OP_CREATE, "create"), -EROFS, "create", "src/.ENVRC", NULL,
	       "check: ... in another case too");
	denied(check(".git/config", SFS_OP_WRITE, "write"), -EROFS, "write", ".git/config", NULL,
	       "check: a write to .git/config (immutable): EROFS");
	ok(str_is(last_record, "class", "immutable"), "... the record says immutable");
	denied(check("src/sub/.git/hooks/pre-commit", SFS_OP_CREATE, "create"), -EROFS, "create",
	       "src/sub/.git/hooks/pre-commit", NULL,
	       "check: creating a hook in an absent .git below a writable directory: EROFS");
	denied(check(".env", SFS_OP_WRITE, "write"), -ENOENT, "write", ".env", NULL,
	       "check: a write to a hidden file: ENOENT, audited");
	denied(check("README", SFS_OP_TRUNCATE, "truncate"), -EROFS, "truncate", "README", NULL,
	       "check: truncating a readonly file, no inode given: EROFS");
	denied(sfs_guard_check(g, &caller, "README", SFS_OP_LINK_TARGET, "link", "src/main.c",
			       NULL),
	       -EROFS, "link", "README", "src/main.c",
	       "check: the second path is recorded as the target");
	quiet(check("src/x/y", SFS_OP_MKDIR, "mkdir"), 0,
	      "check: mkdir below a write glob is allowed");
	quiet(check("README", SFS_OP_READ, "read"), 0, "check: reading a readonly file is allowed");
}

static void test_ownership(void)
{
	int owned = 0;

	make("made.o");
	make("host.o");
	denied(check_at("made.o", SFS_OP_WRITE, "write", &owned), -EROFS, "write", "made.o", NULL,
	       "owned: a readonly file not marked cannot be written");
	ok(owned == 0, "... its ownership was asked: not owned");
	mark("made.o");
	quiet(check_at("made.o", SFS_OP_WRITE, "write", &owned), 0,
	      "owned: once marked, the same write is allowed");
	ok(owned == 1, "... the subject learnt it is owned");
	denied(check_at("host.o", SFS_OP_WRITE, "write", NULL), -EROFS, "write", "host.o", NULL,
	       "owned: a file beside it that was not marked stays denied");
	quiet(check_at("made.o", SFS_OP_UNLINK, "unlink", NULL), 0,
	      "owned: the owned file may be removed");

	struct sfs_subject who = SFS_SUBJECT_AT(src, "made.o", NULL);
	struct sfs_subject other = SFS_SUBJECT_AT(src, "host.o", NULL);
	ok(sfs_guard_owned(g, &who) == 1 && sfs_guard_owned(g, &other) == 0,
	   "sfs_guard_owned: stats the entry itself when no st is given");

	/* Through a node of the table: the answer is kept in the node. */
	struct sfs_stat st = stat_of(src, "made.o"), hst = stat_of(src, "host.o");
	struct sfs_node *n =
		sfs_table_intern(table, sfs_table_root(table), "made.o", &st, false, 0);
	struct sfs_node *h =
		sfs_table_intern(table, sfs_table_root(table), "host.o", &hst, false, 0);
	struct sfs_node_info info;
	sfs_node_info(table, n, &info);
	int before = info.owned;
	struct sfs_subject by_node = SFS_SUBJECT_NODE(n);
	int r = sfs_guard_check(g, &caller, "made.o", SFS_OP_SETATTR, "chmod", NULL, &by_node);
	sfs_node_info(table, n, &info);
	quiet(r, 0, "owned: a chmod through a table node of an owned file is allowed");
	ok(before == -1 && info.owned == 1, "... and the node remembers it is owned (%d, then %d)",
	   before, info.owned);
	by_node = SFS_SUBJECT_NODE(h);
	r = sfs_guard_check(g, &caller, "host.o", SFS_OP_SETATTR, "chmod", NULL, &by_node);
	sfs_node_info(table, h, &info);
	denied(r, -EROFS, "chmod", "host.o", NULL,
	       "owned: a chmod through the node of a file not owned is denied");
	ok(info.owned == 0, "... and the node remembers it is not owned (%d)", info.owned);
	sfs_table_forget(table, n, 1);
	sfs_table_forget(table, h, 1);

	/* A protected name stays protected, whoever made the file. */
	mark(".envrc");
	denied(check_at(".envrc", SFS_OP_WRITE, "write", &owned), -EROFS, "write", ".envrc", NULL,
	       "owned: a marked file at a protected name is still denied");
	ok(owned == -1, "... its ownership was not even asked (%d)", owned);

	/* A symlink carries no mark: its ownership is recorded in the store,
	 * and forgotten when its last name goes. */
	if (symlinkat("made.o", src, "made-link") < 0)
		perror("made-link");
	mark("made-link");
	quiet(check_at("made-link", SFS_OP_UNLINK, "unlink", NULL), 0,
	      "owned: a marked symlink may be removed");
	struct sfs_stat lst = stat_of(src, "made-link");
	sfs_guard_forget_owned(g, &lst);
	denied(check_at("made-link", SFS_OP_UNLINK, "unlink", NULL), -EROFS, "unlink", "made-link",
	       NULL, "owned: forgotten (its last name went), it is no longer the agent's");
}

static void test_rename(void)
{
	unsigned after;
	int r;

	r = rename_("src/main.c", ".envrc", 0, &after);
	denied(r, -EROFS, "rename", ".envrc", "src/main.c",
	       "rename: a writable file over a protected one: EROFS, the record names both");
	r = rename_("src/main.c", "src/.envrc", 0, &after);
	denied(r, -EROFS, "rename", "src/.envrc", "src/main.c",
	       "rename: a writable file to an absent protected name: EROFS");
	ok(exists("src/main.c") && !exists("src/.envrc"), "... nothing moved on the host");

	r = rename_("src/pkg", "src/pkg2", 0, &after);
	denied(r, -EROFS, "rename", "src/pkg/sub/.envrc", "src/pkg2/sub/.envrc",
	       "rename: a directory holding a protected name deep down cannot move");
	ok(exists("src/pkg/sub/.envrc") && exists("src/pkg/lib.c") && !exists("src/pkg2"),
	   "... nothing moved on the host");
	r = rename_("src/conf", "src/.cargo", 0, &after);
	denied(r, -EROFS, "rename", "src/.cargo/config.toml", "src/conf/config.toml",
	       "rename: a directory whose entry would arrive at a protected name cannot move "
	       "there");
	ok(exists("src/conf/config.toml") && !exists("src/.cargo"),
	   "... nothing moved on the host");
	r = rename_("src/clean", "src/clean2", 0, &after);
	quiet_ok(r == 0 && after == 0,
		 "rename: a directory with nothing protected below it may move");
	ok(exists("src/clean/y/z.c") && !exists("src/clean2"),
	   "... the guard only decides: nothing moved");

	r = rename_("notes.txt", "notes.txt.bak", 0, &after);
	quiet_ok(r == 0 && after == SFS_MARK_OLD,
		 "rename: a writable file to a name no write glob covers: allowed, SFS_MARK_OLD");
	r = rename_("src/a.c", "src/b.c", 0, &after);
	quiet_ok(r == 0 && after == 0, "rename: writable to writable: allowed, nothing to mark");
	r = rename_("made.o", "made2.o", 0, &after);
	quiet_ok(r == 0 && after == 0,
		 "rename: an owned file within readonly places: allowed, already the agent's");
	denied(rename_("README", "README.bak", 0, &after), -EROFS, "rename", "README", "README.bak",
	       "rename: a readonly file the agent does not own cannot leave its name");
	denied(rename_("src/main.c", "README", 0, &after), -EROFS, "rename", "README", "src/main.c",
	       "rename: over a readonly file the agent does not own (removing it): EROFS");
	r = rename_("made.o", "notes.txt", RENAME_EXCHANGE, &after);
	quiet_ok(r == 0 && after == SFS_MARK_NEW,
		 "rename: exchanging an owned file with a writable one: SFS_MARK_NEW");
	denied(rename_("src/a.c", ".envrc", RENAME_EXCHANGE, &after), -EROFS, "rename", ".envrc",
	       "src/a.c", "rename: exchanging with a protected file: EROFS");

	if (symlinkat("sub", src, "src/lnk") < 0)
		perror("src/lnk");
	denied(rename_("src/lnk", "src/.cargo", 0, &after), -EROFS, "rename", "src/.cargo", NULL,
	       "rename: a symlink may not be named like a directory a rule protects below");
	quiet(rename_("src/a.c", "src/.cargo", 0, &after), 0,
	      "rename: ... a regular file may (nothing can be reached through it)");
	const char *name;
	int dir = open_parent("src/gone", &name);
	struct sfs_subject old = SFS_SUBJECT_AT(dir, name, NULL);
	struct sfs_subject new = SFS_SUBJECT_AT(dir, "b.c", NULL);
	r = sfs_guard_rename(g, &caller, "src/gone", &old, "src/b.c", &new, 0, &after);
	close(dir);
	quiet(r, -ENOENT, "rename: of nothing: ENOENT");
}

static void test_rename_store(void)
{
	unsigned after;
	int r;

	r = rename_("src/gen.txt", "node_modules/gen.txt", 0, &after);
	quiet_ok(r == 0 && after == SFS_INTO_STORE,
		 "store: a writable file may move into the store: SFS_INTO_STORE");
	denied(rename_(".envrc", "node_modules/envrc", 0, &after), -EROFS, "rename", ".envrc",
	       "node_modules/envrc", "store: a protected file may not leave SOURCE for it");
	denied(rename_("src/pkg", "node_modules/pkg", 0, &after), -EROFS, "rename",
	       "src/pkg/sub/.envrc", "node_modules/pkg/sub/.envrc",
	       "store: nor a directory holding a protected name");
	r = rename_("node_modules/y", "src/y", 0, &after);
	quiet(r, -EXDEV, "store: nothing of the store moves into SOURCE: EXDEV (mv copies)");
	r = rename_("src/a.c", "node_modules/y", RENAME_EXCHANGE, &after);
	quiet(r, -EXDEV, "store: nor by an exchange");
	r = rename_("node_modules/y", "node_modules/z", 0, &after);
	quiet_ok(r == 0 && after == 0, "store: within the store anything goes");
	struct stat st;
	ok(fstatat(nmdir, "y", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		   fstatat(nmdir, "z", &st, AT_SYMLINK_NOFOLLOW) < 0 && !exists("node_modules") &&
		   exists("src/gen.txt"),
	   "store: ... and nothing moved");
}

static void test_symlink(void)
{
	if (symlinkat("sub", src, "src/hostlink") < 0)
		perror("src/hostlink");
	denied(sfs_guard_symlink(g, &caller, "src/l1", "../../etc/passwd"), -EROFS, "symlink",
	       "src/l1", "../../etc/passwd",
	       "symlink: a target leaving SOURCE through '..': EROFS");
	denied(sfs_guard_symlink(g, &caller, "src/l2", "../.git/config"), -EROFS, "symlink",
	       "src/l2", "../.git/config", "symlink: a target into .git: EROFS");
	denied(sfs_guard_symlink(g, &caller, "src/l3", "../.envrc"), -EROFS, "symlink", "src/l3",
	       "../.envrc", "symlink: a target at a protected name: EROFS");
	if (symlinkat("../.cargo", src, "src/vslink") < 0)
		perror("src/vslink");
	if (symlinkat("../.cargo/z", src, "src/ghlink") < 0)
		perror("src/ghlink");
	quiet(sfs_guard_symlink(g, &caller, "src/l4", "hostlink/x"), 0,
	      "symlink: a target through a symlink in SOURCE to an allowed place is allowed");
	denied(sfs_guard_symlink(g, &caller, "src/l4b", "vslink/config.toml"), -EROFS, "symlink",
	       "src/l4b", "vslink/config.toml",
	       "symlink: a target through a symlink in SOURCE to .cargo/config.toml: EROFS");
	denied(sfs_guard_symlink(g, &caller, "src/l5", "ghlink/../config.toml"), -EROFS, "symlink",
	       "src/l5", "ghlink/../config.toml",
	       "symlink: ... also when a '..' after the symlink reaches it");
	denied(sfs_guard_symlink(g, &caller, "src/l6", "/etc/passwd"), -EROFS, "symlink", "src/l6",
	       "/etc/passwd", "symlink: an absolute target: EROFS");
	denied(sfs_guard_symlink(g, &caller, ".envrc", "src/main.c"), -EROFS, "symlink", ".envrc",
	       "src/main.c", "symlink: a link at a protected name: EROFS");
	quiet(sfs_guard_symlink(g, &caller, "src/l7", "sub/file"), 0,
	      "symlink: a plain relative target into a writable directory is allowed");
	quiet(sfs_guard_symlink(g, &caller, "src/l8", "../src/sub/../main.c"), 0,
	      "symlink: ... also up and down again, through real directories");
	ok(!exists("src/l7") && !exists("src/l8"), "symlink: the guard made nothing");
	quiet(sfs_guard_symlink(g, &caller, "node_modules/l", "/usr/lib/x"), 0,
	      "symlink: a link in the store may point anywhere");
	denied(sfs_guard_symlink(g, &caller, "src/.cargo", "sub"), -EROFS, "symlink", "src/.cargo",
	       NULL, "symlink: a harmless target, but named .cargo: EROFS");
	ok(str_is(last_record, "rule_file", "(built-in)") && str_of(last_record, "why") &&
		   strstr(str_of(last_record, "why"), "second name"),
	   "... the record says why: a second name for protected paths");

	denied(sfs_guard_symlink_name(g, &caller, "src/a/.cargo", "link"), -EROFS, "link",
	       "src/a/.cargo", NULL, "symlink name: .cargo (of **/.cargo/config.toml): EROFS");
	denied(sfs_guard_symlink_name(g, &caller, "src/.CarGo", "link"), -EROFS, "link",
	       "src/.CarGo", NULL, "symlink name: ... in any case");
	denied(sfs_guard_symlink_name(g, &caller, "src/.git", "link"), -EROFS, "link", "src/.git",
	       NULL, "symlink name: .git, always");
	quiet(sfs_guard_symlink_name(g, &caller, "src/cargo", "link"), 0,
	      "symlink name: another name is allowed");
	quiet(sfs_guard_symlink_name(g, &caller, "node_modules/.cargo", "link"), 0,
	      "symlink name: any name in the store");
}

/* A symlink's target is judged where the link is made; a rename can take
 * the link, or the directory it is in, to a place from which the same
 * target leads elsewhere, so it is judged again where it arrives. */
/* The links a change redirects (the index of SOURCE's symlinks). */
static void test_links(void)
{
	/* b -> a/../config.toml while a is absent: src/config.toml. */
	if (symlinkat("a/../config.toml", src, "src/b") < 0)
		perror("src/b");
	sfs_guard_links_host_changed(g, "src/b", -1);
	struct sfs_link_change set = {SFS_LINK_SET, "src/a", NULL, "../.cargo/x"};
	denied(sfs_guard_links_check(g, &caller, &set, "symlink"), -EROFS, "symlink", "src/a",
	       "src/b",
	       "links: a symlink that sends an earlier one to .cargo/config.toml: EROFS, "
	       "the earlier one named");
	set.target = "sub";
	quiet(sfs_guard_links_check(g, &caller, &set, "symlink"), 0,
	      "links: the same name pointing somewhere harmless is allowed");
	sfs_guard_links_done(g, &set, false);
	/* A symlink renamed to the name: the same. */
	if (symlinkat("../.cargo/x", src, "src/ghx") < 0)
		perror("src/ghx");
	sfs_guard_links_host_changed(g, "src/ghx", -1);
	struct sfs_link_change move = {SFS_LINK_MOVE, "src/ghx", "src/a", NULL};
	denied(sfs_guard_links_check(g, &caller, &move, "rename"), -EROFS, "rename", "src/ghx",
	       "src/b", "links: a symlink renamed to the name: EROFS");
	/* A directory moved so that a link inside it lands elsewhere. */
	/* l -> ../masked.env: src/masked.env there, the overlay at the root
	 * once its directory moves up. */
	if (mkdirat(src, "src/pkgm", 0755) < 0 || symlinkat("../masked.env", src, "src/pkgm/l") < 0)
		perror("src/pkgm/l");
	sfs_guard_links_host_changed(g, "src/pkgm", -1);
	struct sfs_link_change up = {SFS_LINK_MOVE, "src/pkgm", "pkgm2", NULL};
	denied(sfs_guard_links_check(g, &caller, &up, "rename"), -EROFS, "rename", "src/pkgm",
	       "src/pkgm/l",
	       "links: a directory moved up, so that its link reaches the overlay: EROFS");
	struct sfs_link_change deeper = {SFS_LINK_MOVE, "src/pkgm", "src/x/pkgm", NULL};
	quiet(sfs_guard_links_check(g, &caller, &deeper, "rename"), 0,
	      "links: moved deeper, its link stays an ordinary name: allowed");
	sfs_guard_links_done(g, &deeper, false);
	/* The index follows what was made. */
	struct sfs_link_change made = {SFS_LINK_SET, "src/c2", NULL, "b"};
	quiet(sfs_guard_links_check(g, &caller, &made, "symlink"), 0, "links: c2 -> b is allowed");
	sfs_guard_links_done(g, &made, true);
	struct sfs_link_change via = {SFS_LINK_SET, "src/a", NULL, "../.cargo/x"};
	denied(sfs_guard_links_check(g, &caller, &via, "symlink"), -EROFS, "symlink", "src/a",
	       "src/b", "links: after the index learnt of c2 -> b, the change is still refused");
	unlinkat(src, "src/b", 0);
	sfs_guard_links_host_changed(g, "src/b", -1);
	quiet(sfs_guard_links_check(g, &caller, &via, "symlink"), 0,
	      "links: b removed on the host (and heard of): nothing is redirected any more");
	sfs_guard_links_done(g, &via, false);
	unlinkat(src, "src/ghx", 0);
	unlinkat(src, "src/pkgm/l", 0);
	unlinkat(src, "src/pkgm", AT_REMOVEDIR);
	sfs_guard_links_host_changed(g, "src/ghx", -1);
	sfs_guard_links_host_changed(g, "src/pkgm", -1);
}

static void test_symlink_moved(void)
{
	unsigned after;

	make_dir("src/m");
	make_dir("src/m/n");
	quiet(sfs_guard_symlink(g, &caller, "src/m/n/l", "../../../x"), 0,
	      "moved symlink: made at src/m/n, ../../../x stays inside SOURCE (it is x)");
	if (symlinkat("../../../x", src, "src/m/n/l") < 0)
		perror("src/m/n/l");
	int r = rename_("src/m/n/l", "src/l", 0, &after);
	int n = audit_new();
	ok(r == -EROFS && n == 1,
	   "moved symlink: renamed to src/l, where ../../../x leaves SOURCE: EROFS (got %d)", r);
	r = rename_("src/m/n", "src/n", 0, &after);
	n = audit_new();
	ok(r == -EROFS && n == 1,
	   "moved symlink: ... or carried there by its directory: EROFS (got %d)", r);
	make_dir("src/o");
	r = rename_("src/m/n", "src/o/n", 0, &after);
	n = audit_new();
	ok(r == 0 && n == 0,
	   "moved symlink: carried to the same depth, where it still means x: allowed (got %d)", r);
	r = rename_("src/m/n/l", "src/o/l2", 0, &after);
	n = audit_new();
	ok(r == -EROFS && n == 1,
	   "moved symlink: renamed one level up, where it leaves SOURCE: EROFS (got %d)", r);
	int dir = openat(src, "src/m/n", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = sfs_guard_symlink_arrives(g, &caller, dir, "l", "src/m/n/l3", "link");
	n = audit_new();
	ok(r == 0 && n == 0, "linked symlink: a second name beside it is allowed (got %d)", r);
	r = sfs_guard_symlink_arrives(g, &caller, dir, "l", "src/l3", "link");
	n = audit_new();
	ok(r == -EROFS && n == 1,
	   "linked symlink: a second name where the target leaves SOURCE: EROFS (got %d)", r);
	close(dir);
}

static void test_builtin(void)
{
	int r = sfs_guard_deny_builtin(g, &caller, "src/dev", "mknod", "device nodes are refused");

	if (denied(r, -EROFS, "mknod", "src/dev", NULL,
		   "deny_builtin: EROFS on a writable path, one audit record"))
		ok(str_is(last_record, "rule_file", "(built-in)") &&
			   str_is(last_record, "why", "device nodes are refused") &&
			   str_is(last_record, "class", "writable"),
		   "... naming the built-in reason and the path's class");
	else
		ok(false, "... naming the built-in reason and the path's class");
}

static int exclusive_done;

static void *take_exclusive(void *arg)
{
	(void)arg;
	sfs_guard_lock(g, true);
	__atomic_store_n(&exclusive_done, 1, __ATOMIC_SEQ_CST);
	sfs_guard_unlock(g);
	return NULL;
}

static void test_lock(void)
{
	pthread_t t;
	struct timespec wait = {.tv_nsec = 100 * 1000 * 1000};

	sfs_guard_lock(g, false);
	sfs_guard_lock(g, false); /* shared twice: no deadlock */
	pthread_create(&t, NULL, take_exclusive, NULL);
	nanosleep(&wait, NULL);
	int during = __atomic_load_n(&exclusive_done, __ATOMIC_SEQ_CST);
	sfs_guard_unlock(g);
	sfs_guard_unlock(g);
	pthread_join(t, NULL);
	ok(during == 0 && exclusive_done == 1,
	   "lock: the exclusive lock waits for the shared ones to go");
}

static struct sfs_policy *load_policy(void)
{
	struct sfs_loader *l = sfs_loader_new(SANDY_SOURCE_RULES_DIR, SANDY_SOURCE_OVERLAYS_DIR);
	struct sfs_policy *p = NULL;
	char *err = NULL;
	int r = sfs_loader_add_buffer(l, "t.json", rules, strlen(rules), SFS_TRUST_USER, "test",
				      &err);

	if (r == 0)
		r = sfs_loader_finish(l, &p, &err);
	if (r < 0)
		printf("# cannot load rules: %s\n", err ? err : "?");
	free(err);
	sfs_loader_free(l);
	return p;
}

static void make_source(void)
{
	make_dir("src");
	make("src/main.c");
	make("src/a.c");
	make("src/gen.txt");
	make_dir("src/sub");
	make_dir("src/pkg");
	make("src/pkg/lib.c");
	make_dir("src/pkg/sub");
	make("src/pkg/sub/.envrc");
	make_dir("src/conf");
	make("src/conf/config.toml");
	make_dir("src/clean");
	make("src/clean/x.c");
	make_dir("src/clean/y");
	make("src/clean/y/z.c");
	make("README");
	make("notes.txt");
	make(".envrc");
	make(".env");
	make_dir(".git");
	make(".git/config");
}

int main(void)
{
	const char *base = scratch_dir();
	char path[512], resolved[512];
	struct sfs_audit *audit = NULL;
	struct sfs_owner *owner = NULL;
	struct sfs_stat root_st;
	char *err = NULL;

	snprintf(path, sizeof(path), "%s/src", base);
	mkdir(path, 0755);
	src = open(path, O_RDONLY | O_DIRECTORY);
	if (!realpath(path, resolved))
		snprintf(resolved, sizeof(resolved), "%s", path);
	make_source();
	snprintf(path, sizeof(path), "%s/store", base);
	if (!ok(sfs_store_open(path, resolved, src, &store, &err) == 0, "a store for SOURCE (%s)",
		err ? err : "ok"))
		return tap_done();
	nmdir = sfs_store_mirror(store, src, "node_modules", true);
	int fd = openat(nmdir, "y", O_WRONLY | O_CREAT, 0644);
	close(fd);

	struct sfs_policy *policy = load_policy();
	snprintf(audit_path, sizeof(audit_path), "%s/audit.log", base);
	int anchor_root = open(resolved, sfs_anchor_flags() & ~O_NOFOLLOW);
	sfs_stat_fd(src, &root_st);
	int r = sfs_audit_open(audit_path, &(struct sfs_audit_limits){.burst = 1000, .rate = 1000},
			       &audit);
	if (r == 0)
		r = sfs_owner_new(sfs_store_dir_fd(store), &owner);
	if (r == 0)
		r = sfs_table_new(anchor_root, &root_st, 16, &table);
	if (r == 0)
		sfs_table_set_store(table, sfs_store_tree_fd(store));
	if (!ok(policy && nmdir >= 0 && fd >= 0 && r == 0 &&
			sfs_guard_new(policy, audit, owner, table, &g, &err) == 0,
		"a guard on a real policy, audit log, owner and inode table (%s)",
		err ? err : "ok"))
		return tap_done();

	test_visible();
	test_check();
	test_ownership();
	test_rename();
	test_rename_store();
	test_symlink();
	test_links();
	test_symlink_moved();
	test_builtin();
	test_lock();

	sfs_guard_free(g);
	sfs_table_free(table);
	sfs_store_free(store);
	cJSON_Delete(last_record);
	close(nmdir);
	close(src);
	return tap_done();
}
