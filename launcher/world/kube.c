/* kube.c - see kube.h. */

#include "kube.h"
#include "sys/sandy.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

/* Where things are, in the containers of the Pod. */
#define DATA_DIR    "/srv/sandy"	     /* the clone and the store */
#define SOURCE_DIR  DATA_DIR "/source"	     /* the work tree sandyfs serves */
#define GIT_VOL_DIR DATA_DIR "/git"	     /* its git directory's volume */
#define GIT_DIR	    GIT_VOL_DIR "/repo.git"  /* the git directory itself */
#define STORE_DIR   DATA_DIR "/store"	     /* sandyfs's store (SANDY_CACHE_DIR) */
#define WORKSPACE   "/workspace"	     /* the mount, in sandyfs's and the agent's */
#define AUDIT_DIR   "/run/sandy/audit"	     /* the audit log and the pid file */
#define AGENT_GIT   "/run/sandy/git"	     /* the git directory's volume, for the agent */
#define EGRESS_DIR  "/run/sandy/egress"	     /* the gateway's logs, for the agent */
#define SECRET_DIR  "/run/secrets/sandy-git" /* the git credential */
#define RULES_DIR   "/etc/sandy/rules"	     /* the user's rule files */
#define AGENT_HOME  "/home/sandy"	     /* as the agent image has it */
#define PIDFILE	    AUDIT_DIR "/sandyfs.pid" /* written once the mount answers */
#define GW_NETDIR   "/sandy"		     /* as gateway.c and gateway.sh have them */
#define GW_LOGDIR   "/log"
#define GW_ENTRY    "/usr/local/lib/sandy/gateway" /* the gateway image's CMD */
/* Without native sidecars: the agent's entry makes AGENT_END when the
 * agent has ended (in a volume only it and sandyfs mount), and sandyfs's
 * script makes FS_ENDED when the way back is done, which the gateway
 * waits for. */
#define AGENT_END_DIR "/run/sandy/end"
#define AGENT_END     AGENT_END_DIR "/ended"
#define FS_ENDED      AUDIT_DIR "/ended"
/* How long the agent's entry waits for the mount and the gateway, in
 * tenths of a second. */
#define WAIT_TENTHS "1200"
/* The Pod's grace period: what the way back has, after a `kubectl delete`
 * or (native sidecars) once the agent has ended, to check and push the
 * agent's branches before the kubelet kills it. */
#define GRACE_SECONDS 300

#define STR_(x)	  #x
#define STR(x)	  STR_(x)
#define AGENT_UID STR(KUBE_AGENT_UID)

/* The capabilities of sandyfs's container in fsbox.c (push_box_options),
 * as setpriv names them: those the daemon keeps in the privileged one. */
#define FS_CAPS "+sys_admin,+chown,+dac_override,+dac_read_search,+fowner,+fsetid,+setuid,+setgid"
/* Those of the way back, which runs as root too: reading the store
 * (sandyfs made it 0700) and the agent's files in it, writing the
 * imported objects into the clone's git directory (the agent's user's).
 * No mount, no acting as another user. */
#define BACK_CAPS "+chown,+dac_override,+dac_read_search,+fowner"

/* A ConfigMap holds at most 1 MiB; this leaves room for its envelope. */
#define CONFIGMAP_MAX (1000u * 1000u)

/* Shell that puts git's -c options for the credential of SECRET_DIR, when
 * the Secret has one, before "$@": a helper given on git's command line,
 * never written into the clone's config, which the agent reads. */
#define GIT_CREDENTIAL_SH                                                                          \
	"if [ -s " SECRET_DIR "/password ]; then\n"                                                \
	"	set -- -c credential.helper= -c 'credential.helper=!f() { test \"$1\" = get || "         \
	"exit 0; printf \"username=%s\\npassword=%s\\n\" \"$(cat " SECRET_DIR "/username)\" "      \
	"\"$(cat " SECRET_DIR "/password)\"; }; f' \"$@\"\n"                                       \
	"fi\n"

/* The clone, in the init container: nothing here comes from the user but
 * through the environment (SANDY_REPO, SANDY_BRANCH), which the shell
 * expands as data. GIT_ALLOW_PROTOCOL keeps git to the transports the URL
 * check allows. The git directory apart from the work tree, in a volume
 * of its own (on a claim, a directory of its own), so that the agent can
 * be shown it and not the work tree. A clone already in a claim (used
 * before) is kept as it is. emptyDirs (SANDY_FRESH set) are new, unless
 * the engine is podman kube play 4.3, which makes each a volume named as
 * it is, until its Pod is removed, and gives it to every Pod that runs
 * meanwhile: then they hold the other Pod's clone (and its store), and
 * the Pod stops here, before sandyfs's container starts, rather than serve
 * them or push their branches. (Not in sandyfs's container: a native
 * sidecar the kubelet restarts finds its own store.) */
#define CLONE_FRESH_SH                                                                             \
	"if [ -n \"${SANDY_FRESH:-}\" ] && [ -n \"$(ls -A " SOURCE_DIR ")$(ls -A " GIT_VOL_DIR     \
	")\" ]; then\n"                                                                            \
	"	echo \"sandy: the Pod's new volumes hold another Pod's files (podman kube play "         \
	"gives Pods that run at once the same volume for an emptyDir of the same name): remove "   \
	"that Pod first\" >&2\n"                                                                   \
	"	exit 1\n"                                                                                \
	"fi\n"
static const char clone_script[] =
	"set -eu\n" CLONE_FRESH_SH "if [ -e " SOURCE_DIR "/.git ]; then\n"
	"	echo \"sandy: keeping the clone in " SOURCE_DIR "\" >&2\n"
	"	exit 0\n"
	"fi\n"
	"mkdir -p " GIT_VOL_DIR "\n"
	"set -- clone --no-recurse-submodules --separate-git-dir=" GIT_DIR "\n"
	"if [ -n \"${SANDY_BRANCH:-}\" ]; then set -- \"$@\" --branch \"$SANDY_BRANCH\"; "
	"fi\n" GIT_CREDENTIAL_SH "exec git \"$@\" -- \"$SANDY_REPO\" " SOURCE_DIR "\n";

