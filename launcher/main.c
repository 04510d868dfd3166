/* main.c - the sandy command line: parses arguments, dispatches to a
 * session, `explain` or `build-image`, and is the only place that turns
 * usage errors into exit statuses. */

#include "config.h"
#include "agentgit.h"
#include "doctor.h"
#include "egress.h"
#include "engine.h"
#include "gateway.h"
#include "host.h"
#include "run.h"
#include "sandy_help.h"
#include "sandyfs.h"
#include "world.h"

#include "common/cli.h"

#include <cJSON.h>
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

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return i;
		for (size_t k = 0; k < ARRAY_SIZE(takes_value); k++)
			if (!strcmp(argv[i], takes_value[k])) {
				i++;
				break;
			}
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
		return engine_build_fs_image(engine, from, fs_from_source) < 0 ? SANDY_EXIT_FAILURE
									       : 0;
	return engine_build_image(engine, gateway_only ? NULL : image, gateway, from,
				  split < argc ? argv + split + 1 : NULL, fs_from_source) < 0
		       ? SANDY_EXIT_FAILURE
		       : 0;
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
	return gateway_allow_command(domain, session);
}

int main(int argc, char **argv)
{
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
	if (argc >= 2 && !strcmp(argv[1], "doctor"))
		return cmd_run(argc - 1, argv + 1, true);
	return cmd_run(argc, argv, false);
}
