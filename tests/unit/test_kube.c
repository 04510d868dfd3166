/* test_kube.c - a session's Kubernetes manifests (launcher/world/kube.c), read
 * back as a cluster would: the agent's container holds no capability and
 * no privilege, sees no device, no host path and no git credential; the
 * credential's Secret is mounted by the clone and sandyfs alone; sandyfs's
 * container is the only privileged one, the only one with Bidirectional
 * propagation, and never asks for allowPrivilegeEscalation: false (which
 * the API refuses beside privileged or SYS_ADMIN); native sidecars are
 * init containers with restartPolicy Always, and ordinary containers with
 * --no-native-sidecars; every object carries the labels; hostile names,
 * URLs and branches are refused, and a URL full of shell is data in an
 * environment variable, never part of a script; the stream is JSON
 * documents after "---" lines, without a tab; a name made from the
 * repository's is one Kubernetes takes. The way back: sandyfs's script
 * lists, imports and pushes the agent's branches with the mount's rule
 * options, the remote and the session's name from its environment; the
 * gateway's ruleset lets root (sandy's containers) out; without native
 * sidecars the agent's end is a file in a volume only the agent and
 * sandyfs mount, and the gateway waits for sandyfs's. */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "launcher/world/kube.h"

#include <errno.h>
#include "tap.h"

static const struct strv upstreams = {.v = (char *[]){"10.96.0.10", NULL}, .n = 1};
static const struct strv allow = {.v = (char *[]){"api.anthropic.com", "github.com", NULL}, .n = 2};

static struct kube_options defaults(void)
{
	return (struct kube_options){
		.name = "demo",
		.repo = "https://example.invalid/r.git",
		.agent = "claude",
		.image = "sandy-agent:latest",
		.fs_image = "sandy-fs:latest",
		.gateway_image = "sandy-gateway:latest",
		.network = EGRESS_FILTERED,
		.allow = &allow,
		.upstreams = &upstreams,
		.memory = "4Gi",
		.cpus = "2",
		.native_sidecars = true,
		.git_password = "s3cret-token",
		.api_key = "sk-test",
	};
}

/* ---- reading the manifests back ---------------------------------------- */

static cJSON *build(const struct kube_options *o)
{
	cJSON *docs = NULL;
	char *why = NULL;
	int r = kube_manifests(o, &docs, &why);

	if (r < 0)
		printf("# kube_manifests: %d, %s\n", r, why ? why : "(no message)");
	free(why);
	return docs;
}

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const char *str(const cJSON *o, const char *key)
{
	return cJSON_GetStringValue(get(o, key));
}

/* A == B, where A may be missing. */
static bool eq(const char *a, const char *b)
{
	return a && !strcmp(a, b);
}

static const cJSON *doc_of(const cJSON *docs, const char *kind, const char *name)
{
	const cJSON *d;

	cJSON_ArrayForEach(d, docs)
	{
		const char *n = str(get(d, "metadata"), "name");
		if (eq(str(d, "kind") ? str(d, "kind") : "", kind) &&
		    (!name || (n && !strcmp(n, name))))
			return d;
	}
	return NULL;
}

static const cJSON *spec_of(const cJSON *docs)
{
	return get(doc_of(docs, "Pod", NULL), "spec");
}

/* The container NAME, in initContainers (INIT) or containers. */
static const cJSON *container_in(const cJSON *docs, const char *list, const char *name)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, get(spec_of(docs), list))
	{
		if (eq(str(c, "name") ? str(c, "name") : "", name))
			return c;
	}
	return NULL;
}

static const cJSON *container(const cJSON *docs, const char *name)
{
	const cJSON *c = container_in(docs, "containers", name);

	return c ? c : container_in(docs, "initContainers", name);
}

static int count(const cJSON *a)
{
	return cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
}

static bool is_true(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(get(o, key));
}

static bool is_false(const cJSON *o, const char *key)
{
	return cJSON_IsFalse(get(o, key));
}

static bool array_has(const cJSON *a, const char *value)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, a)
	{
		if (cJSON_IsString(e) && !strcmp(e->valuestring, value))
			return true;
	}
	return false;
}

/* The volume of the Pod named NAME. */
static const cJSON *volume(const cJSON *docs, const char *name)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, get(spec_of(docs), "volumes"))
	{
		if (eq(str(v, "name") ? str(v, "name") : "", name))
			return v;
	}
	return NULL;
}

/* C's mount of volume VOL, or NULL. */
static const cJSON *mount_of(const cJSON *c, const char *vol)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, get(c, "volumeMounts"))
	{
		if (eq(str(m, "name") ? str(m, "name") : "", vol))
			return m;
	}
	return NULL;
}

/* Calls FN for every container of the Pod, init containers included. */
#define FOR_EACH_CONTAINER(docs, c)                                                                \
	for (int list_ = 0; list_ < 2; list_++)                                                    \
		for (const cJSON *c = cJSON_GetArrayItem(                                          \
			     get(spec_of(docs), list_ ? "containers" : "initContainers"), 0);      \
		     c; c = c->next)

