/* Portable shape (common/portable-include/README.md): <sys/random.h>, less what
 * only Linux defines. */
#include_next <sys/random.h>
#ifndef SANDY_PORTABLE_RANDOM_H
#define SANDY_PORTABLE_RANDOM_H
#undef getrandom
#undef GRND_NONBLOCK
#undef GRND_RANDOM
#pragma GCC poison getrandom GRND_NONBLOCK GRND_RANDOM
#endif
