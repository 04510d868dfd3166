/* fsbox.c - see fsbox.h. */

#include "fsbox.h"
#include "elfarch.h"
#include "engine.h"
#include "sys/host.h"
#include "sys/proc.h"
#include "sys/sandy.h"
#include "sandyfs.h"

#include "config.h"
#include "common/cachedir.h"
#include "common/install.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long the daemon may take to serve once its container runs. */
#define START_SECONDS 30

/* What the container runs: the daemon in the foreground, SIGTERM handed
 * to it (it unmounts and completes its audit log), and whatever it leaves
 * behind (a dead mount, when it died) cleared before the container ends,
 * so that nothing stays in the engine's world. $1: the mountpoint, $2 its
 * session directory there; the rest is the daemon's command line. */
static const char box_script[] = "mp=$1 dir=$2; shift 2\n"
				 "mkdir -p \"$mp\" || exit 1\n"
				 "\"$@\" & pid=$!\n"
				 "trap 'kill -TERM $pid 2>/dev/null' TERM INT HUP\n"
				 "wait $pid; st=$?\n"
				 "while kill -0 $pid 2>/dev/null; do wait $pid; st=$?; done\n"
				 "sandyfs umount \"$mp\" >/dev/null 2>&1\n"
				 "rmdir \"$mp\" \"$dir\" 2>/dev/null\n"
				 "exit $st\n";

static int push_same_path(struct strv *argv, const char *path, bool readonly)
{
	return engine_push_bind(argv, path, path, readonly ? "readonly" : NULL);
}

/* The rule files named by --rules, which the daemon reads at their paths.
 * One that cannot be read is said as sandyfs would say it, rather than as
 * the engine's refusal to bind it. */
static int push_rule_files(struct strv *argv, const struct strv *rule_args)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i + 1 < rule_args->n; i++) {
		if (strcmp(rule_args->v[i], "--rules") != 0 && strcmp(rule_args->v[i], "-r") != 0)
			continue;
		const char *file = rule_args->v[++i];
		if (access(file, R_OK) < 0) {
			r = -errno;
			sandy_error("cannot open rule file '%s': %s", file, strerror(-r));
			return r;
		}
		r = push_same_path(argv, file, true);
	}
	return r;
}

/* The user's rule files (rules.d of the configuration directory), which
 * sandyfs reads where sandy's own rule says they are. */
static int push_user_config(struct strv *argv)
{
	cleanup_free char *dir = sandy_config_dir();
	struct stat st;
	int r = 0;

	if (!dir)
		return 0;
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		r = push_same_path(argv, dir, true);
	return strv_ok(r, strv_pushf(argv, "--env=SANDY_CONFIG_DIR=%s", dir));
}

/* The options of a container of sandy's own that mounts below
 * FSBOX_ENGINE_DIR: the capabilities of a root sandyfs (mount(2) and
 * umount(2), and acting as each caller), none else, no network. The
 * daemon gives up SYS_ADMIN once it has mounted; the shell keeps it, for
 * the unmount at the end. */
static int push_box_options(struct strv *argv, const char *engine, const char *root)
{
	static const char *const caps[] = {"SYS_ADMIN", "CHOWN",  "DAC_OVERRIDE", "DAC_READ_SEARCH",
					   "FOWNER",	"FSETID", "SETUID",	  "SETGID"};
	int r = 0;

	r = strv_ok(r, strv_push(argv, "--cap-drop=ALL"));
	/* The shell runs the image's sandyfs with SYS_ADMIN at the end: a
	 * daemon taken over, root with DAC_OVERRIDE, must not replace it. */
	r = strv_ok(r, strv_push(argv, "--read-only"));
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		r = strv_ok(r, strv_pushf(argv, "--cap-add=%s", caps[i]));
	r = strv_ok(r, strv_push(argv, "--device=/dev/fuse"));
	/* Docker's AppArmor profile forbids mount(2); where AppArmor is
	 * off, the option is no-op. */
	if (strcmp(engine, "podman") != 0)
		r = strv_ok(r, strv_push(argv, "--security-opt=apparmor=unconfined"));
	r = strv_ok(r, strv_push(argv, "--network=none"));
	/* -v, which makes the directory in the engine's world when missing. */
	return strv_ok(r, strv_pushf(argv, "--volume=%s:%s:rshared", root, root));
}

