/* kube.c - `sandy kube [OPTIONS] --repo URL [-- COMMAND [ARGS...]]`: the
 * manifests of one session on a cluster, printed, or with --apply handed
 * to `kubectl apply -f -` (session/kubesession.h). */

#include "cli.h"
#include "runtime/engine.h"
#include "runtime/gateway.h"
#include "session/kubesession.h"
#include "world/kube.h"

static const char shortopts[] = ":t:r:h";

static const struct option longopts[] = {
	{"repo", required_argument, NULL, OPT_REPO},
	{"branch", required_argument, NULL, OPT_BRANCH},
	{"name", required_argument, NULL, OPT_NAME},
	{"volume-claim", required_argument, NULL, OPT_VOLUME_CLAIM},
	{"memory", required_argument, NULL, OPT_MEMORY},
	{"cpus", required_argument, NULL, OPT_CPUS},
	{"no-native-sidecars", no_argument, NULL, OPT_NO_NATIVE_SIDECARS},
	{"apply", no_argument, NULL, OPT_APPLY},
	{"image", required_argument, NULL, OPT_IMAGE},
	{"agent", required_argument, NULL, OPT_AGENT},
	{"network", required_argument, NULL, OPT_NETWORK},
	{"allow", required_argument, NULL, OPT_ALLOW},
	RULE_LONG_OPTS,
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static void kubesession_opts_free(struct kubesession_opts *o)
{
	strv_free(&o->allow_args);
	strv_free(&o->rule_args);
}
#define cleanup_kubesession_opts __attribute__((cleanup(kubesession_opts_free)))

/* One option, C with optarg, into O: 1 when C was one, 0 when not, -errno
 * said. */
static int kube_option(int c, struct kubesession_opts *o)
{
	int v = 0;

	switch (c) {
	case OPT_REPO:
		o->repo = optarg;
		break;
	case OPT_BRANCH:
		o->branch = optarg;
		break;
	case OPT_NAME:
		o->name = optarg;
		break;
	case OPT_VOLUME_CLAIM:
		o->volume_claim = optarg;
		break;
	case OPT_MEMORY:
		o->memory = optarg;
		break;
	case OPT_CPUS:
		o->cpus = optarg;
		break;
	case OPT_NO_NATIVE_SIDECARS:
		o->native_sidecars = false;
		break;
	case OPT_APPLY:
		o->apply = true;
		break;
	case OPT_IMAGE:
		o->image = optarg;
		break;
	case OPT_AGENT:
		if ((v = agent_check(optarg, "for --agent")) == 0)
			o->agent = optarg;
		break;
	case OPT_NETWORK:
		if ((v = choose(&network_choices, optarg, "for --network")) >= 0)
			o->network = v;
		break;
	case OPT_ALLOW:
		v = allow_option(optarg, &o->allow_args);
		break;
	default:
		return rule_option(c, &o->rule_args);
	}
	return v < 0 ? v : 1;
}

static int kube_parse(int argc, char **argv, struct kubesession_opts *o)
{
	int split = find_command(argc, argv, shortopts, longopts), c, r;

	if (network_env(&o->network) < 0)
		return SANDY_EXIT_FAILURE;
	opterr = 0;
	while ((c = getopt_long(split, argv, shortopts, longopts, NULL)) != -1) {
		if ((r = kube_option(c, o)) < 0)
			return SANDY_EXIT_FAILURE;
		if (r == 0)
			return help_or_bad_option(c, argv);
	}
	if (optind != split)
		return usage_error("unexpected argument '%s' (the agent's command goes after '--')",
				   argv[optind]);
	if (!o->repo)
		return usage_error("kube needs --repo URL: the repository the Pod clones");
	if (command_after(argc, argv, split, &o->command) < 0 ||
	    agent_pick(&o->agent, o->command) < 0)
		return SANDY_EXIT_FAILURE;
	return CLI_RUN;
}

int cmd_kube(int argc, char **argv)
{
	const char *image = getenv("SANDY_IMAGE"), *gateway = getenv("SANDY_GATEWAY_IMAGE");
	cleanup_kubesession_opts struct kubesession_opts o = {
		.image = image && *image ? image : SANDY_DEFAULT_IMAGE,
		.gateway_image = gateway && *gateway ? gateway : SANDY_DEFAULT_GATEWAY_IMAGE,
		.memory = KUBE_DEFAULT_MEMORY,
		.cpus = KUBE_DEFAULT_CPUS,
		.native_sidecars = true,
	};
	cleanup_free char *why = NULL;
	int status = kube_parse(argc, argv, &o);

	if (status != CLI_RUN)
		return status;
	if (kubesession_run(&o, &why) == 0)
		return 0;
	/* An option the manifests cannot hold is a usage error. */
	return why ? usage_error("%s", why) : SANDY_EXIT_FAILURE;
}