/* sandyfs's container, as fsbox.c's box_script: the daemon in the
 * foreground (the arguments; its pid file is the startup probe's, so a
 * restarted container's is removed first). To stop it, this shell, which
 * keeps CAP_SYS_ADMIN, removes the mount (with --drop-mount-privilege the
 * daemon cannot), and the daemon, its connection gone, completes the
 * audit log and ends; it is sent SIGTERM only when it has no mount. Then
 * the kubelet can remove the volumes.
 *
 * When the session ends. A native sidecar is sent SIGTERM by the kubelet
 * once the agent has ended (sandyfs before the gateway, the reverse of
 * their start). Ordinary containers (--no-native-sidecars, podman kube
 * play) are not: the Pod would run for ever. There SANDY_AGENT_END names
 * the file the agent's entry makes when the agent has ended, and this
 * script stops the daemon when it appears; once the way back is done it
 * makes FS_ENDED (also when it fails), which the gateway's entry waits
 * for. A `kubectl delete` sends SIGTERM to every container: the way back
 * runs all the same, within the grace period.
 *
 * The way back, once the mount is gone (nothing of the agent's writes any
 * more): the agent's branches with commits the clone lacks, as `sandyfs
 * git list` finds them in its private repository (the store) and checks
 * them with the mount's rule options, printed (the Pod's log is the
 * session's summary: what each branch holds, and for a refused one the
 * commit, the path, the change and the rule); each branch it finds ready
 * imported by `sandyfs git import`, which checks every commit again
 * before it writes sandy/BRANCH into the clone, and pushed from there to
 * the remote as sandy/NAME/BRANCH with the credential only this container
 * and the clone mount. A line of the list is the agent's data (a path
 * may hold a newline): a forged "ready" line names at most a branch that
 * the import checks, as it checks every one. The branch names reach git
 * as arguments only; they cannot hold ':' (git's ref format), which ends
 * the name on the list's line. The status is 1 when a branch was refused
 * or could not be pushed, else the daemon's. */
static const char fs_script[] =
	"back() { setpriv --inh-caps=-all --bounding-set=-all," BACK_CAPS " -- \"$@\"; }\n"
	"push() {\n"
	"	set -- push -- \"$SANDY_REPO\" "
	"\"refs/heads/sandy/$1:refs/heads/sandy/$SANDY_NAME/$1\"\n"
	"	" GIT_CREDENTIAL_SH "	back git --git-dir=" GIT_DIR " \"$@\"\n"
	"}\n"
	"way_back() {\n"
	/* Only the rule options of the mount's command: the check judges
	 * as the mount did. */
	"	n=$#\n"
	"	while [ $n -gt 0 ]; do\n"
	"		a=$1; shift; n=$((n - 1))\n"
	"		case $a in\n"
	"		--type|--rules) set -- \"$@\" \"$a\" \"$1\"; shift; n=$((n - 1)) ;;\n"
	"		--no-detect) set -- \"$@\" \"$a\" ;;\n"
	"		esac\n"
	"	done\n"
	/* A branch sandyfs cannot read is named on stderr, and the status
	 * is 1: the others are listed, and pushed. */
	"	ret=0\n"
	"	list=$(back sandyfs git list \"$@\" -- " SOURCE_DIR ") || ret=1\n"
	"	if [ $ret -ne 0 ] && [ -z \"$list\" ]; then\n"
	"		echo \"sandy: cannot list the agent's branches: nothing is pushed\" >&2\n"
	"		return 1\n"
	"	fi\n"
	"	if [ -z \"$list\" ]; then\n"
	"		echo \"sandy: the agent made no commit the repository lacks: nothing to "
	"push\"\n"
	"		return 0\n"
	"	fi\n"
	"	printf '%s\\n' \"$list\"\n"
	"	if printf '%s\\n' \"$list\" | grep -q '; cannot be imported$'; then ret=1; fi\n"
	"	names=$(printf '%s\\n' \"$list\" | sed -n "
	"'s/^\\([^ :][^:]*\\): [0-9][0-9]* commits\\{0,1\\}, .*; ready to import as "
	"sandy\\/.*/\\1/p')\n"
	"	IFS='\n'\n"
	"	set -f\n"
	"	for b in $names; do\n"
	"		if ! back sandyfs git import \"$@\" -- " SOURCE_DIR " \"$b\"; then\n"
	"			ret=1\n"
	"		elif push \"$b\"; then\n"
	"			printf 'sandy: pushed %s as sandy/%s/%s\\n' \"$b\" \"$SANDY_NAME\" "
	"\"$b\"\n"
	"		else\n"
	"			printf 'sandy: cannot push %s to the remote\\n' \"$b\" >&2\n"
	"			ret=1\n"
	"		fi\n"
	"	done\n"
	"	return $ret\n"
	"}\n"
	"rm -f " PIDFILE " " FS_ENDED "\n"
	"trap ': >" FS_ENDED "' EXIT\n"
	"if [ -n \"${SANDY_AGENT_END:-}\" ]; then\n"
	/* The volume is root's where the engine makes it so (podman). */
	"	chown " AGENT_UID " \"${SANDY_AGENT_END%/*}\"\n"
	"	rm -f \"$SANDY_AGENT_END\"\n"
	"fi\n"
	/* The daemon has given up the privilege to unmount; this shell has
	 * it, and the daemon ends once its mount is gone. SIGTERM only when
	 * there is no mount (it has not come up). */
	"stop() { sandyfs umount " WORKSPACE " >/dev/null 2>&1 || kill -TERM $pid 2>/dev/null; }\n"
	"\"$@\" & pid=$!\n"
	"trap stop TERM INT HUP\n"
	"if [ -n \"${SANDY_AGENT_END:-}\" ]; then\n"
	"	while kill -0 $pid 2>/dev/null && ! [ -e \"$SANDY_AGENT_END\" ]; do\n"
	"		sleep 1 & wait $!\n"
	"	done\n"
	"	stop\n"
	"fi\n"
	"wait $pid; st=$?\n"
	"while kill -0 $pid 2>/dev/null; do wait $pid; st=$?; done\n"
	"sandyfs umount " WORKSPACE " >/dev/null 2>&1\n"
	"way_back \"$@\" || st=1\n"
	"exit $st\n";

/* The gateway's entry without native sidecars: the image's own, until
 * sandyfs's container says the way back is done (FS_ENDED). SIGTERM ends
 * it at once: the push needs no gateway (egress_ruleset's root_out, and
 * the upstreams after the gateway's resolver in resolv.conf). */
static const char gateway_script[] = GW_ENTRY " & gw=$!\n"
					      "trap 'exit 143' TERM INT HUP\n"
					      "while kill -0 $gw 2>/dev/null; do\n"
					      "	if [ -e " FS_ENDED " ]; then exit 0; fi\n"
					      "	sleep 1 & wait $!\n"
					      "done\n"
					      "wait $gw\n";

/* The agent's entry: it starts the agent only once the project is served
 * at WORKSPACE (the mount seen in its own mount table, which is what the
 * agent will see) and, with a gateway, once the gateway's firewall and
 * resolver hold (its ready file). Native sidecars are started in that
 * order anyway; ordinary containers (--no-native-sidecars) start together.
 * The agent then starts in the mount, not in the directory under it
 * where its container started (WORKSPACE, the working directory, may
 * have been the volume's own mount then).
 * $1 is the network mode, the rest the agent's command, run as given.
 * Without native sidecars (SANDY_AGENT_END set) the agent runs as this
 * shell's child, which makes SANDY_AGENT_END when it exits (whatever the
 * way) and hands SIGTERM on; its standard input is the container's (fd 3:
 * an asynchronous command's is /dev/null), though it ignores SIGINT as
 * the shell's asynchronous commands do. */