static bool box_running(const char *engine, const char *name)
{
	cleanup_free char *out = NULL;
	char *argv[] = {(char *)engine, "inspect",    "--format={{.State.Running}}",
			"--",		(char *)name, NULL};

	return proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) == 0 &&
	       out && !strncmp(out, "true", 4);
}

/* The last lines the container printed, for a failure message. */
static void show_logs(const char *engine, const char *name)
{
	char *argv[] = {(char *)engine, "logs", "--tail=5", "--", (char *)name, NULL};

	proc_run(argv, PROC_IN_NULL, NULL, NULL);
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

const char *fsbox_image(void)
{
	const char *env = getenv("SANDY_FS_IMAGE");

	return env && *env ? env : SANDY_FS_IMAGE;
}

int fsbox_image_state(const char *engine, const char *image, char **built)
{
	*built = engine_image_label(engine, image, FSBOX_VERSION_LABEL);
	if (!*built)
		return -ENOENT;
	return strcmp(*built, SANDY_VERSION) ? -ESTALE : 0;
}

int fsbox_image_check(const char *engine, const char *image)
{
	cleanup_free char *built = NULL;
	int r = fsbox_image_state(engine, image, &built);

	if (r == -ENOENT)
		sandy_error("the image of sandyfs's own container '%s' is not in %s; build it with "
			    "'sandy build-image --fs-only'",
			    image, engine);
	else if (r == -ESTALE && !*built)
		sandy_error("the image of sandyfs's own container '%s' was built by an earlier "
			    "sandy (it has no version label); rebuild it with 'sandy build-image "
			    "--fs-only'",
			    image);
	else if (r == -ESTALE)
		sandy_error("the image of sandyfs's own container '%s' holds the sandyfs and rules "
			    "of sandy %s, not of this one (%s); rebuild it with 'sandy build-image "
			    "--fs-only'",
			    image, built, SANDY_VERSION);
	return r;
}

char *fsbox_name(const char *session_id)
{
	return sandy_asprintf("sandy-fs-%s", session_id);
}

int fsbox_query_argv(struct strv *argv, const char *engine, const char *image, const char *project,
		     const char *workdir, const struct strv *rule_args)
{
	cleanup_free char *store = sandy_cache_dir();
	int r = 0;

	if (!store) {
		sandy_error("cannot tell where the projects' stores are: no home directory");
		return -ENOENT;
	}
	/* The store's root, bound into the container, so that the question
	 * finds the project's store where the daemon made it. */
	if ((r = sandy_make_path(store, 0700)) < 0) {
		sandy_error("cannot make the store directory '%s': %s", store, strerror(-r));
		return r;
	}
	r = strv_ok(r, engine_push_run_confined(argv, engine));
	r = strv_ok(r, strv_push(argv, "--label=sandy.role=fs-query"));
	/* As the user, as a sandyfs run here would: `git import` writes the
	 * project's refs, `store --clear` removes the user's store. */
	r = strv_ok(r, strv_pushf(argv, "--user=%u:%u", (unsigned)geteuid(), (unsigned)getegid()));
	r = strv_ok(r, strv_push(argv, "--env=HOME=/tmp"));
	r = strv_ok(r, strv_pushf(argv, "--env=SANDY_CACHE_DIR=%s", store));
	r = strv_ok(r, push_same_path(argv, project, false));
	r = strv_ok(r, push_same_path(argv, store, false));
	r = strv_ok(r, push_rule_files(argv, rule_args));
	r = strv_ok(r, push_user_config(argv));
	r = strv_ok(r, strv_pushf(argv, "--workdir=%s", workdir));
	r = strv_ok(r, strv_push(argv, "--entrypoint=sandyfs"));
	return strv_ok(r, strv_push(argv, image));
}

int fsbox_start(const struct fsbox_spec *s, struct fsbox *b)
{
	cleanup_strv struct strv argv = {0}, opts = {0};
	int r = 0;

	*b = (struct fsbox){.engine = s->engine, .image = s->image, .waiter = -1, .waiter_fd = -1};
	b->name = fsbox_name(s->session_id);
	b->engine_root = strdup(s->engine_root);
	b->engine_dir = sandy_asprintf("%s/%s", s->engine_root, s->session_id);
	b->mountpoint = b->engine_dir ? sandy_asprintf("%s/workspace", b->engine_dir) : NULL;
	if (!b->name || !b->mountpoint)
		return -ENOMEM;
	if ((r = sandy_make_path(s->store_root, 0700)) < 0) {
		sandy_error("cannot make the store directory '%s': %s", s->store_root,
			    strerror(-r));
		return r;
	}
	r = strv_ok(r, strv_push(&argv, s->engine));
	r = strv_ok(r, strv_push(&argv, "run"));
	/* Not --rm: a container that ended before serving keeps its logs
	 * for the message; fsbox_stop removes it. */
	r = strv_ok(r, strv_push(&argv, "--detach"));
	r = strv_ok(r, strv_pushf(&argv, "--name=%s", b->name));
	r = strv_ok(r, strv_pushf(&argv, "--label=sandy.session=%s", s->session_id));
	r = strv_ok(r, strv_push(&argv, "--label=sandy.role=fs"));
	r = strv_ok(r, push_box_options(&argv, s->engine, s->engine_root));
	r = strv_ok(r, strv_pushf(&argv, "--env=SANDY_CACHE_DIR=%s", s->store_root));
	r = strv_ok(r, push_same_path(&argv, s->project, false));
	r = strv_ok(r, push_same_path(&argv, s->store_root, false));
	r = strv_ok(r, push_same_path(&argv, s->session_dir, false));
	r = strv_ok(r, push_rule_files(&argv, s->rule_args));
	r = strv_ok(r, push_user_config(&argv));
	r = strv_ok(r, strv_push(&argv, s->image));
	r = strv_ok(r, strv_push(&argv, "/bin/sh"));
	r = strv_ok(r, strv_push(&argv, "-c"));
	r = strv_ok(r, strv_push(&argv, box_script));
	r = strv_ok(r, strv_push(&argv, "sandy-fs"));
	r = strv_ok(r, strv_push(&argv, b->mountpoint));
	r = strv_ok(r, strv_push(&argv, b->engine_dir));
	/* Among the options sandyfs_mount_argv puts before SOURCE. */
	r = strv_ok(r, strv_extend(&opts, s->rule_args));
	r = strv_ok(r, strv_push(&opts, "--drop-mount-privilege"));
	r = strv_ok(r, sandyfs_mount_argv(&argv, "sandyfs", &opts, true, true, s->audit, s->pidfile,
					  s->git_seen_at, s->project, b->mountpoint));
	if (r < 0)
		return r;
	unlink(s->pidfile);
	int status = proc_run(argv.v, PROC_IN_NULL | PROC_OUT_NULL, NULL, NULL);
	if (status != 0) {
		sandy_error("cannot start sandyfs in a %s container (image %s): %s", s->engine,
			    s->image, status < 0 ? strerror(-status) : "the engine refused it");
		return status < 0 ? status : -EIO;
	}
	b->started = true;
	/* The daemon writes its pid file once it serves. */
	struct stat st;
	for (int waited = 0; stat(s->pidfile, &st) < 0; waited += 50) {
		if (waited % 1000 == 0 && !box_running(s->engine, b->name)) {
			sandy_error("sandyfs's container '%s' ended before serving '%s'; its last "
				    "words:",
				    b->name, s->project);
			show_logs(s->engine, b->name);
			engine_remove(s->engine, b->name);
			b->started = false;
			return -EIO;
		}
		if (waited >= START_SECONDS * 1000) {
			sandy_error("sandyfs's container '%s' did not serve '%s' within %d s",
				    b->name, s->project, START_SECONDS);
			return -ETIMEDOUT;
		}
		sleep_ms(50);
	}
	char *wait_argv[] = {(char *)s->engine, "wait", "--", b->name, NULL};
	r = proc_spawn(wait_argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_NULL, &b->waiter);
	if (r < 0)
		return r;
	b->waiter_fd = proc_pidfd(b->waiter);
	return 0;
}

bool fsbox_alive(struct fsbox *b)
{
	if (!b->started || b->waiter <= 0)
		return false;
	if (b->waiter_fd >= 0) {
		struct pollfd p = {.fd = b->waiter_fd, .events = POLLIN};
		return poll(&p, 1, 0) == 0;
	}
	int ws;
	if (waitpid(b->waiter, &ws, WNOHANG) != b->waiter)
		return true;
	b->waiter = -1;
	return false;
}

/* A container that clears what a daemon killed with its container left in
 * the engine's world: the dead mount and its directories. */
static void clear_engine_dir(const char *engine, const char *image, const char *root,
			     const char *engine_dir, const char *mountpoint)
{
	cleanup_strv struct strv argv = {0};
	int r = 0;

	r = strv_ok(r, strv_push(&argv, engine));
	r = strv_ok(r, strv_push(&argv, "run"));
	r = strv_ok(r, strv_push(&argv, "--rm"));
	r = strv_ok(r, push_box_options(&argv, engine, root));
	r = strv_ok(r, strv_push(&argv, image));
	r = strv_ok(r, strv_push(&argv, "/bin/sh"));
	r = strv_ok(r, strv_push(&argv, "-c"));
	r = strv_ok(r, strv_push(&argv, "sandyfs umount \"$1\" >/dev/null 2>&1; rmdir \"$1\" "
					"\"$2\" 2>/dev/null; true"));
	r = strv_ok(r, strv_push(&argv, "sandy-fs"));
	r = strv_ok(r, strv_push(&argv, mountpoint));
	r = strv_ok(r, strv_push(&argv, engine_dir));
	if (r == 0)
		proc_run(argv.v, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_NULL, NULL, NULL);
}

void fsbox_stop(struct fsbox *b, bool died)
{
	if (!b->started)
		return;
	engine_stop(b->engine, b->name, 10);
	engine_remove(b->engine, b->name);
	if (b->waiter > 0) {
		proc_wait(b->waiter);
		b->waiter = -1;
	}
	if (died)
		clear_engine_dir(b->engine, b->image, b->engine_root, b->engine_dir, b->mountpoint);
	b->started = false;
}

void fsbox_sweep(const char *engine, const char *engine_root, const char *session_id)
{
	struct fsbox b = {.engine = engine, .image = fsbox_image(), .waiter = -1, .waiter_fd = -1};

	b.name = fsbox_name(session_id);
	b.engine_root = strdup(engine_root);
	b.engine_dir = sandy_asprintf("%s/%s", engine_root, session_id);
	b.mountpoint = b.engine_dir ? sandy_asprintf("%s/workspace", b.engine_dir) : NULL;
	/* Stopped, it unmounts and clears its directory as at a session's
	 * end; whatever a daemon that had died left, the clearing takes. */
	b.started = b.name && b.engine_root && b.mountpoint;
	fsbox_stop(&b, true);
	fsbox_free(&b);
}

bool fsbox_rootless_podman(const char *engine)
{
	cleanup_free char *out = NULL;
	char *argv[] = {(char *)engine, "info",
			"--format={{.Host.Security.Rootless}} {{.Host.ServiceIsRemote}}", NULL};

	if (strcmp(engine, "podman") != 0 || geteuid() == 0)
		return false;
	return proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) == 0 &&
	       out && !strncmp(out, "true false", 10);
}

