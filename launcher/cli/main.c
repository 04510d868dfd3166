/* main.c - the sandy command line: parses arguments, dispatches to a
 * session, `explain`, `build-image` or `kube`, and is the only place that
 * turns usage errors into exit statuses. */

#include "config.h"
#include "session/agentgit.h"
#include "session/doctor.h"
#include "world/egress.h"
#include "runtime/engine.h"
#include "runtime/fsbox.h"
#include "runtime/images.h"
#include "runtime/gateway.h"
#include "session/allow.h"
#include "sys/host.h"
#include "world/kube.h"
#include "runtime/nsrun.h"
#include "sys/proc.h"
#include "session/run.h"
#include "sandy_help.h"
#include "runtime/fsquery.h"
#include "runtime/sandyfs.h"
#include "world/world.h"

#include "common/cachedir.h"
#include "common/cli.h"

#include <cJSON.h>
#include <dirent.h>
#include <getopt.h>
#include <git2.h>
#include <limits.h>
#include <string.h>

/* What --help prints: sandy.help, made a C string by the build. */
static const char usage_text[] = SANDY_HELP;

static const struct cli sandy_cli = {"sandy", "sandy --help", SANDY_EXIT_FAILURE};

#define usage_error(...) cli_usage_error(&sandy_cli, __VA_ARGS__)

/* Every command ends option parsing the same way on what is not one of its
 * options: --help prints the usage (status 0), the rest is a usage error. */
static int help_or_bad_option(int c, char **argv)
{
	if (c != 'h')
		return cli_bad_option(&sandy_cli, c, argv);
	fputs(usage_text, stdout);
	return 0;
}

static int out_of_memory(void)
{
	sandy_error("out of memory");
	return SANDY_EXIT_FAILURE;
}

/* Rule files are named relative to where sandy was started; sandyfs may
 * read them from elsewhere. */
