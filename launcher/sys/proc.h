/* proc.h - running other programs: sandyfs, docker/podman, fusermount3.
 * Children start with sandy's blocked signals unblocked and default
 * dispositions, so that SIGTERM reaches a daemon even though sandy itself
 * takes its signals through a signalfd. */
#ifndef SANDY_PROC_H
#define SANDY_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum {
	PROC_OUT_NULL = 1u << 0,    /* stdout to /dev/null */
	PROC_OUT_CAPTURE = 1u << 1, /* stdout into *out */
	PROC_ERR_NULL = 1u << 2,
	PROC_ERR_CAPTURE = 1u << 3,
	PROC_IN_NULL = 1u << 4,	  /* stdin from /dev/null */
	PROC_PDEATHSIG = 1u << 5, /* SIGTERM when sandy dies (a foreground client) */
};

/* Starts ARGV (searched in PATH) with FLAGS; 0 and *PID, or -errno when it
 * could not be started (exec failures are reported here, not as status
 * 127). Capture flags are not allowed here. */
int proc_spawn(char *const argv[], unsigned flags, pid_t *pid);

/* Runs ARGV to completion. Returns its status as a shell reports it
 * (0-255, 128+N for signal N) or -errno when it could not be started.
 * With the capture flags, *OUT and *ERROUT get the output (malloc'ed). */
int proc_run(char *const argv[], unsigned flags, char **out, char **errout);

/* Runs ARGV to completion with the LEN bytes of INPUT on its standard
 * input (stdout and stderr are sandy's): the status as proc_run returns
 * it. A program that stops reading early is not an error here; its status
 * says what it made of what it read. */
int proc_run_input(char *const argv[], const char *input, size_t len);

/* waitpid() for PID, retried on EINTR; the status as a shell reports it. */
int proc_wait(pid_t pid);

/* A pidfd on PID (close-on-exec), readable once it ends; -1 and errno
 * (ENOSYS where the kernel has none, ESRCH when it is gone). */
int proc_pidfd(pid_t pid);

/* Status word to shell status. */
int proc_status(int wstatus);

/* In a freshly forked child: undo sandy's signal setup. */
void proc_reset_signals(void);

#endif
