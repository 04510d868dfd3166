/* Portable shape (common/portable-include/README.md): <sys/socket.h>, less what
 * only Linux defines. */
#include_next <sys/socket.h>
#ifndef SANDY_PORTABLE_SOCKET_H
#define SANDY_PORTABLE_SOCKET_H
#undef SOCK_CLOEXEC
#undef SOCK_NONBLOCK
#undef MSG_NOSIGNAL
#undef SO_PEERCRED
#undef accept4
#undef recvmmsg
#undef sendmmsg
#pragma GCC poison SOCK_CLOEXEC SOCK_NONBLOCK MSG_NOSIGNAL SO_PEERCRED accept4 recvmmsg sendmmsg
#endif