/* The value of the variable NAME in C's env, or NULL. */
static const cJSON *env_of(const cJSON *c, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, get(c, "env"))
	{
		if (eq(str(e, "name") ? str(e, "name") : "", name))
			return e;
	}
	return NULL;
}

static bool text_has(const cJSON *o, const char *needle)
{
	cleanup_free char *text = cJSON_PrintUnformatted(o);

	return text && strstr(text, needle);
}

/* ---- the cases ---------------------------------------------------------- */

static void test_agent(void)
{
	struct kube_options o = defaults();
	cJSON *docs = build(&o);
	const cJSON *a = container(docs, "agent");
	const cJSON *sc = get(a, "securityContext");
	const cJSON *caps = get(sc, "capabilities");

	ok(docs && a, "the manifests have an agent container");
	ok(container_in(docs, "containers", "agent") != NULL, "the agent is a regular container");
	ok(count(get(caps, "drop")) == 1 && array_has(get(caps, "drop"), "ALL"),
	   "agent: capabilities.drop is [\"ALL\"]");
	ok(get(caps, "add") == NULL, "agent: no capability added");
	ok(is_true(sc, "runAsNonRoot"), "agent: runAsNonRoot true");
	ok(cJSON_IsNumber(get(sc, "runAsUser")) && get(sc, "runAsUser")->valueint != 0,
	   "agent: runAsUser a number, not 0 (the kubelet checks runAsNonRoot with it)");
	ok(is_false(sc, "allowPrivilegeEscalation"), "agent: allowPrivilegeEscalation false");
	ok(get(sc, "privileged") == NULL, "agent: no privileged");
	ok(is_true(sc, "readOnlyRootFilesystem"), "agent: read-only root filesystem");
	ok(!text_has(a, "/dev/fuse") && get(a, "volumeDevices") == NULL,
	   "agent: no /dev/fuse, no device");
	const cJSON *ws = mount_of(a, "workspace");
	ok(ws && eq(str(ws, "mountPath"), "/workspace") &&
		   eq(str(ws, "mountPropagation"), "HostToContainer"),
	   "agent: /workspace from the shared volume, HostToContainer");
	const cJSON *audit = mount_of(a, "audit");
	ok(audit && is_true(audit, "readOnly"), "agent: the audit log's volume read-only");
	ok(mount_of(a, "git") && is_true(mount_of(a, "git"), "readOnly"),
	   "agent: the clone's git directory read-only");
	ok(!mount_of(a, "source") && !mount_of(a, "store"),
	   "agent: not the clone's work tree (what the policy hides is there), not the store");
	ok(mount_of(a, "home") && eq(str(mount_of(a, "home"), "mountPath"), "/home/sandy"),
	   "agent: its home on a volume");
	const cJSON *key = env_of(a, "ANTHROPIC_API_KEY");
	const cJSON *ref = get(get(key, "valueFrom"), "secretKeyRef");
	ok(ref && eq(str(ref, "name"), "demo-agent") && eq(str(ref, "key"), "ANTHROPIC_API_KEY"),
	   "agent: ANTHROPIC_API_KEY from Secret demo-agent");
	ok(eq(str(a, "workingDir"), "/workspace"), "agent: works in /workspace");
	const cJSON *lim = get(get(a, "resources"), "limits");
	const cJSON *req = get(get(a, "resources"), "requests");
	ok(eq(str(lim, "memory"), "4Gi") && eq(str(lim, "cpu"), "2") &&
		   eq(str(req, "memory"), "4Gi") && eq(str(req, "cpu"), "2"),
	   "agent: requests and limits from the options");
	ok(is_true(a, "stdin") && is_true(a, "tty"), "agent: interactive without a command");
	cJSON_Delete(docs);
}

static void test_no_host_path(void)
{
	struct kube_options o = defaults();
	o.volume_claim = "work";
	cJSON *docs = build(&o);
	const cJSON *v;
	int host = 0, n = 0;

	cJSON_ArrayForEach(v, get(spec_of(docs), "volumes"))
	{
		n++;
		host += get(v, "hostPath") != NULL;
	}
	ok(n > 0 && host == 0, "no hostPath volume (%d volumes)", n);
	ok(!text_has(docs, "hostPath") && !text_has(docs, "hostNetwork") &&
		   !text_has(docs, "hostPID"),
	   "nothing of the node's: no hostPath, hostNetwork, hostPID");
	const cJSON *data = volume(docs, "data");
	ok(data && eq(str(get(data, "persistentVolumeClaim"), "claimName"), "work"),
	   "--volume-claim: the clone on the claim");
	const cJSON *git = mount_of(container(docs, "agent"), "data");
	ok(git && eq(str(git, "subPath"), "git") && is_true(git, "readOnly"),
	   "--volume-claim: the agent sees only the claim's git directory, read-only");
	ok(!env_of(container(docs, "clone"), "SANDY_FRESH"),
	   "--volume-claim: the clone keeps a clone the claim holds (no SANDY_FRESH)");
	cJSON_Delete(docs);

	/* emptyDirs: the clone refuses volumes that are not new, which only
	 * podman kube play gives it (another Pod's); sandyfs's container,
	 * which a kubelet may restart on its own volumes, does not. */
	o.volume_claim = NULL;
	docs = build(&o);
	ok(eq(str(env_of(container(docs, "clone"), "SANDY_FRESH"), "value"), "1") &&
		   !env_of(container(docs, "sandyfs"), "SANDY_FRESH"),
	   "emptyDirs: SANDY_FRESH for the clone alone");
	cJSON_Delete(docs);
}

