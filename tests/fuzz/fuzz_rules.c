/*
 * fuzz_rules: libFuzzer target for the rule parser (fusefs/rules.c) and
 * the policy built from it. Input: one byte selecting the trust level, then
 * a rule file. Parsing either succeeds or fails with a message naming the
 * file; a policy that compiles answers decisions for fixed paths and for
 * the strings of the input without failing open: the repository's .git is
 * always immutable, a nested one immutable or, inside a private directory,
 * private (in the store).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "policy/symchain.h"
#include "policy/rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = {
		"",	     "a",     "src/x.c",      ".git/config", "a/.GIT/x", ".env",
		".vscode/x", "GIT~1", "x/y/z/w/v.ts", "\xc3\xa9/k",  "a/../b"};
	static const enum sfs_op ops[] = {SFS_OP_LOOKUP, SFS_OP_CREATE, SFS_OP_MKDIR,
					  SFS_OP_RENAME_TO};
	struct sfs_loader *l;
	struct sfs_policy *p = NULL;
	char *err = NULL;
	enum sfs_trust trust;
	int r;

	if (size < 1)
		return 0;
	trust = (enum sfs_trust)(data[0] % 3);
	l = sfs_loader_new(NULL, NULL);
	r = sfs_loader_add_buffer(l, "fuzz.json", (const char *)data + 1, size - 1, trust, "fuzz",
				  &err);
	if (r == 0)
		r = sfs_loader_finish(l, &p, &err);
	if (r < 0 && (!err || strncmp(err, "fuzz.json", 9) != 0) && r != -ENOMEM)
		abort(); /* every refusal names the file */
	if (p) {
		struct sfs_decision d;

		for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
			for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
				sfs_policy_decide(p, paths[i], ops[o], &d);
				if (!d.why || !d.rule_file)
					abort();
			}
		/* The repository's own .git stays immutable whatever the rules;
		 * a nested one is too, unless a private directory holds it: then
		 * it lives in the store, and SOURCE's copy is never written. */
		sfs_policy_decide(p, ".git/hooks/x", SFS_OP_CREATE, &d);
		if (d.allowed || d.cls != SFS_CLASS_IMMUTABLE)
			abort();
		sfs_policy_decide(p, "a/.git/hooks/x", SFS_OP_CREATE, &d);
		if (d.cls != SFS_CLASS_PRIVATE && (d.allowed || d.cls != SFS_CLASS_IMMUTABLE))
			abort();
		for (size_t i = 0; i < sfs_policy_rule_count(p); i++) {
			const struct sfs_rule *ru = sfs_policy_rule(p, i);

			sfs_policy_decide(p, ru->pattern, SFS_OP_WRITE, &d);
			sfs_policy_check_symlink(p, "src/l", ru->pattern, NULL, NULL, &d);
		}
		sfs_policy_free(p);
	}
	free(err);
	sfs_loader_free(l);
	return 0;
}
