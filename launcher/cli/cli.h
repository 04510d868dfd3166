/* cli.h - what the files of sandy's command line share, and nothing outside
 * launcher/cli/ includes: the usage conventions, the options more than one
 * command takes, each command's entry. main.c holds the shared parts and
 * the table of commands; each command has a file of its own, which parses
 * its arguments into one struct and hands that to the library. */
#ifndef SANDY_CLI_CLI_H
#define SANDY_CLI_CLI_H

#include "world/egress.h"
#include "sys/sandy.h"

#include "common/cli.h"

#include <getopt.h>
#include <stdbool.h>

extern const struct cli sandy_cli;

#define usage_error(...) cli_usage_error(&sandy_cli, __VA_ARGS__)

/* What a command's parser returns when the command is to run; anything
 * else is the exit status to end with (--help, a usage error). */
#define CLI_RUN (-1)

/* Prints --help's text; returns 0, the status of --help. */
int print_usage(void);

/* Every command ends option parsing the same way on what is not one of its
 * options: --help prints the usage (status 0), the rest is a usage error. */
int help_or_bad_option(int c, char **argv);

/* "out of memory", said; returns SANDY_EXIT_FAILURE. */
int out_of_memory(void);

/* The long options' values, above every character a short option is. */
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

/* Where COMMAND starts: the first "--" that is not the value of an option
 * of SHORTOPTS and LONGOPTS, getopt_long's own tables. An option is known
 * by its whole spelling ("-t", "--type"), as getopt_long's abbreviations
 * are not. */
int find_command(int argc, char **argv, const char *shortopts, const struct option *longopts);

/* One value of an option that names one of a few. */
struct choice {
	const char *name;
	int value;
};

/* Such an option: the noun its message names ("filesystem") and its
 * values, in the order the message lists them, up to a NULL name. */
struct choices {
	const char *noun;
	const struct choice *v;
};

/* The value VALUE names among C's, or a usage error saying WHERE it was
 * given ("for --fs", "in SANDY_NETWORK") and what C holds: -EINVAL. */
int choose(const struct choices *c, const char *value, const char *where);

extern const struct choices network_choices;

/* --network's default, SANDY_NETWORK, into *MODE when it is set: 0, or
 * -EINVAL said. */
int network_env(enum egress_mode *mode);

/* The rule options in a getopt_long table, declared once for every
 * command that takes them (rule_option handles them); their short
 * letters "t:r:" go in the command's short options. */
/* clang-format off */
#define RULE_LONG_OPTS                                                                             \
	{"type", required_argument, NULL, 't'},                                                    \
	{"rules", required_argument, NULL, 'r'},                                                   \
	{"no-detect", no_argument, NULL, OPT_NO_DETECT}
/* clang-format on */

/* Handles the rule options shared by a session, `explain`, `git` and
 * `kube`, as sandyfs takes them, into ARGS: 1 when C was one, 0 when not,
 * -ENOMEM said. */
int rule_option(int c, struct strv *args);

/* --agent NAME, checked: 0, or -EINVAL said (WHERE as for choose). */
int agent_check(const char *name, const char *where);

/* The agent when *AGENT (--agent) is not given: $SANDY_AGENT (checked),
 * else COMMAND's name when it is an agent's, else claude. 0, or -EINVAL
 * said. */
int agent_pick(const char **agent, char **command);

/* --allow DOMAIN, checked, into ALLOW: 0, or -errno said. */
int allow_option(const char *domain, struct strv *allow);

/* The command after the "--" at SPLIT (none when SPLIT is ARGC) into
 * *COMMAND: 0, or -EINVAL said when nothing follows it. */
int command_after(int argc, char **argv, int split, char ***command);

/* The commands: ARGV[0] is the command's name (sandy's own for cmd_run);
 * each returns sandy's exit status. */
int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_git(int argc, char **argv);
int cmd_clean(int argc, char **argv);
int cmd_build_image(int argc, char **argv);
int cmd_kube(int argc, char **argv);
int cmd_allow(int argc, char **argv);

#endif
