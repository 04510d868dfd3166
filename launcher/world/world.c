/* world.c - see world.h. */

#include "world.h"

#include <cJSON.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

/* The biggest host file sandy copies or rewrites (settings, memory file,
 * git config, credentials, an SSH key). */
#define MAX_COPY (4u << 20)

/* Rewrites an agent's settings TEXT (read from PATH, NULL when the host has
 * none) with the agent's own sandbox switched off: the container is the
 * sandbox, and an agent that tries to build its own inside one without the
 * privileges for it fails. */
typedef int (*sandbox_off_fn)(const char *text, const char *path, char **out);

struct agent_kind {
	const char *name;
	const char *package;  /* its npm package, which an image installs */
	const char *dir;      /* its configuration directory in $HOME */
	const char *settings; /* in DIR: replaced by a generated copy */
	sandbox_off_fn sandbox_off;
	const char *memory;	    /* in DIR: the user's memory file, plus sandy's note */
	bool memory_imports;	    /* the memory file may import another with @PATH */
	const char *shown[3];	    /* more of DIR, shown read-only when present */
	const char *credentials[3]; /* relative to $HOME, copied into a new home */
	/* Its documented variables, passed when set on the host: names, and
	 * prefixes ending in '_' (NULL-terminated). */
	const char *const *env;
	/* Variables that are another service's credentials, passed only when
	 * SWITCH (one of ENV) selects that service: the cloud keys of a
	 * provider the agent is told to use. */
	const struct env_switch *switches;
};

struct env_switch {
	const char *name;
	const char *const *env;
};

/* Claude Code (its environment variables page: keys, endpoints, models,
 * provider selection, timeouts, telemetry and updater switches). */
static const char *const claude_env[] = {
	"ANTHROPIC_",
	"CLAUDE_CODE_",
	"DISABLE_AUTOUPDATER",
	"DISABLE_TELEMETRY",
	"DISABLE_ERROR_REPORTING",
	"DISABLE_BUG_COMMAND",
	"DISABLE_COST_WARNINGS",
	"DISABLE_NON_ESSENTIAL_MODEL_CALLS",
	"DISABLE_PROMPT_CACHING_",
	"DISABLE_PROMPT_CACHING",
	"API_TIMEOUT_MS",
	"BASH_DEFAULT_TIMEOUT_MS",
	"BASH_MAX_TIMEOUT_MS",
	"BASH_MAX_OUTPUT_LENGTH",
	"MAX_THINKING_TOKENS",
	"MAX_MCP_OUTPUT_TOKENS",
	"MCP_TIMEOUT",
	"MCP_TOOL_TIMEOUT",
	"ENABLE_TOOL_SEARCH",
	"USE_BUILTIN_RIPGREP",
	"CLOUD_ML_REGION",
	"VERTEX_REGION_",
	NULL,
};
/* Amazon Bedrock's and Vertex AI's credentials and project, for the
 * provider Claude Code is switched to. */
static const char *const bedrock_env[] = {
	"AWS_REGION",	     "AWS_ACCESS_KEY_ID",	 "AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", NULL,
};
static const char *const vertex_env[] = {"GOOGLE_CLOUD_PROJECT", NULL};
static const struct env_switch claude_switches[] = {
	{"CLAUDE_CODE_USE_BEDROCK", bedrock_env},
	{"CLAUDE_CODE_USE_VERTEX", vertex_env},
	{NULL, NULL},
};
/* Codex CLI: its key and OpenAI's endpoint, organisation and project, and
 * Azure OpenAI's key. Not CODEX_HOME: the agent's home is sandy's. */
static const char *const codex_env[] = {
	"CODEX_API_KEY",
	"OPENAI_API_KEY",
	"OPENAI_BASE_URL",
	"OPENAI_ORGANIZATION",
	"OPENAI_PROJECT",
	"AZURE_OPENAI_API_KEY",
	NULL,
};
/* Gemini CLI: its key and model, Google's key, and the Vertex AI
 * selection with its project and location; the endpoints of Google's
 * GenAI SDK. Not GEMINI_SANDBOX: the container is the sandbox. */
static const char *const gemini_env[] = {
	"GEMINI_API_KEY",
	"GEMINI_MODEL",
	"GOOGLE_API_KEY",
	"GOOGLE_GENAI_USE_VERTEXAI",
	"GOOGLE_CLOUD_PROJECT",
	"GOOGLE_CLOUD_LOCATION",
	"GOOGLE_GEMINI_BASE_URL",
	"GOOGLE_VERTEX_BASE_URL",
	NULL,
};

static int json_sandbox_off(const char *text, const char *path, const char *const *keys,
			    char **out);

/* Claude Code: "sandbox": {"enabled": false}. */
static int claude_sandbox_off(const char *text, const char *path, char **out)
{
	static const char *const keys[] = {"sandbox", "enabled", NULL};
	return json_sandbox_off(text, path, keys, out);
}

/* Gemini CLI: "tools": {"sandbox": false}. */
static int gemini_sandbox_off(const char *text, const char *path, char **out)
{
	static const char *const keys[] = {"tools", "sandbox", NULL};
	return json_sandbox_off(text, path, keys, out);
}

static int codex_sandbox_off(const char *text, const char *path, char **out);