static void test_git_credential(void)
{
	struct kube_options o = defaults();
	cJSON *docs = build(&o);
	const cJSON *secret = doc_of(docs, "Secret", "demo-git");
	const cJSON *v;
	const char *vol = NULL;
	int holders = 0;

	ok(secret && eq(str(secret, "type"), "kubernetes.io/basic-auth"),
	   "the git credential is Secret demo-git (basic-auth)");
	ok(secret && eq(str(get(secret, "data"), "password"), "czNjcmV0LXRva2Vu"),
	   "its password, base64 in data");
	cJSON_ArrayForEach(v, get(spec_of(docs), "volumes"))
	{
		const char *name = str(get(v, "secret"), "secretName");
		if (name && !strcmp(name, "demo-git")) {
			vol = str(v, "name");
			holders++;
		}
	}
	ok(vol && holders == 1, "one volume holds it (%s)", vol ? vol : "none");
	ok(vol && is_false(get(volume(docs, vol), "secret"), "optional"),
	   "the Secret printed beside it: its volume is required, not optional");
	FOR_EACH_CONTAINER(docs, c)
	{
		const char *name = str(c, "name");
		bool mounts = vol && mount_of(c, vol);
		bool allowed = eq(name, "clone") || eq(name, "sandyfs");
		ok(mounts == allowed, "%s %s the git credential", name,
		   mounts ? "mounts" : "does not mount");
		ok(!text_has(get(c, "env"), "demo-git"), "%s: not in its environment", name);
	}
	ok(!text_has(container(docs, "agent"), "s3cret"), "agent: the token nowhere");
	cJSON_Delete(docs);
}

/* The rules the API server applies to every container, and ours. */
static void check_privileges(const cJSON *docs, const char *what)
{
	int privileged = 0;

	FOR_EACH_CONTAINER(docs, c)
	{
		const char *name = str(c, "name");
		const cJSON *sc = get(c, "securityContext");
		bool priv = is_true(sc, "privileged");
		bool sys_admin = array_has(get(get(sc, "capabilities"), "add"), "SYS_ADMIN") ||
				 array_has(get(get(sc, "capabilities"), "add"), "CAP_SYS_ADMIN");
		const cJSON *m;
		privileged += priv;
		ok(!priv || eq(name, "sandyfs"), "%s: %s is %sprivileged", what, name,
		   priv ? "" : "not ");
		ok(!((priv || sys_admin) && is_false(sc, "allowPrivilegeEscalation")),
		   "%s: %s has no allowPrivilegeEscalation: false beside privileged or "
		   "SYS_ADMIN",
		   what, name);
		cJSON_ArrayForEach(m, get(c, "volumeMounts"))
		{
			const char *prop = str(m, "mountPropagation");
			ok(!prop || strcmp(prop, "Bidirectional") || priv,
			   "%s: %s: Bidirectional propagation only in a privileged container", what,
			   name);
		}
		if (!priv)
			ok(is_false(sc, "allowPrivilegeEscalation") &&
				   array_has(get(get(sc, "capabilities"), "drop"), "ALL"),
			   "%s: %s drops every capability and cannot gain one", what, name);
	}
	ok_eq_long(privileged, 1, "%s: one privileged container", what);
	const cJSON *fs = container(docs, "sandyfs");
	const cJSON *ws = mount_of(fs, "workspace");
	ok(is_true(get(fs, "securityContext"), "privileged") && ws &&
		   eq(str(ws, "mountPropagation"), "Bidirectional") &&
		   eq(str(ws, "mountPath"), "/workspace"),
	   "%s: sandyfs mounts at /workspace, Bidirectional", what);
}

