/* kubesession.h - `sandy kube`: one session on a cluster, from the options
 * of the command line to the manifests (world/kube.h) printed or applied.
 * What a session on this host would take from it is gathered here as the
 * session gathers it: the rule files (--rules, rules.d) for the ConfigMap,
 * the allowlist (gateway.h), the resolvers, the agent's and git's
 * credentials from this environment; and the notes on what the manifests
 * assume. */
#ifndef SANDY_KUBESESSION_H
#define SANDY_KUBESESSION_H

#include "world/egress.h"
#include "sys/sandy.h"

#include <stdbool.h>

struct kubesession_opts {
	const char *repo;	  /* what the Pod clones */
	const char *branch;	  /* NULL: the remote's default branch */
	const char *name;	  /* the Pod's; NULL: made from REPO (kube_default_name) */
	const char *volume_claim; /* NULL: the clone and the store on emptyDirs */
	const char *memory, *cpus;
	bool native_sidecars;
	const char *image, *gateway_image;
	const char *agent; /* claude, codex or gemini, as the command line picked it */
	enum egress_mode network;
	struct strv allow_args; /* --allow DOMAIN, each checked */
	struct strv rule_args;	/* --type/--rules/--no-detect, as sandyfs takes them */
	char **command;		/* NULL: the agent, interactive */
	bool apply;		/* hand the manifests to `kubectl apply -f -` */
};

/* Prints the manifests of O on stdout, or with O->apply applies them with
 * kubectl; the notes on what they assume go to stderr. Returns 0, or
 * -errno with the reason said; an option the manifests cannot hold is
 * -EINVAL with *WHY (malloc'ed) saying which and why, unsaid: it is a
 * usage error, for the command line to report as one. */
int kubesession_run(const struct kubesession_opts *o, char **why);

#endif