static const struct agent_kind agents[] = {
	{
		.name = "claude",
		.package = "@anthropic-ai/claude-code",
		.dir = ".claude",
		.settings = "settings.json",
		.sandbox_off = claude_sandbox_off,
		.memory = "CLAUDE.md",
		.memory_imports = true,
		.shown = {"commands", "agents"},
		.credentials = {".claude/.credentials.json", ".claude.json"},
		.env = claude_env,
		.switches = claude_switches,
	},
	{
		.name = "codex",
		.package = "@openai/codex",
		.dir = ".codex",
		.settings = "config.toml",
		.sandbox_off = codex_sandbox_off,
		.memory = "AGENTS.md",
		.shown = {"prompts"},
		.credentials = {".codex/auth.json"},
		.env = codex_env,
	},
	{
		.name = "gemini",
		.package = "@google/gemini-cli",
		.dir = ".gemini",
		.settings = "settings.json",
		.sandbox_off = gemini_sandbox_off,
		.memory = "GEMINI.md",
		.memory_imports = true,
		.shown = {"commands"},
		.credentials = {".gemini/oauth_creds.json", ".gemini/google_accounts.json"},
		.env = gemini_env,
	},
};

/* What every agent gets when set on the host, besides its own variables
 * (agent_kind.env): proxies and what a terminal program needs. Nothing
 * else of the host's environment reaches the command. */
static const char *const env_allowlist[] = {
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
	"no_proxy",   "LANG",	     "LC_ALL",	 "TZ",	       "COLORTERM",
};

/* Names of SSH keys that are usually a person's own, used everywhere they
 * go; a key for the sandbox should be one made for it. */
static const char *const personal_keys[] = {
	"id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "identity", "id_ed25519_sk", "id_ecdsa_sk",
};

/* Whether the host's NAME=VALUE entry is one of LIST's. */
static bool env_listed(const char *entry, const char *const *list)
{
	size_t n = strcspn(entry, "=");

	for (size_t i = 0; list && list[i]; i++) {
		size_t m = strlen(list[i]);
		bool prefix = m && list[i][m - 1] == '_';
		if (prefix ? n > m && !strncmp(entry, list[i], m)
			   : n == m && !strncmp(entry, list[i], m))
			return true;
	}
	return false;
}

/* A switch is on when set to anything but "", "0" or "false". */
static bool env_on(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") && strcasecmp(v, "false");
}

/* The agent's own variables, and its switched-on providers' credentials. */
static int pass_agent_env(struct world *w, const struct agent_kind *a)
{
	int r = 0;

	for (char **e = environ; r == 0 && *e; e++) {
		bool pass = env_listed(*e, a->env);
		for (const struct env_switch *s = a->switches; !pass && s && s->name; s++)
			pass = env_on(s->name) && env_listed(*e, s->env);
		if (pass)
			r = strv_push(&w->env, *e);
	}
	return r;
}

static const struct agent_kind *agent_kind(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(agents); i++)
		if (!strcmp(agents[i].name, name))
			return &agents[i];
	return NULL;
}

bool world_agent_known(const char *name)
{
	return agent_kind(name) != NULL;
}

const char *world_agent_package(const char *name)
{
	const struct agent_kind *a = agent_kind(name);
	return a ? a->package : NULL;
}

