/* host.h - what sandy learns about the machine before it starts anything:
 * who the user is (also behind sudo), where sandyfs is, whether FUSE can
 * serve the project to another uid, and what resources a container may
 * take. Every check prints its own actionable message. */
#ifndef SANDY_HOST_H
#define SANDY_HOST_H

#include "common/install.h"

#include <stdbool.h>
#include <sys/types.h>

struct host_user {
	uid_t uid;
	gid_t gid;
	char *name;    /* NULL when the uid has no passwd entry */
	char *home;    /* NULL likewise */
	char *shell;   /* the login shell, or /bin/sh */
	bool via_sudo; /* sandy runs as root on behalf of UID */
};

/* The user the session runs as: SUDO_UID/SUDO_GID when root was reached
 * through sudo, else the real uid and gid. */
int host_user(struct host_user *u);
void host_user_free(struct host_user *u);

/* Whether NAME is an executable found in PATH (or a path to one); its
 * path (malloc'ed) in *FOUND when FOUND is not NULL. */
bool host_find_program(const char *name, char **found);

/* The sandyfs binary: $SANDYFS, else as common/install.h says (this
 * build's fusefs/sandyfs for a sandy of the build directory, sandyfs
 * beside sandy, PREFIX/BINDIR/sandyfs), else PATH. NULL (message printed)
 * when there is none. */
char *host_find_sandyfs(void);
/* Where common/install.h looks for it. */
extern const struct install_item host_sandyfs_item;

/* /dev/fuse usable; as non-root fusermount3 present; and when
 * NEED_ALLOW_OTHER, user_allow_other set in /etc/fuse.conf. 0 or -errno
 * with the message printed. */
int host_check_fuse(bool need_allow_other);

/* The parts of host_check_fuse, quiet (for `sandy doctor`): 0 when
 * /dev/fuse opens read-write, else -errno; whether a mount goes through
 * the set-uid fusermount3 (not as root); whether a mount that lets other
 * uids in (NEED_ALLOW_OTHER) needs user_allow_other in /etc/fuse.conf, and
 * whether it is there. */
int host_fuse_device(void);
bool host_fuse_needs_fusermount(void);
bool host_fuse_conf_needed(bool need_allow_other);
bool host_fuse_conf_allows_other(void);

/* Whether / is a shared mount, so that a mount namespace made earlier
 * (rootless podman's) still receives mounts made here. */
bool host_root_shared(void);

/* Whether a session's sandyfs mount must let other uids in (allow_other):
 * with a CONTAINER, or for a user U that sudo made root. */
bool host_mount_needs_allow_other(bool container, const struct host_user *u);

struct host_limits {
	unsigned long long memory; /* bytes */
	unsigned cpus;
	unsigned pids;
};

/* Limits for a container (and the bubblewrap sandbox, nslimits.h),
 * derived from the host: half the memory, all CPUs but one on machines
 * with more than two, a pids cap; SANDY_MEMORY and SANDY_PIDS replace the
 * memory and the cap. 0, or -EINVAL with the message printed. */
int host_limits(struct host_limits *l);

#endif
