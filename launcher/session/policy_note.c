/* policy_note.c - see policy_note.h. */

#include "policy_note.h"
#include "sys/proc.h"
#include "runtime/fsquery.h"
#include "runtime/sandyfs.h"

#include <cJSON.h>
#include <stdbool.h>
#include <string.h>

static bool strv_has(const struct strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

static int push_unique(struct strv *s, const char *str)
{
	return strv_has(s, str) ? 0 : strv_push(s, str);
}

static const char *string_item(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void policy_rules_free(struct policy_rules *s)
{
	strv_free(&s->write_globs);
	strv_free(&s->private_globs);
	strv_free(&s->layout);
	strv_free(&s->sources);
}

/* From `sandyfs rules --json` output ({"sources": [{"name", "path", ...}],
 * "rules": [{"class", "pattern", ...}], "owned": BOOL}): the patterns of the
 * writable and private rules and the names of the rule sources, in order,
 * without duplicates (not those read for their protections alone), and whether ownership is on
 * (also when the output does not say). */
static int parse_rules(const char *json, struct policy_rules *out)
{
	cJSON *root = cJSON_Parse(json);
	const cJSON *e;
	int r = 0;

	out->owned = true;
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return -EINVAL;
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "rules"))
	{
		const char *cls = string_item(e, "class"), *pat = string_item(e, "pattern");
		if (r == 0 && cls && pat && !strcmp(cls, "writable"))
			r = push_unique(&out->write_globs, pat);
		const char *key = string_item(e, "key"), *file = string_item(e, "file");
		const cJSON *index = cJSON_GetObjectItemCaseSensitive(e, "index");
		/* The private repository has a paragraph of its own. */
		if (r == 0 && cls && pat && !strcmp(cls, "private") &&
		    !(key && !strcmp(key, "private-git")))
			r = push_unique(&out->private_globs, pat);
		/* What git's layout adds to the built-in .git (index 0). */
		if (r == 0 && cls && pat && !strcmp(cls, "immutable") && file &&
		    !strcmp(file, "(built-in)") && cJSON_IsNumber(index) && index->valuedouble > 0)
			r = strv_pushf(&out->layout, "%s (%s)", pat,
				       string_item(e, "why") ? string_item(e, "why") : "git's layout");
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "sources"))
	{
		const char *name = string_item(e, "name"), *path = string_item(e, "path");
		const char *base = path ? strrchr(path, '/') : NULL;
		const char *origin = string_item(e, "origin");
		/* A type read only for its protections (every shipped type the
		 * project is not) neither shapes what the agent may write nor
		 * brings its package registries into the allowlist. */
		if (origin && !strncmp(origin, "not detected", 12))
			continue;
		if (!name)
			name = base ? base + 1 : path;
		if (r == 0 && name)
			r = push_unique(&out->sources, name);
	}
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(root, "owned")))
		out->owned = false;
	cJSON_Delete(root);
	return r;
}

void policy_rules_fetch(const struct sandyfs_prog *fs, const struct strv *rule_args,
			bool private_git, struct policy_rules *out)
{
	cleanup_strv struct strv argv = {0}, args = {0};
	cleanup_free char *json = NULL;
	int r = strv_extend(&args, rule_args);

	/* Asked as the mount serves it: with the agent's own .git. */
	if (r == 0 && private_git)
		r = strv_push(&args, "--private-git");
	*out = (struct policy_rules){.owned = true};
	if (r == 0 && sandyfs_query_argv(&argv, fs, "rules", true, &args) == 0 &&
	    proc_run(argv.v, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &json, NULL) == 0)
		parse_rules(json, out);
}

static void network_section(FILE *f, const struct policy_note *n)
{
	if (n->network == EGRESS_NONE) {
		fprintf(f, "\nNetwork: none in this session (--network=none). Work offline; tell\n"
			   "the user what you would need to download.\n");
		return;
	}
	if (n->network == EGRESS_OPEN) {
		fprintf(f, "\nNetwork: not restricted by sandy in this session.%s\n",
			n->container ? ""
				     : " There is no container: other programs of this machine "
				       "run beside you.");
		return;
	}
	fprintf(f,
		"\nNetwork: only these names %s (\"*.\" means any\n"
		"subdomain):\n\n",
		n->container ? "resolve and can be reached" : "can be reached");
	for (size_t i = 0; n->allow && i < n->allow->n; i++)
		fprintf(f, "    %s\n", n->allow->v[i]);
	if (n->container)
		fprintf(f, "\nAny other name fails to resolve (REFUSED), connections to other\n"
			   "addresses are refused, and IPv6 is off. Every query and connection is\n"
			   "logged.");
	else
		fprintf(f, "\nThey are reached through sandy's HTTP proxy, which $HTTPS_PROXY and\n"
			   "$HTTP_PROXY name (HTTPS through CONNECT, any port): there is no DNS\n"
			   "and no other way out, so a tool that ignores those variables has no\n"
			   "network. The proxy answers 403 for any other name, and for addresses.\n"
			   "Every request is logged.");
	fprintf(f, " Do not look for a way around it: if you need another host, tell\n"
		   "the user, who can allow it in this session with 'sandy allow DOMAIN'\n"
		   "(or for every session with --allow, SANDY_ALLOW_DOMAINS, or \"allow\" in\n"
		   "~/.config/sandy/config.json).\n");
}

