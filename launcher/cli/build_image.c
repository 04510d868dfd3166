/* build_image.c - `sandy build-image [OPTIONS] [-- BUILD ARGS...]`: the
 * agent's image, the gateway's and sandyfs's (runtime/images.h). */

#include "cli.h"
#include "runtime/engine.h"
#include "runtime/gateway.h"
#include "runtime/images.h"

#include <string.h>

struct build_image_opts {
	const char *engine;
	const char *image, *gateway_image;
	const char *from; /* NULL: the base made from Debian packages */
	bool gateway_only, fs_only, fs_from_source;
	char **build_args; /* after "--"; NULL when there is no "--" */
};

static const char shortopts[] = ":h";

static const struct option longopts[] = {
	{"image", required_argument, NULL, OPT_IMAGE},
	{"runtime", required_argument, NULL, OPT_RUNTIME},
	{"from", required_argument, NULL, OPT_FROM},
	{"gateway-image", required_argument, NULL, OPT_GATEWAY_IMAGE},
	{"gateway-only", no_argument, NULL, OPT_GATEWAY_ONLY},
	{"fs-only", no_argument, NULL, OPT_FS_ONLY},
	{"fs-from-source", no_argument, NULL, OPT_FS_FROM_SOURCE},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* One option, C with optarg, into O: 1 when C was one, 0 when not, -EINVAL
 * said. */
static int build_image_option(int c, struct build_image_opts *o)
{
	switch (c) {
	case OPT_IMAGE:
		o->image = optarg;
		return 1;
	case OPT_FROM:
		o->from = optarg;
		return 1;
	case OPT_GATEWAY_IMAGE:
		o->gateway_image = optarg;
		return 1;
	case OPT_GATEWAY_ONLY:
		o->gateway_only = true;
		return 1;
	case OPT_FS_ONLY:
		o->fs_only = true;
		return 1;
	case OPT_FS_FROM_SOURCE:
		o->fs_from_source = true;
		return 1;
	case OPT_RUNTIME:
		/* An engine that builds, not a session's runtime. */
		if (strcmp(optarg, "docker") != 0 && strcmp(optarg, "podman") != 0) {
			usage_error("build-image needs --runtime=docker or podman, not '%s'",
				    optarg);
			return -EINVAL;
		}
		o->engine = optarg;
		return 1;
	default:
		return 0;
	}
}

static int build_image_parse(int argc, char **argv, struct build_image_opts *o)
{
	int split = find_command(argc, argv, shortopts, longopts), c, r;

	opterr = 0;
	while ((c = getopt_long(split, argv, shortopts, longopts, NULL)) != -1) {
		if ((r = build_image_option(c, o)) < 0)
			return SANDY_EXIT_FAILURE;
		if (r == 0)
			return help_or_bad_option(c, argv);
	}
	if (optind != split)
		return usage_error("unexpected argument '%s' (build arguments go after '--')",
				   argv[optind]);
	o->build_args = split < argc ? argv + split + 1 : NULL;
	return CLI_RUN;
}

/* The options that contradict each other, asked once the engine answers. */
static int build_image_conflicts(const struct build_image_opts *o)
{
	if ((o->gateway_only || o->fs_only) && o->build_args)
		return usage_error("build arguments after '--' are for the agent image, which "
				   "--%s does not build",
				   o->fs_only ? "fs-only" : "gateway-only");
	if (o->gateway_only && o->fs_only)
		return usage_error("--gateway-only and --fs-only: choose one");
	if (o->gateway_only && o->fs_from_source)
		return usage_error("--fs-from-source is for sandyfs's image, which --gateway-only "
				   "does not build");
	return CLI_RUN;
}

static int build_image(const struct build_image_opts *o)
{
	int status;

	if (engine_check(o->engine, false) < 0)
		return SANDY_EXIT_FAILURE;
	if ((status = build_image_conflicts(o)) != CLI_RUN)
		return status;
	if (o->fs_only)
		return images_build_fs(o->engine, o->from, o->fs_from_source) < 0
			       ? SANDY_EXIT_FAILURE
			       : 0;
	return images_build(o->engine, o->gateway_only ? NULL : o->image, o->gateway_image, o->from,
			    o->build_args, o->fs_from_source) < 0
		       ? SANDY_EXIT_FAILURE
		       : 0;
}

int cmd_build_image(int argc, char **argv)
{
	const char *image = getenv("SANDY_IMAGE"), *gateway = getenv("SANDY_GATEWAY_IMAGE");
	struct build_image_opts o = {
		.engine = "docker",
		.image = image && *image ? image : SANDY_DEFAULT_IMAGE,
		.gateway_image = gateway && *gateway ? gateway : SANDY_DEFAULT_GATEWAY_IMAGE,
	};
	int status = build_image_parse(argc, argv, &o);

	return status == CLI_RUN ? build_image(&o) : status;
}
