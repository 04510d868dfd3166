/* gitreach.c - see gitreach.h. Runs once, before the mount serves
 * anything, and for `sandyfs explain` and `rules`. */
#include "gitreach.h"
#include "common/path.h"
#include "common/err.h"
#include "common/util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* git stops following includes at this depth (config.c, MAX_INCLUDE_DEPTH). */
#define INCLUDE_DEPTH_MAX 10
/* The kernel follows no more symlinks than this in one path. */
#define LINK_HOPS_MAX 40

/* How git uses a setting's value. */
enum kind {
	CMD,	   /* a shell command: its words that are paths */
	PATHNAME,  /* a file or directory git reads */
	FSMONITOR, /* a hook's path, unless a boolean */
	ALIAS,	   /* a shell command when it starts with '!' */
	HELPER,	   /* a credential helper: a command when '!' or a path */
	SMTP,	   /* a program when absolute */
	PAGER,	   /* a command, unless a boolean */
	UPDATE,	   /* a shell command when it starts with '!' */
};

/* SECTION.SUB.VAR: SUB NULL for none, "*" for any; VAR "*" for any. */
struct setting {
	const char *section, *sub, *var;
	enum kind kind;
};

/* The settings whose value git runs or reads by itself (git-config(1)). */
static const struct setting settings[] = {
	{"core", NULL, "fsmonitor", FSMONITOR},
	{"core", NULL, "editor", CMD},
	{"core", NULL, "pager", CMD},
	{"core", NULL, "askpass", CMD},
	{"core", NULL, "sshcommand", CMD},
	{"core", NULL, "gitproxy", CMD},
	{"core", NULL, "excludesfile", PATHNAME},
	{"core", NULL, "attributesfile", PATHNAME},
	{"sequence", NULL, "editor", CMD},
	{"diff", NULL, "external", CMD},
	{"diff", "*", "textconv", CMD},
	{"diff", "*", "command", CMD},
	{"merge", "*", "driver", CMD},
	{"filter", "*", "clean", CMD},
	{"filter", "*", "smudge", CMD},
	{"filter", "*", "process", CMD},
	{"credential", NULL, "helper", HELPER},
	{"credential", "*", "helper", HELPER},
	{"gpg", NULL, "program", CMD},
	{"gpg", "*", "program", CMD},
	{"gpg", "ssh", "allowedsignersfile", PATHNAME},
	{"gpg", "ssh", "defaultkeycommand", CMD},
	{"alias", NULL, "*", ALIAS},
	{"pager", NULL, "*", PAGER},
	{"browser", "*", "cmd", CMD},
	{"browser", "*", "path", CMD},
	{"man", "*", "cmd", CMD},
	{"man", "*", "path", CMD},
	{"difftool", "*", "cmd", CMD},
	{"difftool", "*", "path", CMD},
	{"mergetool", "*", "cmd", CMD},
	{"mergetool", "*", "path", CMD},
	{"sendemail", NULL, "smtpserver", SMTP},
	{"sendemail", "*", "smtpserver", SMTP},
	{"sendemail", NULL, "tocmd", CMD},
	{"sendemail", NULL, "cccmd", CMD},
	{"sendemail", NULL, "sendmailcmd", CMD},
	{"sendemail", "*", "tocmd", CMD},
	{"sendemail", "*", "cccmd", CMD},
	{"sendemail", "*", "sendmailcmd", CMD},
	{"uploadpack", NULL, "packobjectshook", CMD},
	{"remote", "*", "uploadpack", CMD},
	{"remote", "*", "receivepack", CMD},
	{"submodule", "*", "update", UPDATE},
	{"interactive", NULL, "difffilter", CMD},
	{"init", NULL, "templatedir", PATHNAME},
	{"http", NULL, "sslcainfo", PATHNAME},
	{"http", NULL, "sslcapath", PATHNAME},
	{"http", "*", "sslcainfo", PATHNAME},
	{"http", "*", "sslcapath", PATHNAME},
};

struct reach {
	struct sfs_policy *p;
	const char *source;  /* resolved */
	const char *workdir; /* the work tree's top, where git runs commands; NULL: bare */
	const char *home;    /* NULL: none */
	char **err;
	int failed;
	int files; /* configuration files read, includes counted */
};

