/* test_nslimits.c - how the limits of a session without a container
 * (launcher/runtime/nslimits.c) read the kernel: this process's cgroup per
 * controller in /proc/self/cgroup (v2's "0::" line, v1's controller
 * lists), where each hierarchy is mounted in /proc/self/mountinfo (its
 * root, escapes, v1's super options), the cgroup's directory under a mount
 * whose root is not the hierarchy's, and the controller lists. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "launcher/runtime/nslimits.h"

#include <errno.h>
#include "tap.h"

static bool is(char *got, const char *want)
{
	bool same = got && want ? !strcmp(got, want) : got == want;
	if (!same)
		printf("#   got %s, expected %s\n", got ? got : "NULL", want ? want : "NULL");
	free(got);
	return same;
}

static void test_own(void)
{
	static const char hybrid[] = "9:name=systemd:/\n"
				     "8:pids:/\n"
				     "4:memory:/process_api/1479b0fd\n"
				     "3:cpu,cpuacct:/user.slice\n"
				     "0::/\n";
	static const char unified[] = "0::/user.slice/user-1000.slice/session-2.scope\n";

	ok(is(nslimits_own_cgroup(unified, NULL), "/user.slice/user-1000.slice/session-2.scope"),
	   "v2: the path of the '0::' line");
	ok(is(nslimits_own_cgroup(unified, "pids"), NULL), "v2 only: no v1 pids cgroup");
	ok(is(nslimits_own_cgroup(hybrid, "memory"), "/process_api/1479b0fd") &&
		   is(nslimits_own_cgroup(hybrid, "pids"), "/"),
	   "v1: each controller's line");
	ok(is(nslimits_own_cgroup(hybrid, "cpuacct"), "/user.slice") &&
		   is(nslimits_own_cgroup(hybrid, "cpu"), "/user.slice"),
	   "v1: a controller in a list of several");
	ok(is(nslimits_own_cgroup(hybrid, "systemd"), NULL) &&
		   is(nslimits_own_cgroup(hybrid, "cpu,"), NULL),
	   "no match on part of a name");
	ok(is(nslimits_own_cgroup("", NULL), NULL) &&
		   is(nslimits_own_cgroup("garbage", "pids"), NULL),
	   "nothing from nothing");
}

static void test_mount(void)
{
	static const char mi[] =
		"22 1 0:20 / /sys rw - sysfs sysfs rw\n"
		"30 22 0:26 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755\n"
		"31 30 0:27 / /sys/fs/cgroup/unified rw shared:9 - cgroup2 cgroup2 rw\n"
		"35 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		"36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
		"37 30 0:33 /docker/abc /sys/fs/cgroup/pids\\040x rw - cgroup cgroup rw,pids\n";
	char *mp = NULL, *root = NULL;

	ok(nslimits_cgroup_mount(mi, NULL, &mp, &root) == 0 && is(mp, "/sys/fs/cgroup/unified") &&
		   is(root, "/"),
	   "v2: the cgroup2 mount, past optional fields");
	ok(nslimits_cgroup_mount(mi, "memory", &mp, &root) == 0 &&
		   is(mp, "/sys/fs/cgroup/memory") && is(root, "/"),
	   "v1: the mount whose super options name the controller");
	ok(nslimits_cgroup_mount(mi, "cpuacct", &mp, &root) == 0 &&
		   is(mp, "/sys/fs/cgroup/cpu,cpuacct") && is(root, "/"),
	   "... among several");
	ok(nslimits_cgroup_mount(mi, "pids", &mp, &root) == 0 && is(mp, "/sys/fs/cgroup/pids x") &&
		   is(root, "/docker/abc"),
	   "a mount of part of the hierarchy, its path unescaped");
	ok(nslimits_cgroup_mount(mi, "devices", &mp, &root) == -ENOENT,
	   "none for a controller no hierarchy has");
	ok(nslimits_cgroup_mount("22 1 0:20 / /sys rw - sysfs sysfs rw\n", NULL, &mp, &root) ==
		   -ENOENT,
	   "none without cgroup2");
}

static void test_dir(void)
{
	ok(is(nslimits_cgroup_dir("/sys/fs/cgroup", "/", "/user.slice/a.scope"),
	      "/sys/fs/cgroup/user.slice/a.scope"),
	   "under a mount of the whole hierarchy");
	ok(is(nslimits_cgroup_dir("/sys/fs/cgroup", "/", "/"), "/sys/fs/cgroup"),
	   "the root: the mount point");
	ok(is(nslimits_cgroup_dir("/c", "/docker/abc", "/docker/abc/x"), "/c/x") &&
		   is(nslimits_cgroup_dir("/c", "/docker/abc", "/docker/abc"), "/c"),
	   "under a mount of part of it");
	ok(is(nslimits_cgroup_dir("/c", "/docker/abc", "/docker/abcd"), NULL) &&
		   is(nslimits_cgroup_dir("/c", "/docker/abc", "/other"), NULL),
	   "none for a cgroup outside the mounted part");
}

static void test_list(void)
{
	ok(nslimits_list_has("cpuset cpu io memory pids\n", "pids") &&
		   nslimits_list_has("memory pids", "memory"),
	   "a controller in the list");
	ok(!nslimits_list_has("cpuset cpu io memory hugetlb\n", "pids") &&
		   !nslimits_list_has("memoryx", "memory") && !nslimits_list_has("", "pids"),
	   "not a controller that is not, nor part of a name");
}

int main(void)
{
	test_own();
	test_mount();
	test_dir();
	test_list();
	return tap_done();
}
