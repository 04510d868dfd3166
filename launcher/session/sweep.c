/* sweep.c - see session.h: the sessions whose sandy died, cleaned up by
 * the next one. Above the runtimes, whose leftovers it removes. */

#include "session.h"
#include "runtime/engine.h"
#include "runtime/fsbox.h"
#include "runtime/nslimits.h"
#include "runtime/sandyfs.h"
#include "sys/sandy.h"

#include "common/mountinfo.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* KEY's value in DIR, or NULL. */
static char *key(const char *dir, const char *name)
{
	char *v = NULL;

	return session_read_key(dir, name, &v) == 0 ? v : NULL;
}

static void sweep_one(const char *dir, const char *sandyfs)
{
	cleanup_free char *lockpath = sandy_asprintf("%s/lock", dir);
	cleanup_fd int fd = lockpath ? open(lockpath, O_RDWR | O_CLOEXEC | O_NOFOLLOW) : -1;

	if (fd < 0) {
		/* A directory without a lock is one whose creator died before
		 * taking it, or one being created right now: rmdir only takes
		 * an empty one. */
		if (errno == ENOENT)
			rmdir(dir);
		return;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return; /* its sandy is alive */
	cleanup_free char *project = key(dir, "project");
	cleanup_free char *runtime = key(dir, "runtime");
	cleanup_free char *container = key(dir, "container");
	cleanup_strv struct strv mounts = {0};
	bool busy = false;

	sandy_note("cleaning up after an earlier session of '%s' that did not end cleanly",
		   project ? project : dir);
	cleanup_free char *gateway = key(dir, "gateway");
	if (runtime && container)
		engine_remove(runtime, container);
	if (runtime && gateway)
		engine_remove(runtime, gateway);
	cleanup_free char *fsbox = key(dir, "fsbox");
	cleanup_free char *fsbox_root = key(dir, "fsbox-root");
	if (runtime && fsbox)
		fsbox_sweep(runtime, fsbox_root ? fsbox_root : FSBOX_ENGINE_DIR,
			    strrchr(dir, '/') + 1);
	/* A bubblewrap sandbox's cgroup: whatever it still holds goes. */
	cleanup_free char *cgroup = key(dir, "cgroup");
	cleanup_free char *cgroup_memory = key(dir, "cgroup-memory");
	nslimits_sweep(cgroup);
	nslimits_sweep(cgroup_memory);
	if (mounts_under(dir, &mounts) == 0) {
		for (size_t i = 0; i < mounts.n; i++)
			if (sandyfs_unmount(sandyfs, mounts.v[i]) < 0)
				busy = true;
	}
	if (busy)
		return;
	int r = session_remove_dir(dir);
	if (r < 0)
		sandy_error("cannot remove stale session directory '%s': %s", dir, strerror(-r));
}

void session_sweep(const char *rundir, const char *sandyfs)
{
	DIR *d = opendir(rundir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		/* Not a session: rootless podman's share (fsbox.h). */
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, FSBOX_ROOTLESS_DIR))
			continue;
		cleanup_free char *dir = sandy_asprintf("%s/%s", rundir, de->d_name);
		struct stat st;
		if (dir && session_own_dir(dir, &st))
			sweep_one(dir, sandyfs);
	}
	closedir(d);
}

