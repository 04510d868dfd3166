/*
 * explain: `sandyfs explain` (class, deciding rule and why, per path) and
 * `sandyfs rules` (the effective merged policy), as text or --json. The
 * JSON carries exactly the fields the text shows.
 */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/compat.h"
#include "explain.h"
#include "git/source.h"
#include "guard.h"
#include "owner.h"
#include "common/path.h"
#include "policy/policy.h"
#include "policy/rules.h"
#include "host/store.h"
#include "common/quote.h"
#include "common/usage.h"
#include "common/util.h"

/* PATH normalised lexically (see path.h), malloc'ed; NULL when a relative
 * PATH leaves its top. */
static char *normalised(const char *path)
{
	size_t cap = strlen(path) + 2;
	char *out = malloc(cap);

	if (out && path_normalise(path, out, cap) < 0) {
		free(out);
		return NULL;
	}
	return out;
}

/*
 * The path of ARG relative to SOURCE (malloc'ed), or NULL with a message.
 * Absolute paths must lie inside SOURCE (as given or resolved); relative
 * ones may start with SOURCE/ and are otherwise relative to SOURCE.
 */
static void outside(const char *arg, const char *source)
{
	cleanup_free char *a = quote_str(arg), *s = quote_str(source);

	error("path '%s' is outside '%s'", quoted(a), quoted(s));
}

static char *relative_path(const char *source, const char *arg)
{
	cleanup_free char *nsrc = NULL, *nreal = NULL, *narg = NULL, *cwd = NULL, *abs_src = NULL;
	char real[PATH_MAX];
	const char *rest = NULL;

	if (arg[0] == '/') {
		narg = normalised(arg);
		if (realpath(source, real))
			nreal = normalised(real);
		if (source[0] == '/') {
			nsrc = normalised(source);
		} else if ((cwd = getcwd(NULL, 0)) &&
			   asprintf(&abs_src, "%s/%s", cwd, source) >= 0) {
			nsrc = normalised(abs_src);
		}
		if (narg && nreal)
			rest = path_below(narg, nreal);
		if (!rest && narg && nsrc)
			rest = path_below(narg, nsrc);
		if (!rest) {
			outside(arg, source);
			return NULL;
		}
		return strdup(rest);
	}
	nsrc = normalised(source);
	narg = normalised(arg);
	if (narg && nsrc && *nsrc && source[0] != '/' && (rest = path_below(narg, nsrc)) &&
	    *rest) {
		/* Written as SOURCE/PATH. */
		return strdup(rest);
	}
	if (!narg) {
		outside(arg, source);
		return NULL;
	}
	return strdup(narg);
}

/* What explain knows of the project beyond its rules: SOURCE, and the
 * store where private paths live and ownership may be recorded. */
struct project {
	int source_fd;
	char *store; /* the store's path */
	int tree_fd; /* STORE/tree, or -1 */
	struct sfs_owner *owner;
};