/* PATH (absolute, or relative to directory BASE; "~/" is the home)
 * normalised lexically into OUT. */
static int resolve(const struct reach *r, const char *base, const char *path, char *out,
		   size_t size)
{
	char joined[PATH_MAX * 2];
	int n;

	if (path[0] == '~' && path[1] == '/') {
		if (!r->home)
			return -ENOENT;
		n = snprintf(joined, sizeof(joined), "%s/%s", r->home, path + 2);
	} else if (path[0] == '/') {
		n = snprintf(joined, sizeof(joined), "%s", path);
	} else {
		if (!base)
			return -ENOENT;
		n = snprintf(joined, sizeof(joined), "%s/%s", base, path);
	}
	if (n < 0 || (size_t)n >= sizeof(joined))
		return -ENAMETOOLONG;
	n = path_normalise(joined, out, size);
	return n < 0 ? n : 0;
}

/* Whether REL has a component named .git (already immutable by name,
 * and with --private-git the agent's own, in the store). */
static bool under_dotgit(const char *rel)
{
	for (const char *c = rel; *c;) {
		size_t l = strcspn(c, "/");
		if (l == 4 && strncasecmp(c, ".git", 4) == 0)
			return true;
		c += l;
		if (*c == '/')
			c++;
	}
	return false;
}

int sfs_git_protect_path(struct sfs_policy *p, const char *source, const char *abs,
			 const char *why, char **err)
{
	const char *rel = path_below(abs, source);

	if (!rel || !*rel || under_dotgit(rel))
		return 0;
	int e = sfs_policy_add_immutable(p, rel, why);
	if (e < 0)
		err_set(err, -e, "cannot protect '%s', which git reaches: %s", rel, strerror(-e));
	return e;
}

static int protect(struct reach *r, const char *abs, const char *why)
{
	return sfs_git_protect_path(r->p, r->source, abs, why, r->err);
}

/* Resolves PATH from BASE and protects it, because the setting KEY in
 * FILE does what WHY says (KEY "": FILE is itself what WHY says). */
static int protect_named(struct reach *r, const char *base, const char *path, const char *why,
			 const char *key, const char *file)
{
	char abs[PATH_MAX];
	cleanup_free char *text = NULL;

	if (resolve(r, base, path, abs, sizeof(abs)) < 0 || !path_below(abs, r->source))
		return 0;
	if ((*key ? asprintf(&text, "%s in %s %s", key, file, why)
		  : asprintf(&text, "%s %s", file, why)) < 0)
		return -ENOMEM;
	return protect(r, abs, text);
}

static const char why_program[] = "names this program: git on the host runs it by itself";
static const char why_file[] = "names this file: git on the host reads it";
static const char why_include[] = "includes this file: git on the host reads it as its own "
				  "configuration, present or absent";
static const char why_config[] = "is a configuration file git on the host reads";

static bool is_boolean(const char *v)
{
	static const char *const words[] = {"true", "false", "yes", "no", "on", "off", "1", "0", ""};

	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (!strcasecmp(v, words[i]))
			return true;
	return false;
}

/* The words of the shell command CMD that name paths (with a '/'), each
 * resolved from the work tree's top, where git runs its commands, and
 * protected. Quotes and operators only separate words here: a word
 * too many is protected rather than one missed. */
static int protect_command(struct reach *r, const char *cmd, const char *key, const char *file)
{
	cleanup_free char *copy = strdup(cmd);
	char *save = NULL;
	int e = 0;

	if (!copy)
		return -ENOMEM;
	for (char *w = strtok_r(copy, " \t\n;|&()<>'\"`=", &save); w && e == 0;
	     w = strtok_r(NULL, " \t\n;|&()<>'\"`=", &save)) {
		if (!strchr(w, '/') || strchr(w, '$'))
			continue;
		e = protect_named(r, r->workdir, w, why_program, key, file);
	}
	return e;
}

/* Which setting KEY (libgit2's form: section and variable in lower case,
 * the subsection as written) is, or NULL. */
