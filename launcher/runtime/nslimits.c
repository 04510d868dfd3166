/* nslimits.c - see nslimits.h. The parts that read the kernel's text are
 * plain string work; cgroups are Linux's, and the portable shape of sandy
 * (platform.h), which runs no bubblewrap, leaves them out. */

#include "nslimits.h"
#include "common/mountinfo.h"

#include <stdio.h>
#include <string.h>

char *nslimits_own_cgroup(const char *proc_cgroup, const char *controller)
{
	for (const char *line = proc_cgroup; line && *line;) {
		size_t len = strcspn(line, "\n");
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			const char *list = c1 + 1;
			size_t llen = (size_t)(c2 - list);
			bool match = false;
			if (!controller) {
				match = c1 - line == 1 && line[0] == '0' && llen == 0;
			} else {
				for (const char *p = list; p < c2 && !match;) {
					size_t n = strcspn(p, ",:");
					match = n == strlen(controller) &&
						!strncmp(p, controller, n);
					p += n + 1;
				}
			}
			if (match)
				return strndup(c2 + 1, len - (size_t)(c2 + 1 - line));
		}
		line += len;
		if (*line)
			line++;
	}
	return NULL;
}

/* Whether the comma-separated OPTS holds NAME. */
static bool opts_have(const char *opts, const char *name)
{
	for (const char *p = opts; *p;) {
		size_t n = strcspn(p, ",");
		if (n == strlen(name) && !strncmp(p, name, n))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

int nslimits_cgroup_mount(const char *mountinfo, const char *controller, char **mountpoint,
			  char **root)
{
	for (const char *line = mountinfo; line && *line;) {
		size_t len = strcspn(line, "\n");
		cleanup_free char *copy = strndup(line, len);
		char *f[16], *save = NULL;
		int n = 0;
		line += len;
		if (*line)
			line++;
		if (!copy)
			return -ENOMEM;
		for (char *t = strtok_r(copy, " ", &save); t && n < 16;
		     t = strtok_r(NULL, " ", &save))
			f[n++] = t;
		/* id parent maj:min root mountpoint options [optional...] -
		 * fstype source superopts */
		int dash = 6;
		while (dash < n && strcmp(f[dash], "-") != 0)
			dash++;
		if (dash + 1 >= n)
			continue;
		const char *fstype = f[dash + 1], *super = dash + 3 < n ? f[dash + 3] : "";
		bool match = controller ? !strcmp(fstype, "cgroup") && opts_have(super, controller)
					: !strcmp(fstype, "cgroup2");
		if (!match)
			continue;
		mountinfo_unescape(f[3]);
		mountinfo_unescape(f[4]);
		*root = strdup(f[3]);
		*mountpoint = strdup(f[4]);
		if (!*root || !*mountpoint) {
			free(*root);
			free(*mountpoint);
			*root = *mountpoint = NULL;
			return -ENOMEM;
		}
		return 0;
	}
	return -ENOENT;
}

char *nslimits_cgroup_dir(const char *mountpoint, const char *root, const char *cgroup)
{
	size_t rlen = strcmp(root, "/") ? strlen(root) : 0;

	if (cgroup[0] != '/' || strncmp(cgroup, root, rlen) != 0 ||
	    (cgroup[rlen] != '\0' && cgroup[rlen] != '/'))
		return NULL;
	const char *rest = cgroup + rlen;
	if (!strcmp(rest, "/"))
		rest = "";
	return sandy_asprintf("%s%s", mountpoint, rest);
}

bool nslimits_list_has(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		p += strspn(p, " \t\n");
		size_t l = strcspn(p, " \t\n");
		if (l == n && !strncmp(p, name, n))
			return true;
		p += l;
	}
	return false;
}

#if SANDY_LINUX_HOST

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

static int write_in(const char *dir, const char *file, const char *text)
{
	cleanup_free char *path = sandy_asprintf("%s/%s", dir, file);
	cleanup_fd int fd = path ? open(path, O_WRONLY | O_CLOEXEC) : -1;

	if (!path)
		return -ENOMEM;
	if (fd < 0)
		return -errno;
	/* The kernel takes a control file's value in one write or not. */
	if (write(fd, text, strlen(text)) < 0)
		return -errno;
	return close(steal_fd(&fd)) < 0 ? -errno : 0;
}

static char *read_in(const char *dir, const char *file)
{
	cleanup_free char *path = sandy_asprintf("%s/%s", dir, file);
	char *text = NULL;

	if (path && sandy_read_file(path, 1 << 20, &text) < 0)
		return NULL;
	return text;
}

static bool writable(const char *dir, const char *file)
{
	cleanup_free char *path = sandy_asprintf("%s/%s", dir, file);

	return path && access(path, W_OK) == 0;
}

static void pause_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
}