/* Run in podman's namespace: the directory made, and bound onto itself
 * as a shared mount unless it is one already (one bind per boot of that
 * namespace, not one per session). */
static const char share_script[] =
	"d=$1\n"
	"mkdir -p \"$d\" || exit 1\n"
	"awk -v d=\"$d\" '$5 == d && / shared:/ { f = 1 } END { exit !f }' /proc/self/mountinfo "
	"&& exit 0\n"
	"mount --bind \"$d\" \"$d\" && mount --make-shared \"$d\"\n";

int fsbox_engine_root(const char *engine, const char *rundir, char **root)
{
	cleanup_free char *err = NULL;

	*root = NULL;
	if (!fsbox_rootless_podman(engine))
		return (*root = strdup(FSBOX_ENGINE_DIR)) ? 0 : -ENOMEM;
	cleanup_free char *dir = sandy_asprintf("%s/%s", rundir, FSBOX_ROOTLESS_DIR);
	if (!dir)
		return -ENOMEM;
	char *argv[] = {(char *)engine,	      "unshare", "sh", "-c",
			(char *)share_script, "sandy",	 dir,  NULL};
	int status = proc_run(argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_CAPTURE, NULL, &err);
	if (status != 0) {
		sandy_error(
			"cannot make '%s' a shared mount in rootless podman's namespace ('podman "
			"unshare' said: %s)",
			dir, err && *err ? strtok(err, "\n") : "nothing");
		return status < 0 ? status : -EIO;
	}
	*root = steal_ptr(&dir);
	return 0;
}