static int push_rules_file(struct strv *args, const char *file)
{
	char cwd[PATH_MAX];

	if (strv_push(args, "--rules") < 0)
		return -ENOMEM;
	if (file[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return strv_push(args, file);
	return strv_pushf(args, "%s/%s", cwd, file);
}

enum {
	OPT_FS = 256,
	OPT_FS_MODE,
	OPT_RUNTIME,
	OPT_IMAGE,
	OPT_NO_DETECT,
	OPT_JSON,
	OPT_VERSION,
	OPT_AGENT,
	OPT_FROM,
	OPT_NETWORK,
	OPT_ALLOW,
	OPT_SESSION,
	OPT_GATEWAY_IMAGE,
	OPT_GATEWAY_ONLY,
	OPT_FS_ONLY,
	OPT_PUSH_GATE,
	OPT_FORCE,
	OPT_FS_FROM_SOURCE,
	OPT_REPO,
	OPT_BRANCH,
	OPT_NAME,
	OPT_VOLUME_CLAIM,
	OPT_MEMORY,
	OPT_CPUS,
	OPT_NO_NATIVE_SIDECARS,
	OPT_APPLY,
};

/* Handles the rule options shared by a session and `explain`: 1 when C
 * was one, 0 when not, negative on error. */
static int rule_option(int c, struct strv *args)
{
	switch (c) {
	case 't':
		return strv_push(args, "--type") < 0 || strv_push(args, optarg) < 0 ? -ENOMEM : 1;
	case 'r':
		return push_rules_file(args, optarg) < 0 ? -ENOMEM : 1;
	case OPT_NO_DETECT:
		return strv_push(args, "--no-detect") < 0 ? -ENOMEM : 1;
	default:
		return 0;
	}
}

/* Where COMMAND starts: the first "--" that is not an option's value. */
static int find_command(int argc, char **argv)
{
	static const char *const takes_value[] = {
		"--fs",	   "--fs-mode", "--runtime",	  "--image", "-t",    "--type", "-r",
		"--rules", "-C",	"--agent",	  "-e",	     "--env", "--from", "--network",
		"--allow", "--session", "--gateway-image"};
	/* `sandy kube`'s. */
	static const char *const kube_takes_value[] = {"--repo",	 "--branch", "--name",
						       "--volume-claim", "--memory", "--cpus"};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return i;
		bool value = false;
		for (size_t k = 0; k < ARRAY_SIZE(takes_value); k++)
			value |= !strcmp(argv[i], takes_value[k]);
		for (size_t k = 0; k < ARRAY_SIZE(kube_takes_value); k++)
			value |= !strcmp(argv[i], kube_takes_value[k]);
		if (value)
			i++;
	}
	return argc;
}

static int parse_network(const char *name, enum egress_mode *mode)
{
	if (!strcmp(name, "filtered"))
		*mode = EGRESS_FILTERED;
	else if (!strcmp(name, "open"))
		*mode = EGRESS_OPEN;
	else if (!strcmp(name, "none"))
		*mode = EGRESS_NONE;
	else
		return -EINVAL;
	return 0;
}

/* --agent, else $SANDY_AGENT, else the command's name when it is an
 * agent's, else claude. */
static const char *pick_agent(const char *given, char **command)
{
	const char *env = getenv("SANDY_AGENT");

	if (given)
		return given;
	if (env && *env) /* checked by the caller */
		return env;
	if (command) {
		const char *base = strrchr(command[0], '/');
		base = base ? base + 1 : command[0];
		if (world_agent_known(base))
			return base;
	}
	return "claude";
}

/* A session, or with DOCTOR `sandy doctor`: the same options, checked. */
static int cmd_run(int argc, char **argv, bool doctor)
{
	static const struct option longopts[] = {
		{"fs", required_argument, NULL, OPT_FS},
		{"fs-mode", required_argument, NULL, OPT_FS_MODE},
		{"runtime", required_argument, NULL, OPT_RUNTIME},
		{"image", required_argument, NULL, OPT_IMAGE},
		{"agent", required_argument, NULL, OPT_AGENT},
		{"env", required_argument, NULL, 'e'},
		{"network", required_argument, NULL, OPT_NETWORK},
		{"allow", required_argument, NULL, OPT_ALLOW},
		{"type", required_argument, NULL, 't'},
		{"rules", required_argument, NULL, 'r'},
		{"no-detect", no_argument, NULL, OPT_NO_DETECT},
		{"quiet", no_argument, NULL, 'q'},
		{"push-gate", no_argument, NULL, OPT_PUSH_GATE},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	const char *image = getenv("SANDY_IMAGE");
	struct sandy_opts o = {
		.project = ".",
		.image = image && *image ? image : SANDY_DEFAULT_IMAGE,
	};
	int split = find_command(argc, argv), c, status;
	const char *network = getenv("SANDY_NETWORK"), *gate = getenv("SANDY_PUSH_GATE");

	if (gate && *gate) {
		if (strcmp(gate, "1") != 0 && strcmp(gate, "0") != 0) {
			status = usage_error("SANDY_PUSH_GATE must be 1 or 0, not '%s'", gate);
			goto out;
		}
		o.push_gate = !strcmp(gate, "1");
	}
	if (network && *network && parse_network(network, &o.network) < 0) {
		status = usage_error("unknown network '%s' in SANDY_NETWORK (filtered, open, none)",
				     network);
		goto out;
	}
	opterr = 0;
	while ((c = getopt_long(split, argv, ":t:r:e:qh", longopts, NULL)) != -1) {
		int r = rule_option(c, &o.rule_args);
		if (r < 0) {
			status = out_of_memory();
			goto out;
		}
		if (r > 0)
			continue;
		switch (c) {
		case OPT_FS:
			if (!strcmp(optarg, "fuse"))
				o.fs = SANDY_FS_FUSE;
			else if (!strcmp(optarg, "bind"))
				o.fs = SANDY_FS_BIND;
			else {
				status = usage_error(
					"unknown filesystem '%s' for --fs (fuse, bind)", optarg);
				goto out;
			}
			break;
		case OPT_FS_MODE:
			if (!strcmp(optarg, "auto"))
				o.fs_mode = SANDY_FS_MODE_AUTO;
			else if (!strcmp(optarg, "host"))
				o.fs_mode = SANDY_FS_MODE_HOST;
			else if (!strcmp(optarg, "container"))
				o.fs_mode = SANDY_FS_MODE_CONTAINER;
			else {
				status = usage_error(
					"unknown mode '%s' for --fs-mode (auto, host, container)",
					optarg);
				goto out;
			}
			break;
		case OPT_RUNTIME:
			if (!strcmp(optarg, "docker"))
				o.runtime = SANDY_RUNTIME_DOCKER;
			else if (!strcmp(optarg, "podman"))
				o.runtime = SANDY_RUNTIME_PODMAN;
			else if (!strcmp(optarg, "none"))
				o.runtime = SANDY_RUNTIME_NONE;
			else {
				status = usage_error(
					"unknown runtime '%s' for --runtime (docker, podman, none)",
					optarg);
				goto out;
			}
			break;
		case OPT_IMAGE:
			o.image = optarg;
			break;
		case OPT_AGENT:
			if (!world_agent_known(optarg)) {
				status = usage_error("unknown agent '%s' for --agent (claude, "
						     "codex, gemini)",
						     optarg);
				goto out;
			}
			o.agent = optarg;
			break;
		case 'e':
			if (!world_env_arg_valid(optarg)) {
				status = usage_error("bad --env '%s': NAME or NAME=VALUE, NAME "
						     "of letters, digits and '_'",
						     optarg);
				goto out;
			}
			if (strv_push(&o.env_args, optarg) < 0) {
				status = out_of_memory();
				goto out;
			}
			break;
		case OPT_NETWORK:
			if (parse_network(optarg, &o.network) < 0) {
				status = usage_error(
					"unknown network '%s' for --network (filtered, open, none)",
					optarg);
				goto out;
			}
			break;
		case OPT_ALLOW: {
			const char *why;
			if (egress_domain_check(optarg, &why) < 0) {
				status =
					usage_error("bad domain '%s' for --allow: %s", optarg, why);
				goto out;
			}
			if (strv_push(&o.allow_args, optarg) < 0) {
				status = out_of_memory();
				goto out;
			}
			break;
		}
		case 'q':
			o.quiet = true;
			break;
		case OPT_PUSH_GATE:
			o.push_gate = true;
			break;
		case OPT_VERSION:
			/* The shape (platform.h): what this build can do at all. */
			printf("sandy %s (libgit2 %d.%d.%d, cJSON %s, %s)\n", SANDY_VERSION,
			       LIBGIT2_VER_MAJOR, LIBGIT2_VER_MINOR, LIBGIT2_VER_REVISION,
			       cJSON_Version(),
			       SANDY_LINUX_HOST ? "linux"
						: "portable: sandyfs serves in the engine's world");
			status = 0;
			goto out;
		default:
			status = help_or_bad_option(c, argv);
			goto out;
		}
	}
	if (split - optind > 1) {
		status = usage_error(
			"more than one PROJECT_DIR ('%s', '%s'); a command goes after '--'",
			argv[optind], argv[optind + 1]);
		goto out;
	}
	if (split - optind == 1)
		o.project = argv[optind];
	if (split < argc) {
		if (split + 1 == argc) {
			status = usage_error("no COMMAND after '--'");
			goto out;
		}
		o.command = argv + split + 1;
	}
	const char *env_agent = getenv("SANDY_AGENT");
	if (!o.agent && env_agent && *env_agent && !world_agent_known(env_agent)) {
		status = usage_error("unknown agent '%s' in SANDY_AGENT (claude, codex, gemini)",
				     env_agent);
		goto out;
	}
	o.agent = pick_agent(o.agent, o.command);
	git_libgit2_init();
	/* Only the status is read, never hooks, filters or fsmonitor: a
	 * project that sudo's user owns is safe to read as root. */
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	status = doctor ? doctor_run(&o) : run_session(&o);
	git_libgit2_shutdown();
out:
	strv_free(&o.rule_args);
	strv_free(&o.env_args);
	strv_free(&o.allow_args);
	return status;
}

static int cmd_explain(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"type", required_argument, NULL, 't'},
		{"rules", required_argument, NULL, 'r'},
		{"no-detect", no_argument, NULL, OPT_NO_DETECT},
		{"json", no_argument, NULL, OPT_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	cleanup_strv struct strv args = {0};
	cleanup_sandyfs_prog struct sandyfs_prog fs = {0};
	const char *project = ".";
	bool json = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:r:C:h", longopts, NULL)) != -1) {
		int r = rule_option(c, &args);
		if (r < 0)
			return out_of_memory();
		if (r > 0)
			continue;
		switch (c) {
		case 'C':
			project = optarg;
			break;
		case OPT_JSON:
			json = true;
			break;
		default:
			return help_or_bad_option(c, argv);
		}
	}
	if (optind == argc)
		return usage_error("explain needs at least one PATH");
	if (sandyfs_prog_find(&fs, NULL, project, &args) < 0)
		return SANDY_EXIT_FAILURE;
	cleanup_strv struct strv full = {0};
	int r = sandyfs_query_argv(&full, &fs, "explain", json, &args);
	for (int i = optind; r == 0 && i < argc; i++)
		r = strv_push(&full, argv[i]);
	if (r < 0)
		return out_of_memory();
	sandyfs_exec(&full);
	return SANDY_EXIT_FAILURE;
}

/* sandy git [RULE OPTIONS] [list] [PROJECT_DIR]
 * sandy git [RULE OPTIONS] import [--force] BRANCH [PROJECT_DIR] */
static int cmd_git(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"type", required_argument, NULL, 't'},
		{"rules", required_argument, NULL, 'r'},
		{"no-detect", no_argument, NULL, OPT_NO_DETECT},
		{"force", no_argument, NULL, OPT_FORCE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	cleanup_strv struct strv args = {0};
	cleanup_sandyfs_prog struct sandyfs_prog fs = {0};
	bool force = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:r:h", longopts, NULL)) != -1) {
		int r = rule_option(c, &args);
		if (r < 0)
			return out_of_memory();
		if (r > 0)
			continue;
		if (c == OPT_FORCE)
			force = true;
		else
			return help_or_bad_option(c, argv);
	}
	char **pos = argv + optind;
	int npos = argc - optind;
	const char *sub = "list", *branch = NULL, *project = ".";
	if (npos > 0 && (!strcmp(pos[0], "list") || !strcmp(pos[0], "import"))) {
		sub = pos[0];
		pos++;
		npos--;
	}
	if (!strcmp(sub, "import")) {
		if (npos < 1 || npos > 2)
			return usage_error("git import needs BRANCH (and at most one PROJECT_DIR)");
		branch = pos[0];
		if (npos == 2)
			project = pos[1];
	} else if (force) {
		return usage_error("--force goes with 'git import'");
	} else if (npos > 1) {
		return usage_error("git list takes at most one PROJECT_DIR");
	} else if (npos == 1) {
		project = pos[0];
	}
	if (sandyfs_prog_find(&fs, NULL, project, &args) < 0)
		return SANDY_EXIT_FAILURE;
	return agentgit_command(&fs, &args, sub, force, branch);
}

