/*
 * policy_bench: decisions per second of the pure policy for realistic paths, with the rules a
 * mount loads: base, two project types, and the protections of every other shipped type.
 * A micro-benchmark, not a test: it prints numbers and never fails on them.
 *
 * usage: policy_bench [SECONDS] [TYPE TYPE]   (default: 2 s, node python)
 *
 * SANDY_RULES_DIR names another rules directory, so that two catalogues can
 * be measured side by side by the same binary. POLICY_BENCH_COUNT=N makes
 * exactly N decisions instead of timing them, for an instruction count that
 * repeats (valgrind --tool=callgrind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/canon.h"
#include "policy/policy.h"
#include "policy/rules.h"

/* A mix of what an agent session looks up and writes in a JS/Python repo. */
static const char *const paths[] = {
	"src/components/Button.tsx",
	"src/components/forms/TextField.tsx",
	"src/utils/format.ts",
	"src/index.ts",
	"src/api/client/http.ts",
	"tests/test_api.py",
	"tests/unit/models/test_user.py",
	"app/models/user.py",
	"app/views/dashboard/__init__.py",
	"node_modules/react/index.js",
	"node_modules/@babel/core/lib/transformation/normalize-file.js",
	"node_modules/.bin/jest",
	"node_modules/lodash/package.json",
	"docs/guide/getting-started.md",
	"README.md",
	"package.json",
	"pyproject.toml",
	"tsconfig.json",
	".vscode/settings.json",
	".git/objects/ab/cdef0123456789",
	".git/HEAD",
	"lib/deep/a/b/c/d/e/f/module.py",
	"build/assets/main.3f2a9c.js",
	"dist/bundle.js",
	".env",
	".env.local",
	"src/conftest.py",
	"scripts/release.sh",
	"public/favicon.ico",
	"src/styles/theme.css",
	"coverage/lcov-report/index.html",
	"a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/deep.ts",
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const enum sfs_op ops[] = {SFS_OP_LOOKUP, SFS_OP_LOOKUP, SFS_OP_LOOKUP,
					  SFS_OP_CREATE, SFS_OP_WRITE,	SFS_OP_UNLINK};
	const size_t np = sizeof(paths) / sizeof(paths[0]);
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	const char *t1 = argc > 3 ? argv[2] : "node", *t2 = argc > 3 ? argv[3] : "python";
	char *shipped = NULL, *overlays = NULL, *err = NULL;
	struct sfs_loader *l = NULL;
	struct sfs_policy *p = NULL;
	unsigned long n = 0, writable = 0;
	double t0, dt;
	char buf[1024];

	if (sfs_shipped_rules_dir(&shipped, &err) == 0 &&
	    sfs_shipped_overlays_dir(&overlays, &err) == 0)
		l = sfs_loader_new(shipped, overlays);
	free(shipped);
	free(overlays);
	if (!l || sfs_loader_add_type(l, "base", "bench", &err) < 0 ||
	    sfs_loader_add_type(l, t1, "bench", &err) < 0 ||
	    sfs_loader_add_type(l, t2, "bench", &err) < 0 ||
	    sfs_loader_add_protections(l, &err) < 0 || sfs_loader_finish(l, &p, &err) < 0) {
		fprintf(stderr, "policy_bench: cannot load rules: %s\n", err ? err : "?");
		return 1;
	}
	sfs_loader_free(l);
	printf("policy_bench: base + %s + %s + every type's protections, %zu rules, %zu paths, "
	       "%.1f s per run\n",
	       t1, t2, sfs_policy_rule_count(p), np, secs);

	t0 = now();
	do {
		for (int k = 0; k < 1000; k++, n++) {
			const char *s = paths[n % np];

			sfs_canon_path(s, strlen(s), buf, sizeof(buf));
		}
	} while ((dt = now() - t0) < secs / 4);
	printf("canonical form only: %.2f M paths/s (%.0f ns each)\n", (double)n / dt / 1e6,
	       dt / (double)n * 1e9);

	const char *count = getenv("POLICY_BENCH_COUNT");
	if (count) {
		unsigned long want = strtoul(count, NULL, 10);

		for (n = 0; n < want; n++) {
			struct sfs_decision d;

			sfs_policy_decide(p, paths[n % np], ops[n % 6], &d);
			writable += d.allowed;
		}
		printf("decisions: %lu (%lu allowed)\n", n, writable);
		sfs_policy_free(p);
		free(err);
		return 0;
	}
	n = 0;
	t0 = now();
	do {
		for (int k = 0; k < 1000; k++, n++) {
			struct sfs_decision d;

			sfs_policy_decide(p, paths[n % np], ops[n % 6], &d);
			writable += d.allowed;
		}
	} while ((dt = now() - t0) < secs);
	printf("decisions: %.2f M/s on one core (%.0f ns each; %lu allowed of %lu)\n",
	       (double)n / dt / 1e6, dt / (double)n * 1e9, writable, n);
	sfs_policy_free(p);
	free(err);
	return 0;
}
