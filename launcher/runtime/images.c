/* images.c - see images.h. */

#include "images.h"
#include "engine.h"
#include "fsbox.h"

#include <errno.h>
#include <sys/stat.h>

int images_build(const char *engine, const char *image, const char *gateway_image,
		       const char *from, char *const *extra_args, bool fs_from_source)
{
	cleanup_free char *dir = engine_container_dir();
	cleanup_free char *base = NULL, *gateway_dir = NULL;
	int r = 0;

	if (!dir)
		return -ENOENT;
	if (!from && (r = engine_build_base(engine, dir, &base)) < 0)
		return r;
	gateway_dir = sandy_asprintf("%s/gateway", dir);
	cleanup_free char *gateway_df = sandy_asprintf("%s/gateway/Dockerfile", dir);
	if (!gateway_dir || !gateway_df)
		return -ENOMEM;
	struct stat st;
	if (gateway_image && stat(gateway_df, &st) < 0) {
		if (!image) {
			sandy_error("cannot find the gateway's Dockerfile '%s'", gateway_df);
			return -ENOENT;
		}
		sandy_note("no gateway/ beside '%s/Dockerfile': the network gateway's image is not "
			   "built",
			   dir);
	} else if (gateway_image && (r = engine_build_dir(engine, gateway_dir, gateway_image,
						   from ? from : base, NULL)) < 0) {
		return r;
	}
	if (image)
		r = engine_build_dir(engine, dir, image, from ? from : base, extra_args);
	if (r < 0 || !image)
		return r;
	/* sandyfs's own container, for engines that do not see this host's
	 * mounts, on the same base. */
	return fsbox_build_image(engine, SANDY_FS_IMAGE, from ? from : base, fs_from_source);
}

int images_build_fs(const char *engine, const char *from, bool from_source)
{
	cleanup_free char *dir = NULL, *base = NULL;
	int r;

	if (!from) {
		if (!(dir = engine_container_dir()))
			return -ENOENT;
		if ((r = engine_build_base(engine, dir, &base)) < 0)
			return r;
	}
	return fsbox_build_image(engine, SANDY_FS_IMAGE, from ? from : base, from_source);
}
