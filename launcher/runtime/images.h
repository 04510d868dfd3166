/* images.h - the images `sandy build-image` makes: the agent's, the
 * network gateway's and sandyfs's own (fsbox.h), on one base. Above the
 * engine module and the box, which it drives. */
#ifndef SANDY_IMAGES_H
#define SANDY_IMAGES_H

#include <stdbool.h>

/* `sandy build-image`: builds GATEWAY_IMAGE from the gateway/ directory
 * beside the Dockerfile, then IMAGE from the Dockerfile's (either may be
 * NULL), on FROM, or when FROM is NULL on a base made from Debian packages
 * (base-image.sh beside the Dockerfile). EXTRA_ARGS go to IMAGE's build.
 * With IMAGE, SANDY_FS_IMAGE too, on the same base (fsbox_build_image:
 * FS_FROM_SOURCE builds sandyfs in it). */
int images_build(const char *engine, const char *image, const char *gateway_image,
		       const char *from, char *const *extra_args, bool fs_from_source);

/* `sandy build-image --fs-only`: SANDY_FS_IMAGE alone, on FROM or the
 * base. */
int images_build_fs(const char *engine, const char *from, bool from_source);

#endif
