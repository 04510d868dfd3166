/* host.c - see host.h. */

#include "host.h"
#include "platform.h"
#include "sandy.h"

#include "config.h"
#include "common/install.h"
#include "common/mountinfo.h"

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>

static int parse_id(const char *s, unsigned long *out)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v >= (unsigned long)UINT32_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

int host_user(struct host_user *u)
{
	unsigned long suid, sgid;

	*u = (struct host_user){.uid = getuid(), .gid = getgid()};
	/* Only root may claim to act for someone else: for anyone else the
	 * variables are just text in the environment. */
	if (geteuid() == 0 && u->uid == 0 && parse_id(getenv("SUDO_UID"), &suid) == 0 &&
	    parse_id(getenv("SUDO_GID"), &sgid) == 0 && suid != 0) {
		u->uid = (uid_t)suid;
		u->gid = (gid_t)sgid;
		u->via_sudo = true;
	}
	struct passwd *pw = getpwuid(u->uid);
	if (pw) {
		u->name = strdup(pw->pw_name);
		u->home = strdup(pw->pw_dir);
	}
	const char *shell = pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : NULL;
	if (!shell && !u->via_sudo)
		shell = getenv("SHELL");
	u->shell = strdup(shell && *shell ? shell : "/bin/sh");
	if (!u->shell || (pw && (!u->name || !u->home))) {
		host_user_free(u);
		return -ENOMEM;
	}
	return 0;
}

void host_user_free(struct host_user *u)
{
	free(u->name);
	free(u->home);
	free(u->shell);
	u->name = u->home = u->shell = NULL;
}

static bool executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

bool host_find_program(const char *name, char **found)
{
	if (strchr(name, '/')) {
		if (access(name, X_OK) != 0)
			return false;
		if (found)
			*found = strdup(name);
		return true;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
	while (*path) {
		size_t len = strcspn(path, ":");
		char buf[PATH_MAX];
		int n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? path : ".", name);
		if (n > 0 && (size_t)n < sizeof(buf) && executable_file(buf)) {
			if (found)
				*found = strdup(buf);
			return true;
		}
		path += len + (path[len] == ':');
	}
	return false;
}

const struct install_item host_sandyfs_item = {
	.what = "sandyfs",
	.build = SANDY_BUILD_SANDYFS,
	.name = "sandyfs",
	.program = true,
};

char *host_find_sandyfs(void)
{
	const struct install_item *sandyfs = &host_sandyfs_item;
	const char *env = getenv("SANDYFS");
	cleanup_free char *err = NULL;
	char *found = NULL;

	if (env && *env) {
		if (executable_file(env))
			return strdup(env);
		sandy_error("cannot run sandyfs '%s' named by $SANDYFS: %s", env,
			    access(env, F_OK) == 0 ? "not an executable file" : strerror(errno));
		return NULL;
	}
	if (install_find(sandyfs, &found, &err) == 0)
		return found;
	if (host_find_program("sandyfs", &found))
		return found;
	sandy_error("%s; not in PATH either: build it ('scripts/build.sh'), install it, or name it "
		    "with "
		    "SANDYFS=/path/to/sandyfs; or use --fs=bind to run without it",
		    err ? err : "cannot find sandyfs");
	return NULL;
}

/* Whether the FUSE config file at PATH carries a user_allow_other line. */
static bool fuse_conf_allows_other(const char *path)
{
	cleanup_file FILE *f = fopen(path, "re");
	char line[512];

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t len = strcspn(p, " \t\r\n#");
		if (len == strlen("user_allow_other") && !strncmp(p, "user_allow_other", len))
			return true;
	}
	return false;
}

int host_fuse_device(void)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

bool host_fuse_needs_fusermount(void)
{
	/* An unprivileged mount goes through the set-uid fusermount3, which
	 * lets other users in only with user_allow_other. */
	return geteuid() != 0;
}

bool host_fuse_conf_needed(bool need_allow_other)
{
	return need_allow_other && host_fuse_needs_fusermount();
}

