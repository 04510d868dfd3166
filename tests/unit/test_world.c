/* test_world.c - the agent's world as world_build makes it, in a scratch
 * directory standing for the user's home, sandy's data directory and the
 * session directory: the settings rewritten per agent with its sandbox off,
 * a malformed settings file refused, credentials copied into a new home
 * only, the memory file, the git config copy, the environment (allowlist,
 * --env, nothing else), and a symlink planted in the agent's home refused
 * without anything made through it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cachedir.h"
#include "launcher/world/world.h"
#include "scratch.h"
#include "tap.h"

static char home[300], data[300], session[300];

static void put(const char *path, const char *text)
{
	char dir[600];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0700);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* The file PATH's content (static buffer), or "" when it cannot be read. */
static const char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

static const char *env_of(const struct world *w, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < w->env.n; i++)
		if (!strncmp(w->env.v[i], name, n) && w->env.v[i][n] == '=')
			return w->env.v[i] + n + 1;
	return NULL;
}

static const struct world_mount *mount_at(const struct world *w, const char *target)
{
	for (size_t i = 0; i < w->n_mounts; i++)
		if (!strcmp(w->mounts[i].target, target))
			return &w->mounts[i];
	return NULL;
}

/* A fresh session directory, as session.c makes one. */
static void new_session(void)
{
	static int n;

	snprintf(session, sizeof(session), "%s/session-%d", scratch_path, n++);
	if (mkdir(session, 0700) < 0) {
		perror(session);
		exit(1);
	}
}

static int build(const char *agent, const struct strv *env_args, struct world *w)
{
	struct host_user u = {.uid = getuid(),
			      .gid = getgid(),
			      .name = "tester",
			      .home = home,
			      .shell = "/bin/sh"};
	struct world_spec spec = {
		.agent = agent,
		.user = &u,
		.home = "/home/sandy",
		.run = "/run/sandy",
		.session_dir = session,
		.session_id = "test-0001",
		.env_args = env_args,
	};

	new_session();
	return world_build(&spec, w);
}

static void test_claude(void)
{
	struct world w;
	char path[600];

	put(strcat(strcpy(path, home), "/.claude/settings.json"),
	    "{\"model\": \"m\", \"sandbox\": {\"enabled\": true, \"other\": 1}}");
	put(strcat(strcpy(path, home), "/.claude/CLAUDE.md"), "my memory\n");
	put(strcat(strcpy(path, home), "/.claude/.credentials.json"), "{\"t\": \"first\"}");
	put(strcat(strcpy(path, home), "/.claude/commands/x.md"), "x");
	put(strcat(strcpy(path, home), "/.gitconfig"), "[user]\n\temail = late@x\n");
	put(strcat(strcpy(path, home), "/.config/git/config"), "[user]\n\temail = early@x");

	ok(build("claude", NULL, &w) == 0, "claude: the world is built");
	snprintf(path, sizeof(path), "%s/agent-settings", session);
	const char *s = slurp(path);
	ok(strstr(s, "\"enabled\":\tfalse") && strstr(s, "\"other\":\t1") &&
		   strstr(s, "\"model\":\t\"m\""),
	   "claude: settings keep the user's, with sandbox.enabled false");
	const struct world_mount *m = mount_at(&w, "/home/sandy/.claude/settings.json");
	ok(m && m->readonly && !strcmp(m->source, path),
	   "claude: the settings are mounted read-only");
	snprintf(path, sizeof(path), "%s/agent-memory", session);
	s = slurp(path);
	ok(!strncmp(s, "my memory\n", 10) && strstr(s, "\n@/run/sandy/POLICY.md\n"),
	   "claude: the memory file is the user's, then an import of the policy note");
	m = mount_at(&w, "/home/sandy/.claude/commands");
	ok(m && m->readonly, "claude: the user's commands are mounted read-only");
	ok(mount_at(&w, "/home/sandy/.claude/agents") == NULL,
	   "claude: a directory the user does not have is not mounted");
	snprintf(path, sizeof(path), "%s/home/claude/.claude/.credentials.json", data);
	ok(!strcmp(slurp(path), "{\"t\": \"first\"}"),
	   "claude: credentials copied into the new home");
	struct stat st;
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600, "claude: ... mode 0600");
	snprintf(path, sizeof(path), "%s/home/claude/.claude/settings.json", data);
	ok(stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0,
	   "claude: the settings mount's target is made in the agent's home, empty");
	snprintf(path, sizeof(path), "%s/git/config", session);
	s = slurp(path);
	ok(strstr(s, "early@x") && strstr(s, "late@x") &&
		   strstr(s, "early@x") < strstr(s, "late@x"),
	   "git: the XDG config, then ~/.gitconfig, as git reads them");
	ok(env_of(&w, "GIT_CONFIG_GLOBAL") &&
		   !strcmp(env_of(&w, "GIT_CONFIG_GLOBAL"), "/run/sandy/git/config"),
	   "git: GIT_CONFIG_GLOBAL points into the session's git directory");
	m = mount_at(&w, "/run/sandy/git");
	ok(m && !m->readonly, "git: its directory is mounted read-write");
	world_free(&w);

	put(strcat(strcpy(path, home), "/.claude/.credentials.json"), "{\"t\": \"second\"}");
	ok(build("claude", NULL, &w) == 0, "claude: a second world is built");
	snprintf(path, sizeof(path), "%s/home/claude/.claude/.credentials.json", data);
	ok(!strcmp(slurp(path), "{\"t\": \"first\"}"),
	   "claude: credentials are copied only into a new home");
	world_free(&w);

	put(strcat(strcpy(path, home), "/.claude/settings.json"), "{\"model\": ");
	ok(build("claude", NULL, &w) == -EINVAL, "claude: malformed settings are refused");
	world_free(&w);
	put(strcat(strcpy(path, home), "/.claude/settings.json"), "[1, 2]");
	ok(build("claude", NULL, &w) == -EINVAL,
	   "claude: settings that are not an object are refused");
	world_free(&w);
	unlink(path);
	ok(build("claude", NULL, &w) == 0, "claude: without settings the world is built");
	snprintf(path, sizeof(path), "%s/agent-settings", session);
	ok(strstr(slurp(path), "\"sandbox\":\t{\n\t\t\"enabled\":\tfalse"),
	   "claude: without settings, generated ones switch the sandbox off");
	world_free(&w);
}