static const struct setting *setting_of(const char *key)
{
	const char *dot1 = strchr(key, '.'), *dot2 = strrchr(key, '.');

	if (!dot1)
		return NULL;
	size_t slen = (size_t)(dot1 - key);
	bool has_sub = dot2 > dot1;
	const char *sub = dot1 + 1;
	size_t sublen = has_sub ? (size_t)(dot2 - sub) : 0;
	const char *var = dot2 + 1;

	for (size_t i = 0; i < ARRAY_SIZE(settings); i++) {
		const struct setting *s = &settings[i];

		if (strlen(s->section) != slen || strncasecmp(key, s->section, slen))
			continue;
		if (!s->sub ? has_sub
			    : !has_sub || (strcmp(s->sub, "*") &&
					   (strlen(s->sub) != sublen || strncmp(sub, s->sub, sublen))))
			continue;
		if (strcmp(s->var, "*") && strcasecmp(var, s->var))
			continue;
		return s;
	}
	return NULL;
}

static int read_config(struct reach *r, const char *file, int depth);

struct entry_ctx {
	struct reach *r;
	const char *file;
	char dir[PATH_MAX];
	int depth;
};

static bool is_include(const char *key)
{
	size_t n = strlen(key);

	return !strcasecmp(key, "include.path") ||
	       (!strncasecmp(key, "includeif.", 10) && n > 15 && !strcasecmp(key + n - 5, ".path"));
}

static int entry_cb(const git_config_entry *e, void *payload)
{
	struct entry_ctx *c = payload;
	struct reach *r = c->r;
	const char *v = e->value ? e->value : "";
	int rc = 0;

	/* What the included files set is read with them, below. */
	if (e->include_depth > 0)
		return 0;
	if (is_include(e->name)) {
		char abs[PATH_MAX];
		/* Present or absent, whatever the condition: a condition
		 * that does not hold today may hold tomorrow. */
		rc = protect_named(r, c->dir, v, why_include, e->name, c->file);
		if (rc == 0 && resolve(r, c->dir, v, abs, sizeof(abs)) == 0)
			rc = read_config(r, abs, c->depth + 1);
		return rc < 0 ? (r->failed = rc, -1) : 0;
	}
	const struct setting *s = setting_of(e->name);
	if (!s)
		return 0;
	switch (s->kind) {
	case PATHNAME:
		rc = protect_named(r, r->workdir, v, why_file, e->name, c->file);
		break;
	case FSMONITOR:
		if (!is_boolean(v))
			rc = protect_command(r, v, e->name, c->file);
		break;
	case PAGER:
		if (!is_boolean(v))
			rc = protect_command(r, v, e->name, c->file);
		break;
	case ALIAS:
	case UPDATE:
		if (v[0] == '!')
			rc = protect_command(r, v + 1, e->name, c->file);
		break;
	case HELPER:
		if (v[0] == '!')
			rc = protect_command(r, v + 1, e->name, c->file);
		else if (strchr(v, '/'))
			rc = protect_command(r, v, e->name, c->file);
		break;
	case SMTP:
		if (v[0] == '/')
			rc = protect_command(r, v, e->name, c->file);
		break;
	case CMD:
		rc = protect_command(r, v, e->name, c->file);
		break;
	}
	return rc < 0 ? (r->failed = rc, -1) : 0;
}

/* FILE, its settings and what it includes, to INCLUDE_DEPTH_MAX. The file
 * itself is protected when it lies in SOURCE (a user whose home is the
 * project has their ~/.gitconfig there). */
static int read_config(struct reach *r, const char *path, int depth)
{
	char file[PATH_MAX];
	struct entry_ctx c = {.r = r, .file = file, .depth = depth};
	git_config *cfg = NULL;
	struct stat st;

	if (resolve(r, NULL, path, file, sizeof(file)) < 0)
		return 0;
	int e = protect_named(r, NULL, file, why_config, "", file);

	if (e < 0 || depth > INCLUDE_DEPTH_MAX || r->files > 64)
		return e;
	if (stat(file, &st) < 0 || !S_ISREG(st.st_mode))
		return 0; /* absent: nothing to read (and protected above if ours) */
	r->files++;
	snprintf(c.dir, sizeof(c.dir), "%.*s", (int)path_dirlen(file), file);
	/* A file git cannot parse makes git stop before it runs anything;
	 * what it would include is then nothing. */
	if (git_config_open_ondisk(&cfg, file) < 0)
		return 0;
	r->failed = 0;
	if (git_config_foreach(cfg, entry_cb, &c) < 0 && r->failed)
		e = r->failed;
	git_config_free(cfg);
	return e;
}