static const char agent_script[] =
	"net=$1; shift\n"
	"if [ -n \"${SANDY_AGENT_END:-}\" ]; then trap ': >\"$SANDY_AGENT_END\"' EXIT; fi\n"
	"n=0\n"
	"until grep -q '^[^ ]* [^ ]* [^ ]* [^ ]* " WORKSPACE " .* - fuse\\.sandyfs ' "
	"/proc/self/mountinfo &&\n"
	"	{ [ \"$net\" = open ] || [ -s " EGRESS_DIR "/ready ]; }; do\n"
	"	n=$((n + 1))\n"
	"	if [ $n -gt " WAIT_TENTHS " ]; then\n"
	"		echo \"sandy: the project's mount or the network gateway did not come up; "
	"the agent is not started\" >&2\n"
	"		exit 125\n"
	"	fi\n"
	"	sleep 0.1\n"
	"done\n"
	"cd " WORKSPACE " || exit 125\n"
	"if [ -z \"${SANDY_AGENT_END:-}\" ]; then exec \"$@\"; fi\n"
	"exec 3<&0\n"
	"\"$@\" <&3 3<&- & pid=$!\n"
	"trap 'kill -TERM $pid 2>/dev/null' TERM INT HUP\n"
	"wait $pid; st=$?\n"
	"while kill -0 $pid 2>/dev/null; do wait $pid; st=$?; done\n"
	"exit $st\n";

static const char *const api_keys[][2] = {
	{"claude", "ANTHROPIC_API_KEY"},
	{"codex", "OPENAI_API_KEY"},
	{"gemini", "GEMINI_API_KEY"},
};

const char *kube_api_key_name(const char *agent)
{
	for (size_t i = 0; agent && i < ARRAY_SIZE(api_keys); i++)
		if (!strcmp(agent, api_keys[i][0]))
			return api_keys[i][1];
	return NULL;
}

char *kube_default_name(const char *repo)
{
	size_t end = strcspn(repo, "?#"), start, len;
	char name[64] = "sandy-", *out = name + 6;

	while (end > 0 && repo[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && repo[start - 1] != '/' && repo[start - 1] != ':')
		start--;
	len = end - start;
	if (len > 4 && !strncmp(repo + end - 4, ".git", 4))
		len -= 4;
	/* Lower-case letters and digits; a hyphen for every run of
	 * anything else, none at either end. */
	for (size_t i = 0; i < len && out < name + 63; i++) {
		unsigned char c = (unsigned char)repo[start + i];
		if (isalnum(c) && c < 0x80)
			*out++ = (char)tolower(c);
		else if (out[-1] != '-')
			*out++ = '-';
	}
	while (out[-1] == '-')
		out--;
	*out = '\0';
	return strdup(name);
}

/* ---- checks ------------------------------------------------------------ */

static bool utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned c = *p, n;
		uint32_t cp;
		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			return false;
		for (unsigned i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		p += n + 1;
	}
	return true;
}

static bool has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/* A DNS-1123 label: what Kubernetes takes as a Pod's name and a label's
 * value, and what NAME-git and NAME-config stay valid names with. */