/* Kills every process in cgroup DIR until it holds none (a fork loop
 * may add some while it does), or gives up after a while. */
static void kill_all(const char *dir)
{
	for (int round = 0; round < 100; round++) {
		cleanup_free char *procs = read_in(dir, "cgroup.procs");
		bool any = false;
		for (char *p = procs, *end; p && *p; p = end) {
			long pid = strtol(p, &end, 10);
			if (end == p)
				break;
			if (pid > 0) {
				kill((pid_t)pid, SIGKILL);
				any = true;
			}
		}
		if (!any)
			return;
		pause_ms(20);
	}
}

static void remove_cgroup(const char *dir)
{
	const char *base = strrchr(dir, '/');

	/* Only what nslimits_prepare made. */
	if (!base || strncmp(base + 1, "sandy-", 6) != 0)
		return;
	/* cgroup v2 (Linux 5.14) kills a whole cgroup at once; elsewhere
	 * its processes one by one. */
	write_in(dir, "cgroup.kill", "1");
	kill_all(dir);
	/* The last ones may take a moment to leave it. */
	for (int i = 0; i < 100; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			break;
		pause_ms(20);
	}
	sandy_note("cannot remove the sandbox's cgroup '%s': %s", dir, strerror(errno));
}

/* Reads /proc/self/cgroup and /proc/self/mountinfo. */
static int kernel_text(char **cgroup, char **mountinfo)
{
	int r = sandy_read_file("/proc/self/cgroup", 1 << 16, cgroup);

	return r < 0 ? r : sandy_read_file("/proc/self/mountinfo", 1 << 22, mountinfo);
}

/* The directory of this process's cgroup for CONTROLLER (NULL: v2). */
static char *own_dir(const char *cg, const char *mi, const char *controller)
{
	cleanup_free char *own = nslimits_own_cgroup(cg, controller);
	cleanup_free char *mp = NULL, *root = NULL;

	if (!own || nslimits_cgroup_mount(mi, controller, &mp, &root) < 0)
		return NULL;
	return nslimits_cgroup_dir(mp, root, own);
}

static int make_child(const char *parent, const char *id, char **out, char **why)
{
	*out = sandy_asprintf("%s/sandy-%s", parent, id);
	if (!*out)
		return -ENOMEM;
	if (mkdir(*out, 0755) < 0) {
		*why = sandy_asprintf("cannot create '%s': %s", *out, strerror(errno));
		free(*out);
		*out = NULL;
		return -EPERM;
	}
	return 0;
}