bool host_fuse_conf_allows_other(void)
{
	return fuse_conf_allows_other("/etc/fuse.conf");
}

bool host_root_shared(void)
{
	struct mount_entry root;

	return mount_lookup("/", &root) > 0 && root.shared;
}

bool host_mount_needs_allow_other(bool container, const struct host_user *u)
{
	/* The container's processes, or sudo's user, are not the daemon's
	 * uid. */
	return container || u->via_sudo;
}

int host_check_fuse(bool need_allow_other)
{
	int e = host_fuse_device();

	if (e < 0) {
		if (e == -ENOENT || e == -ENODEV || e == -ENXIO)
			sandy_error(
				"cannot open '/dev/fuse': %s; load the FUSE module "
				"('sudo modprobe fuse'), or use --fs=bind to run without sandyfs",
				strerror(-e));
		else
			sandy_error("cannot open '/dev/fuse': %s; make it usable "
				    "('sudo chmod 0666 /dev/fuse'), or use --fs=bind",
				    strerror(-e));
		return e;
	}
	if (!host_fuse_needs_fusermount())
		return 0;
	if (!host_find_program("fusermount3", NULL)) {
		sandy_error("cannot find 'fusermount3', which mounts FUSE filesystems for "
			    "non-root users; install it ('sudo apt-get install fuse3')");
		return -ENOENT;
	}
	if (host_fuse_conf_needed(need_allow_other) && !host_fuse_conf_allows_other()) {
		sandy_error(
			"FUSE does not let the container's user into your mount: add a line "
			"'user_allow_other' to /etc/fuse.conf (e.g. 'echo user_allow_other | sudo "
			"tee -a /etc/fuse.conf'), or run with --runtime=none");
		return -EPERM;
	}
	return 0;
}

/* The value of NAME when set: 1 and *OUT (a number, with K, M or G for
 * KiB, MiB, GiB when SIZE) when it is one of at least MIN; 0 when unset;
 * -EINVAL, said, otherwise. */
static int env_number(const char *name, bool size, unsigned long long min, unsigned long long *out)
{
	const char *v = getenv(name);
	char *end;

	if (!v || !*v)
		return 0;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	int shift = 0;
	if (size && *end && !end[1]) {
		const char *units = "kmg";
		const char *u = strchr(units, *end | 0x20);
		shift = u ? 10 * (int)(u - units + 1) : -1;
		end += u ? 1 : 0;
	}
	if (errno || end == v || *end || !isdigit((unsigned char)v[0]) || shift < 0 ||
	    n > (ULLONG_MAX >> shift) || (n << shift) < min) {
		if (size)
			sandy_error("bad %s '%s': a size in bytes, or with k, m or g, of at least "
				    "%llum",
				    name, v, min >> 20);
		else
			sandy_error("bad %s '%s': a number, at least %llu", name, v, min);
		return -EINVAL;
	}
	*out = n << shift;
	return 1;
}

int host_limits(struct host_limits *l)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long memory = platform_memory(), v;
	int r;

	l->memory = memory ? memory / 2 : 2ULL << 30;
	if (l->memory < (512ULL << 20))
		l->memory = 512ULL << 20;
	if (ncpu < 1)
		ncpu = 1;
	/* Leave a core to the host (and to sandyfs, which serves every file
	 * access of the container) where there are cores to spare. */
	l->cpus = (unsigned)(ncpu > 2 ? ncpu - 1 : ncpu);
	/* Enough for parallel builds and test runners, not for a fork bomb to
	 * take the host's pid space. */
	l->pids = 4096;
	unsigned long pm = platform_pid_max();
	if (pm > 0 && pm / 4 < l->pids)
		l->pids = (unsigned)(pm / 4 < 256 ? 256 : pm / 4);
	if ((r = env_number("SANDY_MEMORY", true, 64ULL << 20, &v)) < 0)
		return r;
	if (r > 0)
		l->memory = v;
	if ((r = env_number("SANDY_PIDS", false, 16, &v)) < 0)
		return r;
	if (r > 0)
		l->pids = v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
	return 0;
}