static void test_privileges(void)
{
	struct kube_options o = defaults();
	cJSON *docs = build(&o);

	check_privileges(docs, "native");
	const cJSON *gw = get(container(docs, "gateway"), "securityContext");
	const cJSON *gw_add = get(get(gw, "capabilities"), "add");
	ok(array_has(gw_add, "NET_ADMIN") && array_has(gw_add, "NET_BIND_SERVICE") &&
		   array_has(gw_add, "SETUID") && array_has(gw_add, "SETGID") &&
		   array_has(gw_add, "DAC_OVERRIDE") && count(gw_add) == 5,
	   "gateway: NET_ADMIN, dnsmasq's three and DAC_OVERRIDE for its logs, nothing else");
	cJSON_Delete(docs);
	o.native_sidecars = false;
	o.volume_claim = "claim.example";
	docs = build(&o);
	check_privileges(docs, "plain");
	cJSON_Delete(docs);
}

static void test_sidecars(void)
{
	struct kube_options o = defaults();
	cJSON *docs = build(&o);
	const cJSON *spec = spec_of(docs);
	const cJSON *init = get(spec, "initContainers");

	ok(count(init) == 3 && eq(str(cJSON_GetArrayItem(init, 0), "name"), "clone") &&
		   eq(str(cJSON_GetArrayItem(init, 1), "name"), "gateway") &&
		   eq(str(cJSON_GetArrayItem(init, 2), "name"), "sandyfs"),
	   "native: initContainers are clone, gateway, sandyfs, in that order");
	ok(count(get(spec, "containers")) == 1, "native: the agent alone in containers");
	ok(!get(cJSON_GetArrayItem(init, 0), "restartPolicy"),
	   "native: the clone is an init container proper");
	for (int i = 1; i < 3; i++) {
		const cJSON *c = cJSON_GetArrayItem(init, i);
		ok(eq(str(c, "restartPolicy"), "Always") && get(c, "startupProbe"),
		   "native: %s has restartPolicy Always and a startup probe", str(c, "name"));
	}
	ok(eq(str(spec, "restartPolicy"), "Never"), "the Pod's restartPolicy is Never");
	ok(is_false(spec, "automountServiceAccountToken") && is_false(spec, "enableServiceLinks"),
	   "no service account token, no service links");
	const cJSON *ns = get(get(spec, "dnsConfig"), "nameservers");
	ok(eq(str(spec, "dnsPolicy"), "None") && count(ns) == 2 &&
		   eq(cJSON_GetStringValue(cJSON_GetArrayItem(ns, 0)), "127.0.0.1") &&
		   eq(cJSON_GetStringValue(cJSON_GetArrayItem(ns, 1)), "10.96.0.10"),
	   "the gateway's resolver first, the upstream after it for the clone");
	cJSON_Delete(docs);

	o.native_sidecars = false;
	docs = build(&o);
	spec = spec_of(docs);
	ok(count(get(spec, "initContainers")) == 1 && container_in(docs, "initContainers", "clone"),
	   "--no-native-sidecars: the clone alone is an init container");
	ok(count(get(spec, "containers")) == 3 && container_in(docs, "containers", "gateway") &&
		   container_in(docs, "containers", "sandyfs") &&
		   container_in(docs, "containers", "agent"),
	   "--no-native-sidecars: gateway, sandyfs and the agent in containers");
	FOR_EACH_CONTAINER(docs, c)
	ok(!get(c, "restartPolicy") && !get(c, "startupProbe"),
	   "--no-native-sidecars: %s has no restartPolicy, no startup probe", str(c, "name"));
	cJSON_Delete(docs);
}

/* The string of element I of C's command, or "". */
static const char *command_item(const cJSON *c, int i)
{
	const char *s = cJSON_GetStringValue(cJSON_GetArrayItem(get(c, "command"), i));

	return s ? s : "";
}

