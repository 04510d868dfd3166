/* proc.c - see proc.h. */

#include "proc.h"
#include "platform.h"
#include "sandy.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

void proc_reset_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD};
	sigset_t none;

	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int proc_pidfd(pid_t pid)
{
	return platform_pidfd(pid);
}

int proc_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return SANDY_EXIT_FAILURE;
}

int proc_wait(pid_t pid)
{
	int wstatus;

	while (waitpid(pid, &wstatus, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return proc_status(wstatus);
}

static void child_redirect(int fd, int target)
{
	if (fd >= 0 && fd != target) {
		dup2(fd, target);
		close(fd);
	}
}

/* Forks and execs ARGV. INFD/OUTFD/ERRFD (-1: by FLAGS) become stdin,
 * stdout and stderr. Exec failures come back through a close-on-exec pipe
 * as an errno. */
static int spawn(char *const argv[], unsigned flags, int infd, int outfd, int errfd, pid_t *pidp)
{
	int report[2];
	int r = platform_pipe(report);

	if (r < 0)
		return r;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(report[0]);
		close(report[1]);
		return -e;
	}
	if (pid == 0) {
		close(report[0]);
		proc_reset_signals();
		if ((flags & PROC_PDEATHSIG) && !platform_die_with_parent(parent))
			_exit(SANDY_EXIT_FAILURE);
		int null = -1;
		if (flags & (PROC_OUT_NULL | PROC_ERR_NULL | PROC_IN_NULL))
			null = open("/dev/null", O_RDWR);
		if ((flags & PROC_IN_NULL) && null >= 0)
			dup2(null, 0);
		if ((flags & PROC_OUT_NULL) && null >= 0)
			dup2(null, 1);
		if ((flags & PROC_ERR_NULL) && null >= 0)
			dup2(null, 2);
		if (null > 2)
			close(null);
		child_redirect(infd, 0);
		child_redirect(outfd, 1);
		child_redirect(errfd, 2);
		execvp(argv[0], argv);
		int e = errno;
		if (write(report[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(report[1]);
	int e = 0;
	ssize_t n;
	while ((n = read(report[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (n == (ssize_t)sizeof(e)) {
		proc_wait(pid);
		return -e;
	}
	*pidp = pid;
	return 0;
}

int proc_spawn(char *const argv[], unsigned flags, pid_t *pid)
{
	return spawn(argv, flags & ~(PROC_OUT_CAPTURE | PROC_ERR_CAPTURE), -1, -1, -1, pid);
}

struct sink {
	int fd;
	char *buf;
	size_t len, cap;
};

static int sink_read(struct sink *s)
{
	if (s->len + 4096 + 1 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8192;
		char *b = realloc(s->buf, cap);
		if (!b)
			return -ENOMEM;
		s->buf = b;
		s->cap = cap;
	}
	ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len - 1);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	if (n == 0)
		return 0;
	s->len += (size_t)n;
	s->buf[s->len] = '\0';
	return 1;
}

/* Drains the capture pipes until both are closed. */
static int drain(struct sink *sinks, int nsinks)
{
	int open_sinks = nsinks, r = 0;

	while (open_sinks > 0) {
		struct pollfd p[2];
		int np = 0;
		for (int i = 0; i < nsinks; i++)
			if (sinks[i].fd >= 0)
				p[np++] = (struct pollfd){.fd = sinks[i].fd, .events = POLLIN};
		if (poll(p, (nfds_t)np, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < nsinks; i++) {
			if (sinks[i].fd < 0)
				continue;
			for (int j = 0; j < np; j++) {
				if (p[j].fd != sinks[i].fd || !p[j].revents)
					continue;
				int k = sink_read(&sinks[i]);
				if (k <= 0) {
					if (k < 0 && r == 0)
						r = k;
					close(sinks[i].fd);
					sinks[i].fd = -1;
					open_sinks--;
				}
			}
		}
	}
	return r;
}

int proc_run(char *const argv[], unsigned flags, char **out, char **errout)
{
	struct sink sinks[2] = {{.fd = -1}, {.fd = -1}};
	int child_fds[2] = {-1, -1}, nsinks = 0, r;
	pid_t pid;

	const unsigned capture[2] = {PROC_OUT_CAPTURE, PROC_ERR_CAPTURE};
	for (int i = 0; i < 2; i++) {
		if (!(flags & capture[i]))
			continue;
		int p[2];
		if ((r = platform_pipe(p)) < 0)
			goto fail;
		sinks[nsinks++] = (struct sink){.fd = p[0]};
		child_fds[i] = p[1];
	}
	/* The child's ends are close-on-exec; dup2 in the child clears that. */
	r = spawn(argv, flags, -1, child_fds[0], child_fds[1], &pid);
	for (int i = 0; i < 2; i++)
		if (child_fds[i] >= 0)
			close(child_fds[i]);
	child_fds[0] = child_fds[1] = -1;
	if (r < 0)
		goto fail;
	r = drain(sinks, nsinks);
	int status = proc_wait(pid);
	if (r < 0)
		goto fail;
	nsinks = 0;
	for (int i = 0; i < 2; i++) {
		if (!(flags & capture[i]))
			continue;
		char **dst = i == 0 ? out : errout;
		char *buf = sinks[nsinks].buf ? sinks[nsinks].buf : strdup("");
		sinks[nsinks++].buf = NULL;
		if (dst)
			*dst = buf;
		else
			free(buf);
	}
	return status;
fail:
	for (int i = 0; i < 2; i++) {
		if (sinks[i].fd >= 0)
			close(sinks[i].fd);
		free(sinks[i].buf);
		if (child_fds[i] >= 0)
			close(child_fds[i]);
	}
	return r;
}

int proc_run_input(char *const argv[], const char *input, size_t len)
{
	struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
	int p[2];
	pid_t pid;
	int r = platform_pipe(p);

	if (r < 0)
		return r;
	/* The child's end is close-on-exec; dup2 in the child clears that. */
	r = spawn(argv, 0, p[0], -1, -1, &pid);
	close(p[0]);
	if (r < 0) {
		close(p[1]);
		return r;
	}
	/* EPIPE rather than SIGPIPE when it stops reading. */
	sigemptyset(&ignore.sa_mask);
	sigaction(SIGPIPE, &ignore, &old);
	sandy_write_all(p[1], input, len);
	close(p[1]);
	sigaction(SIGPIPE, &old, NULL);
	return proc_wait(pid);
}
