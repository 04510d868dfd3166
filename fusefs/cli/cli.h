/* cli.h - what the files of sandyfs's command line share, and nothing
 * outside fusefs/cli/ includes. One file per command: each parses its
 * arguments into one struct and makes one library call (daemon.h,
 * explain.h, git/gitpriv.h); main.c's table picks the command. Only this
 * folder decides exit statuses. */
#ifndef SANDYFS_CLI_H
#define SANDYFS_CLI_H

#include "common/cli.h"

/* What --help prints: sandyfs.help, made a C string by the build. */
extern const char sandyfs_usage[];
/* A usage error: "sandyfs: MESSAGE", see `sandyfs --help`, status 2. */
extern const struct cli sandyfs_cli;

/* The commands: ARGV[0] is the command's name. Exit status. */
int cmd_mount(int argc, char **argv);
int cmd_umount(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_git(int argc, char **argv);

#endif
