/* engine.c - see engine.h. */

#include "engine.h"
#include "sys/proc.h"

#include "config.h"
#include "common/install.h"

#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* The first line of S (for quoting a tool's error message), trimmed,
 * malloc'ed; "" for NULL. */
static char *first_line(const char *s)
{
	if (!s)
		return strdup("");
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	size_t len = strcspn(s, "\r\n");
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	return strndup(s, len);
}

int engine_check(const char *engine, bool quiet)
{
	if (!host_find_program(engine, NULL)) {
		if (!quiet)
			sandy_error(
				"cannot find '%s': install it (e.g. 'sudo apt-get install %s'), "
				"or run without a container: --runtime=none",
				engine, strcmp(engine, "docker") ? engine : "docker.io");
		return -ENOENT;
	}
	/* The server part of `version` needs the daemon: the cheapest call
	 * that proves it answers. */
	char *argv[] = {(char *)engine, "version", "--format",
			!strcmp(engine, "docker") ? "{{.Server.Version}}" : "{{.Version}}", NULL};
	cleanup_free char *errout = NULL;
	int status = proc_run(argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_CAPTURE, NULL, &errout);
	if (status == 0)
		return 0;
	if (quiet)
		return -EHOSTDOWN;
	cleanup_free char *why = first_line(errout);
	if (status < 0)
		sandy_error("cannot run '%s': %s", engine, strerror(-status));
	else if (why && strcasestr(why, "permission denied"))
		sandy_error(
			"cannot reach the %s daemon: %s; ask for access (e.g. 'sudo usermod -aG "
			"%s $USER', then log in again), or use --runtime=none",
			engine, why, engine);
	else
		sandy_error("cannot reach the %s daemon: %s; start it (e.g. 'sudo systemctl start "
			    "%s', or 'sudo dockerd &'), or run without a container: --runtime=none",
			    engine, why && *why ? why : "no answer", engine);
	return -EHOSTDOWN;
}

char *engine_arch(const char *engine)
{
	cleanup_free char *out = NULL;
	/* docker says the kernel's name (x86_64), podman Go's (amd64). */
	char *argv[] = {(char *)engine, "info", "--format",
			!strcmp(engine, "podman") ? "{{.Host.Arch}}" : "{{.Architecture}}", NULL};

	if (proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) != 0)
		return NULL;
	char *arch = first_line(out);
	if (arch && !*arch) {
		free(arch);
		return NULL;
	}
	return arch;
}

const char *engine_auto(void)
{
	if (engine_check("docker", true) == 0)
		return "docker";
	if (engine_check("podman", true) == 0)
		return "podman";
	return NULL;
}

bool engine_has_image(const char *engine, const char *image)
{
	char *argv[] = {(char *)engine, "image", "inspect",	"--format",
			"{{.Id}}",	"--",	 (char *)image, NULL};

	return proc_run(argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_NULL, NULL, NULL) == 0;
}

char *engine_image_label(const char *engine, const char *image, const char *key)
{
	/* KEY is sandy's own, never the user's: it goes into the template. */
	cleanup_free char *format = sandy_asprintf("{{index .Config.Labels \"%s\"}}", key);
	char *argv[] = {(char *)engine, "image", "inspect",	"--format",
			format,		"--",	 (char *)image, NULL};
	char *out = NULL;

	if (!format ||
	    proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) != 0) {
		free(out);
		return NULL;
	}
	if (!out)
		return strdup("");
	out[strcspn(out, "\n")] = '\0';
	/* A template's missing map entry, as some engines print it. */
	if (!strcmp(out, "<no value>"))
		out[0] = '\0';
	return out;
}

int engine_image_check(const char *engine, const char *image)
{
	if (engine_has_image(engine, image))
		return 0;
	if (!strcmp(image, SANDY_DEFAULT_IMAGE))
		sandy_error(
			"image '%s' not found in %s; build it with 'sandy build-image', or name "
			"another with --image",
			image, engine);
	else
		sandy_error("image '%s' not found in %s; build or pull it first ('%s pull %s'), or "
			    "build the agent image with 'sandy build-image'",
			    image, engine, engine, image);
	return -ENOENT;
}

/* Whether IMAGE says (AGENT_COMMAND in its environment, as the images
 * `sandy build-image` makes do) that PROGRAM is its agent. */
