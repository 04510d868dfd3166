/* stats.h - the daemon's own request counters: how many requests of each
 * kind the kernel sent and how long their handlers ran, so a benchmark can
 * say which requests a workload costs. `sandyfs mount --stats FILE` writes
 * them as JSON on SIGUSR1 and at unmount. Counting is two atomic adds per
 * request; nothing here knows about the policy. */
#ifndef SANDYFS_STATS_H
#define SANDYFS_STATS_H

#include <stdatomic.h>
#include <stdint.h>

#define SFS_REQUESTS(X)                                                                            \
	X(LOOKUP, "lookup")                                                                        \
	X(FORGET, "forget")                                                                        \
	X(GETATTR, "getattr")                                                                      \
	X(SETATTR, "setattr")                                                                      \
	X(READLINK, "readlink")                                                                    \
	X(MKNOD, "mknod")                                                                          \
	X(MKDIR, "mkdir")                                                                          \
	X(SYMLINK, "symlink")                                                                      \
	X(LINK, "link")                                                                            \
	X(UNLINK, "unlink")                                                                        \
	X(RMDIR, "rmdir")                                                                          \
	X(RENAME, "rename")                                                                        \
	X(OPEN, "open")                                                                            \
	X(CREATE, "create")                                                                        \
	X(READ, "read")                                                                            \
	X(WRITE, "write")                                                                          \
	X(RELEASE, "release")                                                                      \
	X(FSYNC, "fsync")                                                                          \
	X(OPENDIR, "opendir")                                                                      \
	X(READDIR, "readdir")                                                                      \
	X(READDIRPLUS, "readdirplus")                                                              \
	X(RELEASEDIR, "releasedir")                                                                \
	X(FSYNCDIR, "fsyncdir")                                                                    \
	X(STATFS, "statfs")                                                                        \
	X(FALLOCATE, "fallocate")                                                                  \
	X(COPY_FILE_RANGE, "copy_file_range")                                                      \
	X(LSEEK, "lseek")                                                                          \
	X(GETXATTR, "getxattr")                                                                    \
	X(LISTXATTR, "listxattr")                                                                  \
	X(SETXATTR, "setxattr")                                                                    \
	X(REMOVEXATTR, "removexattr")

enum sfs_request {
#define SFS_REQUEST_ENUM(id, name) SFS_REQ_##id,
	SFS_REQUESTS(SFS_REQUEST_ENUM)
#undef SFS_REQUEST_ENUM
		SFS_REQ_COUNT
};

struct sfs_stats {
	_Atomic uint64_t count[SFS_REQ_COUNT];
	_Atomic uint64_t nsec[SFS_REQ_COUNT];
	/* Host changes heard (inotify), the kernel cache invalidations they
	 * caused, and queue overflows (everything invalidated). */
	_Atomic uint64_t host_events, host_invalidations, host_overflows;
};

/* A handler's timer: started by SFS_TIME_REQUEST at its top, stopped and
 * counted when it goes out of scope, whichever path the handler returns by. */
struct sfs_request_timer {
	struct sfs_stats *stats;
	enum sfs_request req;
	uint64_t start_ns;
};

uint64_t sfs_stats_clock_ns(void);
void sfs_stats_timer_stop(struct sfs_request_timer *t);

#define SFS_TIME_REQUEST(stats, id)                                                                \
	__attribute__((cleanup(sfs_stats_timer_stop),                                              \
		       unused)) struct sfs_request_timer sfs_timer_ = {(stats), SFS_REQ_##id,      \
								       sfs_stats_clock_ns()}

/* The counters as one JSON object, written to PATH through a temporary
 * file and rename(), so a reader never sees half of it. SERIAL counts the
 * writes, so a reader can wait for a fresh one. Negative errno. */
int sfs_stats_write(const struct sfs_stats *stats, uint64_t serial, const char *path);

/* Writes the counters to PATH whenever the process gets SIGUSR1, from a
 * thread of its own (SIGUSR1 must be blocked in every other thread: call
 * before creating any). sfs_stats_dump_stop writes them a last time. */
struct sfs_stats_dump;
int sfs_stats_dump_start(const struct sfs_stats *stats, const char *path,
			 struct sfs_stats_dump **out);
void sfs_stats_dump_stop(struct sfs_stats_dump *d);

#endif
