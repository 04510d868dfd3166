/* platform.h - what sandy needs from the host beyond POSIX, in one place.
 *
 * sandy is built in one of two shapes (meson decides, see meson.build):
 *
 * - Linux (SANDY_LINUX_HOST 1): pidfds, signalfd, a parent-death signal,
 *   getrandom, sysinfo and /proc, and what only Linux can do at all:
 *   sandyfs mounted on this host (host mode) and the bubblewrap runtime.
 * - portable (SANDY_LINUX_HOST 0): macOS, or Linux with
 *   -Dportable_fallback=true to test that shape here. Everything above is
 *   done with POSIX calls or not at all: sandyfs serves only in the
 *   engine's world (fsbox.h), and the commands that need this host's
 *   mounts or bubblewrap say so and stop.
 *
 * In the portable shape the build puts common/portable-include first on
 * the include path: it refuses Linux-only headers and poisons Linux-only
 * names, so a Linux call outside this file and nsrun.c, nsnet.c and
 * nslimits.c (the bubblewrap runtime) does not compile. */
#ifndef SANDY_PLATFORM_H
#define SANDY_PLATFORM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifndef SANDY_LINUX_HOST
#error "SANDY_LINUX_HOST is set by the build (launcher/meson.build)"
#endif

/* A pipe whose ends are close-on-exec. 0 or -errno. */
int platform_pipe(int fds[2]);

/* A descriptor readable once PID has ended (a pidfd), close-on-exec; -1
 * and errno (ENOSYS where there is none: the caller polls instead). */
int platform_pidfd(pid_t pid);

/* Sends SIG to the process FD (platform_pidfd's) is for, so that a pid
 * reused since cannot be hit; to PID where FD is -1. 0 or -errno. */
int platform_pidfd_kill(int fd, pid_t pid, int sig);

/* In a child just forked from PARENT: ask for SIGTERM when PARENT dies.
 * False when PARENT is already gone. Where the kernel offers nothing of
 * the kind, nothing is asked, and the child ends when its output closes
 * or its engine stops it. */
bool platform_die_with_parent(pid_t parent);

/* N random bytes; 0, or -errno when none could be had. */
int platform_random(void *buf, size_t n);

/* The machine's memory in bytes, or 0 when unknown. */
unsigned long long platform_memory(void);

/* The kernel's highest pid, or 0 when unknown. */
unsigned long platform_pid_max(void);

/* Signals as file-descriptor events: SIGS are blocked (their old mask in
 * *OLDMASK) or caught, and each one that arrives makes *FD readable. */
struct platform_signal {
	int signo;
	bool from_terminal; /* sent by the kernel (a key at the terminal) */
};
int platform_signals_open(const int *sigs, size_t n, sigset_t *oldmask, int *fd);
/* One signal that arrived: 1, or 0 when none is pending. */
int platform_signals_read(int fd, struct platform_signal *s);
void platform_signals_close(int fd, const sigset_t *oldmask);

/* Host mounts, Linux only (-ENOSYS elsewhere): DIR bound onto itself and
 * made shared, so that what is mounted below it propagates to the binds
 * an engine makes with rslave; and a plain unmount (LAZY: detached). */
int platform_share_dir(const char *dir);
int platform_unmount(const char *dir, bool lazy);

#endif
