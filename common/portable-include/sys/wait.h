/* Portable shape (common/portable-include/README.md): <sys/wait.h>, less what
 * only Linux defines. */
#include_next <sys/wait.h>
#ifndef SANDY_PORTABLE_WAIT_H
#define SANDY_PORTABLE_WAIT_H
#undef P_PIDFD
#pragma GCC poison P_PIDFD
#endif