static void test_way_back(void)
{
	struct kube_options o = defaults();
	struct strv types = {.v = (char *[]){"node", NULL}, .n = 1};
	const struct kube_rule_file rules[] = {{"/home/u/my rules.json", "{}"}};
	o.types = &types;
	o.rules = rules;
	o.n_rules = 1;
	o.no_detect = true;
	cJSON *docs = build(&o);
	const cJSON *fs = container(docs, "sandyfs");
	const char *script = command_item(fs, 2);

	ok(eq(cJSON_GetStringValue(get(env_of(fs, "SANDY_REPO"), "value")), o.repo) &&
		   eq(cJSON_GetStringValue(get(env_of(fs, "SANDY_NAME"), "value")), "demo"),
	   "sandyfs: the remote and the session's name in its environment");
	ok(eq(cJSON_GetStringValue(get(env_of(fs, "GIT_ALLOW_PROTOCOL"), "value")),
	      "https:http:git"),
	   "sandyfs: git kept to the clone's transports");
	ok(strstr(script, "sandyfs umount /workspace") &&
		   strstr(script, "sandyfs umount /workspace") < strstr(script, "way_back \"$@\""),
	   "sandyfs: the way back runs once the mount is gone");
	ok(strstr(script, "sandyfs git list \"$@\" -- /srv/sandy/source") &&
		   strstr(script, "sandyfs git import \"$@\" -- /srv/sandy/source \"$b\""),
	   "sandyfs: git list and git import on the clone, with the filtered rule options");
	ok(strstr(script, "list=$(back sandyfs git list \"$@\" -- /srv/sandy/source) || ret=1\n"
			  "\tif [ $ret -ne 0 ] && [ -z \"$list\" ]; then"),
	   "sandyfs: a branch git list cannot read fails the way back, the others are pushed");
	ok(strstr(script, "--type|--rules) set -- \"$@\" \"$a\" \"$1\"") &&
		   strstr(script, "--no-detect) set -- \"$@\" \"$a\""),
	   "sandyfs: the rule options are the mount's");
	ok(strstr(script, "\"refs/heads/sandy/$1:refs/heads/sandy/$SANDY_NAME/$1\"") &&
		   strstr(script, "git --git-dir=/srv/sandy/git/repo.git \"$@\"") &&
		   strstr(script, "push -- \"$SANDY_REPO\""),
	   "sandyfs: sandy/BRANCH pushed from the clone as sandy/NAME/BRANCH");
	ok(strstr(script, "back() { setpriv --inh-caps=-all "
			  "--bounding-set=-all,+chown,+dac_override,+dac_read_search,+fowner --") &&
		   !strstr(strstr(script, "back() {"), "sys_admin"),
	   "sandyfs: the way back without CAP_SYS_ADMIN");
	ok(strstr(script, "credential.helper=!f()") && strstr(script, "/run/secrets/sandy-git/"),
	   "sandyfs: the push's credential from the Secret's files, on git's command line");
	ok(strstr(script, "trap ': >/run/sandy/audit/ended' EXIT"),
	   "sandyfs: its end marked whatever the way it ends");
	const cJSON *args = get(fs, "args");
	ok(array_has(args, "--type") && array_has(args, "node") && array_has(args, "--no-detect") &&
		   array_has(args, "/etc/sandy/rules/1-my_rules.json"),
	   "sandyfs: the mount's command holds the rule options the way back takes");
	ok(array_has(args, "--over-mount"),
	   "sandyfs: it mounts over the volume's own mount, from whose root the mount propagates");
	ok(strstr(str(get(doc_of(docs, "ConfigMap", "demo-config"), "data"), "rules.nft")
			  ? str(get(doc_of(docs, "ConfigMap", "demo-config"), "data"), "rules.nft")
			  : "",
		  "\t\tmeta skuid 0 accept\n"),
	   "the Pod's ruleset lets root (sandy's containers) out, for the push");
	ok(get(spec_of(docs), "terminationGracePeriodSeconds") &&
		   get(spec_of(docs), "terminationGracePeriodSeconds")->valueint >= 120,
	   "a grace period the way back can push in (%d s)",
	   get(spec_of(docs), "terminationGracePeriodSeconds")
		   ? get(spec_of(docs), "terminationGracePeriodSeconds")->valueint
		   : 0);
	/* Native sidecars: the kubelet ends them after the agent. */
	ok(!env_of(fs, "SANDY_AGENT_END") && !env_of(container(docs, "agent"), "SANDY_AGENT_END") &&
		   !volume(docs, "agent-end"),
	   "native: no end file, no volume for it");
	ok(!get(container(docs, "gateway"), "command"), "native: the gateway's own entry point");
	cJSON_Delete(docs);

	o.native_sidecars = false;
	docs = build(&o);
	fs = container(docs, "sandyfs");
	const cJSON *agent = container(docs, "agent"), *gw = container(docs, "gateway");
	ok(volume(docs, "agent-end") && get(volume(docs, "agent-end"), "emptyDir"),
	   "--no-native-sidecars: an emptyDir for the agent's end");
	FOR_EACH_CONTAINER(docs, c)
	{
		bool mounts = mount_of(c, "agent-end") != NULL;
		bool want = eq(str(c, "name"), "agent") || eq(str(c, "name"), "sandyfs");
		ok(mounts == want, "--no-native-sidecars: %s %s it", str(c, "name"),
		   mounts ? "mounts" : "does not mount");
	}
	ok(eq(str(mount_of(agent, "agent-end"), "mountPath"), "/run/sandy/end") &&
		   eq(cJSON_GetStringValue(get(env_of(agent, "SANDY_AGENT_END"), "value")),
		      "/run/sandy/end/ended") &&
		   eq(cJSON_GetStringValue(get(env_of(fs, "SANDY_AGENT_END"), "value")),
		      "/run/sandy/end/ended"),
	   "--no-native-sidecars: the agent's entry and sandyfs agree on the end file");
	ok(strstr(command_item(agent, 2), "trap ': >\"$SANDY_AGENT_END\"' EXIT"),
	   "--no-native-sidecars: the agent's entry makes it however it exits");
	ok(strstr(command_item(fs, 2), "! [ -e \"$SANDY_AGENT_END\" ]"),
	   "--no-native-sidecars: sandyfs stops serving when it appears");
	ok(eq(command_item(gw, 0), "/bin/sh") &&
		   strstr(command_item(gw, 2), "/usr/local/lib/sandy/gateway & gw=$!") &&
		   strstr(command_item(gw, 2), "[ -e /run/sandy/audit/ended ]"),
	   "--no-native-sidecars: the gateway runs its entry until sandyfs has ended");
	ok(mount_of(gw, "audit") && is_true(mount_of(gw, "audit"), "readOnly"),
	   "--no-native-sidecars: the gateway reads the audit volume, read-only");
	cJSON_Delete(docs);
}