/* sandy clean [PROJECT_DIR]: sandyfs store --clear. */
static int cmd_clean(int argc, char **argv)
{
	cleanup_sandyfs_prog struct sandyfs_prog fs = {0};

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc > 2)
		return usage_error("clean takes at most one PROJECT_DIR");
	if (argc == 2 && argv[1][0] == '-')
		return usage_error("unknown option '%s'", argv[1]);
	const struct strv no_rules = {0};
	if (sandyfs_prog_find(&fs, NULL, argc == 2 ? argv[1] : ".", &no_rules) < 0)
		return SANDY_EXIT_FAILURE;
	cleanup_strv struct strv full = {0};
	int r = strv_extend(&full, &fs.argv);
	r = strv_ok(r, strv_push(&full, "store"));
	r = strv_ok(r, strv_push(&full, "--clear"));
	r = strv_ok(r, strv_push(&full, "--"));
	r = strv_ok(r, strv_push(&full, fs.project));
	if (r < 0)
		return out_of_memory();
	sandyfs_exec(&full);
	return SANDY_EXIT_FAILURE;
}

static int cmd_build_image(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"image", required_argument, NULL, OPT_IMAGE},
		{"runtime", required_argument, NULL, OPT_RUNTIME},
		{"from", required_argument, NULL, OPT_FROM},
		{"gateway-image", required_argument, NULL, OPT_GATEWAY_IMAGE},
		{"gateway-only", no_argument, NULL, OPT_GATEWAY_ONLY},
		{"fs-only", no_argument, NULL, OPT_FS_ONLY},
		{"fs-from-source", no_argument, NULL, OPT_FS_FROM_SOURCE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *image = getenv("SANDY_IMAGE");
	const char *gateway = getenv("SANDY_GATEWAY_IMAGE");
	const char *engine = "docker", *from = NULL;
	int split = find_command(argc, argv), c;
	bool gateway_only = false, fs_only = false, fs_from_source = false;

	if (!image || !*image)
		image = SANDY_DEFAULT_IMAGE;
	if (!gateway || !*gateway)
		gateway = SANDY_DEFAULT_GATEWAY_IMAGE;
	opterr = 0;
	while ((c = getopt_long(split, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_IMAGE:
			image = optarg;
			break;
		case OPT_FROM:
			from = optarg;
			break;
		case OPT_GATEWAY_IMAGE:
			gateway = optarg;
			break;
		case OPT_GATEWAY_ONLY:
			gateway_only = true;
			break;
		case OPT_FS_ONLY:
			fs_only = true;
			break;
		case OPT_FS_FROM_SOURCE:
			fs_from_source = true;
			break;
		case OPT_RUNTIME:
			if (strcmp(optarg, "docker") != 0 && strcmp(optarg, "podman") != 0)
				return usage_error(
					"build-image needs --runtime=docker or podman, not '%s'",
					optarg);
			engine = optarg;
			break;
		default:
			return help_or_bad_option(c, argv);
		}
	}
	if (optind != split)
		return usage_error("unexpected argument '%s' (build arguments go after '--')",
				   argv[optind]);
	if (engine_check(engine, false) < 0)
		return SANDY_EXIT_FAILURE;
	if ((gateway_only || fs_only) && split < argc)
		return usage_error("build arguments after '--' are for the agent image, which "
				   "--%s does not build",
				   fs_only ? "fs-only" : "gateway-only");
	if (gateway_only && fs_only)
		return usage_error("--gateway-only and --fs-only: choose one");
	if (gateway_only && fs_from_source)
		return usage_error("--fs-from-source is for sandyfs's image, which --gateway-only "
				   "does not build");
	if (fs_only)
		return images_build_fs(engine, from, fs_from_source) < 0 ? SANDY_EXIT_FAILURE
									       : 0;
	return images_build(engine, gateway_only ? NULL : image, gateway, from,
				  split < argc ? argv + split + 1 : NULL, fs_from_source) < 0
		       ? SANDY_EXIT_FAILURE
		       : 0;
}

/* The rule files a session's sandyfs would read beyond the shipped ones,
 * for the ConfigMap, in the order it reads them: those of --rules in
 * RULE_ARGS, then the user's (rules.d of the configuration directory, by
 * name). In the Pod all are --rules, which sandyfs trusts as it trusts
 * rules.d. Names in NAMES, texts in TEXTS, one each. */
static int kube_rule_texts(const struct strv *rule_args, struct strv *names, struct strv *texts)
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
 * cluster's DNS service (cmd_kube says so); printing the manifests asks
 * no cluster. */
static int kube_upstreams(struct strv *out)
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

/* `sandy kube [OPTIONS] --repo URL [-- COMMAND [ARGS...]]`: the manifests
 * of one session on a cluster (kube.h), printed, or with --apply handed
 * to `kubectl apply -f -`. */
static int cmd_kube(int argc, char **argv)
{
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
		{"type", required_argument, NULL, 't'},
		{"rules", required_argument, NULL, 'r'},
		{"no-detect", no_argument, NULL, OPT_NO_DETECT},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *image = getenv("SANDY_IMAGE"), *gateway = getenv("SANDY_GATEWAY_IMAGE");
	const char *network = getenv("SANDY_NETWORK"), *agent = NULL, *env_agent;
	const char *token = getenv("SANDY_GIT_TOKEN"), *user = getenv("SANDY_GIT_USER");
	cleanup_strv struct strv rule_args = {0}, allow_args = {0}, types = {0}, allow = {0};
	cleanup_strv struct strv upstreams = {0}, names = {0}, texts = {0};
	cleanup_free struct kube_rule_file *rules = NULL;
	cleanup_free char *default_name = NULL, *why = NULL, *text = NULL;
	struct kube_options o = {
		.image = image && *image ? image : SANDY_DEFAULT_IMAGE,
		.fs_image = fsbox_image(),
		.gateway_image = gateway && *gateway ? gateway : SANDY_DEFAULT_GATEWAY_IMAGE,
		.memory = KUBE_DEFAULT_MEMORY,
		.cpus = KUBE_DEFAULT_CPUS,
		.native_sidecars = true,
		.types = &types,
		.allow = &allow,
		.upstreams = &upstreams,
	};
	int split = find_command(argc, argv), c, r;
	char **command = NULL;
	bool apply = false;
	cJSON *docs = NULL;

	if (network && *network && parse_network(network, &o.network) < 0)
		return usage_error("unknown network '%s' in SANDY_NETWORK (filtered, open, none)",
				   network);
	opterr = 0;
	while ((c = getopt_long(split, argv, ":t:r:h", longopts, NULL)) != -1) {
		if ((r = rule_option(c, &rule_args)) < 0)
			return out_of_memory();
		if (r > 0)
			continue;
		switch (c) {
		case OPT_REPO:
			o.repo = optarg;
			break;
		case OPT_BRANCH:
			o.branch = optarg;
			break;
		case OPT_NAME:
			o.name = optarg;
			break;
		case OPT_VOLUME_CLAIM:
			o.volume_claim = optarg;
			break;
		case OPT_MEMORY:
			o.memory = optarg;
			break;
		case OPT_CPUS:
			o.cpus = optarg;
			break;
		case OPT_NO_NATIVE_SIDECARS:
			o.native_sidecars = false;
			break;
		case OPT_APPLY:
			apply = true;
			break;
		case OPT_IMAGE:
			o.image = optarg;
			break;
		case OPT_AGENT:
			if (!world_agent_known(optarg))
				return usage_error("unknown agent '%s' for --agent (claude, codex, "
						   "gemini)",
						   optarg);
			agent = optarg;
			break;
		case OPT_NETWORK:
			if (parse_network(optarg, &o.network) < 0)
				return usage_error(
					"unknown network '%s' for --network (filtered, open, none)",
					optarg);
			break;
		case OPT_ALLOW: {
			const char *bad;
			if (egress_domain_check(optarg, &bad) < 0)
				return usage_error("bad domain '%s' for --allow: %s", optarg, bad);
			if (strv_push(&allow_args, optarg) < 0)
				return out_of_memory();
			break;
		}
		default:
			return help_or_bad_option(c, argv);
		}
	}
	if (optind != split)
		return usage_error("unexpected argument '%s' (the agent's command goes after '--')",
				   argv[optind]);
	if (!o.repo)
		return usage_error("kube needs --repo URL: the repository the Pod clones");
	if (split < argc) {
		if (split + 1 == argc)
			return usage_error("no COMMAND after '--'");
		o.command = command = argv + split + 1;
	}
	env_agent = getenv("SANDY_AGENT");
	if (!agent && env_agent && *env_agent && !world_agent_known(env_agent))
		return usage_error("unknown agent '%s' in SANDY_AGENT (claude, codex, gemini)",
				   env_agent);
	o.agent = pick_agent(agent, command);
	if (!o.name) {
		if (!(default_name = kube_default_name(o.repo)))
			return out_of_memory();
		o.name = default_name;
	}
	/* The rule options, taken apart: sandyfs in the Pod reads the rule
	 * files from the ConfigMap, and the types also choose the
	 * registries the allowlist holds. */
	for (size_t i = 0; i < rule_args.n; i++) {
		if (!strcmp(rule_args.v[i], "--no-detect"))
			o.no_detect = true;
		else if (!strcmp(rule_args.v[i], "--type") && i + 1 < rule_args.n &&
			 strv_push(&types, rule_args.v[++i]) < 0)
			return out_of_memory();
	}
	if (kube_rule_texts(&rule_args, &names, &texts) < 0)
		return SANDY_EXIT_FAILURE;
	if (names.n && !(rules = calloc(names.n, sizeof(*rules))))
		return out_of_memory();
	for (size_t i = 0; i < names.n; i++)
		rules[i] = (struct kube_rule_file){names.v[i], texts.v[i]};
	o.rules = rules;
	o.n_rules = names.n;
	if (o.network != EGRESS_OPEN && kube_upstreams(&upstreams) < 0)
		return SANDY_EXIT_FAILURE;
	if (o.network == EGRESS_FILTERED) {
		struct host_user u = {0};
		if (host_user(&u) < 0)
			return SANDY_EXIT_FAILURE;
		r = gateway_allowlist(o.agent, &types, &allow_args, &u, &allow);
		host_user_free(&u);
		if (r < 0)
			return SANDY_EXIT_FAILURE;
	}
	/* The credentials, from this environment, as a session passes the
	 * agent's: what is not here is not printed, and the Pod reads the
	 * Secret when it exists. */
	const char *key = kube_api_key_name(o.agent), *value = getenv(key);
	if (value && *value)
		o.api_key = value;
	if (token && *token) {
		o.git_password = token;
		o.git_username = user && *user ? user : NULL;
	}
	r = kube_manifests(&o, &docs, &why);
	if (r == -EINVAL)
		return usage_error("%s", why);
	if (r < 0 || !(text = kube_stream(docs))) {
		cJSON_Delete(docs);
		return out_of_memory();
	}
	cJSON_Delete(docs);
	/* What the manifests assume, once they are known to be made. */
	const char *dns = getenv("SANDY_DNS_UPSTREAM");
	if (o.network != EGRESS_OPEN && (!dns || !*dns))
		sandy_note("the gateway forwards allowed names to %s, where most clusters have "
			   "their DNS service; set SANDY_DNS_UPSTREAM to yours ('kubectl "
			   "--namespace=kube-system get service kube-dns')",
			   KUBE_DEFAULT_DNS);
	if (o.network == EGRESS_FILTERED && !types.n)
		sandy_note("no --type: the project's types are detected in the Pod, after the "
			   "allowlist is made, so it holds no package registry; name them with "
			   "--type, or --allow the registries");
	if (!o.api_key)
		sandy_note("no %s here: Secret '%s-agent' is not printed; create it ('kubectl "
			   "create secret generic %s-agent --from-literal=%s=...'), or log in "
			   "inside the Pod",
			   key, o.name, o.name, key);
	if (!apply) {
		fputs(text, stdout);
		return fflush(stdout) == 0 ? 0 : SANDY_EXIT_FAILURE;
	}
	if (!host_find_program("kubectl", NULL)) {
		sandy_error("cannot find 'kubectl' for --apply: install it, or apply what 'sandy "
			    "kube' prints without --apply with the tool of your cluster");
		return SANDY_EXIT_FAILURE;
	}
	char *kubectl[] = {"kubectl", "apply", "-f", "-", NULL};
	int status = proc_run_input(kubectl, text, strlen(text));
	if (status < 0)
		sandy_error("cannot run 'kubectl': %s", strerror(-status));
	else if (status != 0)
		sandy_error("'kubectl apply' failed (status %d)", status);
	return status == 0 ? 0 : SANDY_EXIT_FAILURE;
}

/* `sandy allow [--session ID] DOMAIN`. Everything but --session and --help
 * is the domain, checked as one: "-rf" is a bad domain, not an option. */
static int cmd_allow(int argc, char **argv)
{
	const char *session = NULL, *domain = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return 0;
		}
		if (!strcmp(a, "--session") && i + 1 < argc)
			session = argv[++i];
		else if (!strncmp(a, "--session=", 10))
			session = a + 10;
		else if (!strcmp(a, "--session"))
			return usage_error("--session needs a session ID");
		else if (!strcmp(a, "--") && i + 2 == argc && !domain)
			domain = argv[++i];
		else if (domain)
			return usage_error("allow takes one DOMAIN, not '%s' and '%s'", domain, a);
		else
			domain = a;
	}
	if (!domain)
		return usage_error("allow needs a DOMAIN");
	return session_allow(domain, session);
}

/* Every command reads the user's configuration (config.json, rules.d)
 * where a session does, and so do the sandyfs processes it starts: the
 * user's directory, also under sudo. */
static int export_config_dir(void)
{
	struct host_user u = {0};
	int r = host_user(&u);

	if (r == 0)
		r = world_export_config_dir(&u);
	host_user_free(&u);
	if (r < 0)
		sandy_error("cannot find the user's configuration directory: %s", strerror(-r));
	return r;
}

int main(int argc, char **argv)
{
	/* Inside the sandbox, before the command: nothing of the user's
	 * configuration is read there. */
	if (argc >= 2 && !strcmp(argv[1], NSRUN_INSIDE))
		return nsrun_inside(argc - 1, argv + 1);
	if (export_config_dir() < 0)
		return SANDY_EXIT_FAILURE;
	if (argc >= 2 && !strcmp(argv[1], "explain"))
		return cmd_explain(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "build-image"))
		return cmd_build_image(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "clean"))
		return cmd_clean(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "allow"))
		return cmd_allow(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "git"))
		return cmd_git(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "kube"))
		return cmd_kube(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "doctor"))
		return cmd_run(argc - 1, argv + 1, true);
	return cmd_run(argc, argv, false);
}
