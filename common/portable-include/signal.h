/* Portable shape (common/portable-include/README.md): <signal.h>, less what
 * only Linux defines. */
#include_next <signal.h>
#ifndef SANDY_PORTABLE_SIGNAL_H
#define SANDY_PORTABLE_SIGNAL_H
#undef SIGRTMIN
#undef SIGRTMAX
#undef SIGPOLL
#undef SIGPWR
#undef SIGSTKFLT
#undef SI_KERNEL
#undef sigtimedwait
#undef sigwaitinfo
#undef sigqueue
#pragma GCC poison SIGRTMIN SIGRTMAX SIGPOLL SIGPWR SIGSTKFLT SI_KERNEL sigtimedwait sigwaitinfo sigqueue
#endif
