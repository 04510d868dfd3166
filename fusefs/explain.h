/*
 * explain: the `sandyfs explain` and `sandyfs rules` subcommands.
 *
 *   sandyfs explain [RULE OPTIONS] [--json] SOURCE PATH...
 *   sandyfs rules   [RULE OPTIONS] [--json] SOURCE
 *
 * RULE OPTIONS are those of rules.h (-t/--type, --no-detect, -r/--rules).
 * PATH is relative to SOURCE, or SOURCE/..., or an absolute path inside
 * SOURCE; it need not exist. Exit status: 0, 1 when the rules cannot be
 * loaded or a path is outside SOURCE, 2 on a usage error.
 */
#ifndef SANDYFS_EXPLAIN_H
#define SANDYFS_EXPLAIN_H

/* ARGV[0] is the subcommand name ("explain", "rules"). */
int sandyfs_cmd_explain(int argc, char **argv);
int sandyfs_cmd_rules(int argc, char **argv);

#endif
