/* nslimits.h - the process and memory limits of a session without a
 * container (nsrun.h), at the values a container gets (host_limits).
 *
 * Where sandy may make one, the sandbox gets a cgroup of its own,
 * sandy-ID, with pids.max and memory.max (no swap on top, as a
 * container's --memory-swap): with cgroup v2, beside sandy's own cgroup,
 * in its parent, when that is delegated to the user (or sandy is root)
 * and has the pids and memory controllers on for its children (sandy's
 * own cgroup has processes, so none of its children may have them); with
 * cgroup v1, in the pids and memory hierarchies, where only root may.
 * Everything the sandbox starts stays in it, and what is left when the
 * sandbox ends is killed with it.
 *
 * Elsewhere the limits are rlimits, set inside the sandbox (nsrun.h's
 * inside command), in its user namespace: RLIMIT_NPROC, which counts
 * there the processes of the sandbox's uid in that namespace only, not
 * the user's others; and RLIMIT_DATA, per process (RLIMIT_AS would hit
 * the address space a JIT reserves without using it), for the command and
 * what it starts (the proxy's bridge, started before, is bounded by its
 * own connection cap). The kernel never
 * holds the first user namespace's root (uid 0, however mapped) to
 * RLIMIT_NPROC: a root sandbox without a cgroup has no process limit, and
 * sandy says so. */
#ifndef SANDY_NSLIMITS_H
#define SANDY_NSLIMITS_H

#include "sys/host.h"
#include "sys/sandy.h"

#include <stdbool.h>

enum nslimits_how {
	NSLIMITS_RLIMITS,
	NSLIMITS_CGROUP2,
	NSLIMITS_CGROUP1,
};

struct nslimits {
	enum nslimits_how how;
	unsigned long long memory; /* bytes */
	unsigned pids;
	char *cgroup;	     /* v2: the sandbox's cgroup; v1: its pids cgroup */
	char *cgroup_memory; /* v1: its memory cgroup */
	char *why;	     /* rlimits: why no cgroup (for the note) */
};

/* Chooses how to hold the sandbox of session ID to L's values (a cgroup
 * where one can be made, else rlimits) and makes its cgroup. 0, or
 * -ENOMEM; a cgroup that cannot be made is no error. */
int nslimits_prepare(const struct host_limits *l, const char *id, struct nslimits *out);

/* In the process about to become the sandbox (before bubblewrap, and
 * before it drops sudo's root): enters the sandbox's cgroup. 0 or
 * -errno. */
int nslimits_join(const struct nslimits *nl);

/* Inside the sandbox: RLIMIT_NPROC and RLIMIT_DATA at PIDS and MEMORY
 * (0: that one unchanged), soft and hard, or the hard limit already set
 * when that is lower. 0 or -errno. */
int nslimits_set_rlimits(unsigned long pids, unsigned long long memory);

/* The sandbox has ended: kills what is left in its cgroup and removes it. */
void nslimits_release(struct nslimits *nl);
void nslimits_free(struct nslimits *nl);

/* A cgroup directory that a session which did not end cleanly left
 * (session.h's sweep): what is in it is killed, and it is removed. Only
 * a directory named sandy-*. */
void nslimits_sweep(const char *dir);

/* The parts that read the kernel's text, for the unit test. */

/* The cgroup of this process for CONTROLLER ("pids", "memory"; NULL:
 * cgroup v2's), from PROC_CGROUP, /proc/self/cgroup's text; malloc'ed,
 * NULL when none. */
char *nslimits_own_cgroup(const char *proc_cgroup, const char *controller);

/* Where the hierarchy of CONTROLLER (NULL: cgroup v2) is mounted, from
 * MOUNTINFO, /proc/self/mountinfo's text: its mount point and the cgroup
 * at its root (malloc'ed), or -ENOENT. */
int nslimits_cgroup_mount(const char *mountinfo, const char *controller, char **mountpoint,
			  char **root);

/* The directory of CGROUP in a hierarchy mounted at MOUNTPOINT with ROOT
 * at its root (malloc'ed); NULL when CGROUP is not below ROOT. */
char *nslimits_cgroup_dir(const char *mountpoint, const char *root, const char *cgroup);

/* Whether LIST (cgroup.controllers' or cgroup.subtree_control's text:
 * names separated by spaces) holds NAME. */
bool nslimits_list_has(const char *list, const char *name);

#endif