void fsbox_free(struct fsbox *b)
{
	if (b->waiter_fd >= 0)
		close(b->waiter_fd);
	free(b->name);
	free(b->engine_root);
	free(b->engine_dir);
	free(b->mountpoint);
	*b = (struct fsbox){.waiter = -1, .waiter_fd = -1};
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (const char *p = s ? s : ""; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull; /* a separator */
}

static char *engine_id(const char *engine)
{
	cleanup_free char *out = NULL;
	char *argv[] = {(char *)engine, "info", "--format={{.ID}}{{.Name}}", NULL};

	if (proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) != 0 ||
	    !out)
		return NULL;
	uint64_t h = 0xcbf29ce484222325ull;
	h = fnv1a(h, engine);
	h = fnv1a(h, out);
	h = fnv1a(h, getenv("DOCKER_HOST"));
	h = fnv1a(h, getenv("CONTAINER_HOST"));
	return sandy_asprintf("%016llx", (unsigned long long)h);
}

static char *remembered_at(const char *rundir, const char *engine)
{
	cleanup_free char *id = engine_id(engine);

	return id ? sandy_asprintf("%s/engine-%s", rundir, id) : NULL;
}

int fsbox_remembered(const char *rundir, const char *engine)
{
	cleanup_free char *path = remembered_at(rundir, engine);
	cleanup_free char *known = NULL;

	if (!path || sandy_read_file(path, 16, &known) < 0)
		return -1;
	return !strncmp(known, "host", 4) ? 1 : !strncmp(known, "container", 9) ? 0 : -1;
}

