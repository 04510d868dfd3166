/* main.c - the sandyfs command line: parses arguments, dispatches to the
 * subcommands, and is the only place that decides exit statuses. */

#include "config.h"
#include "host/compat.h"
#include "daemon.h"
#include "explain.h"
#include "git/gitpriv.h"
#include "policy/rules.h"
#include "sandyfs_help.h"
#include "common/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

/* What --help prints: sandyfs.help, made a C string by the build. */
static const char usage_text[] = SANDYFS_HELP;

static const struct cli sandyfs_cli = {"sandyfs", "sandyfs --help", 2};

static char *append_opt(char *list, const char *opt)
{
	size_t a = list ? strlen(list) : 0, b = strlen(opt);
	char *s = realloc(list, a + b + 2);

	if (!s) {
		fputs("sandyfs: out of memory\n", stderr);
		exit(1);
	}
	if (a)
		s[a++] = ',';
	memcpy(s + a, opt, b + 1);
	return s;
}

static int cmd_mount(int argc, char **argv)
{
	enum {
		OPT_ALLOW_OTHER = 256,
		OPT_PID_FILE,
		OPT_AUDIT,
		OPT_LAZY_OPEN,
		OPT_STATS,
		OPT_STORE,
		OPT_PRIVATE_GIT,
		OPT_GIT_HOST_PATH,
		OPT_DROP_MOUNT_PRIVILEGE,
		OPT_OVER_MOUNT
	};
	static const struct option longopts[] = {
		{"foreground", no_argument, NULL, 'f'},
		{"allow-other", no_argument, NULL, OPT_ALLOW_OTHER},
		{"pid-file", required_argument, NULL, OPT_PID_FILE},
		{"audit", required_argument, NULL, OPT_AUDIT},
		{"lazy-open", no_argument, NULL, OPT_LAZY_OPEN},
		{"stats", required_argument, NULL, OPT_STATS},
		{"store", required_argument, NULL, OPT_STORE},
		{"private-git", no_argument, NULL, OPT_PRIVATE_GIT},
		{"git-host-path", required_argument, NULL, OPT_GIT_HOST_PATH},
		{"drop-mount-privilege", no_argument, NULL, OPT_DROP_MOUNT_PRIVILEGE},
		{"over-mount", no_argument, NULL, OPT_OVER_MOUNT},
		{"help", no_argument, NULL, 'h'},
		SFS_RULE_LONG_OPTS,
		{NULL, 0, NULL, 0},
	};
	struct sfs_mount_opts o = {.cache_timeout = 0.5};
	int status, c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fo:h" SFS_RULE_SHORT_OPTS, longopts, NULL)) != -1) {
		int used = sfs_rule_opts_parse(&o.rules, c, optarg);
		if (used < 0) {
			fputs("sandyfs: out of memory\n", stderr);
			status = 1;
			goto out;
		}
		if (used)
			continue;
		switch (c) {
		case 'f':
			o.foreground = true;
			break;
		case 'o':
			o.fuse_opts = append_opt(o.fuse_opts, optarg);
			break;
		case OPT_ALLOW_OTHER:
			o.allow_other = true;
			break;
		case OPT_PID_FILE:
			o.pid_file = optarg;
			break;
		case OPT_AUDIT:
			o.audit_file = optarg;
			break;
		case OPT_LAZY_OPEN:
			o.lazy_open = true;
			break;
		case OPT_STATS:
			o.stats_file = optarg;
			break;
		case OPT_STORE:
			o.store = optarg;
			break;
		case OPT_PRIVATE_GIT:
			o.private_git = true;
			break;
		case OPT_GIT_HOST_PATH:
			o.git_host_path = optarg;
			break;
		case OPT_DROP_MOUNT_PRIVILEGE:
			if (!sfs_mount_privilege_droppable()) {
				status = cli_usage_error(&sandyfs_cli,
							 "--drop-mount-privilege works on Linux "
							 "only: there are no capabilities to "
							 "drop here");
				goto out;
			}
			o.drop_mount_privilege = true;
			break;
		case OPT_OVER_MOUNT:
			o.over_mount = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			status = 0;
			goto out;
		default:
			status = cli_bad_option(&sandyfs_cli, c, argv);
			goto out;
		}
	}
	if (argc - optind != 2) {
		status = cli_usage_error(&sandyfs_cli, "mount needs SOURCE and MOUNTPOINT%s",
					 argc - optind > 2 ? " (too many arguments)" : "");
		goto out;
	}
	o.source = argv[optind];
	o.mountpoint = argv[optind + 1];
	status = sfs_mount_main(&o);
out:
	free(o.fuse_opts);
	sfs_rule_opts_free(&o.rules);
	return status;
}