static void test_gemini_codex(void)
{
	struct world w;
	char path[600];

	put(strcat(strcpy(path, home), "/.gemini/settings.json"), "{\"tools\": true}");
	ok(build("gemini", NULL, &w) == 0, "gemini: the world is built");
	snprintf(path, sizeof(path), "%s/agent-settings", session);
	ok(strstr(slurp(path), "\"tools\":\t{\n\t\t\"sandbox\":\tfalse"),
	   "gemini: tools.sandbox false (a non-object 'tools' replaced)");
	ok(mount_at(&w, "/home/sandy/.gemini/settings.json") != NULL,
	   "gemini: its settings file is the one mounted");
	world_free(&w);

	put(strcat(strcpy(path, home), "/.codex/config.toml"),
	    "model = \"x\"\nsandbox_mode = \"read-only\"\n[profiles.a]\nsandbox_mode = \"keep\"\n");
	ok(build("codex", NULL, &w) == 0, "codex: the world is built");
	snprintf(path, sizeof(path), "%s/agent-settings", session);
	const char *s = slurp(path);
	ok(!strncmp(s, "sandbox_mode = \"danger-full-access\"", 35) &&
		   !strstr(s, "\"read-only\"") && strstr(s, "model = \"x\"\n") &&
		   strstr(s, "[profiles.a]\nsandbox_mode = \"keep\"\n"),
	   "codex: sandbox_mode set at the top, the old top-level one dropped, tables kept");
	ok(mount_at(&w, "/home/sandy/.codex/AGENTS.md") != NULL,
	   "codex: AGENTS.md is its memory file");
	snprintf(path, sizeof(path), "%s/agent-memory", session);
	ok(!strstr(slurp(path), "\n@"), "codex: no import line (codex has none)");
	world_free(&w);
}

/* VALUE of NAME in the world of AGENT built with the host's environment
 * as it is, or NULL. */
static bool passes(const char *agent, const char *name)
{
	struct world w;
	struct strv args = {0};
	bool r = build(agent, &args, &w) == 0 && env_of(&w, name);

	world_free(&w);
	return r;
}