bool world_env_arg_valid(const char *arg)
{
	size_t n = strcspn(arg, "=");

	if (n == 0 || (arg[0] >= '0' && arg[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = arg[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return false;
	}
	return true;
}

const char *world_user_home(const struct host_user *u)
{
	const char *h = getenv("HOME");
	struct stat st;

	/* $HOME only when it is the user's: `runuser` and `su` without a
	 * login keep the caller's. */
	if (!u->via_sudo && h && h[0] == '/' && stat(h, &st) == 0 && st.st_uid == u->uid)
		return h;
	return u->home;
}

/* Files and directories sandy makes for the user are the user's, also when
 * sandy runs as root on its behalf. NAME "" is DIRFD itself. */
static int give_to_user(int dirfd, const char *name, const struct host_user *u)
{
	if (geteuid() != 0 || u->uid == 0)
		return 0;
	int r = *name ? fchownat(dirfd, name, u->uid, u->gid, AT_SYMLINK_NOFOLLOW)
		      : fchown(dirfd, u->uid, u->gid);
	return r < 0 ? -errno : 0;
}

/* DIRFD/NAME as a directory of the user's, made when missing, never
 * through a symlink: an fd on it, or -errno. */
static int open_user_subdir(int dirfd, const char *name, const struct host_user *u)
{
	if (mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = give_to_user(fd, "", u);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* mkdir -p of PATH (absolute) as the user's; existing directories are
 * kept as they are. */
static int make_user_dirs(const char *path, const struct host_user *u)
{
	char buf[PATH_MAX];

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(buf, 0700) == 0) {
			int r = give_to_user(AT_FDCWD, buf, u);
			if (r < 0)
				return r;
		} else if (errno != EEXIST) {
			return -errno;
		}
		*p = c;
		if (c == '\0')
			return 0;
	}
}

char *world_config_dir(const struct host_user *u)
{
	const char *env = getenv("SANDY_CONFIG_DIR");
	const char *xdg = u->via_sudo ? NULL : getenv("XDG_CONFIG_HOME");
	const char *home = world_user_home(u);

	if (env && *env)
		return strdup(env);
	if (xdg && xdg[0] == '/')
		return sandy_asprintf("%s/sandy", xdg);
	return home ? sandy_asprintf("%s/.config/sandy", home) : NULL;
}

int world_export_config_dir(const struct host_user *u)
{
	const char *env = getenv("SANDY_CONFIG_DIR");
	const char *home = world_user_home(u);

	/* sandyfs reads the user's git configuration as the user's git
	 * will (gitreach.h): from the user's home, also under sudo. */
	if (home && !getenv("SANDY_USER_HOME") && setenv("SANDY_USER_HOME", home, 1) < 0)
		return -errno;
	if (env && *env)
		return 0;
	cleanup_free char *dir = world_config_dir(u);
	if (!dir)
		return world_user_home(u) ? -ENOMEM : 0;
	return setenv("SANDY_CONFIG_DIR", dir, 1) < 0 ? -errno : 0;
}

int world_data_dir(const struct host_user *user, const char *sub, char **out)
{
	const char *env = getenv("SANDY_DATA_DIR");
	const char *xdg = user->via_sudo ? NULL : getenv("XDG_DATA_HOME");
	const char *home = world_user_home(user);

	if (env && env[0] == '/')
		*out = sandy_asprintf("%s/%s", env, sub);
	else if (xdg && xdg[0] == '/')
		*out = sandy_asprintf("%s/sandy/%s", xdg, sub);
	else if (home)
		*out = sandy_asprintf("%s/.local/share/sandy/%s", home, sub);
	else {
		sandy_error("cannot find a place for sandy's data: uid %u has no home "
			    "directory; set SANDY_DATA_DIR",
			    (unsigned)user->uid);
		return -ENOENT;
	}
	return *out ? 0 : -ENOMEM;
}

int world_make_data_dir(const struct host_user *user, const char *sub, char **out)
{
	int r = world_data_dir(user, sub, out);

	if (r == 0 && (r = make_user_dirs(*out, user)) < 0)
		sandy_error("cannot create directory '%s': %s", *out, strerror(-r));
	return r;
}

/* Reads PATH whole; 0 with *OUT NULL when it does not exist or is a
 * device. */
static int read_optional(const char *path, char **out)
{
	struct stat st;

	*out = NULL;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISCHR(st.st_mode))
		return 0; /* /dev/null: set up as "none" */
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size > (off_t)MAX_COPY)
		return -EFBIG;
	return sandy_read_file(path, MAX_COPY, out);
}

/* Writes DATA to DIR/NAME (DIR an fd) as a new file of the user's with
 * MODE, never through a symlink; replaces what is there. */
static int write_user_file(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
			   const struct host_user *u)
{
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	cleanup_fd int fd =
		openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	int r = sandy_write_all(fd, data, len);
	if (r < 0)
		return r;
	if (fchmod(fd, mode) < 0)
		return -errno;
	if ((r = give_to_user(fd, "", u)) < 0)
		return r;
	return close(steal_fd(&fd)) < 0 ? -errno : 0;
}

static int json_sandbox_off(const char *text, const char *path, const char *const *keys, char **out)
{
	cJSON *root = text ? cJSON_Parse(text) : cJSON_CreateObject();

	if (!cJSON_IsObject(root)) {
		sandy_error("cannot use the agent settings '%s': %s; fix or move the file", path,
			    root ? "not a JSON object" : "not valid JSON");
		cJSON_Delete(root);
		return -EINVAL;
	}
	cJSON *obj = root;
	size_t n = 0;
	while (keys[n])
		n++;
	for (size_t i = 0; i + 1 < n && obj; i++) {
		cJSON *next = cJSON_GetObjectItemCaseSensitive(obj, keys[i]);
		if (!cJSON_IsObject(next)) {
			cJSON_DeleteItemFromObjectCaseSensitive(obj, keys[i]);
			next = cJSON_AddObjectToObject(obj, keys[i]);
		}
		obj = next;
	}
	if (obj)
		cJSON_DeleteItemFromObjectCaseSensitive(obj, keys[n - 1]);
	bool ok = obj && cJSON_AddFalseToObject(obj, keys[n - 1]) != NULL;
	char *text_out = ok ? cJSON_Print(root) : NULL;
	*out = text_out ? sandy_asprintf("%s\n", text_out) : NULL;
	free(text_out);
	cJSON_Delete(root);
	return *out ? 0 : -ENOMEM;
}

/* TOML: sandbox_mode is a top-level key, so it goes before the first table
 * header; a sandbox_mode line already there is dropped (a key may not be
 * given twice). */
static int codex_sandbox_off(const char *text, const char *path, char **out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool in_table = false;

	(void)path;
	if (!f)
		return -ENOMEM;
	fputs("sandbox_mode = \"danger-full-access\" # set by sandy: the container is the "
	      "sandbox\n",
	      f);
	for (const char *line = text; line && *line;) {
		size_t n = strcspn(line, "\n");
		const char *p = line + strspn(line, " \t");
		if (*p == '[')
			in_table = true;
		bool drop = !in_table && !strncmp(p, "sandbox_mode", 12) &&
			    strchr(" \t=", p[12]) != NULL;
		if (!drop)
			fprintf(f, "%.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

/* What world_build works with. */
struct build {
	const struct world_spec *spec;
	const struct agent_kind *agent;
	const char *host_home; /* the user's home on the host */
	char *agent_home;      /* the agent's home on the host */
	struct world *w;
};

/* Adds a mount of SOURCE at the target FMT names, and makes that target
 * when it lies in a directory sandy keeps on the host (the agent's home;
 * the session directory without a container), so that no runtime creates
 * it there as root. */
static int add_mount(struct build *b, const char *source, bool readonly, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Makes the target TARGET (inside) of a mount of SOURCE in a host
 * directory that sandy keeps, walking it one name at a time without
 * following a symlink: the agent owns its home and may have planted one. */
static int make_target(struct build *b, const char *target, const char *source)
{
	const char *home = b->w->home, *rel, *root;
	size_t hl = strlen(home), rl = strlen(b->spec->run);
	struct stat src;

	if (!strncmp(target, home, hl) && target[hl] == '/') {
		rel = target + hl + 1;
		root = b->agent_home;
	} else if (!strcmp(b->spec->run, b->spec->session_dir) &&
		   !strncmp(target, b->spec->run, rl) && target[rl] == '/') {
		rel = target + rl + 1;
		root = b->spec->session_dir;
	} else {
		return 0; /* in the container's own filesystem */
	}
	if (stat(source, &src) < 0)
		return -errno;
	cleanup_fd int dir = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	char name[PATH_MAX];
	while (*rel) {
		size_t n = strcspn(rel, "/");
		if (n >= sizeof(name))
			return -ENAMETOOLONG;
		memcpy(name, rel, n);
		name[n] = '\0';
		rel += n + (rel[n] == '/');
		bool last = *rel == '\0';
		struct stat st;
		if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISLNK(st.st_mode)) {
				sandy_error(
					"cannot mount '%s' at '%s': a symlink is in the way (in "
					"'%s'); remove it",
					source, target, root);
				return -ELOOP;
			}
		} else if (errno != ENOENT) {
			return -errno;
		} else if (!last || S_ISDIR(src.st_mode)) {
			if (mkdirat(dir, name, 0700) < 0)
				return -errno;
			int r = give_to_user(dir, name, b->spec->user);
			if (r < 0)
				return r;
		} else {
			int r = write_user_file(dir, name, "", 0, 0600, b->spec->user);
			if (r < 0)
				return r;
		}
		if (last)
			return 0;
		int next = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return -errno;
		close(dir);
		dir = next;
	}
	return 0;
}

static int add_mount(struct build *b, const char *source, bool readonly, const char *fmt, ...)
{
	struct world *w = b->w;
	va_list ap;
	char *target;

	va_start(ap, fmt);
	int n = vasprintf(&target, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	struct world_mount *m = realloc(w->mounts, (w->n_mounts + 1) * sizeof(*m));
	if (!m) {
		free(target);
		return -ENOMEM;
	}
	w->mounts = m;
	m[w->n_mounts] = (struct world_mount){strdup(source), target, readonly};
	if (!m[w->n_mounts].source) {
		free(target);
		return -ENOMEM;
	}
	w->n_mounts++;
	int r = make_target(b, target, source);
	if (r < 0 && r != -ELOOP)
		sandy_error("cannot prepare the mount of '%s' at '%s': %s", source, target,
			    strerror(-r));
	return r;
}

static int setenv_world(struct world *w, const char *name, const char *value)
{
	return strv_pushf(&w->env, "%s=%s", name, value);
}

/* The agent's home: made on first use, with the host's credentials copied
 * in, so that a login the user already has works and one made inside
 * lasts. */
static int make_agent_home(struct build *b)
{
	const struct host_user *u = b->spec->user;
	cleanup_free char *homes = NULL;
	struct stat st;
	int r = world_data_dir(u, "home", &homes);

	if (r < 0)
		return r;
	b->agent_home = sandy_asprintf("%s/%s", homes, b->agent->name);
	if (!b->agent_home)
		return -ENOMEM;
	if (lstat(b->agent_home, &st) == 0) {
		if (!S_ISDIR(st.st_mode) || st.st_uid != u->uid) {
			sandy_error("cannot use the agent's home '%s': not a directory owned by "
				    "uid %u",
				    b->agent_home, (unsigned)u->uid);
			return -EPERM;
		}
		return 0;
	}
	if ((r = make_user_dirs(homes, u)) < 0) {
		sandy_error("cannot create '%s': %s", homes, strerror(-r));
		return r;
	}
	/* Made under a temporary name and renamed: a home that exists is
	 * one whose credentials were copied. */
	cleanup_free char *tmp = sandy_asprintf("%s/.new-%s", homes, b->agent->name);
	if (!tmp)
		return -ENOMEM;
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		return -errno;
	cleanup_fd int dir = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || (r = give_to_user(AT_FDCWD, tmp, u)) < 0) {
		r = dir < 0 ? -errno : r;
		sandy_error("cannot create the agent's home '%s': %s", tmp, strerror(-r));
		return r;
	}
	const char *hh = b->host_home;
	for (size_t i = 0; hh && i < ARRAY_SIZE(b->agent->credentials); i++) {
		const char *rel = b->agent->credentials[i];
		if (!rel)
			break;
		cleanup_free char *from = sandy_asprintf("%s/%s", hh, rel);
		cleanup_free char *data = NULL;
		if (!from)
			return -ENOMEM;
		r = read_optional(from, &data);
		if (r < 0) {
			sandy_note("not copying the credentials '%s' into the agent's home: %s",
				   from, strerror(-r));
			continue;
		}
		if (!data)
			continue;
		const char *slash = strrchr(rel, '/');
		cleanup_fd int sub = -1;
		if (slash) {
			cleanup_free char *name = strndup(rel, (size_t)(slash - rel));
			if (!name)
				return -ENOMEM;
			if ((sub = open_user_subdir(dir, name, u)) < 0)
				return sub;
		}
		r = write_user_file(slash ? sub : dir, slash ? slash + 1 : rel, data, strlen(data),
				    0600, u);
		if (r < 0) {
			sandy_error("cannot copy '%s' into the agent's home: %s", from,
				    strerror(-r));
			return r;
		}
		sandy_note("copied '%s' into the agent's home '%s'", from, b->agent_home);
	}
	if (rename(tmp, b->agent_home) < 0) {
		r = -errno;
		sandy_error("cannot create the agent's home '%s': %s", b->agent_home, strerror(-r));
		return r;
	}
	return 0;
}

/* The settings and the memory file: generated into the session directory
 * and shown read-only over the agent's own. */
static int agent_config(struct build *b, int sdir)
{
	const struct agent_kind *a = b->agent;
	const struct host_user *u = b->spec->user;
	const char *home = b->w->home;
	cleanup_free char *host_dir =
		b->host_home ? sandy_asprintf("%s/%s", b->host_home, a->dir) : NULL;
	cleanup_free char *path = NULL, *text = NULL, *out = NULL;
	int r;

	if (b->host_home && !host_dir)
		return -ENOMEM;
	if (host_dir && !(path = sandy_asprintf("%s/%s", host_dir, a->settings)))
		return -ENOMEM;
	if (path && (r = read_optional(path, &text)) < 0) {
		sandy_error("cannot read the agent settings '%s': %s", path, strerror(-r));
		return r;
	}
	if ((r = a->sandbox_off(text, path, &out)) < 0)
		return r;
	if ((r = write_user_file(sdir, "agent-settings", out, strlen(out), 0444, u)) < 0)
		return r;
	cleanup_free char *settings = sandy_asprintf("%s/agent-settings", b->spec->session_dir);
	if (!settings ||
	    (r = add_mount(b, settings, true, "%s/%s/%s", home, a->dir, a->settings)) < 0)
		return settings ? r : -ENOMEM;

	cleanup_free char *mpath = host_dir ? sandy_asprintf("%s/%s", host_dir, a->memory) : NULL;
	cleanup_free char *mine = NULL;
	if (host_dir && !mpath)
		return -ENOMEM;
	if (mpath && (r = read_optional(mpath, &mine)) < 0) {
		sandy_error("cannot read the agent's memory file '%s': %s", mpath, strerror(-r));
		return r;
	}
	cleanup_free char *policy_inside = sandy_asprintf("%s/POLICY.md", b->spec->run);
	cleanup_free char *memory = sandy_asprintf(
		"%s%s# Working in sandy's sandbox\n\n"
		"You run inside sandy: the project is served through a write policy and\n"
		"this machine is a container. Before you change any file, read\n"
		"%s: it says what you may write here, what is\n"
		"private, where shared folders are and how git works. A write that fails\n"
		"with \"Read-only file system\" is that policy, not a fault.\n%s%s%s",
		mine ? mine : "", mine && *mine ? "\n\n" : "", policy_inside,
		a->memory_imports ? "\n@" : "", a->memory_imports ? policy_inside : "",
		a->memory_imports ? "\n" : "");
	if (!policy_inside || !memory)
		return -ENOMEM;
	if ((r = write_user_file(sdir, "agent-memory", memory, strlen(memory), 0444, u)) < 0)
		return r;
	cleanup_free char *mfile = sandy_asprintf("%s/agent-memory", b->spec->session_dir);
	if (!mfile || (r = add_mount(b, mfile, true, "%s/%s/%s", home, a->dir, a->memory)) < 0)
		return mfile ? r : -ENOMEM;

	for (size_t i = 0; host_dir && i < ARRAY_SIZE(a->shown) && a->shown[i]; i++) {
		cleanup_free char *src = sandy_asprintf("%s/%s", host_dir, a->shown[i]);
		struct stat st;
		if (!src)
			return -ENOMEM;
		if (stat(src, &st) < 0)
			continue;
		if ((r = add_mount(b, src, true, "%s/%s/%s", home, a->dir, a->shown[i])) < 0)
			return r;
	}
	return 0;
}

/* Appends the file PATH to F when it exists. */
static int append_file(FILE *f, const char *path)
{
	cleanup_free char *text = NULL;
	int r = read_optional(path, &text);

	if (r < 0) {
		sandy_error("cannot read the git config '%s': %s", path, strerror(-r));
		return r;
	}
	if (text) {
		fputs(text, f);
		if (*text && text[strlen(text) - 1] != '\n')
			fputc('\n', f);
	}
	return 0;
}

/* A throwaway copy of the user's global git config, in a directory of its
 * own so that `git config --global` (lock file, then rename) works; the
 * host's file is never mounted. */
static int git_identity(struct build *b, int sdir)
{
	const struct host_user *u = b->spec->user;
	const char *global = b->spec->user->via_sudo ? NULL : getenv("GIT_CONFIG_GLOBAL");
	const char *xdg = b->spec->user->via_sudo ? NULL : getenv("XDG_CONFIG_HOME");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r = 0;

	if (!f)
		return -ENOMEM;
	if (global && *global) {
		r = append_file(f, global);
	} else if (b->host_home) {
		/* git reads both, the XDG file first. */
		cleanup_free char *x =
			xdg && xdg[0] == '/'
				? sandy_asprintf("%s/git/config", xdg)
				: sandy_asprintf("%s/.config/git/config", b->host_home);
		cleanup_free char *g = sandy_asprintf("%s/.gitconfig", b->host_home);
		r = !x || !g ? -ENOMEM : append_file(f, x);
		if (r == 0)
			r = append_file(f, g);
	}
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	cleanup_fd int gdir = r == 0 ? open_user_subdir(sdir, "git", u) : -1;
	if (r == 0 && gdir < 0)
		r = gdir;
	if (r == 0)
		r = write_user_file(gdir, "config", text ? text : "", len, 0600, u);
	free(text);
	if (r < 0) {
		if (r != -EINVAL && r != -EFBIG && r != -ENOENT)
			sandy_error("cannot copy the git config into '%s/git': %s",
				    b->spec->session_dir, strerror(-r));
		return r;
	}
	cleanup_free char *src = sandy_asprintf("%s/git", b->spec->session_dir);
	if (!src || (r = add_mount(b, src, false, "%s/git", b->spec->run)) < 0)
		return src ? r : -ENOMEM;
	return strv_pushf(&b->w->env, "GIT_CONFIG_GLOBAL=%s/git/config", b->spec->run);
}

/* How many identities the ssh-agent at SOCK holds (the agent protocol's
 * REQUEST_IDENTITIES), or -errno. */
static int ssh_agent_identities(const char *sock)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	unsigned char req[5] = {0, 0, 0, 1, 11}, hdr[9];
	size_t got = 0;

	if (strlen(sock) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, sock);
	/* Close-on-exec set apart: SOCK_CLOEXEC is Linux's (sandy forks no
	 * child while it asks). */
	cleanup_fd int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -errno;
	struct timeval tv = {.tv_sec = 2};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(fd, req, sizeof(req)) != (ssize_t)sizeof(req))
		return -EIO;
	while (got < sizeof(hdr)) {
		ssize_t n = read(fd, hdr + got, sizeof(hdr) - got);
		if (n <= 0)
			return n < 0 ? -errno : -EPROTO;
		got += (size_t)n;
	}
	if (hdr[4] != 12) /* IDENTITIES_ANSWER */
		return -EPROTO;
	return (int)(((unsigned)hdr[5] << 24 | (unsigned)hdr[6] << 16 | (unsigned)hdr[7] << 8 |
		      hdr[8]) &
		     0x7fffffff);
}

static int ssh_forward(struct build *b, int sdir)
{
	const char *sock = getenv("SSH_AUTH_SOCK");
	const char *key = getenv("SANDY_SSH_KEY");
	const struct host_user *u = b->spec->user;
	int r;

	if (sock && *sock) {
		int n = ssh_agent_identities(sock);
		if (n < 0) {
			sandy_note("not forwarding the ssh-agent at '%s' (SSH_AUTH_SOCK): %s", sock,
				   strerror(-n));
		} else {
			if (n == 0)
				sandy_note("warning: the ssh-agent at '%s' holds no identities; "
					   "add a key with 'ssh-add' for ssh to work inside",
					   sock);
			if ((r = add_mount(b, sock, false, "%s/ssh-agent.sock", b->spec->run)) < 0)
				return r;
			r = strv_pushf(&b->w->env, "SSH_AUTH_SOCK=%s/ssh-agent.sock", b->spec->run);
			if (r < 0)
				return r;
		}
	}
	if (!key || !*key)
		return 0;
	const char *base = strrchr(key, '/');
	base = base ? base + 1 : key;
	for (size_t i = 0; i < ARRAY_SIZE(personal_keys); i++)
		if (!strcmp(base, personal_keys[i]))
			sandy_note("warning: SANDY_SSH_KEY '%s' looks like a personal key; the "
				   "agent can use it for anything it opens. Prefer a key made for "
				   "the sandbox (a deploy key)",
				   key);
	cleanup_free char *data = NULL;
	r = read_optional(key, &data);
	if (r == 0 && !data)
		r = -ENOENT;
	if (r < 0) {
		sandy_error("cannot use SANDY_SSH_KEY '%s': %s", key, strerror(-r));
		return r;
	}
	if (!base[0] || base[0] == '.') {
		sandy_error("cannot use SANDY_SSH_KEY '%s': not a file name", key);
		return -EINVAL;
	}
	cleanup_fd int kdir = open_user_subdir(sdir, "ssh", u);
	if (kdir < 0) {
		sandy_error("cannot make '%s/ssh': %s", b->spec->session_dir, strerror(-kdir));
		return kdir;
	}
	/* ssh refuses a private key that others may read. */
	if ((r = write_user_file(kdir, base, data, strlen(data), 0400, u)) < 0)
		return r;
	cleanup_free char *src = sandy_asprintf("%s/ssh", b->spec->session_dir);
	if (!src || (r = add_mount(b, src, true, "%s/ssh", b->spec->run)) < 0)
		return src ? r : -ENOMEM;
	r = strv_pushf(&b->w->env, "SANDY_SSH_KEY=%s/ssh/%s", b->spec->run, base);
	return strv_ok(r, strv_pushf(&b->w->env,
				     "GIT_SSH_COMMAND=ssh -i %s/ssh/%s -o IdentitiesOnly=yes",
				     b->spec->run, base));
}

/* ~/shared (SANDY_SHARE_DIR) and ~/specs, read-write, made when missing. */
static int shared_folders(struct build *b)
{
	const char *share = getenv("SANDY_SHARE_DIR");
	cleanup_free char *specs = b->host_home ? sandy_asprintf("%s/specs", b->host_home) : NULL;
	int r;

	if (share && *share) {
		if (share[0] != '/') {
			sandy_error("cannot use SANDY_SHARE_DIR '%s': not an absolute path", share);
			return -EINVAL;
		}
		if ((r = make_user_dirs(share, b->spec->user)) < 0) {
			sandy_error("cannot create SANDY_SHARE_DIR '%s': %s", share, strerror(-r));
			return r;
		}
		if ((r = add_mount(b, share, false, "%s/shared", b->w->home)) < 0)
			return r;
	}
	if (!specs)
		return b->host_home ? -ENOMEM : 0;
	if ((r = make_user_dirs(specs, b->spec->user)) < 0) {
		sandy_error("cannot create '%s': %s", specs, strerror(-r));
		return r;
	}
	return add_mount(b, specs, false, "%s/specs", b->w->home);
}

static int environment(struct build *b)
{
	const struct world_spec *s = b->spec;
	struct world *w = b->w;
	int r = 0;

	r = strv_ok(r, setenv_world(w, "HOME", w->home));
	r = strv_ok(r, setenv_world(w, "SANDY", "1"));
	r = strv_ok(r, setenv_world(w, "SANDY_SESSION", s->session_id));
	r = strv_ok(r, strv_pushf(&w->env, "SANDY_POLICY=%s/POLICY.md", s->run));
	r = strv_ok(r, strv_pushf(&w->env, "SANDY_DENIALS=%s/denials.jsonl", s->run));
	r = strv_ok(r, setenv_world(w, "SANDY_AGENT", b->agent->name));
	if (s->keep_path && getenv("PATH"))
		r = strv_ok(r, setenv_world(w, "PATH", getenv("PATH")));
	if (s->keep_path && s->user->name) {
		r = strv_ok(r, setenv_world(w, "USER", s->user->name));
		r = strv_ok(r, setenv_world(w, "LOGNAME", s->user->name));
	}
	if (s->keep_path)
		r = strv_ok(r, setenv_world(w, "SHELL", s->user->shell));
	if (s->tty && getenv("TERM"))
		r = strv_ok(r, setenv_world(w, "TERM", getenv("TERM")));
	for (size_t i = 0; i < ARRAY_SIZE(env_allowlist); i++) {
		const char *v = getenv(env_allowlist[i]);
		if (v)
			r = strv_ok(r, setenv_world(w, env_allowlist[i], v));
	}
	r = strv_ok(r, pass_agent_env(w, b->agent));
	for (size_t i = 0; s->env_args && i < s->env_args->n; i++) {
		const char *a = s->env_args->v[i];
		if (strchr(a, '=')) {
			r = strv_ok(r, strv_push(&w->env, a));
		} else if (getenv(a)) {
			r = strv_ok(r, setenv_world(w, a, getenv(a)));
		} else {
			sandy_note("--env %s: not set here; not passed", a);
		}
	}
	return r;
}

/* Later entries of the environment win (--env over the allowlist):
 * keeps the last NAME=... of each name, in order. */
static void env_dedup(struct strv *env)
{
	size_t out = 0;

	for (size_t i = 0; i < env->n; i++) {
		size_t n = strcspn(env->v[i], "=");
		bool later = false;
		for (size_t j = i + 1; j < env->n && !later; j++)
			later = !strncmp(env->v[i], env->v[j], n + 1);
		if (later)
			free(env->v[i]);
		else
			env->v[out++] = env->v[i];
	}
	env->n = out;
	if (env->v)
		env->v[out] = NULL;
}

/* The agent's own repository: the host's git directory, read-only where
 * its alternates name it; with the push gate, git's hooks directory set
 * to sandy's through the environment (above the repository's own config,
 * which the agent writes) and what the hook runs. Shown at RUN also
 * without a container: the host's copies may lie in the home the agent's
 * replaces, and the project's own .git is under the mount. */
static int agent_git(struct build *b)
{
	const struct world_spec *s = b->spec;
	const struct agentgit_gate *g = s->gate;
	struct strv *env = &b->w->env;
	int r;

	if (!s->host_git)
		return 0;
	if ((r = add_mount(b, s->host_git, true, "%s/host-git", s->run)) < 0 || !g)
		return r;
	if ((r = add_mount(b, g->hooks, true, "%s/gate/hooks", s->run)) < 0 ||
	    (r = add_mount(b, g->sandyfs, true, "%s/gate/sandyfs", s->run)) < 0 ||
	    (r = add_mount(b, g->rules, true, "%s/gate/rules", s->run)) < 0 ||
	    (r = add_mount(b, g->overlays, true, "%s/gate/ro-overlays", s->run)) < 0)
		return r;
	r = strv_ok(r, strv_push(env, "GIT_CONFIG_COUNT=1"));
	r = strv_ok(r, strv_push(env, "GIT_CONFIG_KEY_0=core.hooksPath"));
	r = strv_ok(r, strv_pushf(env, "GIT_CONFIG_VALUE_0=%s/gate/hooks", s->run));
	r = strv_ok(r, strv_pushf(env, "SANDY_GATE_SANDYFS=%s/gate/sandyfs", s->run));
	r = strv_ok(r, strv_pushf(env, "SANDY_GATE_RULES=%s/gate/rules", s->run));
	r = strv_ok(r, strv_pushf(env, "SANDY_GATE_OVERLAYS=%s/gate/ro-overlays", s->run));
	r = strv_ok(r, strv_pushf(env, "SANDY_GATE_HOST_GIT=%s/host-git", s->run));
	return strv_ok(r, strv_pushf(env, "SANDY_GATE_SOURCE=%s", s->workspace));
}

/* ---- the command's program, from the user's home ---------------------- */

/* The path the user's PATH gives NAME (host_find_program), in *OUT;
 * -ENOENT when nothing is found, having said where it looked unless QUIET
 * (or NAME is relative to where the command starts, not to sandy's
 * directory). */
static int find_program(const char *name, bool quiet, char **out)
{
	const char *path = getenv("PATH");

	*out = NULL;
	if (host_find_program(name, out))
		return *out ? 0 : -ENOMEM;
	if (quiet || (strchr(name, '/') && name[0] != '/'))
		return -ENOENT;
	if (name[0] == '/')
		sandy_error("cannot find the command '%s': no such file", name);
	else
		sandy_error("cannot find the command '%s' in PATH (%s)", name,
			    path ? path : "unset");
	return -ENOENT;
}

static const char *below_home(const struct build *b, const char *p)
{
	size_t n = strlen(b->host_home);
	return !strncmp(p, b->host_home, n) && p[n] == '/' ? p + n + 1 : NULL;
}

/* What to show of the file REAL (in the user's home): the directory it was
 * installed into (its parent; for DIR/bin/X, DIR: a Node or a venv), or
 * the file alone where the parent is a directory many programs share. */
static char *install_root(const struct build *b, const char *real)
{
	cleanup_free char *dir = strdup(real);
	if (!dir)
		return NULL;
	*strrchr(dir, '/') = '\0';
	const char *last = strrchr(dir, '/') + 1;
	if (!strcmp(last, "bin")) {
		cleanup_free char *up = strndup(dir, (size_t)(last - 1 - dir));
		const char *rel = up ? below_home(b, up) : NULL;
		if (rel && strcmp(rel, ".local"))
			return strdup(up);
	}
	const char *rel = below_home(b, dir);
	if (!rel || !strcmp(rel, ".local") || !strcmp(rel, ".local/bin") || !strcmp(rel, "bin"))
		return strdup(real);
	return strdup(dir);
}

/* Makes the symlink LINK (a path in the user's home) -> TARGET at the same
 * place in the agent's home, replacing a symlink there, never following
 * one. An agent's own file there is left, and wins. */
static int plant_link(struct build *b, const char *link, const char *target)
{
	cleanup_free char *parent = strdup(link);
	if (!parent)
		return -ENOMEM;
	char *slash = strrchr(parent, '/');
	*slash = '\0';
	const char *name = slash + 1;
	if (below_home(b, parent)) {
		int r = make_target(b, parent, "/");
		if (r < 0)
			return r;
	}
	cleanup_fd int dir = open(b->agent_home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	const char *rel = below_home(b, parent);
	for (const char *p = rel ? rel : ""; dir >= 0 && *p;) {
		size_t n = strcspn(p, "/");
		cleanup_free char *c = strndup(p, n);
		int next = c ? openat(dir, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		close(dir);
		dir = next;
		p += n + (p[n] == '/');
	}
	if (dir < 0)
		return -errno;
	struct stat st;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISLNK(st.st_mode)) {
			sandy_note("'%s' is the agent's own in its home: not replaced by yours",
				   link);
			return 0;
		}
		if (unlinkat(dir, name, 0) < 0)
			return -errno;
	}
	if (symlinkat(target, dir, name) < 0)
		return -errno;
	return give_to_user(dir, name, b->spec->user);
}

/* The interpreter a script names on its #! line (env's argument looked up
 * in PATH), in *OUT, or NULL. */
static int script_interpreter(const char *path, char **out)
{
	char line[256];
	*out = NULL;
	cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n = fd >= 0 ? read(fd, line, sizeof(line) - 1) : -1;
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return 0;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	char *save = NULL, *interp = strtok_r(line + 2, " \t", &save);
	if (!interp)
		return 0;
	const char *base = strrchr(interp, '/');
	if (base && !strcmp(base + 1, "env")) {
		char *arg;
		while ((arg = strtok_r(NULL, " \t", &save)) && arg[0] == '-')
			;
		if (!arg)
			return 0;
		int r = find_program(arg, true, out);
		return r == -ENOMEM ? r : 0;
	}
	*out = strdup(interp);
	return *out ? 0 : -ENOMEM;
}

/* PROGRAM (a path), and, once, the interpreter it runs under. */
static int show_program(struct build *b, const char *program, int depth)
{
	if (!below_home(b, program))
		return 0;
	cleanup_free char *real = realpath(program, NULL);
	if (!real)
		return 0;
	int r = 0;
	if (strcmp(real, program) != 0)
		r = plant_link(b, program, real);
	if (r == 0 && below_home(b, real)) {
		cleanup_free char *root = install_root(b, real);
		if (!root)
			return -ENOMEM;
		/* Never the project, which sandyfs serves, nor what holds it. */
		const char *ws = b->spec->workspace;
		size_t rl = strlen(root), wl = ws ? strlen(ws) : 0;
		bool near = ws && ((!strncmp(root, ws, wl) && (root[wl] == '/' || !root[wl])) ||
				   (!strncmp(ws, root, rl) && ws[rl] == '/'));
		if (!near)
			r = add_mount(b, root, true, "%s", root);
	}
	cleanup_free char *interp = NULL;
	if (r == 0 && depth == 0 && (r = script_interpreter(real, &interp)) == 0 && interp)
		r = show_program(b, interp, depth + 1);
	return r;
}

/* The command's program as the user's PATH finds it, made visible when it
 * lives in the user's home: the install directory read-only at its path,
 * the link that PATH reaches it through, and the Node or Python it runs
 * under when that lives in the home too; never the rest of the home. */
static int command_program(struct build *b)
{
	cleanup_free char *found = NULL;
	int r;

	if (!b->spec->program || !b->host_home)
		return 0;
	/* Not found: said, and left to the shell inside, whose 127 is the
	 * session's status as anywhere. */
	if ((r = find_program(b->spec->program, false, &found)) < 0)
		return r == -ENOMEM ? r : 0;
	return show_program(b, found, 0);
}

int world_build(const struct world_spec *spec, struct world *w)
{
	struct build b = {.spec = spec, .agent = agent_kind(spec->agent), .w = w};
	int r;

	*w = (struct world){0};
	if (!b.agent)
		return -EINVAL;
	b.host_home = world_user_home(spec->user);
	w->home = strdup(spec->home);
	if (!w->home)
		return -ENOMEM;
	cleanup_fd int sdir =
		open(spec->session_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sdir < 0)
		return -errno;
	if ((r = make_agent_home(&b)) < 0)
		goto out;
	if ((r = add_mount(&b, b.agent_home, false, "%s", w->home)) < 0)
		goto out;
	if ((r = agent_config(&b, sdir)) < 0)
		goto out;
	if ((r = git_identity(&b, sdir)) < 0)
		goto out;
	if ((r = ssh_forward(&b, sdir)) < 0)
		goto out;
	if ((r = shared_folders(&b)) < 0)
		goto out;
	if ((r = agent_git(&b)) < 0)
		goto out;
	if ((r = command_program(&b)) < 0)
		goto out;
	if ((r = environment(&b)) < 0)
		goto out;
	env_dedup(&w->env);
out:
	free(b.agent_home);
	if (r == -ENOMEM)
		sandy_error("out of memory");
	return r;
}

void world_free(struct world *w)
{
	for (size_t i = 0; i < w->n_mounts; i++) {
		free(w->mounts[i].source);
		free(w->mounts[i].target);
	}
	free(w->mounts);
	strv_free(&w->env);
	free(w->home);
	*w = (struct world){0};
}