static void test_labels(void)
{
	struct kube_options o = defaults();
	struct kube_rule_file rules[] = {{"/home/u/my rules.json", "{\"name\": \"mine\"}"}};
	o.rules = rules;
	o.n_rules = 1;
	cJSON *docs = build(&o);
	const cJSON *d;

	ok_eq_long(count(docs), 4, "Secret demo-git, Secret demo-agent, ConfigMap, Pod");
	ok(eq(str(cJSON_GetArrayItem(docs, 3), "kind"), "Pod"), "the Pod comes last");
	cJSON_ArrayForEach(d, docs)
	{
		const cJSON *l = get(get(d, "metadata"), "labels");
		const char *what = str(get(d, "metadata"), "name");
		ok(eq(str(d, "apiVersion"), "v1"), "%s: apiVersion v1", what);
		ok(eq(str(l, "app.kubernetes.io/name"), "sandy") &&
			   eq(str(l, "app.kubernetes.io/instance"), "demo") &&
			   str(l, "app.kubernetes.io/component") &&
			   *str(l, "app.kubernetes.io/component") &&
			   eq(str(l, "app.kubernetes.io/managed-by"), "sandy"),
		   "%s: the four labels", what);
	}
	const cJSON *cm = get(doc_of(docs, "ConfigMap", "demo-config"), "data");
	ok(str(cm, "rules.nft") && strstr(str(cm, "rules.nft"), "10.96.0.10"),
	   "ConfigMap: the gateway's ruleset, with the resolver");
	ok(str(cm, "servers") && strstr(str(cm, "servers"), "server=/github.com/10.96.0.10"),
	   "ConfigMap: the gateway's servers file, from the allowlist");
	ok(str(cm, "1-my_rules.json") && eq(str(cm, "1-my_rules.json"), rules[0].text),
	   "ConfigMap: the user's rule file, under a key Kubernetes takes");
	const cJSON *args = get(container(docs, "sandyfs"), "args");
	ok(eq(cJSON_GetStringValue(cJSON_GetArrayItem(args, 0)), "setpriv") &&
		   array_has(args, "--inh-caps=-all") &&
		   array_has(args, "--bounding-set=-all,+sys_admin,+chown,+dac_override,"
				   "+dac_read_search,+fowner,+fsetid,+setuid,+setgid"),
	   "sandyfs: the daemon keeps fsbox.c's capabilities of the privileged container's");
	ok(array_has(args, "/etc/sandy/rules/1-my_rules.json") &&
		   array_has(args, "--private-git") && array_has(args, "--drop-mount-privilege"),
	   "sandyfs: --rules of the ConfigMap's file, its private repository, and it drops "
	   "CAP_SYS_ADMIN once mounted");
	ok(mount_of(container(docs, "sandyfs"), "rules") && volume(docs, "rules"),
	   "sandyfs: the rule files' volume");
	cJSON_Delete(docs);
}

static void refused(struct kube_options o, const char *what);

static void test_open_network(void)
{
	struct kube_options o = defaults();
	o.network = EGRESS_OPEN;
	o.git_password = NULL;
	o.api_key = NULL;
	cJSON *docs = build(&o);

	ok(docs && !container(docs, "gateway"), "--network=open: no gateway");
	ok(!get(spec_of(docs), "dnsPolicy"), "--network=open: the cluster's DNS");
	ok_eq_long(count(docs), 1, "--network=open, no credential, no rules: the Pod alone");
	ok(volume(docs, "git-credential") &&
		   is_true(get(volume(docs, "git-credential"), "secret"), "optional"),
	   "the git credential's volume is optional (a public repository needs none)");
	ok(is_true(get(get(env_of(container(docs, "agent"), "ANTHROPIC_API_KEY"), "valueFrom"),
		       "secretKeyRef"),
		   "optional"),
	   "the agent's key is optional (it may log in instead)");
	cJSON_Delete(docs);

	o.network = EGRESS_NONE;
	docs = build(&o);
	const cJSON *cm = get(doc_of(docs, "ConfigMap", "demo-config"), "data");
	ok(container(docs, "gateway") && str(cm, "servers") &&
		   !strstr(str(cm, "servers"), "server="),
	   "--network=none: the gateway, forwarding nothing");
	ok(str(cm, "rules.nft") && !strstr(str(cm, "rules.nft"), "10.96.0.10"),
	   "--network=none: not even dnsmasq reaches the upstream");
	ok(array_has(get(get(spec_of(docs), "dnsConfig"), "nameservers"), "10.96.0.10"),
	   "--network=none: the clone still resolves the repository's host");
	cJSON_Delete(docs);
	o.upstreams = NULL;
	refused(o, "--network=none without a resolver for the clone");
}