void fsbox_remember(const char *rundir, const char *engine, bool sees_mounts)
{
	cleanup_free char *path = remembered_at(rundir, engine);

	if (path)
		sandy_write_file(path, sees_mounts ? "host\n" : "container\n", sees_mounts ? 5 : 10,
				 0600);
}

int fsbox_engine_sees_mounts(const char *engine, const char *image, const char *mountpoint)
{
	cleanup_strv struct strv argv = {0};
	cleanup_free char *err = NULL;
	int r = 0;

	r = strv_ok(r, engine_push_run_confined(&argv, engine));
	r = strv_ok(r, engine_push_bind(&argv, mountpoint, "/probe", "readonly"));
	r = strv_ok(r, strv_push(&argv, "--entrypoint=grep"));
	r = strv_ok(r, strv_push(&argv, image));
	r = strv_ok(r, strv_push(&argv, "-q"));
	r = strv_ok(r, strv_push(&argv, " /probe .* - fuse\\.sandyfs "));
	r = strv_ok(r, strv_push(&argv, "/proc/self/mountinfo"));
	if (r < 0)
		return r;
	int status = proc_run(argv.v, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_CAPTURE, NULL, &err);
	if (status == 0 || status == 1)
		return status == 0;
	/* The directory is not there at all: a world of its own. */
	if (status == 125 && err && (strstr(err, "does not exist") || strstr(err, "no such file")))
		return 0;
	if (err && *err)
		fputs(err, stderr);
	return status < 0 ? status : -EIO;
}

/* Copies SRC (a file or a directory) to DIR/NAME. */
static int copy_into(const char *src, const char *dir, const char *name)
{
	cleanup_free char *dst = sandy_asprintf("%s/%s", dir, name);
	char *argv[] = {"cp", "-RL", "--", (char *)src, dst, NULL};

	if (!dst)
		return -ENOMEM;
	int status = proc_run(argv, PROC_IN_NULL, NULL, NULL);
	return status == 0 ? 0 : -EIO;
}

/* The sanitizers' runtimes a sanitized sandyfs needs (a test build), which
 * the base does not have: copied into DIR/lib. Everything else it links
 * is the base's (Debian 12's libfuse3, libgit2, PCRE2, cJSON, utf8proc). */
static int copy_runtimes(const char *sandyfs, const char *dir)
{
	cleanup_free char *out = NULL, *lib = sandy_asprintf("%s/lib", dir);
	char *argv[] = {"ldd", (char *)sandyfs, NULL};
	int r = 0;

	if (!lib)
		return -ENOMEM;
	if (mkdir(lib, 0755) < 0)
		return -errno;
	if (proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) != 0 ||
	    !out)
		return 0; /* not dynamic, or no ldd: the build's check says */
	for (char *line = strtok(out, "\n"); r == 0 && line; line = strtok(NULL, "\n")) {
		char name[64], path[4096];
		if (sscanf(line, " %63s => %4095s", name, path) == 2 &&
		    (!strncmp(name, "libasan.", 8) || !strncmp(name, "libubsan.", 9)))
			r = copy_into(path, lib, name);
	}
	return r;
}

