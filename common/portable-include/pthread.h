/* Portable shape (common/portable-include/README.md): <pthread.h>, less what
 * only Linux defines. */
#include_next <pthread.h>
#ifndef SANDY_PORTABLE_PTHREAD_H
#define SANDY_PORTABLE_PTHREAD_H
#undef pthread_setname_np
#undef pthread_getattr_np
#undef pthread_tryjoin_np
#undef pthread_timedjoin_np
#pragma GCC poison pthread_setname_np pthread_getattr_np pthread_tryjoin_np pthread_timedjoin_np
#endif
