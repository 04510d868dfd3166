/* doctor.c - see doctor.h.
 *
 * Each item is one line, "ok", "warn" or "fail", what it is and what was
 * found; a problem is followed by "fix:" lines with the commands that fix
 * it. A "fail" is what would stop the session (or make it run without what
 * the options ask for); a "warn" is something missing that these options
 * do not need. The checks are the session's own: the messages a session
 * would print are captured and shown as what was found. */

#include "doctor.h"
#include "runtime/engine.h"
#include "runtime/fsbox.h"
#include "runtime/gateway.h"
#include "sys/host.h"
#include "policy_note.h"
#include "sys/proc.h"
#include "runtime/fsquery.h"
#include "runtime/sandyfs.h"
#include "session.h"
#include "world/world.h"

#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

enum level { OK, WARN, FAIL };

struct doctor {
	const struct sandy_opts *o;
	const char *sudo; /* "sudo " when not root, for the fix commands */
	int fails;
	char project[PATH_MAX];
	bool have_project;
	struct host_user user;
	bool have_user;
	struct sandyfs_prog fs; /* argv.n 0: none found */
	const char *engine;	/* the one a session would use, answering */
	struct strv sources;	/* the rule sources' names, for the allowlist */
};

static void item(struct doctor *d, enum level l, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void item(struct doctor *d, enum level l, const char *what, const char *fmt, ...)
{
	static const char *const names[] = {"ok", "warn", "fail"};
	va_list ap;

	printf("%-4s  %-11s ", names[l], what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (l == FAIL)
		d->fails++;
}

static void fix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fix(const char *fmt, ...)
{
	va_list ap;

	fputs("      fix: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* ---- what the session's checks print ----------------------------------- */

struct capture {
	FILE *f;
	int saved;
};

/* Sends stderr (sandy's messages) to a temporary file until capture_end. */
static void capture_start(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	c->f = tmpfile();
	c->saved = c->f ? dup(STDERR_FILENO) : -1;
	if (c->saved >= 0 && dup2(fileno(c->f), STDERR_FILENO) < 0) {
		close(c->saved);
		c->saved = -1;
	}
}

/* The first message captured, without "sandy: " (malloc'ed; "" when
 * nothing was said). */
static char *capture_end(struct capture *c)
{
	char line[4096] = "";

	fflush(stderr);
	if (c->saved >= 0) {
		dup2(c->saved, STDERR_FILENO);
		close(c->saved);
	}
	if (c->f) {
		rewind(c->f);
		if (!fgets(line, sizeof(line), c->f))
			line[0] = '\0';
		fclose(c->f);
	}
	line[strcspn(line, "\n")] = '\0';
	const char *text = strncmp(line, "sandy: ", 7) ? line : line + 7;
	return strdup(text);
}

/* The first line of S, trimmed (malloc'ed). */
static char *first_line(const char *s)
{
	s = s ? s : "";
	s += strspn(s, " \t\n");
	return strndup(s, strcspn(s, "\n"));
}

/* The strings of V separated by ", " (malloc'ed). */
static char *join(const struct strv *v)
{
	size_t len = 1;

	for (size_t i = 0; i < v->n; i++)
		len += strlen(v->v[i]) + 2;
	char *s = malloc(len), *p = s;
	if (!s)
		return NULL;
	*p = '\0';
	for (size_t i = 0; i < v->n; i++)
		p += sprintf(p, "%s%s", i ? ", " : "", v->v[i]);
	return s;
}

/* ---- the items ------------------------------------------------------------ */

static bool fuse_needed(const struct doctor *d)
{
	return d->o->fs == SANDY_FS_FUSE;
}

/* Rootless podman on a host whose / is not shared: sandyfs serves in its
 * namespace, never on this host (run.c, check_rootless_podman). */
static bool rootless_podman_unshared(const char *engine)
{
	return engine && !strcmp(engine, "podman") && geteuid() != 0 && !host_root_shared();
}

/* Whether a mount on this host would let the container's user in, known
 * before the engine answers: not when sandyfs serves in its world. */
static bool mounts_here_for_others(const struct doctor *d)
{
	return d->o->fs_mode != SANDY_FS_MODE_CONTAINER &&
	       !(d->o->runtime == SANDY_RUNTIME_PODMAN && rootless_podman_unshared("podman"));
}

static void check_project(struct doctor *d)
{
	struct stat st;

	if (!realpath(d->o->project, d->project))
		item(d, FAIL, "project", "cannot use project directory '%s': %s", d->o->project,
		     strerror(errno));
	else if (stat(d->project, &st) < 0 || !S_ISDIR(st.st_mode))
		item(d, FAIL, "project", "cannot use project directory '%s': not a directory",
		     d->o->project);
	else {
		d->have_project = true;
		item(d, OK, "project", "%s", d->project);
	}
	if (host_user(&d->user) < 0) {
		item(d, FAIL, "user", "out of memory");
		return;
	}
	d->have_user = true;
	item(d, OK, "user", "%s (uid %u)%s", d->user.name ? d->user.name : "no passwd entry",
	     (unsigned)d->user.uid, d->user.via_sudo ? ", through sudo" : "");
}

/* Whether the FUSE filesystem is registered with the kernel (the module
 * loaded, or built in). */
static bool fuse_registered(void)
{
	cleanup_free char *text = NULL;

	if (sandy_read_file("/proc/filesystems", 1 << 16, &text) < 0)
		return false;
	for (const char *p = text; (p = strstr(p, "fuse")); p += 4)
		if ((p == text || p[-1] == '\t') && (p[4] == '\n' || p[4] == '\0'))
			return true;
	return false;
}

static void check_fuse(struct doctor *d)
{
	bool need = fuse_needed(d);
	enum level bad = need ? FAIL : WARN;
	const char *unneeded = need ? "" : " (not needed with --fs=bind)";

	/* Before /dev/fuse is opened, which loads the module. */
	if (fuse_registered())
		item(d, OK, "fuse", "registered in /proc/filesystems");
	else {
		item(d, bad, "fuse", "not in /proc/filesystems: the fuse module is not loaded%s",
		     unneeded);
		fix("%smodprobe fuse", d->sudo);
	}
	int e = host_fuse_device();
	if (e == 0)
		item(d, OK, "/dev/fuse", "opens read-write");
	else {
		item(d, bad, "/dev/fuse", "cannot open '/dev/fuse': %s%s", strerror(-e), unneeded);
		if (e == -ENOENT || e == -ENODEV || e == -ENXIO) {
			fix("%smodprobe fuse", d->sudo);
			fix("%sapt-get install fuse3", d->sudo);
		} else
			fix("%schmod 0666 /dev/fuse", d->sudo);
	}
	cleanup_free char *fusermount = NULL;
	if (host_find_program("fusermount3", &fusermount))
		item(d, OK, "fusermount3", "%s", fusermount);
	else if (host_fuse_needs_fusermount()) {
		item(d, bad, "fusermount3",
		     "not found: it mounts FUSE filesystems for non-root users%s", unneeded);
		fix("%sapt-get install fuse3", d->sudo);
	} else
		item(d, OK, "fusermount3", "not found; not needed as root");

	bool other = d->have_user && mounts_here_for_others(d) &&
		     host_mount_needs_allow_other(d->o->runtime != SANDY_RUNTIME_NONE, &d->user);
	if (host_fuse_conf_allows_other())
		item(d, OK, "fuse.conf", "user_allow_other is set in /etc/fuse.conf");
	else if (!host_fuse_conf_needed(other))
		item(d, OK, "fuse.conf", "no user_allow_other in /etc/fuse.conf; not needed %s",
		     !other ? "(no other uid enters the mount)" : "as root");
	else {
		item(d, bad, "fuse.conf",
		     "no user_allow_other in /etc/fuse.conf: the container's user cannot enter "
		     "your mount%s",
		     unneeded);
		fix("echo user_allow_other | sudo tee -a /etc/fuse.conf");
	}
}

/* The portable shape (platform.h) runs sandyfs only in the engine's
 * world: its image is what there is to check (check_fs_mode does). */
static void check_sandyfs_in_engine(struct doctor *d)
{
	struct capture c;
	const char *image = fsbox_image();

	if (!d->engine || !engine_has_image(d->engine, image)) {
		item(d, fuse_needed(d) ? FAIL : WARN, "sandyfs",
		     "runs in a container of image '%s' (none runs on this host), which %s", image,
		     d->engine ? "is missing" : "needs a container engine");
		return;
	}
	capture_start(&c);
	int e = sandyfs_prog_find(&d->fs, d->engine, d->have_project ? d->project : ".",
				  &d->o->rule_args);
	cleanup_free char *why = capture_end(&c);
	if (e < 0)
		item(d, fuse_needed(d) ? FAIL : WARN, "sandyfs", "%s", why ? why : strerror(-e));
	else
		item(d, OK, "sandyfs",
		     "in a container of image '%s' in %s (none runs on this host)", image,
		     d->engine);
}

static void check_sandyfs(struct doctor *d)
{
	struct capture c;

	if (!SANDY_LINUX_HOST) {
		check_sandyfs_in_engine(d);
		return;
	}
	capture_start(&c);
	int e = sandyfs_prog_find(&d->fs, d->engine, d->have_project ? d->project : ".",
				  &d->o->rule_args);
	cleanup_free char *why = capture_end(&c);
	if (e < 0) {
		item(d, fuse_needed(d) ? FAIL : WARN, "sandyfs", "%s", why ? why : "not found");
		return;
	}
	const char *sandyfs = d->fs.path;
	char *argv[] = {(char *)sandyfs, "--version", NULL};
	cleanup_free char *out = NULL, *version = NULL;
	int status = proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL);
	version = first_line(out);
	if (status != 0 || !version || !*version) {
		item(d, fuse_needed(d) ? FAIL : WARN, "sandyfs", "%s does not run (status %d)",
		     sandyfs, status);
		sandyfs_prog_free(&d->fs);
		return;
	}
	item(d, OK, "sandyfs", "%s", sandyfs);
	/* "sandyfs 0.1.0 (libfuse 3.14, linux (...))" */
	const char *lib = strstr(version, "libfuse ");
	int major = 0, minor = 0;
	if (lib && sscanf(lib, "libfuse %d.%d", &major, &minor) == 2)
		item(d, OK, "libfuse", "%d.%d (from '%s --version')", major, minor, sandyfs);
	else
		item(d, OK, "libfuse", "unknown (%s)", version);

	cleanup_free char *uring = NULL;
	const char *knob = "/sys/module/fuse/parameters/enable_uring";
	const char *old = major * 100 + minor < 318 ? "; sandyfs's libfuse is older than 3.18 "
						      "and does not use it"
						    : "";
	if (sandy_read_file(knob, 64, &uring) < 0)
		item(d, OK, "io_uring", "FUSE over io_uring is not in this kernel");
	else if (uring[0] == 'Y')
		item(d, OK, "io_uring", "FUSE over io_uring is on%s", old);
	else
		item(d, OK, "io_uring", "FUSE over io_uring is off (on: echo Y > %s)%s", knob, old);
}

/* The project's store and its size, as `sandyfs store` reports them. */
static void check_store(struct doctor *d)
{
	if (!d->fs.argv.n || !d->have_project)
		return;
	cleanup_strv struct strv argv = {0};
	cleanup_free char *out = NULL, *err = NULL;
	int status = strv_extend(&argv, &d->fs.argv);
	status = strv_ok(status, strv_push(&argv, "store"));
	status = strv_ok(status, strv_push(&argv, "--"));
	status = strv_ok(status, strv_push(&argv, d->fs.project));
	if (status == 0)
		status = proc_run(argv.v, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_CAPTURE, &out,
				  &err);
	cleanup_free char *line = first_line(status == 0 ? out : err);
	char *tab = line ? strchr(line, '\t') : NULL;
	if (status == 0 && tab) {
		*tab = '\0';
		item(d, OK, "store", "%s: %s", line, tab + 1);
	} else
		item(d, WARN, "store", "%s", line && *line ? line : "sandyfs store failed");
}

/* The policy the session would mount with loads (a broken rule file stops
 * it); keeps the rule sources' names for the allowlist. */
static void check_rules(struct doctor *d)
{
	if (!d->fs.argv.n || !d->have_project || !fuse_needed(d))
		return;
	cleanup_strv struct strv argv = {0};
	cleanup_free char *out = NULL, *err = NULL;
	int status = sandyfs_query_argv(&argv, &d->fs, "rules", true, &d->o->rule_args);
	if (status == 0)
		status = proc_run(argv.v, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_CAPTURE, &out,
				  &err);
	if (status != 0) {
		cleanup_free char *why = first_line(err);
		item(d, FAIL, "rules", "%s",
		     why && *why ? why + (strncmp(why, "sandyfs: ", 9) ? 0 : 9)
				 : "sandyfs rules failed");
		return;
	}
	/* The rule sources' names, as the session takes them. */
	struct policy_rules rules;
	policy_rules_fetch(&d->fs, &d->o->rule_args, false, &rules);
	cleanup_free char *names = join(&rules.sources);
	item(d, OK, "rules", "the policy loads: %s", names ? names : "");
	strv_extend(&d->sources, &rules.sources);
	policy_rules_free(&rules);
}

/* The fixes for ENGINE, which check E says does not answer. */
static void engine_fixes(struct doctor *d, const char *engine, int e, const char *why)
{
	if (e == -ENOENT)
		fix("%sapt-get install %s", d->sudo,
		    !strcmp(engine, "docker") ? "docker.io" : engine);
	else if (why && strcasestr(why, "permission denied"))
		fix("%susermod -aG %s $USER  (then log in again)", d->sudo, engine);
	else if (!strcmp(engine, "podman"))
		fix("podman info  (says what is wrong)");
	else {
		struct stat st;
		const char *host = getenv("DOCKER_HOST");
		if (stat("/run/systemd/system", &st) == 0)
			fix("%ssystemctl start docker", d->sudo);
		else
			fix("%sdockerd &", d->sudo);
		if (host && *host)
			fix("unset DOCKER_HOST  (it names '%s')", host);
	}
}

/* ENGINE's own check, quiet but for what it says: 0 or -errno and *WHY. */
static int engine_says(const char *engine, char **why)
{
	struct capture c;

	capture_start(&c);
	int e = engine_check(engine, false);
	*why = capture_end(&c);
	return e;
}

static void check_engine(struct doctor *d)
{
	cleanup_free char *why = NULL;
	const char *asked = d->o->runtime == SANDY_RUNTIME_DOCKER   ? "docker"
			    : d->o->runtime == SANDY_RUNTIME_PODMAN ? "podman"
								    : NULL;

	if (d->o->runtime == SANDY_RUNTIME_NONE) {
		item(d, OK, "engine", "none: --runtime=none runs the command under bubblewrap");
		return;
	}
	if (asked) {
		int e = engine_says(asked, &why);
		if (e == 0) {
			d->engine = asked;
			item(d, OK, "engine", "%s answers", asked);
			return;
		}
		item(d, FAIL, "engine", "%s", why);
		engine_fixes(d, asked, e, why);
		return;
	}
	d->engine = engine_auto();
	if (d->engine) {
		item(d, OK, "engine", "%s answers%s", d->engine,
		     !strcmp(d->engine, "podman") ? " (docker does not)" : "");
		return;
	}
	/* As a session says it: the engine that is installed, or none. */
	const char *engine = host_find_program("docker", NULL)	 ? "docker"
			     : host_find_program("podman", NULL) ? "podman"
								 : NULL;
	if (!engine) {
		item(d, FAIL, "engine", "no container engine found (docker, podman)");
		fix("%sapt-get install docker.io", d->sudo);
	} else {
		int e = engine_says(engine, &why);
		item(d, FAIL, "engine", "%s", why);
		engine_fixes(d, engine, e, why);
	}
	fix("or run without a container: sandy --runtime=none");
}

static void check_images(struct doctor *d)
{
	const char *runtime = d->engine && !strcmp(d->engine, "podman") ? " --runtime=podman" : "";

	if (d->o->runtime == SANDY_RUNTIME_NONE)
		return;
	if (!d->engine) {
		item(d, WARN, "image", "'%s': not checked, no engine answers", d->o->image);
		return;
	}
	if (engine_has_image(d->engine, d->o->image))
		item(d, OK, "image", "'%s' is in %s", d->o->image, d->engine);
	else {
		item(d, FAIL, "image", "'%s' is not in %s", d->o->image, d->engine);
		if (!strcmp(d->o->image, SANDY_DEFAULT_IMAGE))
			fix("sandy build-image%s", runtime);
		else {
			fix("sandy build-image%s --image %s", runtime, d->o->image);
			fix("or: %s pull %s", d->engine, d->o->image);
		}
	}
	if (d->o->network != EGRESS_FILTERED) {
		item(d, OK, "gateway", "not needed with --network=%s",
		     d->o->network == EGRESS_NONE ? "none" : "open");
		return;
	}
	/* As the session picks it. */
	const char *env = getenv("SANDY_GATEWAY_IMAGE");
	const char *gateway = env && *env ? env : SANDY_DEFAULT_GATEWAY_IMAGE;
	if (engine_has_image(d->engine, gateway))
		item(d, OK, "gateway", "'%s' is in %s", gateway, d->engine);
	else {
		item(d, FAIL, "gateway", "the network gateway's image '%s' is not in %s", gateway,
		     d->engine);
		fix("sandy build-image%s --gateway-only", runtime);
	}
}

/* Where sandyfs would serve (run.c, start_serving): what the engine was
 * found to see, when a session asked it already; the image of sandyfs's
 * own container when it would serve in the engine's world. */
static void check_fs_mode(struct doctor *d)
{
	cleanup_free char *rundir = NULL;
	const char *runtime = d->engine && !strcmp(d->engine, "podman") ? " --runtime=podman" : "";
	const char *image = fsbox_image();

	if (!SANDY_LINUX_HOST && d->o->runtime == SANDY_RUNTIME_NONE)
		item(d, FAIL, "runtime",
		     "--runtime=none runs bubblewrap, which needs Linux; use docker or podman");
	if (!SANDY_LINUX_HOST && d->o->fs_mode == SANDY_FS_MODE_HOST)
		item(d, FAIL, "fs mode",
		     "--fs-mode=host mounts sandyfs on this host, which needs Linux; leave it to "
		     "sandy (--fs-mode=auto)");
	if (d->o->runtime == SANDY_RUNTIME_NONE || d->o->fs != SANDY_FS_FUSE || !d->engine)
		return;
	bool unshared = rootless_podman_unshared(d->engine);
	int sees = !SANDY_LINUX_HOST			      ? 0
		   : d->o->fs_mode == SANDY_FS_MODE_HOST      ? 1
		   : d->o->fs_mode == SANDY_FS_MODE_CONTAINER ? 0
		   : unshared				      ? 0
		   : session_rundir(&rundir) == 0	      ? fsbox_remembered(rundir, d->engine)
							      : -1;
	const char *why = !SANDY_LINUX_HOST			? "this host mounts nothing"
			  : d->o->fs_mode != SANDY_FS_MODE_AUTO ? "--fs-mode"
			  : unshared ? "rootless podman, and this host's / is not a shared mount"
				     : "the engine said so";
	if (sees > 0)
		item(d, OK, "fs mode", "host: sandyfs serves on this host (%s)", why);
	else if (sees < 0)
		item(d, OK, "fs mode",
		     "auto: the first session asks %s whether it sees this host's "
		     "mounts",
		     d->engine);
	else
		item(d, OK, "fs mode",
		     "container: sandyfs serves in a container of its own in %s's "
		     "world (%s)",
		     d->engine, why);
	if (sees > 0)
		return;
	cleanup_free char *built = NULL;
	int state = fsbox_image_state(d->engine, image, &built);
	if (state == 0)
		item(d, OK, "fs image", "'%s' is in %s", image, d->engine);
	else if (state == -ESTALE) {
		item(d, sees == 0 ? FAIL : WARN, "fs image",
		     "'%s' holds the sandyfs and rules of %s%s, not of this one (%s)", image,
		     *built ? "sandy " : "an earlier sandy", built, SANDY_VERSION);
		fix("sandy build-image%s --fs-only", runtime);
	} else {
		item(d, sees == 0 ? FAIL : WARN, "fs image", "'%s' is not in %s%s", image,
		     d->engine,
		     sees == 0 ? "" : " (needed if the engine does not see this host's mounts)");
		fix("sandy build-image%s --fs-only", runtime);
	}
}

/* The allowlist a filtered session would start with: the user's entries
 * (config.json, SANDY_ALLOW_DOMAINS, --allow) are checked there. */
static void check_allowlist(struct doctor *d)
{
	if (d->o->network != EGRESS_FILTERED || !d->have_user)
		return;
	cleanup_strv struct strv allow = {0};
	struct capture c;
	capture_start(&c);
	int e = gateway_allowlist(d->o->agent, &d->sources, &d->o->allow_args, &d->user, &allow);
	cleanup_free char *why = capture_end(&c);
	if (e < 0)
		item(d, FAIL, "allowlist", "%s", why && *why ? why : strerror(-e));
	else
		item(d, OK, "allowlist", "%zu names", allow.n);
}

static void check_bwrap(struct doctor *d)
{
	cleanup_free char *bwrap = NULL;

	if (host_find_program("bwrap", &bwrap))
		item(d, OK, "bwrap", "%s", bwrap);
	else if (d->o->runtime == SANDY_RUNTIME_NONE) {
		item(d, FAIL, "bwrap", "not found: --runtime=none runs the command in it");
		fix("%sapt-get install bubblewrap", d->sudo);
	} else {
		item(d, WARN, "bwrap", "not found (needed only for --runtime=none)");
		fix("%sapt-get install bubblewrap", d->sudo);
	}
}

/* git takes any directory shaped like a repository for one (HEAD,
 * objects/, refs/) and runs what its config names. sandyfs refuses that
 * shape in the project; git 2.38 and later can refuse such a repository
 * itself unless named with --git-dir (safe.bareRepository=explicit), which
 * also covers what reaches the host by other ways (an archive, a clone). */
static void check_git(struct doctor *d)
{
	cleanup_free char *git = NULL, *version = NULL, *value = NULL, *home_env = NULL;
	const char *home = d->have_user ? world_user_home(&d->user) : NULL;
	unsigned major = 0, minor = 0;

	if (!host_find_program("git", &git)) {
		item(d, OK, "git", "not installed here: nothing on this host reads a repository");
		return;
	}
	char *version_argv[] = {git, "--version", NULL};
	if (proc_run(version_argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &version,
		     NULL) != 0 ||
	    !version || sscanf(version, "git version %u.%u", &major, &minor) != 2) {
		item(d, WARN, "git", "'%s --version' does not say which version it is", git);
		return;
	}
	home_env = sandy_asprintf("HOME=%s", home ? home : "/nonexistent");
	char *get_argv[] = {"env", home_env, git, "-C", "/", "config", "--get",
			    "safe.bareRepository", NULL};
	proc_run(get_argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &value, NULL);
	if (value)
		value[strcspn(value, "\n")] = '\0';
	if (value && !strcasecmp(value, "explicit")) {
		item(d, OK, "git", "%u.%u, safe.bareRepository=explicit", major, minor);
	} else if (major > 2 || (major == 2 && minor >= 38)) {
		item(d, WARN, "git",
		     "%u.%u takes any directory shaped like a repository for one and runs what "
		     "its config names (sandyfs refuses that shape in the project; git can "
		     "refuse it everywhere)",
		     major, minor);
		fix("git config --global safe.bareRepository explicit");
	} else {
		item(d, WARN, "git",
		     "%u.%u takes any directory shaped like a repository for one; git 2.38 and "
		     "later can refuse that (safe.bareRepository=explicit)",
		     major, minor);
	}
}

int doctor_run(const struct sandy_opts *o)
{
	struct doctor d = {.o = o, .sudo = geteuid() == 0 ? "" : "sudo "};

	check_project(&d);
	if (SANDY_LINUX_HOST) {
		check_fuse(&d);
		check_sandyfs(&d);
		check_store(&d);
		check_rules(&d);
		check_engine(&d);
		check_images(&d);
		check_fs_mode(&d);
		check_allowlist(&d);
		check_bwrap(&d);
		check_git(&d);
	} else {
		/* Nothing is mounted here, and sandyfs runs in the engine. */
		check_engine(&d);
		check_images(&d);
		check_fs_mode(&d);
		check_sandyfs(&d);
		check_store(&d);
		check_rules(&d);
		check_allowlist(&d);
		check_git(&d);
	}
	static const char *const networks[] = {
		[EGRESS_FILTERED] = "filtered",
		[EGRESS_OPEN] = "open",
		[EGRESS_NONE] = "none",
	};
	if (d.fails == 0)
		item(&d, OK, "session", "would start: %s, --fs=%s, --network=%s",
		     d.engine ? d.engine : "bubblewrap", o->fs == SANDY_FS_FUSE ? "fuse" : "bind",
		     networks[o->network]);
	else {
		item(&d, FAIL, "session", "would not start: %d problem%s above", d.fails,
		     d.fails == 1 ? "" : "s");
	}
	sandyfs_prog_free(&d.fs);
	if (d.have_user)
		host_user_free(&d.user);
	strv_free(&d.sources);
	fflush(stdout);
	return d.fails ? SANDY_EXIT_FAILURE : 0;
}