/* Each agent's own variables, and nothing that is another's credential. */
static void test_agent_env(void)
{
	setenv("ANTHROPIC_MODEL", "m", 1);
	setenv("ANTHROPIC_DEFAULT_SONNET_MODEL", "s", 1);
	setenv("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "9", 1);
	setenv("DISABLE_TELEMETRY", "1", 1);
	setenv("DISABLE_AUTOUPDATER", "1", 1);
	setenv("ANTHROPIC", "no underscore: not a prefix match", 1);
	setenv("OPENAI_API_KEY", "sk-openai", 1);
	setenv("CODEX_HOME", "/home/user/.codex", 1);
	setenv("GEMINI_API_KEY", "g", 1);
	setenv("GEMINI_SANDBOX", "docker", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "aws", 1);
	setenv("AWS_REGION", "eu-west-1", 1);
	setenv("GITHUB_TOKEN", "ghp", 1);
	unsetenv("CLAUDE_CODE_USE_BEDROCK");
	ok(passes("claude", "ANTHROPIC_MODEL") &&
		   passes("claude", "ANTHROPIC_DEFAULT_SONNET_MODEL"),
	   "agent env: claude gets ANTHROPIC_* (models)");
	ok(passes("claude", "CLAUDE_CODE_MAX_OUTPUT_TOKENS"),
	   "agent env: claude gets CLAUDE_CODE_*");
	ok(passes("claude", "DISABLE_TELEMETRY") && passes("claude", "DISABLE_AUTOUPDATER"),
	   "agent env: claude gets its telemetry and updater switches");
	ok(!passes("claude", "ANTHROPIC"), "agent env: a prefix matches only with its underscore");
	ok(!passes("claude", "OPENAI_API_KEY") && !passes("claude", "GEMINI_API_KEY"),
	   "agent env: claude does not get the other agents' keys");
	ok(!passes("claude", "AWS_SECRET_ACCESS_KEY") && !passes("claude", "AWS_REGION"),
	   "agent env: no AWS credentials without the Bedrock switch");
	setenv("CLAUDE_CODE_USE_BEDROCK", "1", 1);
	ok(passes("claude", "AWS_SECRET_ACCESS_KEY") && passes("claude", "AWS_REGION"),
	   "agent env: CLAUDE_CODE_USE_BEDROCK=1 passes Bedrock's AWS credentials and region");
	ok(!passes("codex", "AWS_SECRET_ACCESS_KEY"), "agent env: ... to claude only");
	setenv("CLAUDE_CODE_USE_BEDROCK", "0", 1);
	ok(!passes("claude", "AWS_SECRET_ACCESS_KEY"), "agent env: the switch at 0 is off");
	ok(passes("codex", "OPENAI_API_KEY") && !passes("codex", "ANTHROPIC_MODEL"),
	   "agent env: codex gets OpenAI's key, not Anthropic's variables");
	ok(!passes("codex", "CODEX_HOME"), "agent env: not CODEX_HOME (the home is sandy's)");
	ok(passes("gemini", "GEMINI_API_KEY") && !passes("gemini", "GEMINI_SANDBOX") &&
		   !passes("gemini", "OPENAI_API_KEY"),
	   "agent env: gemini gets its key, not GEMINI_SANDBOX or OpenAI's key");
	ok(!passes("claude", "GITHUB_TOKEN") && !passes("codex", "GITHUB_TOKEN") &&
		   !passes("gemini", "GITHUB_TOKEN"),
	   "agent env: no agent gets another service's token");
	const char *const set[] = {"ANTHROPIC_MODEL",
				   "ANTHROPIC_DEFAULT_SONNET_MODEL",
				   "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
				   "DISABLE_TELEMETRY",
				   "DISABLE_AUTOUPDATER",
				   "ANTHROPIC",
				   "OPENAI_API_KEY",
				   "CODEX_HOME",
				   "GEMINI_API_KEY",
				   "GEMINI_SANDBOX",
				   "AWS_SECRET_ACCESS_KEY",
				   "AWS_REGION",
				   "GITHUB_TOKEN",
				   "CLAUDE_CODE_USE_BEDROCK"};
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		unsetenv(set[i]);
}

static void test_environment(void)
{
	struct world w;
	struct strv args = {0};

	setenv("ANTHROPIC_API_KEY", "from-host", 1);
	setenv("UNRELATED_VARIABLE", "leak", 1);
	setenv("PASSED_BY_NAME", "named", 1);
	unsetenv("UNSET_BY_NAME");
	strv_push(&args, "FOO=bar");
	strv_push(&args, "ANTHROPIC_API_KEY=override");
	strv_push(&args, "PASSED_BY_NAME");
	strv_push(&args, "UNSET_BY_NAME");
	ok(build("claude", &args, &w) == 0, "env: the world is built");
	ok(env_of(&w, "FOO") && !strcmp(env_of(&w, "FOO"), "bar"), "env: --env NAME=VALUE passes");
	ok(env_of(&w, "PASSED_BY_NAME") && !strcmp(env_of(&w, "PASSED_BY_NAME"), "named"),
	   "env: --env NAME passes the value here");
	ok(!env_of(&w, "UNSET_BY_NAME"), "env: --env NAME of an unset variable passes nothing");
	ok(env_of(&w, "ANTHROPIC_API_KEY") && !strcmp(env_of(&w, "ANTHROPIC_API_KEY"), "override"),
	   "env: --env wins over the allowlisted host value");
	size_t count = 0;
	for (size_t i = 0; i < w.env.n; i++)
		count += !strncmp(w.env.v[i], "ANTHROPIC_API_KEY=", 18);
	ok_eq_long(count, 1, "env: each name once");
	ok(!env_of(&w, "UNRELATED_VARIABLE"), "env: an unrelated host variable does not pass");
	ok(!env_of(&w, "PATH"), "env: no PATH into a container (the image's own)");
	ok(env_of(&w, "HOME") && !strcmp(env_of(&w, "HOME"), "/home/sandy"),
	   "env: HOME is the agent's home inside");
	world_free(&w);
	strv_free(&args);

	test_agent_env();

	ok(world_env_arg_valid("A_1=x=y") && world_env_arg_valid("a") &&
		   !world_env_arg_valid("1A") && !world_env_arg_valid("=x") &&
		   !world_env_arg_valid("A-B=x") && !world_env_arg_valid(""),
	   "env: --env names are shell variable names");
}

static void test_planted_symlink(void)
{
	struct world w;
	char path[700], victim[300];

	/* The agent owns its home: a symlink where a mount target goes must
	 * not make sandy create anything through it. */
	snprintf(victim, sizeof(victim), "%s/victim", scratch_path);
	mkdir(victim, 0700);
	snprintf(path, sizeof(path), "%s/home/claude/.claude", data);
	nftw(path, scratch_rm, 16, FTW_DEPTH | FTW_PHYS);
	if (symlink(victim, path) < 0) {
		perror(path);
		exit(1);
	}
	put(strcat(strcpy(path, home), "/.claude/settings.json"), "{}");
	ok(build("claude", NULL, &w) == -ELOOP, "a symlink planted in the agent's home is refused");
	snprintf(path, sizeof(path), "%s/settings.json", victim);
	struct stat st;
	ok(lstat(path, &st) < 0 && errno == ENOENT, "... and nothing is made through it");
	world_free(&w);
}

/* Where the user's configuration is read: the same for the gateway's
 * allowlist and for sandyfs's rules.d (SANDY_CONFIG_DIR, exported), and
 * the user's own under sudo, whose environment is root's. */
static void test_config_dir(void)
{
	struct host_user user = {.uid = getuid(), .gid = getgid(), .home = home};
	struct host_user sudo_user = {
		.uid = 4242, .gid = 4242, .home = "/home/someone", .via_sudo = true};
	char want[PATH_MAX];
	char *d;

	unsetenv("SANDY_CONFIG_DIR");
	setenv("XDG_CONFIG_HOME", "/xdg", 1);
	d = world_config_dir(&user);
	ok(d && !strcmp(d, "/xdg/sandy"), "XDG_CONFIG_HOME/sandy (%s)", d ? d : "NULL");
	free(d);
	d = world_config_dir(&sudo_user);
	ok(d && !strcmp(d, "/home/someone/.config/sandy"),
	   "under sudo: the user's home, not root's XDG_CONFIG_HOME (%s)", d ? d : "NULL");
	free(d);
	unsetenv("XDG_CONFIG_HOME");
	snprintf(want, sizeof(want), "%s/.config/sandy", home);
	d = world_config_dir(&user);
	ok(d && !strcmp(d, want), "~/.config/sandy (%s)", d ? d : "NULL");
	free(d);

	ok(world_export_config_dir(&sudo_user) == 0 && getenv("SANDY_CONFIG_DIR") &&
		   !strcmp(getenv("SANDY_CONFIG_DIR"), "/home/someone/.config/sandy"),
	   "exported for sudo's user: SANDY_CONFIG_DIR is the user's directory");
	d = sandy_config_dir();
	ok(d && !strcmp(d, "/home/someone/.config/sandy"),
	   "sandyfs's reader (sandy_config_dir, $HOME %s) reads the same one", home);
	free(d);
	setenv("SANDY_CONFIG_DIR", "/given", 1);
	ok(world_export_config_dir(&sudo_user) == 0 &&
		   !strcmp(getenv("SANDY_CONFIG_DIR"), "/given"),
	   "a SANDY_CONFIG_DIR given is kept");
	d = world_config_dir(&sudo_user);
	ok(d && !strcmp(d, "/given"), "and read by the gateway's allowlist too");
	free(d);
	unsetenv("SANDY_CONFIG_DIR");
}

int main(void)
{
	const char *dir = scratch_dir();

	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(data, sizeof(data), "%s/data", dir);
	mkdir(home, 0700);
	setenv("HOME", home, 1);
	setenv("SANDY_DATA_DIR", data, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("GIT_CONFIG_GLOBAL");
	unsetenv("SSH_AUTH_SOCK");
	unsetenv("SANDY_SSH_KEY");
	unsetenv("SANDY_SHARE_DIR");
	test_claude();
	test_gemini_codex();
	test_environment();
	test_planted_symlink();
	test_config_dir();
	return tap_done();
}
