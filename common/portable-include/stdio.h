/* Portable shape (common/portable-include/README.md): <stdio.h>, less what
 * only Linux defines. */
#include_next <stdio.h>
#ifndef SANDY_PORTABLE_STDIO_H
#define SANDY_PORTABLE_STDIO_H
#undef fopencookie
#undef fcloseall
#pragma GCC poison fopencookie fcloseall
#endif