/* sandyfs's source, for building it in the image: the source tree for a
 * sandy of the build directory, else what meson installs as
 * DATADIR/sandy/sandyfs-source (the top-level meson.build says why a tree). */
static const struct install_item source_item = {
	.what = "sandyfs's source",
	.build = SANDY_SOURCE_ROOT,
	.name = "sandyfs-source",
	.probe = "fusefs/cli/main.c",
};

/* Copies of SANDY_SOURCE_PARTS (entries of the top directory), what
 * `meson setup -Dtests=false` reads, from the source tree SRC to
 * DIR/source: not the tree as it is, which holds the tests and,
 * uninstalled, build directories. */
static int copy_source(const char *src, const char *dir)
{
	cleanup_free char *parts = strdup(SANDY_SOURCE_PARTS);
	cleanup_free char *to = sandy_asprintf("%s/source", dir);
	char *save = NULL;
	int r = 0;

	if (!parts || !to)
		return -ENOMEM;
	if (mkdir(to, 0755) < 0)
		return -errno;
	for (char *part = strtok_r(parts, " ", &save); r == 0 && part;
	     part = strtok_r(NULL, " ", &save)) {
		cleanup_free char *from = sandy_asprintf("%s/%s", src, part);
		r = from ? copy_into(from, to, part) : -ENOMEM;
	}
	return r;
}

/* The libraries sandyfs links (Debian 12's), installed when the base lacks
 * them: a registry's debian:bookworm does, the base base-image.sh makes
 * has them. And git, with the certificate authorities: on a cluster
 * (kube.c) this container pushes the agent's checked branches. */
#define BOX_LIBRARIES                                                                              \
	"RUN set -e; pkgs='libfuse3-3 libgit2-1.5 libpcre2-8-0 libcjson1 libutf8proc2 git "        \
	"ca-certificates'; \\\n"                                                                   \
	"    if ! dpkg -s $pkgs >/dev/null 2>&1; then \\\n"                                        \
	"        apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y \\\n"         \
	"            --no-install-recommends $pkgs && rm -rf /var/lib/apt/lists/*; \\\n"           \
	"    fi\n"

#define BOX_FILES                                                                                  \
	"COPY rules /usr/local/share/sandy/rules\n"                                                \
	"COPY ro-overlays /usr/local/share/sandy/ro-overlays\n"                                    \
	"ENV SANDY_RULES_DIR=/usr/local/share/sandy/rules "                                        \
	"SANDY_OVERLAYS_DIR=/usr/local/share/sandy/ro-overlays\n"                                  \
	"RUN ldconfig && sandyfs --version >/dev/null\n"                                           \
	"LABEL org.sandy.role=fs " FSBOX_VERSION_LABEL "=" SANDY_VERSION "\n"

static const char box_dockerfile[] =
	"# The image of sandyfs's own container (made by sandy build-image),\n"
	"# with this host's sandyfs.\n"
	"ARG BASE\n"
	"FROM ${BASE}\n" BOX_LIBRARIES "COPY lib/ /usr/local/lib/\n"
	"COPY sandyfs /usr/local/bin/sandyfs\n" BOX_FILES;

/* Only the sandyfs target is built: the launcher and the man pages are not
 * the image's. The build tools stay in the first stage. */
static const char box_source_dockerfile[] =
	"# The image of sandyfs's own container (made by sandy build-image),\n"
	"# with sandyfs built here from its source.\n"
	"ARG BASE\n"
	"FROM ${BASE} AS build\n"
	"RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y \\\n"
	"    --no-install-recommends meson ninja-build gcc libc6-dev pkg-config python3 \\\n"
	"    libfuse3-dev libgit2-dev libpcre2-dev libcjson-dev libutf8proc-dev\n"
	"COPY source /src\n"
	"RUN meson setup -Dtests=false --prefix=/usr/local /build /src \\\n"
	"    && ninja -C /build fusefs/sandyfs\n"
	"FROM ${BASE}\n" BOX_LIBRARIES
	"COPY --from=build /build/fusefs/sandyfs /usr/local/bin/sandyfs\n" BOX_FILES;

/* This host's sandyfs as a session finds it (host_find_sandyfs), or NULL;
 * quiet, since without one sandyfs is built in the image. */