static void test_agents(void)
{
	static const char *const agents[][2] = {
		{"claude", "ANTHROPIC_API_KEY"},
		{"codex", "OPENAI_API_KEY"},
		{"gemini", "GEMINI_API_KEY"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(agents); i++) {
		struct kube_options o = defaults();
		o.agent = agents[i][0];
		cJSON *docs = build(&o);
		const cJSON *s = doc_of(docs, "Secret", "demo-agent");
		ok(s && str(get(s, "data"), agents[i][1]) &&
			   env_of(container(docs, "agent"), agents[i][1]),
		   "%s: its key is %s, in the Secret and in the agent's environment", agents[i][0],
		   agents[i][1]);
		ok(array_has(get(container(docs, "agent"), "args"), agents[i][0]),
		   "%s: the agent's command by default", agents[i][0]);
		cJSON_Delete(docs);
	}
}

static void refused(struct kube_options o, const char *what)
{
	cJSON *docs = NULL;
	char *why = NULL;
	int r = kube_manifests(&o, &docs, &why);

	for (char *c = why; c && *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '|';
	ok(r == -EINVAL && !docs && why && *why, "refused: %s (%s)", what, why ? why : "no reason");
	free(why);
	cJSON_Delete(docs);
}

static void test_hostile(void)
{
	static const char *const names[] = {"Demo", "demo_1", "-demo",	"demo-",
					    "",	    "de mo",  "demo.x", "dém"};
	static const char *const repos[] = {
		"",
		"https://example.invalid/r.git\ntouch /tmp/pwned",
		"https://example.invalid/r\r.git",
		"ext::sh -c touch% /tmp/pwned",
		"fd::3",
		"-uhttps://example.invalid/r.git",
		"--upload-pack=touch /tmp/pwned",
		"https://user:token@example.invalid/r.git",
		"https://token@example.invalid/r.git",
		"ssh://git@example.invalid/r.git",
		"git@example.invalid:r.git",
		"/srv/repo",
		"file:///srv/repo",
		"http://example.invalid/r.git",
		"https:///r.git",
	};
	static const char *const branches[] = {"..",   "a..b", "-b",   "a b",	   "a.lock", "@",
					       "x/",   "/x",   ".x",   "a//b",	   "a@{1}",  "a~1",
					       "a^",   "a:b",  "a?b",  "a*b",	   "a[b",    "a\\b",
					       "a\nb", "",     "x/.y", "x.lock/y", "end."};
	char long_name[80];

	memset(long_name, 'a', 64);
	long_name[64] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct kube_options o = defaults();
		o.name = names[i];
		refused(o, names[i]);
	}
	struct kube_options o = defaults();
	o.name = long_name;
	refused(o, "a name of 64 characters");
	long_name[63] = '\0';
	o.name = long_name;
	cJSON *docs = build(&o);
	ok(docs != NULL, "a name of 63 characters is taken");
	cJSON_Delete(docs);
	for (size_t i = 0; i < ARRAY_SIZE(repos); i++) {
		char shown[80];
		size_t j = 0;
		for (const char *c = repos[i]; *c && j < sizeof(shown) - 1; c++)
			shown[j++] = (*c == '\n' || *c == '\r') ? '|' : *c;
		shown[j] = '\0';
		o = defaults();
		o.repo = repos[i];
		refused(o, shown);
	}
	for (size_t i = 0; i < ARRAY_SIZE(branches); i++) {
		o = defaults();
		o.branch = branches[i];
		refused(o, branches[i][0] == 'a' && branches[i][1] == '\n' ? "a|b" : branches[i]);
	}
	o = defaults();
	o.volume_claim = "Work_Claim";
	refused(o, "a claim named Work_Claim");
	o = defaults();
	o.memory = "lots";
	refused(o, "--memory lots");
	o = defaults();
	o.cpus = "0";
	refused(o, "--cpus 0");
	o = defaults();
	o.agent = "copilot";
	refused(o, "an unknown agent");
	o = defaults();
	o.image = "sandy-agent:latest --privileged";
	refused(o, "an image name with a space");
	o = defaults();
	o.upstreams = NULL;
	refused(o, "no resolver for the gateway");
	o = defaults();
	o.git_password = "tok\nen";
	refused(o, "a token with a newline");
	o = defaults();
	struct strv types = {.v = (char *[]){"--rules=/etc/shadow", NULL}, .n = 1};
	o.types = &types;
	refused(o, "a type that is an option");

	static const char *const good[] = {"main", "feature/x-1", "release-1.2", "ünï"};
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		o = defaults();
		o.branch = good[i];
		docs = build(&o);
		ok(docs != NULL, "branch '%s' is taken", good[i]);
		cJSON_Delete(docs);
	}
}