static bool image_declares_agent(const char *engine, const char *image, const char *program)
{
	char *argv[] = {(char *)engine,
			"image",
			"inspect",
			"--format",
			"{{range .Config.Env}}{{println .}}{{end}}",
			"--",
			(char *)image,
			NULL};
	cleanup_free char *env = NULL;

	if (proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &env, NULL) != 0 ||
	    !env)
		return false;
	cleanup_free char *line = sandy_asprintf("\nAGENT_COMMAND=%s\n", program);
	cleanup_free char *text = sandy_asprintf("\n%s", env);
	return line && text && strstr(text, line);
}

/* Looks PROGRAM up in IMAGE with the image's own shell, in a container
 * that can do nothing else (no network, no capability, removed at once).
 * 1 when found, 0 when not, -1 when the image cannot tell (no shell). */
static int image_has_program(const char *engine, const char *image, const char *program)
{
	cleanup_strv struct strv argv = {0};
	cleanup_free char *out = NULL;
	int r = engine_push_run_confined(&argv, engine);

	r = strv_ok(r, strv_push(&argv, "--entrypoint=sh"));
	r = strv_ok(r, strv_push(&argv, "--"));
	r = strv_ok(r, strv_push(&argv, image));
	r = strv_ok(r, strv_push(&argv, "-c"));
	r = strv_ok(r, strv_push(&argv, "command -v \"$1\" >/dev/null && echo found || echo missing"));
	r = strv_ok(r, strv_push(&argv, "sh"));
	r = strv_ok(r, strv_push(&argv, program));
	if (r < 0 ||
	    proc_run(argv.v, PROC_IN_NULL | PROC_OUT_CAPTURE | PROC_ERR_NULL, &out, NULL) != 0 ||
	    !out)
		return -1;
	if (!strcmp(out, "found\n"))
		return 1;
	return !strcmp(out, "missing\n") ? 0 : -1;
}

int engine_agent_check(const char *engine, const char *image, char *const *command)
{
	if (!command)
		return 0;
	const char *base = strrchr(command[0], '/');
	base = base ? base + 1 : command[0];
	const char *package = world_agent_package(base);
	if (!package || image_declares_agent(engine, image, command[0]))
		return 0;
	if (image_has_program(engine, image, command[0]) != 0)
		return 0;
	sandy_error("image '%s' has no '%s'; build an image with it ('sandy build-image --image "
		    "sandy-%s -- --build-arg AGENT_PACKAGE=%s --build-arg AGENT_COMMAND=%s') and "
		    "run with --image sandy-%s",
		    image, command[0], base, package, base, base);
	return -ENOENT;
}

/* One field of --mount's CSV syntax, quoted when the value needs it (a
 * project path may hold a comma). */
static char *mount_field(const char *key, const char *value)
{
	if (!strpbrk(value, ",\"\n"))
		return sandy_asprintf("%s=%s", key, value);
	size_t len = strlen(key) + 4 + 2 * strlen(value);
	char *s = malloc(len), *p = s;
	if (!s)
		return NULL;
	p += sprintf(p, "\"%s=", key);
	for (; *value; value++) {
		if (*value == '"')
			*p++ = '"';
		*p++ = *value;
	}
	*p++ = '"';
	*p = '\0';
	return s;
}

int engine_push_bind(struct strv *argv, const char *src, const char *dst, const char *extra)
{
	cleanup_free char *s = mount_field("source", src);
	cleanup_free char *d = mount_field("target", dst);

	if (!s || !d)
		return -ENOMEM;
	int r = strv_push(argv, "--mount");
	return strv_ok(r, strv_pushf(argv, "type=bind,%s,%s%s%s", s, d, extra ? "," : "",
				     extra ? extra : ""));
}

int engine_push_ulimits(struct strv *argv, const char *engine, unsigned pids)
{
	struct rlimit nofile;
	int r = 0;

	/* podman asks for file and process limits of its own (2^20 files),
	 * which a host with lower hard limits refuses to grant: the user's
	 * file limit instead, and the process limit the pids cap already
	 * sets. */
	if (strcmp(engine, "podman") != 0)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_max != RLIM_INFINITY)
		r = strv_pushf(argv, "--ulimit=nofile=%llu:%llu",
			       (unsigned long long)nofile.rlim_cur,
			       (unsigned long long)nofile.rlim_max);
	return strv_ok(r, strv_pushf(argv, "--ulimit=nproc=%u:%u", pids, pids));
}

