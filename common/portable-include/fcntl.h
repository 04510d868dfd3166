/* Portable shape (common/portable-include/README.md): <fcntl.h>, less what
 * only Linux defines. */
#include_next <fcntl.h>
#ifndef SANDY_PORTABLE_FCNTL_H
#define SANDY_PORTABLE_FCNTL_H
#undef O_PATH
#undef O_TMPFILE
#undef O_NOATIME
#undef O_DIRECT
#undef F_SETPIPE_SZ
#undef F_GETPIPE_SZ
#undef F_OFD_SETLK
#undef F_OFD_SETLKW
#undef F_OFD_GETLK
#undef AT_EMPTY_PATH
#undef AT_NO_AUTOMOUNT
#undef fallocate
#undef posix_fallocate
#undef posix_fadvise
#undef readahead
#undef splice
#undef tee
#undef vmsplice
#undef sync_file_range
#undef name_to_handle_at
#undef open_by_handle_at
#pragma GCC poison O_PATH O_TMPFILE O_NOATIME O_DIRECT F_SETPIPE_SZ F_GETPIPE_SZ F_OFD_SETLK F_OFD_SETLKW F_OFD_GETLK AT_EMPTY_PATH AT_NO_AUTOMOUNT fallocate posix_fallocate posix_fadvise readahead splice tee vmsplice sync_file_range name_to_handle_at open_by_handle_at
#endif