/* cgroup v2: a child of the parent of sandy's cgroup. */
static int try_v2(const char *cg, const char *mi, const char *id, struct nslimits *nl, char **why)
{
	cleanup_free char *own_cg = nslimits_own_cgroup(cg, NULL);
	cleanup_free char *mp = NULL, *root = NULL, *base = NULL;
	char buf[32];

	if (!own_cg || nslimits_cgroup_mount(mi, NULL, &mp, &root) < 0 ||
	    !(base = nslimits_cgroup_dir(mp, root, own_cg))) {
		*why = strdup("no cgroup v2 hierarchy is mounted");
		return -ENOENT;
	}
	/* sandy's cgroup holds processes, so its children may not have
	 * controllers: the sandbox's is its sibling. Only the root of the
	 * hierarchy as mounted, where nothing is above, is used itself: the
	 * kernel's root cgroup may hold processes and controlled children
	 * both (anything else fails the check below). */
	char *slash = strrchr(base, '/');
	if (strcmp(base, mp) != 0 && slash && slash != base)
		*slash = '\0';
	cleanup_free char *subtree = read_in(base, "cgroup.subtree_control");
	if (!subtree || !nslimits_list_has(subtree, "pids") ||
	    !nslimits_list_has(subtree, "memory")) {
		*why = sandy_asprintf("cgroup v2's pids and memory controllers are not enabled for "
				      "the children of '%s'",
				      base);
		return -ENOENT;
	}
	if (access(base, W_OK) < 0 || !writable(base, "cgroup.procs")) {
		*why = sandy_asprintf("the cgroup '%s' is not delegated to uid %u", base,
				      (unsigned)geteuid());
		return -EPERM;
	}
	int r = make_child(base, id, &nl->cgroup, why);
	if (r < 0)
		return r;
	snprintf(buf, sizeof(buf), "%u", nl->pids);
	r = write_in(nl->cgroup, "pids.max", buf);
	snprintf(buf, sizeof(buf), "%llu", nl->memory);
	if (r == 0)
		r = write_in(nl->cgroup, "memory.max", buf);
	/* No swap on top, as a container's: the limit is the limit. */
	if (r == 0 && (r = write_in(nl->cgroup, "memory.swap.max", "0")) == -ENOENT)
		r = 0;
	if (r < 0) {
		*why = sandy_asprintf("cannot set the limits of '%s': %s", nl->cgroup,
				      strerror(-r));
		rmdir(nl->cgroup); /* the caller forgets it */
		return r;
	}
	nl->how = NSLIMITS_CGROUP2;
	return 0;
}

/* cgroup v1: a child of sandy's cgroup in the pids and the memory
 * hierarchies, each with its limit. */
static int try_v1(const char *cg, const char *mi, const char *id, struct nslimits *nl, char **why)
{
	cleanup_free char *pids = own_dir(cg, mi, "pids");
	cleanup_free char *memory = own_dir(cg, mi, "memory");
	char buf[32];
	int r;

	if (!pids || !memory) {
		*why = strdup("no cgroup v1 pids and memory hierarchies are mounted");
		return -ENOENT;
	}
	if (!writable(pids, "cgroup.procs") || !writable(memory, "cgroup.procs") ||
	    access(pids, W_OK) < 0 || access(memory, W_OK) < 0) {
		*why = sandy_asprintf("the cgroups '%s' and '%s' are not writable by uid %u", pids,
				      memory, (unsigned)geteuid());
		return -EPERM;
	}
	if ((r = make_child(pids, id, &nl->cgroup, why)) < 0)
		return r;
	if ((r = make_child(memory, id, &nl->cgroup_memory, why)) < 0) {
		rmdir(nl->cgroup);
		return r;
	}
	snprintf(buf, sizeof(buf), "%u", nl->pids);
	r = write_in(nl->cgroup, "pids.max", buf);
	snprintf(buf, sizeof(buf), "%llu", nl->memory);
	if (r == 0)
		r = write_in(nl->cgroup_memory, "memory.limit_in_bytes", buf);
	/* Memory and swap together, where swap is accounted. */
	if (r == 0 &&
	    (r = write_in(nl->cgroup_memory, "memory.memsw.limit_in_bytes", buf)) == -ENOENT)
		r = 0;
	if (r < 0) {
		*why = sandy_asprintf("cannot set the limits of '%s' and '%s': %s", nl->cgroup,
				      nl->cgroup_memory, strerror(-r));
		rmdir(nl->cgroup);
		rmdir(nl->cgroup_memory);
		return r;
	}
	nl->how = NSLIMITS_CGROUP1;
	return 0;
}

