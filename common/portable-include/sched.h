/* Portable shape (common/portable-include/README.md): <sched.h>, less what
 * only Linux defines. */
#include_next <sched.h>
#ifndef SANDY_PORTABLE_SCHED_H
#define SANDY_PORTABLE_SCHED_H
#undef unshare
#undef setns
#undef clone
#undef CLONE_NEWNS
#undef CLONE_NEWPID
#undef CLONE_NEWUSER
#undef sched_getaffinity
#undef sched_setaffinity
#pragma GCC poison unshare setns clone CLONE_NEWNS CLONE_NEWPID CLONE_NEWUSER sched_getaffinity sched_setaffinity
#endif
