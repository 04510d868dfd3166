/* Portable shape (common/portable-include/README.md): <string.h>, less what
 * only Linux defines. */
#include_next <string.h>
#ifndef SANDY_PORTABLE_STRING_H
#define SANDY_PORTABLE_STRING_H
#undef strchrnul
#undef mempcpy
#undef memrchr
#undef rawmemchr
#undef strverscmp
#undef strerrorname_np
#undef sigabbrev_np
#pragma GCC poison strchrnul mempcpy memrchr rawmemchr strverscmp strerrorname_np sigabbrev_np
#endif
