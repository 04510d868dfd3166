/* main.c - the sandy command line: the table of commands and main(), which
 * picks one by the first argument (a session when it names none), and what
 * the commands' parsers share (cli.h). With the commands' files, the only
 * place that turns usage errors into exit statuses. */

#include "cli.h"
#include "runtime/nsrun.h"
#include "sandy_help.h"
#include "sys/host.h"
#include "world/world.h"

#include "common/usage.h"

#include <limits.h>
#include <string.h>

/* What --help prints: sandy.help, made a C string by the build. */
static const char usage_text[] = SANDY_HELP;

const struct cli sandy_cli = {"sandy", "sandy --help", SANDY_EXIT_FAILURE};

int print_usage(void)
{
	fputs(usage_text, stdout);
	return 0;
}

int help_or_bad_option(int c, char **argv)
{
	if (c != 'h')
		return cli_bad_option(&sandy_cli, c, argv);
	return print_usage();
}

int out_of_memory(void)
{
	sandy_error("out of memory");
	return SANDY_EXIT_FAILURE;
}

/* Whether ARG is an option of SHORTOPTS or LONGOPTS that takes the next
 * argument as its value. */
static bool takes_next(const char *arg, const char *shortopts, const struct option *longopts)
{
	if (arg[0] != '-' || !arg[1])
		return false;
	if (arg[1] != '-') {
		const char *p = !arg[2] && arg[1] != ':' ? strchr(shortopts, arg[1]) : NULL;
		return p && p[1] == ':';
	}
	for (const struct option *o = longopts; o->name; o++)
		if (o->has_arg == required_argument && !strcmp(arg + 2, o->name))
			return true;
	return false;
}

int find_command(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return i;
		if (takes_next(argv[i], shortopts, longopts))
			i++;
	}
	return argc;
}

int choose(const struct choices *c, const char *value, const char *where)
{
	char list[256] = "";
	size_t len = 0;

	for (const struct choice *ch = c->v; ch->name; ch++) {
		if (!strcmp(value, ch->name))
			return ch->value;
		if (len < sizeof(list))
			len += snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "",
					ch->name);
	}
	usage_error("unknown %s '%s' %s (%s)", c->noun, value, where, list);
	return -EINVAL;
}

const struct choices network_choices = {
	"network",
	(const struct choice[]){
		{"filtered", EGRESS_FILTERED},
		{"open", EGRESS_OPEN},
		{"none", EGRESS_NONE},
		{NULL, 0},
	},
};

int network_env(enum egress_mode *mode)
{
	const char *env = getenv("SANDY_NETWORK");
	int v;

	if (!env || !*env)
		return 0;
	if ((v = choose(&network_choices, env, "in SANDY_NETWORK")) < 0)
		return v;
	*mode = v;
	return 0;
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

int rule_option(int c, struct strv *args)
{
	int r;

	switch (c) {
	case 't':
		r = strv_push(args, "--type");
		r = strv_ok(r, strv_push(args, optarg));
		break;
	case 'r':
		r = push_rules_file(args, optarg);
		break;
	case OPT_NO_DETECT:
		r = strv_push(args, "--no-detect");
		break;
	default:
		return 0;
	}
	if (r < 0) {
		out_of_memory();
		return -ENOMEM;
	}
	return 1;
}

int agent_check(const char *name, const char *where)
{
	if (world_agent_known(name))
		return 0;
	usage_error("unknown agent '%s' %s (claude, codex, gemini)", name, where);
	return -EINVAL;
}

int agent_pick(const char **agent, char **command)
{
	const char *env = getenv("SANDY_AGENT");

	if (*agent)
		return 0;
	if (env && *env) {
		if (agent_check(env, "in SANDY_AGENT") < 0)
			return -EINVAL;
		*agent = env;
		return 0;
	}
	*agent = "claude";
	if (command) {
		const char *base = strrchr(command[0], '/');
		base = base ? base + 1 : command[0];
		if (world_agent_known(base))
			*agent = base;
	}
	return 0;
}

int allow_option(const char *domain, struct strv *allow)
{
	const char *why;

	if (egress_domain_check(domain, &why) < 0) {
		usage_error("bad domain '%s' for --allow: %s", domain, why);
		return -EINVAL;
	}
	if (strv_push(allow, domain) < 0) {
		out_of_memory();
		return -ENOMEM;
	}
	return 0;
}

int command_after(int argc, char **argv, int split, char ***command)
{
	if (split == argc)
		return 0;
	if (split + 1 == argc) {
		usage_error("no COMMAND after '--'");
		return -EINVAL;
	}
	*command = argv + split + 1;
	return 0;
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

/* The commands by their first argument; any other is a session's, whose
 * arguments begin there. */
static const struct sandy_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	/* Inside the sandbox, before the command: nothing of the user's
	 * configuration is read there. */
	bool no_config;
} commands[] = {
	{NSRUN_INSIDE, nsrun_inside, true},
	{"explain", cmd_explain, false},
	{"build-image", cmd_build_image, false},
	{"clean", cmd_clean, false},
	{"allow", cmd_allow, false},
	{"git", cmd_git, false},
	{"kube", cmd_kube, false},
	{"doctor", cmd_doctor, false},
};

int main(int argc, char **argv)
{
	const struct sandy_command *cmd = NULL;

	usage_set_prog("sandy");
	for (size_t i = 0; argc >= 2 && !cmd && i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			cmd = &commands[i];
	if ((!cmd || !cmd->no_config) && export_config_dir() < 0)
		return SANDY_EXIT_FAILURE;
	return cmd ? cmd->fn(argc - 1, argv + 1) : cmd_run(argc, argv);
}