/* The world around the project: home, shared folders, git, network. */
static void world_section(FILE *f, const struct policy_note *n)
{
	fprintf(f,
		"\n# Around the project\n\n"
		"Your home (%s) is your own and is kept between sessions: logins,\n"
		"caches and history live there. Your settings and memory file are\n"
		"generated by sandy and read-only.\n",
		n->home);
	fprintf(f,
		"\nShared with the user, read-write:%s %s/specs (specifications the user\n"
		"keeps for you). Put what the user should see outside the project there.\n",
		n->shared ? " ~/shared, and" : "", n->home);
	fprintf(f, "\nGit: your identity is a copy of the user's global git config\n"
		   "($GIT_CONFIG_GLOBAL), yours to change for this session.");
	if (n->private_git)
		fprintf(f, " The repository's\n"
			   ".git is your own, made from the user's at the start of the session: "
			   "commit,\n"
			   "branch, stash, rebase and add worktrees under .worktrees/ as you like. "
			   "The\n"
			   "user brings a branch of yours into their repository with 'sandy git "
			   "import',\n"
			   "which refuses any branch whose commits add, change or remove a "
			   "protected,\n"
			   "hidden or private path (or a submodule, or a symlink leaving the "
			   "project):\n"
			   "keep such changes out of your commits and tell the user about them "
			   "instead.\n");
	else
		fprintf(f,
			" The repository's\n"
			".git is read-only here: you cannot commit, branch or stash in it; leave\n"
			"your work in the working tree and say what you changed.\n");
	if (n->push_gate)
		fprintf(f, "A push is refused when a commit it sends changes such a path.\n");
	network_section(f, n);
}

int policy_note_text(const struct policy_note *n, char **text)
{
	const struct policy_rules *p = n->rules;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "# What you may write in %s\n\n", n->workspace);
	if (!p) {
		fprintf(f, "This session serves the project through a plain bind mount: no write\n"
			   "policy applies, everything the file permissions allow is writable.\n");
		goto done;
	}
	fprintf(f, "This project is served by sandyfs with an inverted write policy: you may\n"
		   "change the files that were there before you only where these globs match\n"
		   "(gitignore syntax):\n\n");
	for (size_t i = 0; i < p->write_globs.n; i++)
		fprintf(f, "    %s\n", p->write_globs.v[i]);
	if (p->write_globs.n == 0)
		fprintf(f, "    (the list could not be read when the session started)\n");
	if (p->owned)
		fprintf(f,
			"\nWhat you create yourself, anywhere outside the protected names below\n"
			"(temporary files, objects, binaries, new directories), is yours: you\n"
			"may change, rename and remove it, in this session and later ones. A\n"
			"file that was there before you and that no glob matches stays\n"
			"read-only: your own file cannot be renamed over it.\n");
	if (p->private_globs.n) {
		fprintf(f, "\nThese directories are private to the sandbox:");
		for (size_t i = 0; i < p->private_globs.n; i++)
			fprintf(f, "%s %s", i ? "," : "", p->private_globs.v[i]);
		fprintf(f,
			".\nThey are kept outside the project (the host never sees or runs what\n"
			"they hold), and survive the session: install dependencies and build\n"
			"there freely. The host's own copies of them are not visible here.\n");
	}
	if (p->layout.n) {
		fprintf(f, "\nThis repository's git layout keeps these read-only as well:\n\n");
		for (size_t i = 0; i < p->layout.n; i++)
			fprintf(f, "    %s\n", p->layout.v[i]);
	}
	fprintf(f,
		"\nEverything else is read-only. Protected names (.git internals, .envrc,\n"
		".vscode/, .claude/, CI workflows, build and hook configs, ...) stay\n"
		"read-only whether they exist or not, under any spelling, also through\n"
		"renames, links and symlinks. Secrets such as .env are hidden.\n\n"
		"A denied write fails with EROFS (\"Read-only file system\"). That is the\n"
		"policy, not a fault: do not retry it or look for a way around it. Put the\n"
		"change in a writable place, or tell the user what you need changed.\n\n"
		"Each denial is recorded, one JSON line with the path, the deciding rule and\n"
		"the reason, in %s (also $SANDY_DENIALS). A name that is not\n"
		"UTF-8 has U+FFFD for each stray byte there, and its bytes in hex in path_hex\n"
		"(target_hex).\n",
		n->denials);
	if (p->sources.n) {
		fprintf(f, "\nRules in effect:");
		for (size_t i = 0; i < p->sources.n; i++)
			fprintf(f, "%s %s", i ? "," : "", p->sources.v[i]);
		fprintf(f, ".\n");
	}
done:
	world_section(f, n);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*text = buf;
	return 0;
}
