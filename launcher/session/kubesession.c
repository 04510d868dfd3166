/* kubesession.c - see kubesession.h. */

#include "kubesession.h"
#include "runtime/fsbox.h"
#include "runtime/gateway.h"
#include "sys/host.h"
#include "sys/proc.h"
#include "world/kube.h"

#include "common/cachedir.h"

#include <cJSON.h>
#include <dirent.h>
#include <string.h>

/* What the manifests are made of beyond the options, gathered here and
 * owned here; struct kube_options points into it. */
struct gathered {
	struct strv types, allow, upstreams, names, texts;
	struct kube_rule_file *rules;
	char *default_name;
};

static void gathered_free(struct gathered *g)
{
	strv_free(&g->types);
	strv_free(&g->allow);
	strv_free(&g->upstreams);
	strv_free(&g->names);
	strv_free(&g->texts);
	free(g->rules);
	free(g->default_name);
}
#define cleanup_gathered __attribute__((cleanup(gathered_free)))

static int out_of_memory(void)
{
	sandy_error("out of memory");
	return -ENOMEM;
}

/* The rule files a session's sandyfs would read beyond the shipped ones,
 * for the ConfigMap, in the order it reads them: those of --rules in
 * RULE_ARGS, then the user's (rules.d of the configuration directory, by
 * name). In the Pod all are --rules, which sandyfs trusts as it trusts
 * rules.d. Names in NAMES, texts in TEXTS, one each. */
