/* policy_note.c - see policy_note.h. */

#include "policy_note.h"
#include "proc.h"
#include "sandyfs.h"

#include <cJSON.h>
#include <stdbool.h>
#include <string.h>

/* What the note says of the policy. */
struct policy_summary {
	struct strv write_globs;   /* writable rules' patterns */
	struct strv private_globs; /* private rules' patterns */
	struct strv sources;	   /* the rule sources' names */
	bool owned;		   /* what the agent creates is its own */
};

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

static void summary_free(struct policy_summary *s)
{
	strv_free(&s->write_globs);
	strv_free(&s->private_globs);
	strv_free(&s->sources);
}

/* From `sandyfs rules --json` output ({"sources": [{"name", "path", ...}],
 * "rules": [{"class", "pattern", ...}], "owned": BOOL}): the patterns of the
 * writable and private rules and the names of the rule sources, in order,
 * without duplicates, and whether ownership is on (also when the output
 * does not say). */
static int parse_rules(const char *json, struct policy_summary *out)
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
		if (r == 0 && cls && pat && !strcmp(cls, "private"))
			r = push_unique(&out->private_globs, pat);
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "sources"))
	{
		const char *name = string_item(e, "name"), *path = string_item(e, "path");
		const char *base = path ? strrchr(path, '/') : NULL;
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

/* Asks sandyfs for the merged policy. Empty lists when it cannot say: the
 * note then describes the policy without them. */
static void fetch_policy(const struct policy_note *n, struct policy_summary *p)
{
	cleanup_strv struct strv argv = {0};
	cleanup_free char *out = NULL;

	p->owned = true;
	if (sandyfs_query_argv(&argv, n->sandyfs, "rules", true, n->rule_args, n->project) == 0 &&
	    proc_run(argv.v, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) == 0)
		parse_rules(out, p);
}

int policy_note_text(const struct policy_note *n, char **text)
{
	struct policy_summary p = {0};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "# What you may write in %s\n\n", n->workspace);
	if (!n->sandyfs) {
		fprintf(f, "This session serves the project through a plain bind mount: no write\n"
			   "policy applies, everything the file permissions allow is writable.\n");
		goto done;
	}
	fetch_policy(n, &p);
	fprintf(f, "This project is served by sandyfs with an inverted write policy: you may\n"
		   "change the files that were there before you only where these globs match\n"
		   "(gitignore syntax):\n\n");
	for (size_t i = 0; i < p.write_globs.n; i++)
		fprintf(f, "    %s\n", p.write_globs.v[i]);
	if (p.write_globs.n == 0)
		fprintf(f, "    (the list could not be read when the session started)\n");
	if (p.owned)
		fprintf(f,
			"\nWhat you create yourself, anywhere outside the protected names below\n"
			"(temporary files, objects, binaries, new directories), is yours: you\n"
			"may change, rename and remove it, in this session and later ones. A\n"
			"file that was there before you and that no glob matches stays\n"
			"read-only: your own file cannot be renamed over it.\n");
	if (p.private_globs.n) {
		fprintf(f, "\nThese directories are private to the sandbox:");
		for (size_t i = 0; i < p.private_globs.n; i++)
			fprintf(f, "%s %s", i ? "," : "", p.private_globs.v[i]);
		fprintf(f,
			".\nThey are kept outside the project (the host never sees or runs what\n"
			"they hold), and survive the session: install dependencies and build\n"
			"there freely. The host's own copies of them are not visible here.\n");
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
		"the reason, in %s (also $SANDY_DENIALS).\n",
		n->denials);
	if (p.sources.n) {
		fprintf(f, "\nRules in effect:");
		for (size_t i = 0; i < p.sources.n; i++)
			fprintf(f, "%s %s", i ? "," : "", p.sources.v[i]);
		fprintf(f, ".\n");
	}
done:
	summary_free(&p);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*text = buf;
	return 0;
}
