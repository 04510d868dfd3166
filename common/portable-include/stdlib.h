/* Portable shape (common/portable-include/README.md): <stdlib.h>, less what
 * only Linux defines. */
#include_next <stdlib.h>
#ifndef SANDY_PORTABLE_STDLIB_H
#define SANDY_PORTABLE_STDLIB_H
#undef secure_getenv
#undef canonicalize_file_name
#undef qsort_r
#undef clearenv
#pragma GCC poison secure_getenv canonicalize_file_name qsort_r clearenv
#endif