static void project_open(struct project *pr, const char *source, const char *store)
{
	char resolved[PATH_MAX];
	int store_fd = -1;

	memset(pr, 0, sizeof(*pr));
	pr->tree_fd = -1;
	pr->source_fd = open(source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (store)
		pr->store = strdup(store);
	else if (realpath(source, resolved))
		sfs_store_default_path(resolved, &pr->store);
	/* Only read: explaining never makes a store. */
	if (pr->store)
		store_fd = open(pr->store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (store_fd >= 0)
		pr->tree_fd =
			openat(store_fd, "tree", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfs_owner_new(store_fd, &pr->owner) < 0)
		pr->owner = NULL;
	if (store_fd >= 0)
		close(store_fd);
}

static void project_close(struct project *pr)
{
	if (pr->source_fd >= 0)
		close(pr->source_fd);
	if (pr->tree_fd >= 0)
		close(pr->tree_fd);
	sfs_owner_free(pr->owner);
	free(pr->store);
}

/* Whether REL exists where the mount would serve it from. */
static bool present(const struct project *pr, const char *rel, bool private)
{
	int fd = private ? pr->tree_fd : pr->source_fd;
	struct stat st;

	return fd >= 0 && fstatat(fd, *rel ? rel : ".", &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Whether the agent owns what is at REL in SOURCE. */
static bool owned(const struct project *pr, const char *rel)
{
	cleanup_free char *dir = strdup(rel);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	const char *name = slash ? slash + 1 : rel;
	struct sfs_stat st;

	if (!*rel || !dir || !pr->owner || pr->source_fd < 0)
		return false;
	if (slash)
		*slash = '\0';
	cleanup_fd int dfd = slash ? sfs_open_beneath(pr->source_fd, dir, sfs_anchor_flags(), 0)
				   : fcntl(pr->source_fd, F_DUPFD_CLOEXEC, 3);
	return dfd >= 0 && sfs_stat_at(dfd, name, &st) == 0 &&
	       sfs_owner_check(pr->owner, dfd, name, &st) == 1;
}

/* What the user can do about a path the agent may not change; NULL when
 * the agent may. */
static const char *advice(const struct sfs_decision *d, bool exists, bool ownership)
{
	switch (d->cls) {
	case SFS_CLASS_PROTECTED:
		if (d->rule && d->rule->tier > 0)
			return "release it, as the rule writes it, in a user-level rule file "
			       "(~/.config/sandy/rules.d/NAME.json: {\"release\": [\"PATTERN\"]}, "
			       "with \"projects\": [\"/path/to/project\"] for one project only) "
			       "if the agent should change it; or change it on the host yourself";
		return "always protected: change it on the host yourself";
	case SFS_CLASS_READONLY:
		if (!exists && ownership)
			return "absent: what the agent creates here is owned by it (it may then "
			       "change and remove it)";
		return "add a write glob for it to a user-level rule file "
		       "(~/.config/sandy/rules.d/NAME.json) or to the project's "
		       ".sandy/rules.json if the agent should change it";
	case SFS_CLASS_HIDDEN:
		return "hidden: it stays outside the sandbox";
	case SFS_CLASS_OVERLAY:
		return "served from a host file: change that file, or the rule, on the host";
	case SFS_CLASS_IMMUTABLE:
		return "part of git's layout: change it on the host yourself";
	default:
		return NULL;
	}
}

/* The policy the mount of SOURCE applies, assembled as the mount
 * assembles it (git/source.h): what explain says is what the mount does. */
static int load(const struct sfs_query *q, struct sfs_policy **p)
{
	struct sfs_source src = {&q->rules, q->source, q->private_git};
	cleanup_free char *err = NULL;
	int r = sfs_source_policy(&src, p, &err);

	return r < 0 ? error("%s", err ? err : strerror(-r)) : 0;
}

static cJSON *rule_json(const struct sfs_decision *d)
{
	cJSON *o = cJSON_CreateObject();
	const struct sfs_rule *r = d->rule;

	quote_json_add(o, "file", d->rule_file);
	cJSON_AddNumberToObject(o, "line", r ? r->line : 0);
	cJSON_AddStringToObject(o, "key", r ? r->key : "");
	cJSON_AddNumberToObject(o, "index", d->rule_index);
	quote_json_add(o, "pattern", d->rule_text);
	if (r && r->cls == SFS_CLASS_PROTECTED)
		cJSON_AddNumberToObject(o, "tier", r->tier);
	if (r && r->released_by)
		quote_json_add(o, "released_by", r->released_by);
	return o;
}

/* "FILE:LINE: KEY[INDEX] 'PATTERN'" as the text output shows a rule. */
static void print_rule(FILE *f, const struct sfs_rule *r, const char *file)
{
	/* Patterns and rule files may come from names in the project. */
	cleanup_free char *shown = quote_str(r ? r->file : file);
	cleanup_free char *pattern = r ? quote_str(r->pattern) : NULL;

	if (!r) {
		fprintf(f, "%s", quoted(shown));
		return;
	}
	if (r->line > 0)
		fprintf(f, "%s:%d: ", quoted(shown), r->line);
	else
		fprintf(f, "%s ", quoted(shown));
	fprintf(f, "%s[%d] '%s'", r->key, r->index, quoted(pattern));
	if (r->generated)
		fprintf(f, " (generated tree)");
	if (r->cls == SFS_CLASS_PROTECTED && r->released_by)
		fprintf(f, " (tier %d, released by %s)", r->tier, r->released_by);
	else if (r->cls == SFS_CLASS_PROTECTED)
		fprintf(f, " (tier %d%s)", r->tier, r->tier ? ", releasable" : ", always");
}

/* One PATH of the project (as the user gave it) explained, as text or
 * into ARR. False when it is outside SOURCE. */
static bool explain_one(const struct sfs_query *q, const struct sfs_policy *p,
			const struct project *pr, const char *arg, cJSON *arr)
{
	cleanup_free char *rel = relative_path(q->source, arg);
	struct sfs_decision d;
	bool mkdir_ok, exists, is_owned = false;

	if (!rel)
		return false;
	sfs_policy_decide(p, rel, SFS_OP_LOOKUP, &d);
	exists = present(pr, rel, d.cls == SFS_CLASS_PRIVATE);
	if (d.cls == SFS_CLASS_READONLY && exists && sfs_policy_ownership(p) && owned(pr, rel)) {
		sfs_policy_decide_owned(p, rel, SFS_OP_WRITE, true, &d);
		is_owned = d.cls == SFS_CLASS_OWNED;
	}
	/* What the mount refuses by the shape of a git directory around the
	 * path, asked of SOURCE as the mount asks it. */
	struct sfs_decision g;
	if (!sfs_class_protective(d.cls) && d.cls != SFS_CLASS_PRIVATE && pr->source_fd >= 0 &&
	    sfs_gitdir_judge(pr->source_fd, rel, exists ? SFS_OP_WRITE : SFS_OP_CREATE, &g))
		d = g;
	mkdir_ok = d.cls == SFS_CLASS_READONLY && *rel && sfs_policy_write_possible_below(p, rel);
	const char *todo = advice(&d, exists, sfs_policy_ownership(p));
	cleanup_free char *stored = NULL;
	if (d.cls == SFS_CLASS_PRIVATE && pr->store &&
	    asprintf(&stored, "%s/tree/%s", pr->store, rel) < 0)
		stored = NULL;
	if (arr) {
		cJSON *o = cJSON_CreateObject();

		quote_json_add(o, "path", rel);
		cJSON_AddBoolToObject(o, "exists", exists);
		cJSON_AddStringToObject(o, "class", sfs_class_name(d.cls));
		cJSON_AddItemToObject(o, "rule", rule_json(&d));
		quote_json_add(o, "why", d.why);
		if (d.overlay_file)
			quote_json_add(o, "overlay_file", d.overlay_file);
		if (d.cls == SFS_CLASS_READONLY)
			cJSON_AddBoolToObject(o, "writable_below", mkdir_ok);
		if (d.cls == SFS_CLASS_READONLY || is_owned)
			cJSON_AddBoolToObject(o, "owned", is_owned);
		if (stored)
			quote_json_add(o, "store_path", stored);
		if (todo)
			cJSON_AddStringToObject(o, "advice", todo);
		cJSON_AddItemToArray(arr, o);
		return true;
	}
	cleanup_free char *shown = quote_str(*rel ? rel : "."), *why = quote_str(d.why);
	cleanup_free char *overlay = d.overlay_file ? quote_str(d.overlay_file) : NULL;
	cleanup_free char *store = stored ? quote_str(stored) : NULL;
	printf("%s: %s (%s)\n", quoted(shown), sfs_class_name(d.cls), exists ? "present" : "absent");
	printf("    rule: ");
	print_rule(stdout, d.rule, d.rule_file);
	printf("\n    why:  %s\n", quoted(why));
	if (d.overlay_file)
		printf("    overlay: %s\n", quoted(overlay));
	if (stored)
		printf("    store: %s\n", quoted(store));
	if (mkdir_ok)
		printf("    below: write rules match paths below it (mkdir allowed)\n");
	if (todo)
		printf("    todo: %s\n", todo);
	return true;
}

int sfs_explain(const struct sfs_query *q, char *const *paths, int npaths)
{
	struct sfs_policy *p = NULL;
	struct project pr;
	cJSON *arr = NULL;
	int rc = 0;

	if (load(q, &p) < 0)
		return 1;
	project_open(&pr, q->source, q->store);
	if (q->json)
		arr = cJSON_CreateArray();
	for (int i = 0; i < npaths; i++)
		if (!explain_one(q, p, &pr, paths[i], arr))
			rc = 1;
	if (arr) {
		char *s = cJSON_Print(arr);

		if (s)
			puts(s);
		else
			rc = 1;
		free(s);
		cJSON_Delete(arr);
	}
	project_close(&pr);
	sfs_policy_free(p);
	return rc;
}

static cJSON *rule_entry_json(const struct sfs_rule *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "class", sfs_class_name(r->cls));
	quote_json_add(o, "file", r->file);
	cJSON_AddNumberToObject(o, "line", r->line);
	cJSON_AddStringToObject(o, "key", r->key);
	cJSON_AddNumberToObject(o, "index", r->index);
	quote_json_add(o, "pattern", r->pattern);
	quote_json_add(o, "why", r->why);
	if (r->cls == SFS_CLASS_PROTECTED)
		cJSON_AddNumberToObject(o, "tier", r->tier);
	if (r->generated)
		cJSON_AddBoolToObject(o, "generated", true);
	if (r->overlay_file)
		cJSON_AddStringToObject(o, "overlay_file", r->overlay_file);
	if (r->released_by)
		cJSON_AddStringToObject(o, "released_by", r->released_by);
	if (r->except) {
		cJSON *a = cJSON_AddArrayToObject(o, "except");
		for (size_t i = 0; r->except[i]; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(r->except[i]));
	}
	return o;
}

static void print_rule_line(const struct sfs_rule *r)
{
	cleanup_free char *pattern = quote_str(r->pattern), *why = quote_str(r->why);
	cleanup_free char *overlay = r->overlay_file ? quote_str(r->overlay_file) : NULL;

	printf("    %s", quoted(pattern));
	if (r->overlay_file)
		printf(" -> %s", quoted(overlay));
	printf("\n        from: ");
	print_rule(stdout, r, r->file);
	if (r->released_by)
		printf(", released by %s", r->released_by);
	printf("\n        why:  %s\n", quoted(why));
}

int sfs_rules_types(void)
{
	cleanup_strv struct strv names = {0};
	cleanup_free char *err = NULL;

	if (sfs_shipped_types(&names, &err) < 0) {
		error("%s", err ? err : strerror(ENOMEM));
		return 1;
	}
	for (size_t i = 0; i < names.n; i++)
		puts(names.v[i]);
	return 0;
}

/* The effective policy as JSON: the sources, then every rule (the private
 * repository's first, then the immutable ones, then the rule files'). */
static int rules_json(const struct sfs_policy *p)
{
	cJSON *root = cJSON_CreateObject(), *src = cJSON_AddArrayToObject(root, "sources"),
	      *rules = cJSON_AddArrayToObject(root, "rules");

	for (size_t i = 0; i < sfs_policy_source_count(p); i++) {
		const struct sfs_rule_source *so = sfs_policy_source(p, i);
		cJSON *o = cJSON_CreateObject();

		quote_json_add(o, "path", so->path);
		if (so->name)
			cJSON_AddStringToObject(o, "name", so->name);
		if (so->description)
			cJSON_AddStringToObject(o, "description", so->description);
		quote_json_add(o, "origin", so->origin);
		cJSON_AddItemToArray(src, o);
	}
	for (size_t i = 0; sfs_policy_private_git_rule(p, i); i++)
		cJSON_AddItemToArray(rules, rule_entry_json(sfs_policy_private_git_rule(p, i)));
	for (size_t i = 0; i < sfs_policy_immutable_count(p); i++)
		cJSON_AddItemToArray(rules, rule_entry_json(sfs_policy_immutable(p, i)));
	for (size_t i = 0; i < sfs_policy_rule_count(p); i++)
		cJSON_AddItemToArray(rules, rule_entry_json(sfs_policy_rule(p, i)));
	cJSON_AddBoolToObject(root, "owned", sfs_policy_ownership(p));
	char *s = cJSON_Print(root);
	cJSON_Delete(root);
	if (!s)
		return 1;
	puts(s);
	free(s);
	return 0;
}

/* The effective policy as text, by class. */
static void rules_text(const struct sfs_policy *p)
{
	static const enum sfs_class order[] = {SFS_CLASS_IMMUTABLE, SFS_CLASS_PRIVATE,
					       SFS_CLASS_HIDDEN,    SFS_CLASS_PROTECTED,
					       SFS_CLASS_OVERLAY,   SFS_CLASS_WRITABLE};

	printf("sources:\n");
	for (size_t i = 0; i < sfs_policy_source_count(p); i++) {
		const struct sfs_rule_source *so = sfs_policy_source(p, i);

		cleanup_free char *path = quote_str(so->path);
		/* The origin names the directories a type was detected in
		 * as quote_str() shows them (detect.c). */
		printf("    %s (%s)", quoted(path), so->origin);
		if (so->description)
			printf(": %s", so->description);
		printf("\n");
	}
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		printf("%s:\n", sfs_class_name(order[k]));
		if (order[k] == SFS_CLASS_IMMUTABLE)
			for (size_t i = 0; i < sfs_policy_immutable_count(p); i++)
				print_rule_line(sfs_policy_immutable(p, i));
		if (order[k] == SFS_CLASS_PRIVATE)
			for (size_t i = 0; sfs_policy_private_git_rule(p, i); i++)
				print_rule_line(sfs_policy_private_git_rule(p, i));
		for (size_t i = 0; i < sfs_policy_rule_count(p); i++) {
			const struct sfs_rule *r = sfs_policy_rule(p, i);

			if (r->cls == order[k] && !r->released_by)
				print_rule_line(r);
		}
	}
	printf("released:\n");
	for (size_t i = 0; i < sfs_policy_rule_count(p); i++) {
		const struct sfs_rule *r = sfs_policy_rule(p, i);

		if (r->released_by)
			print_rule_line(r);
	}
	printf("owned:\n    %s\n",
	       sfs_policy_ownership(p)
		       ? "what the agent creates through the mount, outside the names above"
		       : "nothing (a rule file says \"owned\": false)");
	printf("readonly:\n    everything else\n");
}

int sfs_rules(const struct sfs_query *q)
{
	struct sfs_policy *p = NULL;
	int rc = 0;

	if (load(q, &p) < 0)
		return 1;
	if (q->json)
		rc = rules_json(p);
	else
		rules_text(p);
	sfs_policy_free(p);
	return rc;
}
