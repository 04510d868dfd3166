/* platform.c - see platform.h. Each function has its Linux body and its
 * portable one side by side, so that what differs is read in one place. */

#include "platform.h"
#include "sandy.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#if SANDY_LINUX_HOST
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#else
#include <sys/random.h>
#endif

int platform_pipe(int fds[2])
{
#if SANDY_LINUX_HOST
	return pipe2(fds, O_CLOEXEC) < 0 ? -errno : 0;
#else
	if (pipe(fds) < 0)
		return -errno;
	if (fcntl(fds[0], F_SETFD, FD_CLOEXEC) < 0 || fcntl(fds[1], F_SETFD, FD_CLOEXEC) < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	return 0;
#endif
}

int platform_pidfd(pid_t pid)
{
#if SANDY_LINUX_HOST && defined(SYS_pidfd_open)
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

int platform_pidfd_kill(int fd, pid_t pid, int sig)
{
#if SANDY_LINUX_HOST && defined(SYS_pidfd_send_signal)
	if (fd >= 0)
		return syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) == 0 ? 0 : -errno;
#else
	(void)fd;
#endif
	return kill(pid, sig) == 0 ? 0 : -errno;
}

bool platform_die_with_parent(pid_t parent)
{
#if SANDY_LINUX_HOST
	prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
	return getppid() == parent;
}

int platform_random(void *buf, size_t n)
{
#if SANDY_LINUX_HOST
	ssize_t got = getrandom(buf, n, 0);
	return got == (ssize_t)n ? 0 : got < 0 ? -errno : -EIO;
#else
	/* getentropy gives at most 256 bytes a call; sandy asks for a few. */
	return n <= 256 && getentropy(buf, n) == 0 ? 0 : -(errno ? errno : EINVAL);
#endif
}

unsigned long long platform_memory(void)
{
#if SANDY_LINUX_HOST
	struct sysinfo si;

	if (sysinfo(&si) == 0 && si.totalram > 0)
		return (unsigned long long)si.totalram * si.mem_unit;
	return 0;
#else
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (unsigned long long)pages * (unsigned long long)size : 0;
#endif
}

unsigned long platform_pid_max(void)
{
#if SANDY_LINUX_HOST
	cleanup_free char *max = NULL;

	if (sandy_read_file("/proc/sys/kernel/pid_max", 32, &max) == 0)
		return strtoul(max, NULL, 10);
#endif
	return 0;
}

#if SANDY_LINUX_HOST

int platform_signals_open(const int *sigs, size_t n, sigset_t *oldmask, int *fd)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < n; i++)
		sigaddset(&set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, oldmask) < 0)
		return -errno;
	*fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (*fd < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		return -e;
	}
	return 0;
}

int platform_signals_read(int fd, struct platform_signal *s)
{
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	s->signo = (int)si.ssi_signo;
	s->from_terminal = si.ssi_code == SI_KERNEL;
	return 1;
}

void platform_signals_close(int fd, const sigset_t *oldmask)
{
	if (fd >= 0)
		close(fd);
	sigprocmask(SIG_SETMASK, oldmask, NULL);
}

int platform_share_dir(const char *dir)
{
	if (mount(dir, dir, NULL, MS_BIND, NULL) < 0)
		return -errno;
	if (mount(NULL, dir, NULL, MS_SHARED, NULL) < 0) {
		int e = errno;
		umount2(dir, MNT_DETACH);
		return -e;
	}
	return 0;
}

int platform_unmount(const char *dir, bool lazy)
{
	return umount2(dir, lazy ? MNT_DETACH : 0) == 0 ? 0 : -errno;
}

#else

/* The self-pipe: the handler writes the signal's number, the loop reads
 * it. Its write end is the only state a handler may touch. */
static int signal_pipe_write = -1;
static const int *caught_sigs;
static size_t caught_n;

static void on_caught(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;

	if (write(signal_pipe_write, &b, 1) < 0) {
		/* Full: enough signals are already waiting to be read. */
	}
	errno = saved;
}

int platform_signals_open(const int *sigs, size_t n, sigset_t *oldmask, int *fd)
{
	int p[2];
	int r = platform_pipe(p);

	if (r < 0)
		return r;
	for (int i = 0; i < 2; i++)
		fcntl(p[i], F_SETFL, fcntl(p[i], F_GETFL) | O_NONBLOCK);
	signal_pipe_write = p[1];
	caught_sigs = sigs;
	caught_n = n;
	sigprocmask(SIG_SETMASK, NULL, oldmask);
	struct sigaction sa = {.sa_handler = on_caught};
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < n; i++)
		if (sigaction(sigs[i], &sa, NULL) < 0) {
			r = -errno;
			caught_n = i;
			platform_signals_close(p[0], oldmask);
			return r;
		}
	*fd = p[0];
	return 0;
}

int platform_signals_read(int fd, struct platform_signal *s)
{
	unsigned char b;

	if (read(fd, &b, 1) != 1)
		return 0;
	/* Who sent it is not told here; only --runtime=none (Linux) asks. */
	*s = (struct platform_signal){.signo = b};
	return 1;
}

void platform_signals_close(int fd, const sigset_t *oldmask)
{
	for (size_t i = 0; i < caught_n; i++)
		signal(caught_sigs[i], SIG_DFL);
	caught_n = 0;
	if (fd >= 0)
		close(fd);
	if (signal_pipe_write >= 0)
		close(signal_pipe_write);
	signal_pipe_write = -1;
	sigprocmask(SIG_SETMASK, oldmask, NULL);
}

int platform_share_dir(const char *dir)
{
	(void)dir;
	return -ENOSYS;
}

int platform_unmount(const char *dir, bool lazy)
{
	(void)dir;
	(void)lazy;
	return -ENOSYS;
}

#endif
