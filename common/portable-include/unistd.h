/* Portable shape (common/portable-include/README.md): <unistd.h>, less what
 * only Linux defines. */
#include_next <unistd.h>
#ifndef SANDY_PORTABLE_UNISTD_H
#define SANDY_PORTABLE_UNISTD_H
#undef pipe2
#undef dup3
#undef execvpe
#undef getresuid
#undef getresgid
#undef setresuid
#undef setresgid
#undef gettid
#undef syscall
#undef get_current_dir_name
#undef euidaccess
#pragma GCC poison pipe2 dup3 execvpe getresuid getresgid setresuid setresgid gettid syscall get_current_dir_name euidaccess
#endif
