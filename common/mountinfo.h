/* mountinfo.h - reading /proc/self/mountinfo: whether a path is a mount
 * point (and of what type, with what propagation), and what is mounted
 * below a directory. Mount points are unescaped (\040 is a space). */
#ifndef SANDY_COMMON_MOUNTINFO_H
#define SANDY_COMMON_MOUNTINFO_H

#include "strv.h"

#include <stdbool.h>

struct mount_entry {
	char fstype[64];
	bool shared; /* propagation: "shared:N" */
	bool slave;  /* "master:N" */
};

/* Whether PATH (absolute, resolved) is a mount point: 1, with what is on
 * top there in *E (may be NULL); 0 when it is none; -errno when mountinfo
 * cannot be read (no /proc). */
int mount_lookup(const char *path, struct mount_entry *e);

/* The mount points at or below DIR, deepest first (the order to unmount
 * them in), appended to OUT. */
int mounts_under(const char *dir, struct strv *out);

/* Undoes mountinfo's octal escapes (\040 for a space) in S, in place. */
void mountinfo_unescape(char *s);

#endif
