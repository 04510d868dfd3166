/* Portable shape (common/portable-include/README.md): <time.h>, less what
 * only Linux defines. */
#include_next <time.h>
#ifndef SANDY_PORTABLE_TIME_H
#define SANDY_PORTABLE_TIME_H
#undef CLOCK_BOOTTIME
#undef timer_create
#undef timer_settime
#undef timer_delete
#pragma GCC poison CLOCK_BOOTTIME timer_create timer_settime timer_delete
#endif