int engine_push_hardening(struct strv *argv)
{
	int r = strv_push(argv, "--cap-drop=ALL");

	return strv_ok(r, strv_push(argv, "--security-opt=no-new-privileges"));
}

int engine_push_run_confined(struct strv *argv, const char *engine)
{
	int r = 0;

	r = strv_ok(r, strv_push(argv, engine));
	r = strv_ok(r, strv_push(argv, "run"));
	r = strv_ok(r, strv_push(argv, "--rm"));
	r = strv_ok(r, strv_push(argv, "--network=none"));
	return strv_ok(r, engine_push_hardening(argv));
}

/* The full `ENGINE run ...` argv for the container C describes. */
static int run_argv(const struct container_spec *c, struct strv *argv)
{
	bool podman = !strcmp(c->engine, "podman");
	int r = 0;

	r = strv_ok(r, strv_push(argv, c->engine));
	r = strv_ok(r, strv_push(argv, "run"));
	r = strv_ok(r, strv_push(argv, "--rm"));
	r = strv_ok(r, strv_push(argv, "--interactive"));
	if (c->tty)
		r = strv_ok(r, strv_push(argv, "--tty"));
	r = strv_ok(r, strv_pushf(argv, "--name=%s", c->name));
	r = strv_ok(r, strv_pushf(argv, "--label=sandy.session=%s", c->session_id));
	r = strv_ok(r, strv_pushf(argv, "--label=sandy.project=%s", c->project));
	r = strv_ok(r, strv_push(argv, "--init"));
	r = strv_ok(r, engine_push_hardening(argv));
	if (c->network)
		r = strv_ok(r, strv_pushf(argv, "--network=%s", c->network));
	if (podman && geteuid() != 0)
		/* Rootless podman maps the user to root in its namespace;
		 * keep-id maps it back to the user's own uid. */
		r = strv_ok(r, strv_push(argv, "--userns=keep-id"));
	else
		r = strv_ok(r,
			    strv_pushf(argv, "--user=%u:%u", (unsigned)c->uid, (unsigned)c->gid));
	r = strv_ok(r, strv_pushf(argv, "--memory=%llu", c->limits.memory));
	/* Equal to --memory: no swap on top, so the limit is the limit. */
	r = strv_ok(r, strv_pushf(argv, "--memory-swap=%llu", c->limits.memory));
	r = strv_ok(r, strv_pushf(argv, "--cpus=%u", c->limits.cpus));
	r = strv_ok(r, strv_pushf(argv, "--pids-limit=%u", c->limits.pids));
	r = strv_ok(r, engine_push_ulimits(argv, c->engine, c->limits.pids));
	r = strv_ok(r, strv_push(argv, "--tmpfs=/tmp:rw,nosuid,nodev,exec,mode=1777"));
	/* A value the client has in its own environment (an API key) goes by
	 * name only, so that it never shows in a process listing; sandy's own
	 * values (HOME, SANDY_*) go on the command line, so that the client's
	 * environment, which it reads itself, stays as it was. */
	for (size_t i = 0; r == 0 && i < c->world->env.n; i++) {
		const char *e = c->world->env.v[i];
		int n = (int)strcspn(e, "=");
		cleanup_free char *name = strndup(e, (size_t)n);
		const char *here = name ? getenv(name) : NULL;
		if (!name)
			r = -ENOMEM;
		else if (here && !strcmp(here, e + n + 1))
			r = strv_pushf(argv, "--env=%s", name);
		else
			r = strv_pushf(argv, "--env=%s", e);
	}
	if (r < 0)
		return r;
	r = engine_push_bind(argv, c->workspace, "/workspace",
			     c->rslave ? "bind-propagation=rslave" : NULL);
	if (r == 0 && c->audit)
		r = engine_push_bind(argv, c->audit, "/run/sandy/denials.jsonl", "readonly");
	if (r == 0 && c->policy)
		r = engine_push_bind(argv, c->policy, "/run/sandy/POLICY.md", "readonly");
	for (size_t i = 0; r == 0 && i < c->world->n_mounts; i++) {
		const struct world_mount *m = &c->world->mounts[i];
		r = engine_push_bind(argv, m->source, m->target, m->readonly ? "readonly" : NULL);
	}
	r = strv_ok(r, strv_push(argv, "--workdir=/workspace"));
	r = strv_ok(r, strv_push(argv, c->image));
	for (char *const *a = c->command; r == 0 && a && *a; a++)
		r = strv_push(argv, *a);
	return r;
}