static bool dns_label(const char *s, size_t len)
{
	if (len == 0 || len > 63 || !isalnum((unsigned char)s[0]) ||
	    !isalnum((unsigned char)s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
			return false;
	return true;
}

/* A DNS-1123 subdomain (a claim's name): labels joined by dots. */
static bool dns_subdomain(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > 253)
		return false;
	for (const char *p = s;;) {
		size_t n = strcspn(p, ".");
		if (!dns_label(p, n))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

/* A Kubernetes quantity as a user writes one: digits, an optional
 * fraction, an optional suffix; not zero. */
static bool quantity(const char *s)
{
	static const char *const suffixes[] = {"",  "m",  "k",	"M",  "G",  "T",  "P",
					       "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
	const char *p = s;
	bool nonzero = false;

	if (!isdigit((unsigned char)*p))
		return false;
	for (; isdigit((unsigned char)*p); p++)
		nonzero |= *p != '0';
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return false;
		for (; isdigit((unsigned char)*p); p++)
			nonzero |= *p != '0';
	}
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
		if (!strcmp(p, suffixes[i]))
			return nonzero;
	return false;
}

/* The transports the clone takes (GIT_ALLOW_PROTOCOL says the same to
 * git). Not ssh: the Pod has no key and no known host yet. */
static const char *const url_schemes[] = {"https", "http", "git"};

/* 0 when URL is a repository the clone may fetch; otherwise *WHY. */
static int repo_check(const char *url, bool credential, const char **why)
{
	const char *sep = strstr(url, "://");
	size_t n = sep ? (size_t)(sep - url) : 0;
	bool known = false;

	if (!*url)
		return *why = "it is empty", -EINVAL;
	if (strlen(url) > 2048)
		return *why = "longer than 2048 characters", -EINVAL;
	if (has_control(url) || !utf8_valid(url))
		return *why = "it holds a control character or is not UTF-8", -EINVAL;
	if (strpbrk(url, " \t"))
		return *why = "it holds a space", -EINVAL;
	if (url[0] == '-')
		return *why = "it starts with '-'", -EINVAL;
	const char *colons = strstr(url, "::");
	if (colons && (!sep || colons < sep))
		return *why = "git's TRANSPORT::ADDRESS form runs programs (ext::) and is not "
			      "taken",
		       -EINVAL;
	for (size_t i = 0; sep && i < ARRAY_SIZE(url_schemes); i++)
		known |= strlen(url_schemes[i]) == n && !strncmp(url, url_schemes[i], n);
	if (!known)
		return *why = "the clone takes https://, http:// or git:// URLs (not ssh, not a "
			      "path of this machine)",
		       -EINVAL;
	const char *host = sep + 3;
	size_t authority = strcspn(host, "/?#");
	if (memchr(host, '@', authority))
		return *why = "credentials in the URL would stay in the clone's config, which the "
			      "agent reads: give them in the git Secret (SANDY_GIT_TOKEN)",
		       -EINVAL;
	if (authority == 0)
		return *why = "it names no host", -EINVAL;
	if (credential && n == 4 && !strncmp(url, "http", 4))
		return *why = "the git credential would cross the network in clear over http://",
		       -EINVAL;
	return 0;
}

/* 0 when NAME is a branch name git takes (git check-ref-format --branch,
 * and not an option); otherwise *WHY. */
static int branch_check(const char *name, const char **why)
{
	size_t len = strlen(name);

	if (len == 0)
		return *why = "it is empty", -EINVAL;
	if (len > 255)
		return *why = "longer than 255 characters", -EINVAL;
	if (has_control(name) || !utf8_valid(name))
		return *why = "it holds a control character or is not UTF-8", -EINVAL;
	if (strpbrk(name, " ~^:?*[\\"))
		return *why = "it holds one of ' ~^:?*[\\'", -EINVAL;
	if (name[0] == '-')
		return *why = "it starts with '-'", -EINVAL;
	if (strstr(name, "..") || strstr(name, "@{") || !strcmp(name, "@"))
		return *why = "it holds '..' or '@{', or is '@'", -EINVAL;
	if (name[0] == '/' || name[len - 1] == '/' || strstr(name, "//"))
		return *why = "it has an empty component", -EINVAL;
	if (name[len - 1] == '.')
		return *why = "it ends with '.'", -EINVAL;
	for (const char *c = name; *c;) {
		size_t n = strcspn(c, "/");
		if (c[0] == '.')
			return *why = "a component starts with '.'", -EINVAL;
		if (n >= 5 && !strncmp(c + n - 5, ".lock", 5))
			return *why = "a component ends with '.lock'", -EINVAL;
		c += n + (c[n] == '/');
	}
	return 0;
}

/* An image reference: the registry's syntax is the registry's to check,
 * but nothing that would not be one word. */
static bool image_ok(const char *s)
{
	return s && *s && strlen(s) <= 512 && !has_control(s) && !strchr(s, ' ') && utf8_valid(s) &&
	       s[0] != '-';
}

static bool type_ok(const char *s)
{
	if (!*s || *s == '-' || *s == '.' || strlen(s) > 64)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return false;
	return true;
}

static int refuse(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(char **why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(why, fmt, ap) < 0)
		*why = NULL;
	va_end(ap);
	return *why ? -EINVAL : -ENOMEM;
}

/* A rule file's key in the ConfigMap: its position, then its base name
 * in the characters a key may hold. Malloc'ed. */
static char *rule_key(size_t i, const char *name)
{
	const char *base = strrchr(name, '/');
	char *key = sandy_asprintf("%zu-%.100s", i + 1, base ? base + 1 : name);

	for (char *c = key; c && *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("._-", *c))
			*c = '_';
	return key;
}

static bool has_gateway(const struct kube_options *o)
{
	return o->network != EGRESS_OPEN;
}

static int check(const struct kube_options *o, char **why)
{
	const char *reason = NULL;
	size_t config = 0;

	*why = NULL;
	if (!o->name || !dns_label(o->name, strlen(o->name)))
		return refuse(why,
			      "bad session name '%s': a DNS-1123 label is needed (lower-case "
			      "letters, digits and '-', starting and ending with a letter or "
			      "digit, at most 63 characters)",
			      o->name ? o->name : "");
	if (!o->repo || repo_check(o->repo, o->git_password != NULL, &reason) < 0)
		return refuse(why, "bad repository URL '%s': %s", o->repo ? o->repo : "",
			      o->repo ? reason : "none given");
	if (o->branch && branch_check(o->branch, &reason) < 0)
		return refuse(why, "bad branch '%s': %s", o->branch, reason);
	if (!kube_api_key_name(o->agent))
		return refuse(why, "unknown agent '%s' (claude, codex, gemini)",
			      o->agent ? o->agent : "");
	const char *const images[] = {o->image, o->fs_image, o->gateway_image};
	for (size_t i = 0; i < ARRAY_SIZE(images); i++)
		if (!image_ok(images[i]))
			return refuse(why, "bad image name '%s'", images[i] ? images[i] : "");
	for (size_t i = 0; o->types && i < o->types->n; i++)
		if (!type_ok(o->types->v[i]))
			return refuse(why, "bad project type '%s'", o->types->v[i]);
	if (!o->memory || !quantity(o->memory))
		return refuse(why,
			      "bad memory size '%s': a Kubernetes quantity is needed (4Gi, 512Mi)",
			      o->memory ? o->memory : "");
	if (!o->cpus || !quantity(o->cpus))
		return refuse(why, "bad CPU count '%s': a Kubernetes quantity is needed (2, 500m)",
			      o->cpus ? o->cpus : "");
	if (o->volume_claim && !dns_subdomain(o->volume_claim))
		return refuse(why,
			      "bad volume claim '%s': a DNS-1123 subdomain is needed (lower-case "
			      "letters, digits, '-' and '.')",
			      o->volume_claim);
	for (size_t i = 0; o->network == EGRESS_FILTERED && o->allow && i < o->allow->n; i++)
		if (egress_domain_check(o->allow->v[i], &reason) < 0)
			return refuse(why, "bad domain '%s': %s", o->allow->v[i], reason);
	for (size_t i = 0; has_gateway(o) && o->upstreams && i < o->upstreams->n; i++)
		if (egress_upstream_check(o->upstreams->v[i]) < 0)
			return refuse(why,
				      "bad resolver '%s': an IPv4 address outside 127.0.0.0/8 is "
				      "needed",
				      o->upstreams->v[i]);
	if (has_gateway(o) && (!o->upstreams || o->upstreams->n == 0))
		return refuse(why, "no resolver for the clone and the gateway to forward to");
	for (size_t i = 0; i < o->n_rules; i++) {
		const struct kube_rule_file *f = &o->rules[i];
		if (!f->name || !f->text || !utf8_valid(f->text))
			return refuse(why,
				      "cannot put rule file '%s' in a ConfigMap: it is not UTF-8",
				      f->name ? f->name : "");
		config += strlen(f->text) + 100;
	}
	if (config > CONFIGMAP_MAX)
		return refuse(why,
			      "the rule files hold %zu bytes; a ConfigMap holds at most 1 MiB in "
			      "all",
			      config);
	if (o->git_username && has_control(o->git_username))
		return refuse(why, "bad git user name: it holds a control character");
	if (o->git_password && (strchr(o->git_password, '\n') || !*o->git_password))
		return refuse(why, "bad git credential: it is empty or holds a newline");
	if (o->command && !o->command[0])
		return refuse(why, "an empty command");
	for (char *const *a = o->command; a && *a; a++)
		if (!utf8_valid(*a))
			return refuse(why, "the command's argument '%s' is not UTF-8", *a);
	return 0;
}

/* ---- building ---------------------------------------------------------- */

/* cJSON calls, with a failure remembered rather than checked at each:
 * every helper takes a NULL parent (a failure above) and does nothing. */
struct build {
	const struct kube_options *o;
	bool failed;
};

static cJSON *put(struct build *b, cJSON *parent, const char *key, cJSON *item)
{
	bool ok = parent && item &&
		  (key ? cJSON_AddItemToObject(parent, key, item)
		       : cJSON_AddItemToArray(parent, item));

	if (!ok) {
		cJSON_Delete(item);
		b->failed = true;
		return NULL;
	}
	return item;
}

static cJSON *put_obj(struct build *b, cJSON *parent, const char *key)
{
	return put(b, parent, key, cJSON_CreateObject());
}

static cJSON *put_arr(struct build *b, cJSON *parent, const char *key)
{
	return put(b, parent, key, cJSON_CreateArray());
}

static void put_str(struct build *b, cJSON *parent, const char *key, const char *value)
{
	put(b, parent, key, cJSON_CreateString(value));
}

static void put_bool(struct build *b, cJSON *parent, const char *key, bool value)
{
	put(b, parent, key, cJSON_CreateBool(value));
}

static void put_num(struct build *b, cJSON *parent, const char *key, double value)
{
	put(b, parent, key, cJSON_CreateNumber(value));
}

static void put_strs(struct build *b, cJSON *parent, const char *key, const char *const *values,
		     size_t n)
{
	cJSON *a = put_arr(b, parent, key);

	for (size_t i = 0; i < n; i++)
		put_str(b, a, NULL, values[i]);
}

static char *base64(const char *s)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s);
	char *out = malloc(4 * ((len + 2) / 3) + 1), *q = out;

	for (size_t i = 0; out && i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		*q++ = digits[(v >> 18) & 63];
		*q++ = digits[(v >> 12) & 63];
		*q++ = i + 1 < len ? digits[(v >> 6) & 63] : '=';
		*q++ = i + 2 < len ? digits[v & 63] : '=';
	}
	if (q)
		*q = '\0';
	return out;
}

static void put_base64(struct build *b, cJSON *parent, const char *key, const char *value)
{
	cleanup_free char *text = base64(value);

	if (!text)
		b->failed = true;
	else
		put_str(b, parent, key, text);
}

/* NAME-SUFFIX, the name of a Secret or of the ConfigMap. */
static void put_named(struct build *b, cJSON *parent, const char *key, const char *suffix)
{
	cleanup_free char *s = sandy_asprintf("%s-%s", b->o->name, suffix);

	if (!s)
		b->failed = true;
	else
		put_str(b, parent, key, s);
}

/* apiVersion, kind and metadata, with the labels every object carries. */
static cJSON *object(struct build *b, cJSON *docs, const char *kind, const char *suffix,
		     const char *component)
{
	cJSON *doc = put_obj(b, docs, NULL);
	cJSON *meta, *labels;

	put_str(b, doc, "apiVersion", "v1");
	put_str(b, doc, "kind", kind);
	meta = put_obj(b, doc, "metadata");
	if (suffix)
		put_named(b, meta, "name", suffix);
	else
		put_str(b, meta, "name", b->o->name);
	labels = put_obj(b, meta, "labels");
	put_str(b, labels, "app.kubernetes.io/name", "sandy");
	put_str(b, labels, "app.kubernetes.io/instance", b->o->name);
	put_str(b, labels, "app.kubernetes.io/component", component);
	put_str(b, labels, "app.kubernetes.io/managed-by", "sandy");
	return doc;
}

static void secrets(struct build *b, cJSON *docs)
{
	const struct kube_options *o = b->o;

	if (o->git_password) {
		/* The type whose keys git's credential protocol has. */
		cJSON *s = object(b, docs, "Secret", "git", "git-credential");
		put_str(b, s, "type", "kubernetes.io/basic-auth");
		/* data, not stringData: podman kube play 4.3 reads data only. */
		cJSON *data = put_obj(b, s, "data");
		put_base64(b, data, "username",
			   o->git_username ? o->git_username : "x-access-token");
		put_base64(b, data, "password", o->git_password);
	}
	if (o->api_key) {
		cJSON *s = object(b, docs, "Secret", "agent", "agent-credential");
		put_str(b, s, "type", "Opaque");
		put_base64(b, put_obj(b, s, "data"), kube_api_key_name(o->agent), o->api_key);
	}
}

/* The gateway's files (as gateway.c writes them into the session
 * directory) and the user's rule files. */
static void config_map(struct build *b, cJSON *docs)
{
	const struct kube_options *o = b->o;
	const struct strv none = {0};

	if (!has_gateway(o) && o->n_rules == 0)
		return;
	cJSON *data = put_obj(b, object(b, docs, "ConfigMap", "config", "config"), "data");
	if (has_gateway(o)) {
		/* With --network=none, nothing is forwarded anywhere. */
		bool filtered = o->network == EGRESS_FILTERED;
		const struct strv *up = filtered ? o->upstreams : &none;
		cleanup_free char *rules = egress_ruleset(up, true);
		cleanup_free char *servers =
			egress_servers_file(filtered && o->allow ? o->allow : &none, up);
		if (!rules || !servers)
			b->failed = true;
		else {
			put_str(b, data, "rules.nft", rules);
			put_str(b, data, "servers", servers);
		}
	}
	for (size_t i = 0; i < o->n_rules; i++) {
		cleanup_free char *key = rule_key(i, o->rules[i].name);
		if (!key)
			b->failed = true;
		else
			put_str(b, data, key, o->rules[i].text);
	}
}

/* ---- the Pod's parts ----------------------------------------------------- */

static void add_env(struct build *b, cJSON *list, const char *name, const char *value)
{
	cJSON *e = put_obj(b, list, NULL);

	put_str(b, e, "name", name);
	put_str(b, e, "value", value);
}

/* An entry of MOUNTS: the volume VOLUME at PATH. SUBPATH and PROPAGATION
 * may be NULL. */
static void add_mount(struct build *b, cJSON *mounts, const char *volume, const char *path,
		      bool readonly, const char *subpath, const char *propagation)
{
	cJSON *m = put_obj(b, mounts, NULL);

	put_str(b, m, "name", volume);
	put_str(b, m, "mountPath", path);
	if (readonly)
		put_bool(b, m, "readOnly", true);
	if (subpath)
		put_str(b, m, "subPath", subpath);
	if (propagation)
		put_str(b, m, "mountPropagation", propagation);
}

static void resources(struct build *b, cJSON *c, const char *cpu_req, const char *mem_req,
		      const char *cpu_lim, const char *mem_lim)
{
	cJSON *r = put_obj(b, c, "resources");
	cJSON *req = put_obj(b, r, "requests"), *lim = put_obj(b, r, "limits");

	put_str(b, req, "cpu", cpu_req);
	put_str(b, req, "memory", mem_req);
	put_str(b, lim, "cpu", cpu_lim);
	put_str(b, lim, "memory", mem_lim);
}

/* The security context of a container that runs as the agent's user: no
 * capability, no way to gain one, its root filesystem read-only. */
static void unprivileged(struct build *b, cJSON *c)
{
	static const char *const all[] = {"ALL"};
	cJSON *sc = put_obj(b, c, "securityContext");

	put_num(b, sc, "runAsUser", KUBE_AGENT_UID);
	put_num(b, sc, "runAsGroup", KUBE_AGENT_UID);
	put_bool(b, sc, "runAsNonRoot", true);
	put_bool(b, sc, "allowPrivilegeEscalation", false);
	put_strs(b, put_obj(b, sc, "capabilities"), "drop", all, 1);
	put_bool(b, sc, "readOnlyRootFilesystem", true);
}

static cJSON *container(struct build *b, cJSON *list, const char *name, const char *image)
{
	cJSON *c = put_obj(b, list, NULL);

	put_str(b, c, "name", name);
	put_str(b, c, "image", image);
	/* sandy's images are built where it runs (sandy build-image), then
	 * loaded into the cluster or pushed; a :latest tag would otherwise
	 * be pulled every time, from a registry that may not have it. */
	put_str(b, c, "imagePullPolicy", "IfNotPresent");
	return c;
}

/* A native sidecar: restartPolicy Always in initContainers, and a startup
 * probe, which the next container waits for. */
static void sidecar(struct build *b, cJSON *c, const char *ready)
{
	if (!b->o->native_sidecars)
		return;
	put_str(b, c, "restartPolicy", "Always");
	cJSON *probe = put_obj(b, c, "startupProbe");
	const char *const cmd[] = {"cat", ready};
	put_strs(b, put_obj(b, probe, "exec"), "command", cmd, 2);
	put_num(b, probe, "periodSeconds", 1);
	put_num(b, probe, "failureThreshold", 120);
}

/* The volumes that hold the clone, in the clone's and sandyfs's
 * containers: the claim whole, or an emptyDir each. */
static void mount_data(struct build *b, cJSON *mounts, bool store)
{
	if (b->o->volume_claim) {
		add_mount(b, mounts, "data", DATA_DIR, false, NULL, NULL);
		return;
	}
	add_mount(b, mounts, "source", SOURCE_DIR, false, NULL, NULL);
	add_mount(b, mounts, "git", GIT_VOL_DIR, false, NULL, NULL);
	if (store)
		add_mount(b, mounts, "store", STORE_DIR, false, NULL, NULL);
}

static void clone_container(struct build *b, cJSON *list)
{
	const struct kube_options *o = b->o;
	/* The agent's image: it has git (the Dockerfile installs it), and
	 * nothing of the agent runs in this container. */
	cJSON *c = container(b, list, "clone", o->image);
	const char *const cmd[] = {"/bin/sh", "-c", clone_script, "sandy-clone"};

	put_strs(b, c, "command", cmd, ARRAY_SIZE(cmd));
	cJSON *e = put_arr(b, c, "env");
	add_env(b, e, "SANDY_REPO", o->repo);
	if (o->branch)
		add_env(b, e, "SANDY_BRANCH", o->branch);
	add_env(b, e, "GIT_ALLOW_PROTOCOL", "https:http:git");
	add_env(b, e, "GIT_TERMINAL_PROMPT", "0");
	if (!o->volume_claim)
		add_env(b, e, "SANDY_FRESH", "1");
	unprivileged(b, c);
	cJSON *m = put_arr(b, c, "volumeMounts");
	mount_data(b, m, false);
	add_mount(b, m, "git-credential", SECRET_DIR, true, NULL, NULL);
	resources(b, c, "100m", "128Mi", "1", "1Gi");
}

static void gateway_container(struct build *b, cJSON *list)
{
	static const char *const all[] = {"ALL"};
	/* NET_ADMIN for the firewall, ulogd's NFLOG socket and dnsmasq's
	 * set; NET_BIND_SERVICE, SETUID and SETGID for dnsmasq to bind port
	 * 53 and drop to its own user (as gateway.c gives them).
	 * DAC_OVERRIDE to write its logs whoever owns the egress volume: a
	 * kubelet makes an emptyDir 0777, but podman kube play gives a new
	 * volume (0755) to the user of the first container that starts with
	 * it, which may be the agent's. Root with SETUID could reach such a
	 * directory as its owner anyway. */
	static const char *const caps[] = {"NET_ADMIN", "NET_BIND_SERVICE", "SETUID", "SETGID",
					   "DAC_OVERRIDE"};
	/* The image's own entry point, as gateway.c runs it; not its
	 * --sysctl disable_ipv6, which is not among the sysctls Kubernetes
	 * calls safe: the ruleset drops IPv6 but on loopback all the same. */
	cJSON *c = container(b, list, "gateway", b->o->gateway_image);
	cJSON *sc = put_obj(b, c, "securityContext");

	sidecar(b, c, GW_LOGDIR "/ready");
	if (!b->o->native_sidecars) {
		const char *const cmd[] = {"/bin/sh", "-c", gateway_script, "sandy-gateway"};
		put_strs(b, c, "command", cmd, ARRAY_SIZE(cmd));
	}
	put_num(b, sc, "runAsUser", 0);
	cJSON *cap = put_obj(b, sc, "capabilities");
	put_strs(b, cap, "drop", all, 1);
	put_strs(b, cap, "add", caps, ARRAY_SIZE(caps));
	put_bool(b, sc, "allowPrivilegeEscalation", false);
	put_bool(b, sc, "readOnlyRootFilesystem", true);
	cJSON *m = put_arr(b, c, "volumeMounts");
	add_mount(b, m, "gateway-config", GW_NETDIR, true, NULL, NULL);
	add_mount(b, m, "egress", GW_LOGDIR, false, NULL, NULL);
	add_mount(b, m, "gateway-run", "/run", false, NULL, NULL);
	add_mount(b, m, "gateway-tmp", "/tmp", false, NULL, NULL);
	if (!b->o->native_sidecars)
		add_mount(b, m, "audit", AUDIT_DIR, true, NULL, NULL); /* FS_ENDED */
	resources(b, c, "50m", "64Mi", "500m", "256Mi");
}

static void fs_container(struct build *b, cJSON *list)
{
	const struct kube_options *o = b->o;
	cJSON *c = container(b, list, "sandyfs", o->fs_image);
	const char *const cmd[] = {"/bin/sh", "-c", fs_script, "sandy-fs"};
	/* The container is privileged, which gives it every capability;
	 * the daemon keeps those of fsbox.c's container (mount(2) and acting
	 * as each caller), and an exec as root takes back no other, from the
	 * bounding set or the inheritable one. Then sandyfs as
	 * sandyfs_mount_argv runs it for that container, with the clone's
	 * git directory where the agent sees it. */
	const char *const head[] = {"setpriv",
				    "--inh-caps=-all",
				    "--bounding-set=-all," FS_CAPS,
				    "--",
				    "sandyfs",
				    "mount",
				    "--foreground",
				    "--allow-other",
				    "--lazy-open",
				    "--pid-file",
				    PIDFILE,
				    "--audit",
				    AUDIT_DIR "/denials.jsonl",
				    "--private-git",
				    "--git-host-path",
				    AGENT_GIT "/repo.git"};

	sidecar(b, c, PIDFILE);
	put_strs(b, c, "command", cmd, ARRAY_SIZE(cmd));
	cJSON *args = put_arr(b, c, "args");
	for (size_t i = 0; i < ARRAY_SIZE(head); i++)
		put_str(b, args, NULL, head[i]);
	for (size_t i = 0; o->types && i < o->types->n; i++) {
		put_str(b, args, NULL, "--type");
		put_str(b, args, NULL, o->types->v[i]);
	}
	if (o->no_detect)
		put_str(b, args, NULL, "--no-detect");
	for (size_t i = 0; i < o->n_rules; i++) {
		cleanup_free char *key = rule_key(i, o->rules[i].name);
		cleanup_free char *path = key ? sandy_asprintf(RULES_DIR "/%s", key) : NULL;
		put_str(b, args, NULL, "--rules");
		if (!path)
			b->failed = true;
		else
			put_str(b, args, NULL, path);
	}
	put_str(b, args, NULL, "--drop-mount-privilege");
	/* WORKSPACE is the volume's mount: the mount reaches the agent's
	 * container from the volume's root alone. */
	put_str(b, args, NULL, "--over-mount");
	put_str(b, args, NULL, "--");
	put_str(b, args, NULL, SOURCE_DIR);
	put_str(b, args, NULL, WORKSPACE);
	cJSON *e = put_arr(b, c, "env");
	add_env(b, e, "SANDY_CACHE_DIR", STORE_DIR);
	/* For the way back: where it pushes, and the name the branches get
	 * there. */
	add_env(b, e, "SANDY_REPO", o->repo);
	add_env(b, e, "SANDY_NAME", o->name);
	add_env(b, e, "GIT_ALLOW_PROTOCOL", "https:http:git");
	add_env(b, e, "GIT_TERMINAL_PROMPT", "0");
	if (!o->native_sidecars)
		add_env(b, e, "SANDY_AGENT_END", AGENT_END);
	/* mount(2) and /dev/fuse (a privileged container sees the node's
	 * devices, so no hostPath volume brings it), and Bidirectional
	 * propagation, which Kubernetes gives privileged containers alone:
	 * an emptyDir mounted Bidirectional here and HostToContainer in the
	 * agent's container is the only portable way for a mount made in one
	 * container to reach another. No allowPrivilegeEscalation: false
	 * here, which the API refuses beside privileged. The daemon gives up
	 * CAP_SYS_ADMIN once it has mounted (--drop-mount-privilege); the
	 * shell keeps it for the unmount. */
	cJSON *sc = put_obj(b, c, "securityContext");
	put_bool(b, sc, "privileged", true);
	put_num(b, sc, "runAsUser", 0);
	put_bool(b, sc, "readOnlyRootFilesystem", true);
	cJSON *m = put_arr(b, c, "volumeMounts");
	mount_data(b, m, true);
	add_mount(b, m, "workspace", WORKSPACE, false, NULL, "Bidirectional");
	add_mount(b, m, "audit", AUDIT_DIR, false, NULL, NULL);
	/* For the way back, which pushes from here. */
	add_mount(b, m, "git-credential", SECRET_DIR, true, NULL, NULL);
	if (!o->native_sidecars)
		add_mount(b, m, "agent-end", AGENT_END_DIR, false, NULL, NULL);
	if (o->n_rules)
		add_mount(b, m, "rules", RULES_DIR, true, NULL, NULL);
	resources(b, c, "250m", "256Mi", "2", "2Gi");
}

static void agent_container(struct build *b, cJSON *list)
{
	const struct kube_options *o = b->o;
	const char *key = kube_api_key_name(o->agent);
	const char *net = o->network == EGRESS_OPEN   ? "open"
			  : o->network == EGRESS_NONE ? "none"
						      : "filtered";
	cJSON *c = container(b, list, "agent", o->image);
	const char *const cmd[] = {"/bin/sh", "-c", agent_script, "sandy-agent"};
	put_strs(b, c, "command", cmd, ARRAY_SIZE(cmd));
	cJSON *args = put_arr(b, c, "args");
	put_str(b, args, NULL, net);
	if (o->command) {
		for (char *const *a = o->command; *a; a++)
			put_str(b, args, NULL, *a);
	} else {
		/* The agent, for `kubectl attach -it`. */
		put_str(b, args, NULL, o->agent);
		put_bool(b, c, "stdin", true);
		put_bool(b, c, "tty", true);
	}
	put_str(b, c, "workingDir", WORKSPACE);
	cJSON *e = put_arr(b, c, "env");
	add_env(b, e, "HOME", AGENT_HOME);
	add_env(b, e, "SANDY", "1");
	add_env(b, e, "SANDY_DENIALS", AUDIT_DIR "/denials.jsonl");
	if (!o->native_sidecars)
		add_env(b, e, "SANDY_AGENT_END", AGENT_END);
	/* From the Secret when there is one: the agent may log in instead. */
	cJSON *k = put_obj(b, e, NULL);
	put_str(b, k, "name", key);
	cJSON *ref = put_obj(b, put_obj(b, k, "valueFrom"), "secretKeyRef");
	put_named(b, ref, "name", "agent");
	put_str(b, ref, "key", key);
	put_bool(b, ref, "optional", true);
	unprivileged(b, c);
	cJSON *m = put_arr(b, c, "volumeMounts");
	add_mount(b, m, "workspace", WORKSPACE, false, NULL, "HostToContainer");
	add_mount(b, m, "audit", AUDIT_DIR, true, NULL, NULL);
	/* The clone's git directory, which the private repository's
	 * alternates name; not the work tree, which holds what the policy
	 * hides. */
	if (o->volume_claim)
		add_mount(b, m, "data", AGENT_GIT, true, "git", NULL);
	else
		add_mount(b, m, "git", AGENT_GIT, true, NULL, NULL);
	if (has_gateway(o))
		add_mount(b, m, "egress", EGRESS_DIR, true, NULL, NULL);
	add_mount(b, m, "home", AGENT_HOME, false, NULL, NULL);
	add_mount(b, m, "tmp", "/tmp", false, NULL, NULL);
	if (!o->native_sidecars)
		add_mount(b, m, "agent-end", AGENT_END_DIR, false, NULL, NULL);
	resources(b, c, o->cpus, o->memory, o->cpus, o->memory);
}

static void volume_empty(struct build *b, cJSON *vols, const char *name)
{
	cJSON *v = put_obj(b, vols, NULL);

	put_str(b, v, "name", name);
	put_obj(b, v, "emptyDir");
}

/* A volume of the ConfigMap, with the keys the caller adds to the list
 * this returns. */
static cJSON *volume_config(struct build *b, cJSON *vols, const char *name)
{
	cJSON *v = put_obj(b, vols, NULL);

	put_str(b, v, "name", name);
	cJSON *cm = put_obj(b, v, "configMap");
	put_named(b, cm, "name", "config");
	return put_arr(b, cm, "items");
}

static void item(struct build *b, cJSON *items, const char *key)
{
	cJSON *i = put_obj(b, items, NULL);

	put_str(b, i, "key", key);
	put_str(b, i, "path", key);
}

static void volumes(struct build *b, cJSON *spec)
{
	const struct kube_options *o = b->o;
	cJSON *vols = put_arr(b, spec, "volumes");

	if (o->volume_claim) {
		cJSON *v = put_obj(b, vols, NULL);
		put_str(b, v, "name", "data");
		put_str(b, put_obj(b, v, "persistentVolumeClaim"), "claimName", o->volume_claim);
	} else {
		/* Not medium: Memory, which podman kube play makes one tmpfs
		 * per container instead of one volume for the Pod. */
		volume_empty(b, vols, "source");
		volume_empty(b, vols, "git");
		volume_empty(b, vols, "store");
	}
	/* Where sandyfs mounts, and from where the mount propagates to the
	 * agent's container. */
	volume_empty(b, vols, "workspace");
	volume_empty(b, vols, "audit");
	volume_empty(b, vols, "home");
	volume_empty(b, vols, "tmp");
	if (!o->native_sidecars)
		volume_empty(b, vols, "agent-end");
	/* The git credential, readable by the clone's group (fsGroup) and by
	 * root. Optional when sandy prints no Secret, so that a public
	 * repository needs none; required when it does, which podman kube
	 * play 4.3 needs to mount it at all (it drops an optional Secret
	 * volume whose Secret exists). */
	cJSON *v = put_obj(b, vols, NULL);
	put_str(b, v, "name", "git-credential");
	cJSON *s = put_obj(b, v, "secret");
	put_named(b, s, "secretName", "git");
	put_num(b, s, "defaultMode", 0440);
	put_bool(b, s, "optional", o->git_password == NULL);
	if (has_gateway(o)) {
		volume_empty(b, vols, "egress");
		volume_empty(b, vols, "gateway-run");
		volume_empty(b, vols, "gateway-tmp");
		cJSON *items = volume_config(b, vols, "gateway-config");
		item(b, items, "rules.nft");
		item(b, items, "servers");
	}
	if (o->n_rules) {
		cJSON *items = volume_config(b, vols, "rules");
		for (size_t i = 0; i < o->n_rules; i++) {
			cleanup_free char *key = rule_key(i, o->rules[i].name);
			if (!key)
				b->failed = true;
			else
				item(b, items, key);
		}
	}
}

static void pod(struct build *b, cJSON *docs)
{
	const struct kube_options *o = b->o;
	cJSON *spec = put_obj(b, object(b, docs, "Pod", NULL, "session"), "spec");

	put_str(b, spec, "restartPolicy", "Never");
	put_num(b, spec, "terminationGracePeriodSeconds", GRACE_SECONDS);
	/* Nothing in the Pod talks to the cluster's API, and the agent must
	 * not be handed a token for it, nor the cluster's services' names. */
	put_bool(b, spec, "automountServiceAccountToken", false);
	put_bool(b, spec, "enableServiceLinks", false);
	if (has_gateway(o)) {
		/* The gateway's resolver first: the agent's queries reach it
		 * alone, the firewall drops them on their way to any other
		 * (only dnsmasq's user may reach the upstreams). The upstreams
		 * after it, for the clone, which runs before the gateway and
		 * so finds nothing listening on 127.0.0.1. Three at most, as
		 * resolv.conf takes them. */
		cJSON *ns = put_arr(b, put_obj(b, spec, "dnsConfig"), "nameservers");
		put_str(b, spec, "dnsPolicy", "None");
		put_str(b, ns, NULL, "127.0.0.1");
		for (size_t i = 0; i < o->upstreams->n && i < 2; i++)
			put_str(b, ns, NULL, o->upstreams->v[i]);
	}
	cJSON *sc = put_obj(b, spec, "securityContext");
	/* The clone runs as the agent's user: a claim's volume (and the
	 * Secret's files) are made writable, readable, by its group. */
	put_num(b, sc, "fsGroup", KUBE_AGENT_UID);
	put_str(b, sc, "fsGroupChangePolicy", "OnRootMismatch");
	put_str(b, put_obj(b, sc, "seccompProfile"), "type", "RuntimeDefault");
	/* The clone first, while the Pod's network is still the cluster's
	 * and before anything of the agent's runs; then the gateway, then
	 * sandyfs, then the agent. */
	cJSON *init = put_arr(b, spec, "initContainers");
	cJSON *regular = put_arr(b, spec, "containers");
	cJSON *side = o->native_sidecars ? init : regular;
	clone_container(b, init);
	if (has_gateway(o))
		gateway_container(b, side);
	fs_container(b, side);
	agent_container(b, regular);
	volumes(b, spec);
}

int kube_manifests(const struct kube_options *o, cJSON **docs, char **why)
{
	struct build b = {.o = o};
	int r = check(o, why);

	*docs = NULL;
	if (r < 0)
		return r;
	cJSON *all = cJSON_CreateArray();
	if (!all)
		return -ENOMEM;
	secrets(&b, all);
	config_map(&b, all);
	pod(&b, all);
	if (b.failed) {
		cJSON_Delete(all);
		return -ENOMEM;
	}
	*docs = all;
	return 0;
}

char *kube_stream(const cJSON *docs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const cJSON *doc;
	bool ok = f != NULL;

	cJSON_ArrayForEach(doc, docs)
	{
		cleanup_free char *text = ok ? cJSON_Print(doc) : NULL;
		bool line_start = true;
		if (!text) {
			ok = false;
			break;
		}
		fputs("---\n", f);
		/* cJSON indents with tabs and puts one after each ':'; a raw
		 * tab is never inside a string, which cJSON escapes. */
		for (const char *c = text; *c; c++) {
			if (*c == '\t')
				fputs(line_start ? "  " : " ", f);
			else
				fputc(*c, f);
			line_start = *c == '\n' || (line_start && *c == '\t');
		}
		fputc('\n', f);
	}
	if (f && fclose(f) != 0)
		ok = false;
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}
