/* mount.c - `sandyfs mount [OPTIONS] SOURCE MOUNTPOINT`: sfs_mount_main(). */

#include "cli.h"
#include "daemon.h"
#include "host/compat.h"

#include "common/usage.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *append_opt(char *list, const char *opt)
{
	size_t a = list ? strlen(list) : 0, b = strlen(opt);
	char *s = realloc(list, a + b + 2);

	if (!s) {
		error("out of memory");
		exit(1);
	}
	if (a)
		s[a++] = ',';
	memcpy(s + a, opt, b + 1);
	return s;
}

int cmd_mount(int argc, char **argv)
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
			error("out of memory");
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
			fputs(sandyfs_usage, stdout);
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