int engine_run(const struct container_spec *spec, pid_t *client)
{
	cleanup_strv struct strv argv = {0};
	int r = run_argv(spec, &argv);

	if (r < 0)
		return r;
	if (getenv("SANDY_DEBUG")) {
		fputs("sandy: running:", stderr);
		for (size_t i = 0; i < argv.n; i++)
			fprintf(stderr, " %s", argv.v[i]);
		fputc('\n', stderr);
	}
	/* If sandy is killed outright, the client's SIGTERM is forwarded to
	 * the container (sig-proxy), which then ends and is removed. */
	return proc_spawn(argv.v, PROC_PDEATHSIG, client);
}

void engine_stop(const char *engine, const char *name, int seconds)
{
	char t[16];
	snprintf(t, sizeof(t), "%d", seconds);
	char *argv[] = {(char *)engine, "stop", "--time", t, "--", (char *)name, NULL};

	proc_run(argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_NULL, NULL, NULL);
}

void engine_remove(const char *engine, const char *name)
{
	char *argv[] = {(char *)engine, "rm", "--force", "--", (char *)name, NULL};

	if (host_find_program(engine, NULL))
		proc_run(argv, PROC_IN_NULL | PROC_OUT_NULL | PROC_ERR_NULL, NULL, NULL);
}

char *engine_container_dir(void)
{
	static const struct install_item container = {
		.what = "the image's Dockerfile",
		.env = "SANDY_CONTAINER_DIR",
		.build = SANDY_SOURCE_CONTAINER_DIR,
		.name = "container",
		.probe = "Dockerfile",
	};
	cleanup_free char *err = NULL;
	char *dir = NULL;

	int r = install_find(&container, &dir, &err);
	if (r == -ENOMEM)
		sandy_error("%s", strerror(ENOMEM));
	else if (r < 0)
		sandy_error("%s", err ? err : strerror(-r));
	return dir;
}

/* The base image made from Debian packages by base-image.sh in DIR; its
 * tag (malloc'ed) in *TAG. */
int engine_build_base(const char *engine, const char *dir, char **tag)
{
	cleanup_free char *script = sandy_asprintf("%s/base-image.sh", dir);
	cleanup_free char *out = NULL;

	if (!script)
		return -ENOMEM;
	char *argv[] = {script, NULL};
	setenv("ENGINE", engine, 1);
	int status = proc_run(argv, PROC_IN_NULL | PROC_OUT_CAPTURE, &out, NULL);
	if (status != 0) {
		if (status < 0)
			sandy_error("cannot run '%s': %s", script, strerror(-status));
		else
			sandy_error(
				"cannot build the base image with '%s' (status %d); or build "
				"on a registry's image: sandy build-image --from debian:12-slim",
				script, status);
		return -EIO;
	}
	*tag = first_line(out);
	return *tag ? 0 : -ENOMEM;
}

/* ENGINE build of DIR as IMAGE on BASE, with EXTRA_ARGS. */
int engine_build_dir(const char *engine, const char *dir, const char *image, const char *base,
		     char *const *extra_args)
{
	cleanup_strv struct strv argv = {0};
	int r = 0;

	r = strv_ok(r, strv_push(&argv, engine));
	r = strv_ok(r, strv_push(&argv, "build"));
	r = strv_ok(r, strv_pushf(&argv, "--tag=%s", image));
	r = strv_ok(r, strv_pushf(&argv, "--build-arg=BASE=%s", base));
	for (char *const *a = extra_args; r == 0 && a && *a; a++)
		r = strv_push(&argv, *a);
	r = strv_ok(r, strv_push(&argv, "--"));
	r = strv_ok(r, strv_push(&argv, dir));
	if (r < 0)
		return r;
	int status = proc_run(argv.v, 0, NULL, NULL);
	if (status < 0) {
		sandy_error("cannot run '%s': %s", engine, strerror(-status));
		return status;
	}
	if (status != 0) {
		sandy_error("cannot build image '%s' from '%s': %s build failed (status %d)", image,
			    dir, engine, status);
		return -EIO;
	}
	return 0;
}