static int rule_texts(const struct strv *rule_args, struct strv *names, struct strv *texts)
{
	cleanup_free char *config = sandy_config_dir();
	cleanup_free char *dir = config ? sandy_asprintf("%s/rules.d", config) : NULL;
	cleanup_strv struct strv files = {0};
	struct dirent **list = NULL;
	int n = dir ? scandir(dir, &list, NULL, alphasort) : -1, r = 0;

	for (size_t i = 0; r == 0 && i + 1 < rule_args->n; i++)
		if (!strcmp(rule_args->v[i], "--rules"))
			r = strv_push(&files, rule_args->v[++i]);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(list[i]->d_name);
		if (r == 0 && list[i]->d_name[0] != '.' && len > 5 &&
		    !strcmp(list[i]->d_name + len - 5, ".json"))
			r = strv_pushf(&files, "%s/%s", dir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	for (size_t i = 0; r == 0 && i < files.n; i++) {
		cleanup_free char *text = NULL;
		r = sandy_read_file(files.v[i], 1 << 20, &text);
		if (r < 0) {
			sandy_error("cannot read rule file '%s': %s", files.v[i], strerror(-r));
			return r;
		}
		r = strv_push(names, files.v[i]);
		r = strv_ok(r, strv_push(texts, text));
	}
	return r;
}

/* The resolvers the gateway forwards to, and the clone uses before the
 * gateway runs: SANDY_DNS_UPSTREAM, else the usual address of a
 * cluster's DNS service (a note says so); printing the manifests asks
 * no cluster. */
static int upstreams(struct strv *out)
{
	const char *env = getenv("SANDY_DNS_UPSTREAM");
	cleanup_free char *copy = env && *env ? strdup(env) : NULL;
	char *save = NULL;

	if (!env || !*env)
		return strv_push(out, KUBE_DEFAULT_DNS);
	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, " ,", &save); t; t = strtok_r(NULL, " ,", &save)) {
		if (egress_upstream_check(t) < 0) {
			sandy_error(
				"bad address '%s' in SANDY_DNS_UPSTREAM: an IPv4 address outside "
				"127.0.0.0/8 is needed",
				t);
			return -EINVAL;
		}
		if (strv_push(out, t) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The rule options, taken apart: sandyfs in the Pod reads the rule files
 * from the ConfigMap, and the types also choose the registries the
 * allowlist holds. */
static int gather_rules(const struct kubesession_opts *in, struct kube_options *o,
			struct gathered *g)
{
	for (size_t i = 0; i < in->rule_args.n; i++) {
		if (!strcmp(in->rule_args.v[i], "--no-detect"))
			o->no_detect = true;
		else if (!strcmp(in->rule_args.v[i], "--type") && i + 1 < in->rule_args.n &&
			 strv_push(&g->types, in->rule_args.v[++i]) < 0)
			return out_of_memory();
	}
	int r = rule_texts(&in->rule_args, &g->names, &g->texts);
	if (r < 0)
		return r;
	if (g->names.n && !(g->rules = calloc(g->names.n, sizeof(*g->rules))))
		return out_of_memory();
	for (size_t i = 0; i < g->names.n; i++)
		g->rules[i] = (struct kube_rule_file){g->names.v[i], g->texts.v[i]};
	o->rules = g->rules;
	o->n_rules = g->names.n;
	return 0;
}

/* The network's side: the resolvers and, filtered, the allowlist a
 * session of this user's would have. */
static int gather_network(const struct kubesession_opts *in, struct kube_options *o,
			  struct gathered *g)
{
	struct host_user u = {0};
	int r;

	if (o->network != EGRESS_OPEN && (r = upstreams(&g->upstreams)) < 0)
		return r;
	if (o->network != EGRESS_FILTERED)
		return 0;
	if ((r = host_user(&u)) < 0)
		return r;
	r = gateway_allowlist(o->agent, &g->types, &in->allow_args, &u, &g->allow);
	host_user_free(&u);
	return r;
}

/* Everything of O beyond IN's options, in G. */
static int gather(const struct kubesession_opts *in, struct kube_options *o, struct gathered *g)
{
	const char *token = getenv("SANDY_GIT_TOKEN"), *user = getenv("SANDY_GIT_USER");
	int r;

	if (!o->name) {
		if (!(g->default_name = kube_default_name(o->repo)))
			return out_of_memory();
		o->name = g->default_name;
	}
	if ((r = gather_rules(in, o, g)) < 0 || (r = gather_network(in, o, g)) < 0)
		return r;
	/* The credentials, from this environment, as a session passes the
	 * agent's: what is not here is not printed, and the Pod reads the
	 * Secret when it exists. */
	const char *value = getenv(kube_api_key_name(o->agent));
	if (value && *value)
		o->api_key = value;
	if (token && *token) {
		o->git_password = token;
		o->git_username = user && *user ? user : NULL;
	}
	return 0;
}

/* What the manifests assume, once they are known to be made. */
static void notes(const struct kube_options *o)
{
	const char *dns = getenv("SANDY_DNS_UPSTREAM"), *key = kube_api_key_name(o->agent);

	if (o->network != EGRESS_OPEN && (!dns || !*dns))
		sandy_note("the gateway forwards allowed names to %s, where most clusters have "
			   "their DNS service; set SANDY_DNS_UPSTREAM to yours ('kubectl "
			   "--namespace=kube-system get service kube-dns')",
			   KUBE_DEFAULT_DNS);
	if (o->network == EGRESS_FILTERED && !o->types->n)
		sandy_note("no --type: the project's types are detected in the Pod, after the "
			   "allowlist is made, so it holds no package registry; name them with "
			   "--type, or --allow the registries");
	if (!o->api_key)
		sandy_note("no %s here: Secret '%s-agent' is not printed; create it ('kubectl "
			   "create secret generic %s-agent --from-literal=%s=...'), or log in "
			   "inside the Pod",
			   key, o->name, o->name, key);
}

static int apply(const char *text)
{
	char *kubectl[] = {"kubectl", "apply", "-f", "-", NULL};

	if (!host_find_program("kubectl", NULL)) {
		sandy_error("cannot find 'kubectl' for --apply: install it, or apply what 'sandy "
			    "kube' prints without --apply with the tool of your cluster");
		return -ENOENT;
	}
	int status = proc_run_input(kubectl, text, strlen(text));
	if (status < 0) {
		sandy_error("cannot run 'kubectl': %s", strerror(-status));
		return status;
	}
	if (status != 0) {
		sandy_error("'kubectl apply' failed (status %d)", status);
		return -EIO;
	}
	return 0;
}

int kubesession_run(const struct kubesession_opts *in, char **why)
{
	cleanup_gathered struct gathered g = {0};
	cleanup_free char *text = NULL;
	struct kube_options o = {
		.name = in->name,
		.repo = in->repo,
		.branch = in->branch,
		.agent = in->agent,
		.image = in->image,
		.fs_image = fsbox_image(),
		.gateway_image = in->gateway_image,
		.types = &g.types,
		.network = in->network,
		.allow = &g.allow,
		.upstreams = &g.upstreams,
		.memory = in->memory,
		.cpus = in->cpus,
		.volume_claim = in->volume_claim,
		.native_sidecars = in->native_sidecars,
		.command = in->command,
	};
	cJSON *docs = NULL;

	*why = NULL;
	int r = gather(in, &o, &g);
	if (r < 0)
		return r;
	r = kube_manifests(&o, &docs, why);
	if (r == -EINVAL)
		return r;
	if (r < 0 || !(text = kube_stream(docs))) {
		cJSON_Delete(docs);
		return out_of_memory();
	}
	cJSON_Delete(docs);
	notes(&o);
	if (!in->apply) {
		fputs(text, stdout);
		return fflush(stdout) == 0 ? 0 : -EIO;
	}
	return apply(text);
}
