/* run.c - `sandy [OPTIONS] [PROJECT_DIR] [-- COMMAND [ARGS...]]`, one
 * session, and `sandy doctor`, which takes the same options and checks
 * what that session needs: parsed into struct sandy_opts (session/run.h)
 * for run_session or doctor_run. */

#include "cli.h"
#include "config.h"
#include "runtime/engine.h"
#include "session/doctor.h"
#include "session/run.h"
#include "world/world.h"

#include <cJSON.h>
#include <git2.h>
#include <string.h>

static const char shortopts[] = ":t:r:e:qh";

static const struct option longopts[] = {
	{"fs", required_argument, NULL, OPT_FS},
	{"fs-mode", required_argument, NULL, OPT_FS_MODE},
	{"runtime", required_argument, NULL, OPT_RUNTIME},
	{"image", required_argument, NULL, OPT_IMAGE},
	{"agent", required_argument, NULL, OPT_AGENT},
	{"env", required_argument, NULL, 'e'},
	{"network", required_argument, NULL, OPT_NETWORK},
	{"allow", required_argument, NULL, OPT_ALLOW},
	RULE_LONG_OPTS,
	{"quiet", no_argument, NULL, 'q'},
	{"push-gate", no_argument, NULL, OPT_PUSH_GATE},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

static const struct choices fs_choices = {
	"filesystem",
	(const struct choice[]){
		{"fuse", SANDY_FS_FUSE},
		{"bind", SANDY_FS_BIND},
		{NULL, 0},
	},
};

static const struct choices fs_mode_choices = {
	"mode",
	(const struct choice[]){
		{"auto", SANDY_FS_MODE_AUTO},
		{"host", SANDY_FS_MODE_HOST},
		{"container", SANDY_FS_MODE_CONTAINER},
		{NULL, 0},
	},
};

static const struct choices runtime_choices = {
	"runtime",
	(const struct choice[]){
		{"docker", SANDY_RUNTIME_DOCKER},
		{"podman", SANDY_RUNTIME_PODMAN},
		{"none", SANDY_RUNTIME_NONE},
		{NULL, 0},
	},
};

static void sandy_opts_free(struct sandy_opts *o)
{
	strv_free(&o->rule_args);
	strv_free(&o->env_args);
	strv_free(&o->allow_args);
}
#define cleanup_sandy_opts __attribute__((cleanup(sandy_opts_free)))

static int print_version(void)
{
	/* The shape (platform.h): what this build can do at all. */
	printf("sandy %s (libgit2 %d.%d.%d, cJSON %s, %s)\n", SANDY_VERSION, LIBGIT2_VER_MAJOR,
	       LIBGIT2_VER_MINOR, LIBGIT2_VER_REVISION, cJSON_Version(),
	       SANDY_LINUX_HOST ? "linux" : "portable: sandyfs serves in the engine's world");
	return 0;
}

/* The variables that stand for options, read before them: 0, or -EINVAL
 * said. */
static int run_env(struct sandy_opts *o)
{
	const char *gate = getenv("SANDY_PUSH_GATE");

	if (gate && *gate) {
		if (strcmp(gate, "1") != 0 && strcmp(gate, "0") != 0) {
			usage_error("SANDY_PUSH_GATE must be 1 or 0, not '%s'", gate);
			return -EINVAL;
		}
		o->push_gate = !strcmp(gate, "1");
	}
	return network_env(&o->network);
}

static int env_option(const char *arg, struct strv *env)
{
	if (!world_env_arg_valid(arg)) {
		usage_error("bad --env '%s': NAME or NAME=VALUE, NAME of letters, digits and '_'",
			    arg);
		return -EINVAL;
	}
	if (strv_push(env, arg) < 0) {
		out_of_memory();
		return -ENOMEM;
	}
	return 0;
}

/* One of a session's options, C with optarg, into O: 1 when C was one, 0
 * when not, -errno said. */
static int run_option(int c, struct sandy_opts *o)
{
	int v = 0;

	switch (c) {
	case OPT_FS:
		if ((v = choose(&fs_choices, optarg, "for --fs")) >= 0)
			o->fs = v;
		break;
	case OPT_FS_MODE:
		if ((v = choose(&fs_mode_choices, optarg, "for --fs-mode")) >= 0)
			o->fs_mode = v;
		break;
	case OPT_RUNTIME:
		if ((v = choose(&runtime_choices, optarg, "for --runtime")) >= 0)
			o->runtime = v;
		break;
	case OPT_NETWORK:
		if ((v = choose(&network_choices, optarg, "for --network")) >= 0)
			o->network = v;
		break;
	case OPT_IMAGE:
		o->image = optarg;
		break;
	case OPT_AGENT:
		if ((v = agent_check(optarg, "for --agent")) == 0)
			o->agent = optarg;
		break;
	case 'e':
		v = env_option(optarg, &o->env_args);
		break;
	case OPT_ALLOW:
		v = allow_option(optarg, &o->allow_args);
		break;
	case 'q':
		o->quiet = true;
		break;
	case OPT_PUSH_GATE:
		o->push_gate = true;
		break;
	default:
		return rule_option(c, &o->rule_args);
	}
	return v < 0 ? v : 1;
}

/* A session's arguments into O: CLI_RUN, or the exit status to end with. */
static int run_parse(int argc, char **argv, struct sandy_opts *o)
{
	int split = find_command(argc, argv, shortopts, longopts), c, r;

	if (run_env(o) < 0)
		return SANDY_EXIT_FAILURE;
	opterr = 0;
	while ((c = getopt_long(split, argv, shortopts, longopts, NULL)) != -1) {
		if (c == OPT_VERSION)
			return print_version();
		r = run_option(c, o);
		if (r < 0)
			return SANDY_EXIT_FAILURE;
		if (r == 0)
			return help_or_bad_option(c, argv);
	}
	if (split - optind > 1)
		return usage_error(
			"more than one PROJECT_DIR ('%s', '%s'); a command goes after '--'",
			argv[optind], argv[optind + 1]);
	if (split - optind == 1)
		o->project = argv[optind];
	if (command_after(argc, argv, split, &o->command) < 0 ||
	    agent_pick(&o->agent, o->command) < 0)
		return SANDY_EXIT_FAILURE;
	return CLI_RUN;
}

/* A session, or with DOCTOR the report on what it needs. */
static int session(int argc, char **argv, bool doctor)
{
	const char *image = getenv("SANDY_IMAGE");
	cleanup_sandy_opts struct sandy_opts o = {
		.project = ".",
		.image = image && *image ? image : SANDY_DEFAULT_IMAGE,
	};
	int status = run_parse(argc, argv, &o);

	if (status != CLI_RUN)
		return status;
	git_libgit2_init();
	/* Only the status is read, never hooks, filters or fsmonitor: a
	 * project that sudo's user owns is safe to read as root. */
	git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
	status = doctor ? doctor_run(&o) : run_session(&o);
	git_libgit2_shutdown();
	return status;
}

int cmd_run(int argc, char **argv)
{
	return session(argc, argv, false);
}

int cmd_doctor(int argc, char **argv)
{
	return session(argc, argv, true);
}