/* What the user gave reaches the containers as data: a URL, a branch and
 * a command full of shell arrive verbatim in one element each, and no
 * script holds them. */
static void test_data_not_code(void)
{
	const char *url = "https://example.invalid/r.git?a=$(touch${IFS}/tmp/p)&b=`id`;'\"|x";
	const char *branch = "feat/$(id)`x`;|&>";
	char *command[] = {"claude", "-p", "$(rm -rf ~); `id` && echo '\"'", NULL};
	struct kube_options o = defaults();
	o.repo = url;
	o.branch = branch;
	o.command = command;
	cJSON *docs = build(&o);
	const cJSON *clone = container(docs, "clone");
	const cJSON *agent = container(docs, "agent");

	ok(docs != NULL, "shell metacharacters in the URL, the branch and the command are taken");
	ok(eq(cJSON_GetStringValue(get(env_of(clone, "SANDY_REPO"), "value")), url),
	   "clone: the URL verbatim in SANDY_REPO");
	ok(eq(cJSON_GetStringValue(get(env_of(clone, "SANDY_BRANCH"), "value")), branch),
	   "clone: the branch verbatim in SANDY_BRANCH");
	const cJSON *args = get(agent, "args");
	ok(count(args) == 4 && !strcmp(cJSON_GetArrayItem(args, 1)->valuestring, "claude") &&
		   !strcmp(cJSON_GetArrayItem(args, 3)->valuestring, command[2]),
	   "agent: the command verbatim, one argument each");
	ok(!is_true(agent, "tty"), "agent: not interactive with a command");
	FOR_EACH_CONTAINER(docs, c)
	{
		const cJSON *cmd = get(c, "command");
		const cJSON *e;
		cJSON_ArrayForEach(e, cmd)
		{
			const char *s = cJSON_GetStringValue(e);
			ok(s && !strstr(s, "touch${IFS}") && !strstr(s, "feat/$(id)") &&
				   !strstr(s, "rm -rf"),
			   "%s: its command holds nothing the user gave", str(c, "name"));
		}
	}
	cJSON_Delete(docs);
}

static void test_stream(void)
{
	struct kube_options o = defaults();
	cJSON *docs = build(&o);
	cleanup_free char *text = docs ? kube_stream(docs) : NULL;
	int n = 0;

	ok(text && !strncmp(text, "---\n{", 5), "the stream starts with '---' and a JSON object");
	ok(text && !strchr(text, '\t'), "no tab in the stream (YAML does not indent with them)");
	for (char *p = text; p && (p = strstr(p, "---\n")); p += 4) {
		char *end = strstr(p + 4, "\n---\n");
		cleanup_free char *one =
			end ? strndup(p + 4, (size_t)(end - p - 4)) : strdup(p + 4);
		cJSON *back = one ? cJSON_Parse(one) : NULL;
		ok(back && cJSON_Compare(back, cJSON_GetArrayItem(docs, n), true),
		   "document %d reads back as it was built", n + 1);
		cJSON_Delete(back);
		n++;
	}
	ok_eq_long(n, count(docs), "one document per object");
	cJSON_Delete(docs);
}

static void test_default_name(void)
{
	static const char *const cases[][2] = {
		{"https://github.com/Org/My_Project.git/", "sandy-my-project"},
		{"https://example.invalid/r.git", "sandy-r"},
		{"https://example.invalid/a/b.c?x=y#z", "sandy-b-c"},
		{"https://example.invalid/___", "sandy"},
		{"https://example.invalid/r\xc3\xa9sum\xc3\xa9", "sandy-r-sum"},
	};
	char long_url[200];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_free char *name = kube_default_name(cases[i][0]);
		ok(eq(name, cases[i][1]), "the name for %s is %s (%s)", cases[i][0], cases[i][1],
		   name ? name : "none");
	}
	snprintf(long_url, sizeof(long_url), "https://example.invalid/%0150d", 7);
	cleanup_free char *name = kube_default_name(long_url);
	struct kube_options o = defaults();
	o.name = name;
	cJSON *docs = build(&o);
	ok(name && strlen(name) <= 63 && docs, "a long repository name makes a name of %zu",
	   name ? strlen(name) : 0);
	cJSON_Delete(docs);
}

int main(void)
{
	test_agent();
	test_no_host_path();
	test_git_credential();
	test_privileges();
	test_sidecars();
	test_way_back();
	test_labels();
	test_open_network();
	test_agents();
	test_hostile();
	test_data_not_code();
	test_stream();
	test_default_name();
	return tap_done();
}