int nslimits_prepare(const struct host_limits *l, const char *id, struct nslimits *nl)
{
	cleanup_free char *cg = NULL, *mi = NULL;
	char *why2 = NULL, *why1 = NULL;

	*nl = (struct nslimits){.how = NSLIMITS_RLIMITS, .memory = l->memory, .pids = l->pids};
	if (kernel_text(&cg, &mi) < 0) {
		nl->why = strdup("cannot read /proc/self/cgroup");
		return nl->why ? 0 : -ENOMEM;
	}
	int r = try_v2(cg, mi, id, nl, &why2);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		free(nl->cgroup);
		nl->cgroup = NULL;
		r = try_v1(cg, mi, id, nl, &why1);
		if (r == -ENOMEM)
			return r;
	}
	if (r < 0) {
		free(nl->cgroup);
		free(nl->cgroup_memory);
		nl->cgroup = nl->cgroup_memory = NULL;
		nl->how = NSLIMITS_RLIMITS;
		/* v2's reason when there is v2, else v1's. */
		bool v2 = why2 && strncmp(why2, "no cgroup v2", 12) != 0;
		nl->why = v2 || !why1 ? why2 : why1;
		free(v2 || !why1 ? why1 : why2);
		return 0;
	}
	free(why1);
	free(why2);
	return 0;
}

int nslimits_join(const struct nslimits *nl)
{
	char pid[32];
	int r = 0;

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	if (nl->cgroup)
		r = write_in(nl->cgroup, "cgroup.procs", pid);
	if (r == 0 && nl->cgroup_memory)
		r = write_in(nl->cgroup_memory, "cgroup.procs", pid);
	return r;
}

int nslimits_set_rlimits(unsigned long pids, unsigned long long memory)
{
	const struct {
		int resource;
		unsigned long long value;
	} want[] = {{RLIMIT_NPROC, pids}, {RLIMIT_DATA, memory}};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		struct rlimit rl;
		if (!want[i].value)
			continue;
		if (getrlimit(want[i].resource, &rl) < 0)
			return -errno;
		rlim_t v = (rlim_t)want[i].value;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < v)
			v = rl.rlim_max;
		rl.rlim_cur = rl.rlim_max = v;
		if (setrlimit(want[i].resource, &rl) < 0)
			return -errno;
	}
	return 0;
}

void nslimits_release(struct nslimits *nl)
{
	if (nl->cgroup)
		remove_cgroup(nl->cgroup);
	if (nl->cgroup_memory)
		remove_cgroup(nl->cgroup_memory);
	free(nl->cgroup);
	free(nl->cgroup_memory);
	nl->cgroup = nl->cgroup_memory = NULL;
}

void nslimits_sweep(const char *dir)
{
	struct stat st;

	if (dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		remove_cgroup(dir);
}

#else

int nslimits_prepare(const struct host_limits *l, const char *id, struct nslimits *nl)
{
	(void)id;
	*nl = (struct nslimits){.how = NSLIMITS_RLIMITS, .memory = l->memory, .pids = l->pids};
	return 0;
}

int nslimits_join(const struct nslimits *nl)
{
	(void)nl;
	return 0;
}

int nslimits_set_rlimits(unsigned long pids, unsigned long long memory)
{
	(void)pids;
	(void)memory;
	return -ENOTSUP;
}

void nslimits_release(struct nslimits *nl)
{
	(void)nl;
}

void nslimits_sweep(const char *dir)
{
	(void)dir;
}

#endif

void nslimits_free(struct nslimits *nl)
{
	free(nl->cgroup);
	free(nl->cgroup_memory);
	free(nl->why);
	nl->cgroup = nl->cgroup_memory = nl->why = NULL;
}
