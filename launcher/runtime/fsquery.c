/* fsquery.c - see fsquery.h. */

#include "fsquery.h"
#include "engine.h"
#include "fsbox.h"
#include "sys/host.h"
#include "sys/platform.h"

#include "common/path.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

int sandyfs_prog_find(struct sandyfs_prog *p, const char *engine, const char *project,
		      const struct strv *rule_args)
{
	int r = 0;

	*p = (struct sandyfs_prog){0};
	if (SANDY_LINUX_HOST) {
		p->path = host_find_sandyfs();
		if (!p->path)
			return -ENOENT;
		p->project = strdup(project);
		r = p->project ? strv_push(&p->argv, p->path) : -ENOMEM;
	} else {
		char real[PATH_MAX];
		if (!engine && !(engine = engine_auto())) {
			sandy_error(
				"sandyfs runs in a container here, and no container engine "
				"answers; start one (Docker Desktop, colima, OrbStack or podman "
				"machine)");
			return -EHOSTDOWN;
		}
		if (!realpath(project, real)) {
			r = -errno;
			sandy_error("cannot use project directory '%s': %s", project, strerror(-r));
			return r;
		}
		/* The container starts in this directory when it lies in the
		 * project (fsbox_query_argv), so the project and the paths
		 * asked about mean there what they mean here; elsewhere only
		 * the project's own path does. */
		char cwd[PATH_MAX];
		bool inside = getcwd(cwd, sizeof(cwd)) && path_below(cwd, real);
		/* The image's answers are its sandyfs's and rules: this
		 * sandy's, or none. */
		if ((r = fsbox_image_check(engine, fsbox_image())) < 0)
			return r;
		p->project = strdup(inside ? project : real);
		r = p->project ? fsbox_query_argv(&p->argv, engine, fsbox_image(), real,
						  inside ? cwd : real, rule_args)
			       : -ENOMEM;
	}
	if (r < 0) {
		sandyfs_prog_free(p);
		if (r == -ENOMEM)
			sandy_error("out of memory");
	}
	return r;
}

void sandyfs_prog_free(struct sandyfs_prog *p)
{
	free(p->path);
	free(p->project);
	strv_free(&p->argv);
	*p = (struct sandyfs_prog){0};
}

int sandyfs_exec(const struct strv *argv)
{
	fflush(NULL);
	execvp(argv->v[0], argv->v);
	int e = errno;
	sandy_error("cannot run '%s': %s", argv->v[0], strerror(e));
	return -e;
}

int sandyfs_query_argv(struct strv *argv, const struct sandyfs_prog *p, const char *cmd, bool json,
		       const struct strv *rule_args)
{
	int r = 0;

	r = strv_ok(r, strv_extend(argv, &p->argv));
	r = strv_ok(r, strv_push(argv, cmd));
	if (json)
		r = strv_ok(r, strv_push(argv, "--json"));
	r = strv_ok(r, strv_extend(argv, rule_args));
	r = strv_ok(r, strv_push(argv, "--"));
	return strv_ok(r, strv_push(argv, p->project));
}