static char *find_sandyfs(void)
{
	const char *env = getenv("SANDYFS");
	char *found = NULL;

	if (env && *env)
		return strdup(env);
	if (install_find(&host_sandyfs_item, &found, NULL) == 0 ||
	    host_find_program("sandyfs", &found))
		return found;
	return NULL;
}

/* Whether to build sandyfs in the image: when this host has none that
 * ENGINE's machine runs (a Mac's, an engine in a VM of another
 * architecture). Its path, when it has, in *SANDYFS. */
static int needs_source_build(const char *engine, char **sandyfs)
{
	cleanup_free char *arch = engine_arch(engine);
	int r;

	*sandyfs = find_sandyfs();
	if (!*sandyfs) {
		sandy_note("no sandyfs on this host: building it from its source in image '%s'",
			   SANDY_FS_IMAGE);
		return 1;
	}
	if ((r = elfarch_file_runs(*sandyfs, arch)) > 0)
		return 0;
	if (r < 0)
		sandy_note("cannot read '%s': %s; building sandyfs from its source in image '%s'",
			   *sandyfs, strerror(-r), SANDY_FS_IMAGE);
	else
		sandy_note("'%s' is not a Linux program for the engine's machine (%s): building "
			   "sandyfs from its source in image '%s'",
			   *sandyfs, arch ? arch : "its architecture unknown", SANDY_FS_IMAGE);
	return 1;
}

int fsbox_build_image(const char *engine, const char *image, const char *base, bool from_source)
{
	char dir[] = "/tmp/sandy-fs-image.XXXXXX";
	cleanup_free char *rules = NULL, *overlays = NULL, *source = NULL, *err = NULL;
	cleanup_free char *sandyfs = NULL;
	int r = 0;

	if (!from_source && (r = needs_source_build(engine, &sandyfs)) > 0)
		from_source = true;
	if ((r = install_find(&install_rules, &rules, &err)) < 0 ||
	    (r = install_find(&install_overlays, &overlays, &err)) < 0 ||
	    (from_source && (r = install_find(&source_item, &source, &err)) < 0)) {
		sandy_error("%s", err ? err : strerror(-r));
		return r;
	}
	if (!mkdtemp(dir)) {
		r = -errno;
		sandy_error("cannot make a directory for the sandy-fs image: %s", strerror(-r));
		return r;
	}
	cleanup_free char *df = sandy_asprintf("%s/Dockerfile", dir);
	r = df ? 0 : -ENOMEM;
	if (from_source) {
		r = strv_ok(r, copy_source(source, dir));
	} else {
		r = strv_ok(r, copy_into(sandyfs, dir, "sandyfs"));
		r = strv_ok(r, copy_runtimes(sandyfs, dir));
	}
	r = strv_ok(r, copy_into(rules, dir, "rules"));
	r = strv_ok(r, copy_into(overlays, dir, "ro-overlays"));
	if (r == 0 && from_source)
		r = sandy_write_file(df, box_source_dockerfile, sizeof(box_source_dockerfile) - 1,
				     0644);
	else if (r == 0)
		r = sandy_write_file(df, box_dockerfile, sizeof(box_dockerfile) - 1, 0644);
	if (r == 0) {
		cleanup_free char *tag = sandy_asprintf("--tag=%s", image);
		cleanup_free char *arg = sandy_asprintf("--build-arg=BASE=%s", base);
		char *argv[] = {(char *)engine, "build", tag, arg, "--", dir, NULL};
		int status = tag && arg ? proc_run(argv, 0, NULL, NULL) : -ENOMEM;
		if (status != 0 && from_source) {
			sandy_error(
				"cannot build image '%s' (sandyfs's own, sandyfs built from '%s') "
				"on '%s': %s build failed (status %d); its base must be Debian 12",
				image, source, base, engine, status);
			r = -EIO;
		} else if (status != 0) {
			sandy_error(
				"cannot build image '%s' (sandyfs's own, with '%s') on '%s': %s "
				"build failed (status %d); its base must be Debian 12, and a "
				"sandyfs built for another system needs --fs-from-source",
				image, sandyfs, base, engine, status);
			r = -EIO;
		}
	} else {
		sandy_error("cannot gather sandyfs%s and its files for image '%s': %s",
			    from_source ? "'s source" : "", image, strerror(-r));
	}
	char *rm[] = {"rm", "-rf", "--", dir, NULL};
	proc_run(rm, PROC_IN_NULL, NULL, NULL);
	return r;
}
