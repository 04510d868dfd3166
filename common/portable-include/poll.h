/* Portable shape (common/portable-include/README.md): <poll.h>, less what
 * only Linux defines. */
#include_next <poll.h>
#ifndef SANDY_PORTABLE_POLL_H
#define SANDY_PORTABLE_POLL_H
#undef ppoll
#pragma GCC poison ppoll
#endif