/* The hooks directory's symlinks: each hop of each chain that lies in
 * SOURCE, and where it finally lands. */
static int protect_hook_links(struct reach *r, const char *hooks)
{
	DIR *d = opendir(hooks);
	struct dirent *de;
	int e = 0;

	if (!d)
		return 0;
	while (e == 0 && (de = readdir(d))) {
		char cur[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
		cleanup_free char *why = NULL;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(cur, sizeof(cur), "%s/%s", hooks, de->d_name) >= (int)sizeof(cur) ||
		    lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
			continue;
		if (asprintf(&why, "the hook '%s' links here: git on the host runs it",
			     de->d_name) < 0)
			return -ENOMEM;
		for (int hop = 0; e == 0 && hop < LINK_HOPS_MAX; hop++) {
			ssize_t n = readlink(cur, target, sizeof(target) - 1);
			char dir[PATH_MAX];

			if (n < 0)
				break;
			target[n] = '\0';
			snprintf(dir, sizeof(dir), "%.*s", (int)path_dirlen(cur), cur);
			if (resolve(r, dir, target, next, sizeof(next)) < 0)
				break;
			e = protect(r, next, why);
			if (e < 0 || lstat(next, &st) < 0 || !S_ISLNK(st.st_mode)) {
				char real[PATH_MAX];
				/* A directory link on the way leads elsewhere. */
				if (e == 0 && realpath(next, real))
					e = protect(r, real, why);
				break;
			}
			snprintf(cur, sizeof(cur), "%s", next);
		}
	}
	closedir(d);
	return e;
}

int sfs_git_protect_reach(struct sfs_policy *p, const char *source, git_repository *repo,
			  char **err)
{
	const char *home = getenv("SANDY_USER_HOME");
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *sys = getenv("GIT_CONFIG_SYSTEM");
	const char *global = getenv("GIT_CONFIG_GLOBAL");
	char path[PATH_MAX], hooks[PATH_MAX];
	git_config *cfg = NULL;
	int e = 0;

	if (!home || home[0] != '/')
		home = getenv("HOME");
	struct reach r = {
		.p = p,
		.source = source,
		.workdir = git_repository_workdir(repo),
		.home = home && home[0] == '/' ? home : NULL,
		.err = err,
	};
	if (!getenv("GIT_CONFIG_NOSYSTEM"))
		e = read_config(&r, sys && *sys ? sys : "/etc/gitconfig", 0);
	if (e == 0 && global && *global) {
		e = read_config(&r, global, 0);
	} else if (e == 0 && r.home) {
		if (xdg && xdg[0] == '/')
			snprintf(path, sizeof(path), "%s/git/config", xdg);
		else
			snprintf(path, sizeof(path), "%s/.config/git/config", r.home);
		e = read_config(&r, path, 0);
		snprintf(path, sizeof(path), "%s/.gitconfig", r.home);
		if (e == 0)
			e = read_config(&r, path, 0);
	}
	snprintf(path, sizeof(path), "%s/config", git_repository_commondir(repo));
	if (e == 0)
		e = read_config(&r, path, 0);
	snprintf(path, sizeof(path), "%s/config.worktree", git_repository_path(repo));
	if (e == 0)
		e = read_config(&r, path, 0);
	if (e < 0)
		return e;

	/* The hooks git runs: core.hooksPath's, present or absent (in a work
	 * tree, where the agent could make it), else the common gitdir's. */
	const char *hp = NULL;
	snprintf(hooks, sizeof(hooks), "%s/hooks", git_repository_commondir(repo));
	if (git_repository_config_snapshot(&cfg, repo) == 0) {
		if (git_config_get_string(&hp, cfg, "core.hooksPath") == 0 && hp && *hp &&
		    resolve(&r, r.workdir ? r.workdir : git_repository_path(repo), hp, path,
			    sizeof(path)) == 0) {
			snprintf(hooks, sizeof(hooks), "%s", path);
			if (r.workdir)
				e = protect(&r, hooks, "core.hooksPath: git runs the hooks found here");
		}
		git_config_free(cfg);
	}
	return e < 0 ? e : protect_hook_links(&r, hooks);
}
