/* kube.h - one session on a Kubernetes cluster, as the manifests that run
 * it: a Pod whose containers are the agent's and sandy's own (the clone of
 * the repository, sandyfs and the network gateway), and the Secrets and
 * the ConfigMap it reads. Pure: from the options to cJSON objects and to
 * the text `kubectl apply -f -` and `podman kube play` read; no file, no
 * process, no environment. `sandy kube` (main.c) gathers the options.
 *
 * What runs where, and why:
 *
 *   clone     an init container (the agent's image, which has git): clones
 *             the repository into a volume, with the git credential of a
 *             Secret that only it and sandyfs mount; the agent never sees
 *             the credential, and no container of the agent's yet runs.
 *   gateway   SANDY_DEFAULT_GATEWAY_IMAGE, NET_ADMIN and what dnsmasq
 *             needs: the firewall and the only resolver of the Pod. All
 *             containers of a Pod share one network namespace, so the
 *             allowlist applies to the agent as it does with `sandy`.
 *   sandyfs   SANDY_FS_IMAGE, privileged: serves the clone at /workspace
 *             with the same rules as `sandy` (shipped, detected, and the
 *             user's from the ConfigMap), its store and audit log in the
 *             Pod. A mount made in one container reaches another only
 *             through a volume they share with mount propagation, and
 *             Kubernetes allows Bidirectional propagation to privileged
 *             containers alone. When the agent has ended and the mount
 *             is gone, it checks the agent's branches as `sandy git
 *             import` does and pushes those that pass as sandy/NAME/BRANCH
 *             (kube.c's fs_script: the way back); the refused ones, with
 *             commit, path and rule, are in its log.
 *   agent     no capability, not root, no privilege escalation, its root
 *             filesystem read-only, its home and /tmp on volumes; the
 *             audit log and the repository's git directory read-only.
 *
 * sandyfs and the gateway are native sidecars (init containers with
 * restartPolicy Always, Kubernetes 1.29 and later: they start, in order,
 * before the agent and end after it) unless native_sidecars is false:
 * then they are ordinary containers beside the agent's (podman kube play
 * knows no native sidecar), the agent's entry waits for both, and marks
 * the agent's end in a file that sandyfs waits for; the gateway waits for
 * sandyfs's. */
#ifndef SANDY_KUBE_H
#define SANDY_KUBE_H

#include "egress.h"

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* The defaults of `sandy kube`'s --memory and --cpus, for the agent's
 * container: its requests and its limits. */
#define KUBE_DEFAULT_MEMORY "4Gi"
#define KUBE_DEFAULT_CPUS   "2"
/* The usual address of a cluster's DNS service (kubeadm's, kind's,
 * minikube's), for the gateway when SANDY_DNS_UPSTREAM does not say. */
#define KUBE_DEFAULT_DNS "10.96.0.10"
/* The uid and gid the agent and the clone run as: the agent image's user
 * (launcher/container/Dockerfile), named by number so that the kubelet can
 * check runAsNonRoot. */
#define KUBE_AGENT_UID 1000

/* A rule file the user gave (--rules) or keeps (rules.d): NAME, its path
 * there, names it for the ConfigMap and for messages; TEXT is what it
 * holds. */
struct kube_rule_file {
	const char *name;
	const char *text;
};

struct kube_options {
	const char *name;   /* the session: the Pod's name, a DNS-1123 label */
	const char *repo;   /* what git clones */
	const char *branch; /* NULL: the remote's default branch */
	const char *agent;  /* claude, codex or gemini */
	const char *image, *fs_image, *gateway_image;
	const struct strv *types; /* --type NAME for sandyfs */
	bool no_detect;
	const struct kube_rule_file *rules;
	size_t n_rules;
	enum egress_mode network;
	const struct strv *allow;     /* the allowlist (filtered) */
	const struct strv *upstreams; /* the resolvers the gateway forwards to */
	const char *memory, *cpus;    /* Kubernetes quantities, for the agent */
	const char *volume_claim;     /* NULL: the clone and the store on emptyDirs */
	bool native_sidecars;
	/* The Secrets' contents; NULL: that Secret is not printed, and the
	 * Pod reads it when it exists (made by the user, optional). */
	const char *git_username, *git_password;
	const char *api_key;
	char *const *command; /* NULL: the agent, interactive */
};

/* The variable that holds AGENT's API key (ANTHROPIC_API_KEY, ...), or
 * NULL for an unknown agent. */
const char *kube_api_key_name(const char *agent);

/* A session name for REPO when none is given: "sandy-" and the last
 * component of its path without ".git", made a DNS-1123 label
 * ("sandy-my-project"); "sandy" when nothing of it is left. Malloc'ed,
 * NULL without memory. */
char *kube_default_name(const char *repo);

/* Builds the manifests for O into *DOCS, a cJSON array of the objects in
 * the order they are applied (Secrets, ConfigMap, Pod). Every value the
 * user gave is data in them (an environment variable, an element of an
 * argument vector), never part of a script. A bad option is -EINVAL with
 * *WHY (malloc'ed) saying which and why; -ENOMEM. */
int kube_manifests(const struct kube_options *o, cJSON **docs, char **why);

/* DOCS as a multi-document stream: each object as indented JSON after a
 * "---" line (malloc'ed; NULL without memory). Why a stream and not one
 * v1 List: JSON is YAML, so a YAML stream of JSON documents is read both
 * by kubectl (and by any tool that takes Kubernetes YAML) and by podman
 * kube play, which knows kind List only from podman 4.7; Debian 12 has
 * podman 4.3. Indented with spaces, never tabs, which YAML does not take
 * as indentation. */
char *kube_stream(const cJSON *docs);

#endif