static int cmd_store(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"store", required_argument, NULL, 's'},
		{"clear", no_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *store = NULL;
	bool clear = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			store = optarg;
			break;
		case 'c':
			clear = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option(&sandyfs_cli, c, argv);
		}
	}
	if (argc - optind != 1)
		return cli_usage_error(&sandyfs_cli, "store needs exactly one SOURCE%s",
				       argc - optind > 1 ? " (too many arguments)" : "");
	return sfs_store_main(argv[optind], store, clear);
}

/* sandyfs git list|import|check: the private repository (gitpriv.h). */
static int cmd_git(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_FORCE, OPT_GIT_DIR, OPT_STORE, OPT_HOST_GIT };
	static const struct option longopts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"force", no_argument, NULL, OPT_FORCE},
		{"git-dir", required_argument, NULL, OPT_GIT_DIR},
		{"host-git", required_argument, NULL, OPT_HOST_GIT},
		{"store", required_argument, NULL, OPT_STORE},
		{"help", no_argument, NULL, 'h'},
		SFS_RULE_LONG_OPTS,
		{NULL, 0, NULL, 0},
	};
	struct sfs_rule_opts rules = {0};
	const char *git_dir = NULL, *store = NULL, *host_git = NULL;
	bool json = false, force = false;
	int c, status;

	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			fputs(usage_text, stdout);
			return 0;
		}
		return cli_usage_error(&sandyfs_cli, "git needs list, import or check");
	}
	const char *sub = argv[1];
	argc--;
	argv++;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h" SFS_RULE_SHORT_OPTS, longopts, NULL)) != -1) {
		int used = sfs_rule_opts_parse(&rules, c, optarg);
		if (used < 0) {
			fputs("sandyfs: out of memory\n", stderr);
			status = 1;
			goto out;
		}
		if (used)
			continue;
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_FORCE:
			force = true;
			break;
		case OPT_GIT_DIR:
			git_dir = optarg;
			break;
		case OPT_STORE:
			store = optarg;
			break;
		case OPT_HOST_GIT:
			host_git = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			status = 0;
			goto out;
		default:
			status = cli_bad_option(&sandyfs_cli, c, argv);
			goto out;
		}
	}
	int nargs = argc - optind;
	bool check_only = git_dir || host_git;
	if (!strcmp(sub, "list") && nargs == 1 && !force && !check_only)
		status = sfs_git_list_main(&rules, store, json, argv[optind]);
	else if (!strcmp(sub, "import") && nargs == 2 && !json && !check_only)
		status = sfs_git_import_main(&rules, store, force, argv[optind], argv[optind + 1]);
	else if (!strcmp(sub, "check") && nargs >= 2 && !json && !force && !store)
		status = sfs_git_check_main(&rules, git_dir, host_git, argv[optind],
					    argv + optind + 1, nargs - 1);
	else if (strcmp(sub, "list") && strcmp(sub, "import") && strcmp(sub, "check"))
		status = cli_usage_error(&sandyfs_cli, "unknown git command '%s'", sub);
	else
		status = cli_usage_error(&sandyfs_cli, "bad arguments for 'git %s'", sub);
out:
	sfs_rule_opts_free(&rules);
	return status;
}

static int cmd_umount(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc != 2)
		return cli_usage_error(&sandyfs_cli, "umount needs exactly one MOUNTPOINT");
	if (argv[1][0] == '-')
		return cli_usage_error(&sandyfs_cli, "unknown option '%s'", argv[1]);
	return sfs_umount_main(argv[1]);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error(&sandyfs_cli, "no command given");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("sandyfs %s (libfuse %d.%d, %s)\n", SANDY_VERSION, FUSE_MAJOR_VERSION,
		       FUSE_MINOR_VERSION, sfs_compat_flavour());
		return 0;
	}
	if (!strcmp(cmd, "mount"))
		return cmd_mount(argc - 1, argv + 1);
	if (!strcmp(cmd, "umount") || !strcmp(cmd, "unmount"))
		return cmd_umount(argc - 1, argv + 1);
	if (!strcmp(cmd, "explain"))
		return sandyfs_cmd_explain(argc - 1, argv + 1);
	if (!strcmp(cmd, "rules"))
		return sandyfs_cmd_rules(argc - 1, argv + 1);
	if (!strcmp(cmd, "store"))
		return cmd_store(argc - 1, argv + 1);
	if (!strcmp(cmd, "git"))
		return cmd_git(argc - 1, argv + 1);
	if (cmd[0] == '-')
		return cli_usage_error(&sandyfs_cli, "unknown option '%s'", cmd);
	return cli_usage_error(&sandyfs_cli, "unknown command '%s'", cmd);
}
