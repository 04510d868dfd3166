/* nsnet.c - see nsnet.h. Only a session under bubblewrap has this
 * network, and bubblewrap is Linux's: the portable shape of sandy
 * (platform.h) leaves all of this out. */

#include "nsnet.h"
#include "world/egress.h"
#include "world/netproxy.h"
#include "sys/platform.h"
#include "sys/proc.h"

#if SANDY_LINUX_HOST

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

/* How long a client may take to send its request head, and a connection
 * to an origin to open. */
#define HEAD_SECONDS	30
#define CONNECT_SECONDS 15
/* Connections served at once; more wait in the listen queue. */
#define MAX_CONNECTIONS 256
/* Enough for a connection's thread: the head and two relay buffers. */
#define THREAD_STACK (256 * 1024)
#define RELAY_BUF    16384

/* What the proxy variables name inside: loopback is the sandbox's own. */
#define NO_PROXY_LIST "localhost,127.0.0.1,::1"

static int set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

/* Copies bytes both ways between A and B (non-blocking) until both ways
 * have ended; the end of one way is passed on as a half close, so that a
 * request body's end reaches the origin while its answer still comes. */
static void relay(int a, int b)
{
	struct way {
		int from, to;
		size_t len, off;
		bool eof;
		char buf[RELAY_BUF];
	} *w = malloc(2 * sizeof(*w));

	if (!w)
		return;
	w[0].from = a, w[0].to = b, w[1].from = b, w[1].to = a;
	for (int i = 0; i < 2; i++)
		w[i].len = w[i].off = 0, w[i].eof = false;
	for (;;) {
		struct pollfd p[2];
		nfds_t n = 0;
		int idx[2];
		for (int i = 0; i < 2; i++) {
			if (w[i].off < w[i].len)
				p[n] = (struct pollfd){.fd = w[i].to, .events = POLLOUT};
			else if (!w[i].eof)
				p[n] = (struct pollfd){.fd = w[i].from, .events = POLLIN};
			else
				continue;
			idx[n++] = i;
		}
		if (n == 0)
			break;
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		bool failed = false;
		for (nfds_t k = 0; k < n && !failed; k++) {
			struct way *d = &w[idx[k]];
			if (!p[k].revents)
				continue;
			if (d->off < d->len) {
				ssize_t m =
					send(d->to, d->buf + d->off, d->len - d->off, MSG_NOSIGNAL);
				if (m < 0 && errno != EAGAIN && errno != EINTR)
					failed = true;
				else if (m > 0 && (d->off += (size_t)m) == d->len)
					d->off = d->len = 0;
				continue;
			}
			ssize_t m = read(d->from, d->buf, sizeof(d->buf));
			if (m > 0) {
				d->len = (size_t)m;
				d->off = 0;
			} else if (m == 0 || (errno != EAGAIN && errno != EINTR)) {
				d->eof = true;
				shutdown(d->to, SHUT_WR);
				/* A reset ends both ways. */
				if (m < 0)
					failed = true;
			}
		}
		if (failed)
			break;
	}
	free(w);
}

/* Connects FD (non-blocking) to SA within CONNECT_SECONDS. */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len)
{
	if (connect(fd, sa, len) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -errno;
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int r;
	while ((r = poll(&p, 1, CONNECT_SECONDS * 1000)) < 0 && errno == EINTR)
		;
	if (r == 0)
		return -ETIMEDOUT;
	int err = 0;
	socklen_t elen = sizeof(err);
	if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
		return -errno;
	return -err;
}

struct proxy {
	int listen_fd, records_fd;
	const char *session_id;
	const char *allow_path;
	const struct strv *upstreams;
	pthread_mutex_t lock; /* the allowlist */
	struct strv allow;
	struct stat allow_st;
	atomic_int active;
};

/* Reads the allowlist again when its file is another than last time
 * (`sandy allow` replaces it whole); keeps the last good one otherwise. */
static void allow_refresh(struct proxy *p)
{
	struct stat st;
	cleanup_free char *text = NULL, *bad = NULL;
	struct strv fresh = {0};
	const char *why;

	if (stat(p->allow_path, &st) < 0 ||
	    (st.st_ino == p->allow_st.st_ino && st.st_size == p->allow_st.st_size &&
	     st.st_mtim.tv_sec == p->allow_st.st_mtim.tv_sec &&
	     st.st_mtim.tv_nsec == p->allow_st.st_mtim.tv_nsec))
		return;
	if (sandy_read_file(p->allow_path, 1 << 20, &text) < 0 ||
	    egress_parse_list(text, &fresh, &bad, &why) < 0) {
		strv_free(&fresh);
		return;
	}
	strv_free(&p->allow);
	p->allow = fresh;
	p->allow_st = st;
}

static void record(struct proxy *p, const struct netproxy_request *req, bool allowed,
		   const struct sockaddr *sa)
{
	struct egress_record rec = {.allowed = allowed, .port = (int)req->port};
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	rec.time = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
	snprintf(rec.proto, sizeof(rec.proto), "tcp");
	if (!req->address)
		snprintf(rec.name, sizeof(rec.name), "%s", req->host);
	if (sa) {
		const void *a =
			sa->sa_family == AF_INET6
				? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
				: (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
		inet_ntop(sa->sa_family, a, rec.dest, sizeof(rec.dest));
		rec.family = sa->sa_family == AF_INET6 ? 6 : 4;
	} else if (req->address) {
		/* An address fits: INET6_ADDRSTRLEN is less. */
		snprintf(rec.dest, sizeof(rec.dest), "%.*s", (int)sizeof(rec.dest) - 1, req->host);
		rec.family = strchr(req->host, ':') ? 6 : 4;
	}
	cleanup_free char *line = egress_record_json(&rec, p->session_id);
	/* One write per record: appends never interleave. */
	if (line)
		sandy_write_all(p->records_fd, line, strlen(line));
}

static void send_text(int fd, const char *text)
{
	if (text)
		sandy_write_all(fd, text, strlen(text));
}

static void send_answer(int fd, char *answer)
{
	send_text(fd, answer);
	free(answer);
}

/* The IPv4 addresses of NAME from the resolvers UP (SANDY_DNS_UPSTREAM):
 * up to MAX in OUT, as sockaddrs with PORT; how many, or -errno. */
static int resolve_upstream(const struct strv *up, const char *name, unsigned port,
			    struct sockaddr_storage *out, int max)
{
	unsigned char q[512], a[1500];
	struct in_addr addrs[16];
	int r = -EHOSTUNREACH;

	for (size_t i = 0; i < up->n && r < 0 && r != -ENOENT; i++) {
		unsigned short id;
		if (platform_random(&id, sizeof(id)) < 0)
			id = (unsigned short)getpid();
		int qlen = netproxy_dns_query(name, id, q, sizeof(q));
		if (qlen < 0)
			return qlen;
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(53)};
		inet_pton(AF_INET, up->v[i], &sa.sin_addr);
		cleanup_fd int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    send(fd, q, (size_t)qlen, 0) < 0) {
			r = -errno;
			continue;
		}
		/* Answers to other ids (late ones) are not this one's. */
		for (int tries = 0; tries < 4; tries++) {
			struct pollfd p = {.fd = fd, .events = POLLIN};
			if (poll(&p, 1, 3000) <= 0) {
				r = -ETIMEDOUT;
				break;
			}
			ssize_t n = recv(fd, a, sizeof(a), 0);
			if (n < 0) {
				r = -errno;
				break;
			}
			r = netproxy_dns_answer(a, (size_t)n, id, addrs, ARRAY_SIZE(addrs));
			if (r != -EINVAL)
				break;
		}
	}
	if (r == 0)
		return -ENOENT;
	for (int k = 0; k < r && k < max; k++) {
		struct sockaddr_in *s = (struct sockaddr_in *)&out[k];
		*s = (struct sockaddr_in){.sin_family = AF_INET,
					  .sin_port = htons((uint16_t)port),
					  .sin_addr = addrs[k]};
	}
	return r < 0 ? r : (r < max ? r : max);
}

/* NAME's addresses, from SANDY_DNS_UPSTREAM's resolvers or this
 * machine's: how many (up to MAX) in OUT, or -errno with *WHY. */
static int resolve(struct proxy *p, const char *name, unsigned port, struct sockaddr_storage *out,
		   int max, const char **why)
{
	if (p->upstreams->n) {
		int r = resolve_upstream(p->upstreams, name, port, out, max);
		*why = r == -ENOENT ? "no such name" : "the resolver does not answer";
		return r;
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG}, *res;
	char service[8];
	snprintf(service, sizeof(service), "%u", port);
	int e = getaddrinfo(name, service, &hints, &res);
	if (e != 0) {
		*why = e == EAI_NONAME ? "no such name" : gai_strerror(e);
		return -ENOENT;
	}
	int n = 0;
	for (struct addrinfo *ai = res; ai && n < max; ai = ai->ai_next)
		if (ai->ai_addrlen <= sizeof(*out))
			memcpy(&out[n++], ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(res);
	return n ? n : -ENOENT;
}

static socklen_t sa_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* Reads the request head from FD into BUF: its length, or -errno having
 * answered 400 (nothing, when the client went away). */
static int read_head(int fd, char *buf, size_t size, struct netproxy_request *req)
{
	size_t have = 0;
	const char *why = NULL;

	for (;;) {
		int r = netproxy_parse(buf, have, req, &why);
		if (r > 0)
			return (int)have;
		if (r < 0) {
			send_answer(fd, netproxy_error(400, NULL, why));
			return r;
		}
		if (have >= size) {
			send_answer(fd, netproxy_error(400, NULL, "a request head too long"));
			return -E2BIG;
		}
		ssize_t n = read(fd, buf + have, size - have);
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		have += (size_t)n;
	}
}

struct conn {
	struct proxy *p;
	int fd;
};

static void serve(struct proxy *p, int fd)
{
	char head[NETPROXY_HEAD_MAX];
	struct netproxy_request req;
	struct timeval tv = {.tv_sec = HEAD_SECONDS};
	const char *why = NULL;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int have = read_head(fd, head, sizeof(head), &req);
	if (have < 0)
		return;
	pthread_mutex_lock(&p->lock);
	allow_refresh(p);
	enum netproxy_verdict v = netproxy_decide(&p->allow, &req);
	pthread_mutex_unlock(&p->lock);
	if (v != NETPROXY_ALLOWED) {
		record(p, &req, false, NULL);
		send_answer(fd, netproxy_refusal(&req, v));
		return;
	}
	struct sockaddr_storage addrs[16];
	int n = resolve(p, req.host, req.port, addrs, (int)ARRAY_SIZE(addrs), &why);
	if (n < 0) {
		record(p, &req, true, NULL);
		send_answer(fd, netproxy_error(502, req.host, why));
		return;
	}
	cleanup_fd int out = -1;
	const struct sockaddr_storage *local = NULL, *tried = NULL;
	int e = 0;
	for (int i = 0; i < n && out < 0; i++) {
		if (netproxy_address_local((struct sockaddr *)&addrs[i])) {
			local = &addrs[i];
			continue;
		}
		tried = &addrs[i];
		int s = socket(addrs[i].ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (s < 0 ||
		    (e = connect_within(s, (struct sockaddr *)&addrs[i], sa_len(&addrs[i]))) < 0) {
			e = s < 0 ? -errno : e;
			close_keep_errno(s);
			continue;
		}
		out = s;
	}
	if (!tried && local) {
		char text[INET6_ADDRSTRLEN] = "";
		record(p, &req, false, (struct sockaddr *)local);
		const void *a =
			local->ss_family == AF_INET6
				? (const void *)&((const struct sockaddr_in6 *)local)->sin6_addr
				: (const void *)&((const struct sockaddr_in *)local)->sin_addr;
		inet_ntop(local->ss_family, a, text, sizeof(text));
		send_answer(fd, netproxy_local_refusal(req.host, text));
		return;
	}
	record(p, &req, true, (struct sockaddr *)tried);
	if (out < 0) {
		send_answer(fd,
			    netproxy_error(e == -ETIMEDOUT ? 504 : 502, req.host, strerror(-e)));
		return;
	}
	if (set_nonblock(out, false) < 0)
		return;
	if (req.tunnel) {
		send_text(fd, netproxy_established);
	} else {
		cleanup_free char *origin = netproxy_origin_head(head, &req);
		if (!origin || sandy_write_all(out, origin, strlen(origin)) < 0)
			return;
	}
	/* What the client sent past its head goes on, then both ways. */
	if ((size_t)have > req.head_len &&
	    sandy_write_all(out, head + req.head_len, (size_t)have - req.head_len) < 0)
		return;
	tv.tv_sec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (set_nonblock(fd, true) == 0 && set_nonblock(out, true) == 0)
		relay(fd, out);
}

static void *serve_thread(void *arg)
{
	struct conn c = *(struct conn *)arg;

	free(arg);
	serve(c.p, c.fd);
	close(c.fd);
	atomic_fetch_sub(&c.p->active, 1);
	return NULL;
}

/* Starts FN(ARG) on a detached thread with a small stack. */
static int start_thread(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	int e = pthread_attr_init(&attr);

	if (e == 0)
		e = pthread_attr_setstacksize(&attr, THREAD_STACK);
	if (e == 0)
		e = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (e == 0)
		e = pthread_create(&t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -e;
}

static _Noreturn void proxy_main(struct proxy *p)
{
	for (;;) {
		int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE ||
			    errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				if (errno != EINTR && errno != ECONNABORTED)
					sleep(1);
				continue;
			}
			_exit(SANDY_EXIT_FAILURE);
		}
		struct conn *c = malloc(sizeof(*c));
		if (!c || atomic_load(&p->active) >= MAX_CONNECTIONS) {
			free(c);
			close(fd);
			continue;
		}
		*c = (struct conn){p, fd};
		atomic_fetch_add(&p->active, 1);
		if (start_thread(serve_thread, c) < 0) {
			atomic_fetch_sub(&p->active, 1);
			free(c);
			close(fd);
		}
	}
}

/* Closes every descriptor from FIRST up. */
static void close_from(int first)
{
	if (close_range((unsigned)first, ~0U, 0) == 0)
		return;
	for (int fd = first; fd < 65536; fd++)
		close(fd);
}

static int listen_unix(const char *path, const struct host_user *u)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	if (strlen(path) >= sizeof(sa.sun_path)) {
		sandy_error("cannot listen on '%s': the path is longer than a socket's %zu bytes",
			    path, sizeof(sa.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	cleanup_fd int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* Only the user, the sandbox's uid, connects. */
	mode_t old = umask(0177);
	int r = fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	umask(old);
	if (r == 0 && u->via_sudo && lchown(path, u->uid, u->gid) < 0)
		r = -errno;
	if (r == 0 && listen(fd, 128) < 0)
		r = -errno;
	if (r < 0) {
		sandy_error("cannot listen on '%s': %s", path, strerror(-r));
		return r;
	}
	return steal_fd(&fd);
}

int nsnet_proxy_start(const struct nsnet_proxy *spec, pid_t *pidp)
{
	cleanup_fd int lfd = listen_unix(spec->socket_path, spec->user);
	cleanup_fd int rfd = -1;

	if (lfd < 0)
		return lfd;
	rfd = open(spec->records_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
		   0600);
	if (rfd < 0) {
		int e = errno;
		sandy_error("cannot create '%s': %s", spec->records_path, strerror(e));
		return -e;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		sandy_error("cannot start the network proxy: %s", strerror(e));
		return -e;
	}
	if (pid > 0) {
		*pidp = pid;
		return 0;
	}
	/* The proxy: sandy's other descriptors (its session's lock above
	 * all) are not its to keep. */
	proc_reset_signals();
	signal(SIGPIPE, SIG_IGN);
	if (dup2(lfd, 3) < 0 || dup2(rfd, 4) < 0)
		_exit(SANDY_EXIT_FAILURE);
	close_from(5);
	const struct host_user *u = spec->user;
	if (u->via_sudo && (setgroups(0, NULL) < 0 || setgid(u->gid) < 0 || setuid(u->uid) < 0))
		_exit(SANDY_EXIT_FAILURE);
	/* After the uid change, which clears it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (getppid() != parent)
		_exit(0);
	struct proxy p = {
		.listen_fd = 3,
		.records_fd = 4,
		.session_id = spec->session_id,
		.allow_path = spec->allow_path,
		.upstreams = spec->upstreams,
	};
	pthread_mutex_init(&p.lock, NULL);
	allow_refresh(&p);
	proxy_main(&p);
}

void nsnet_proxy_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	proc_wait(pid);
}

/* The bridge's side of a connection: the proxy's socket. */
struct bridge_conn {
	const char *path;
	int fd;
};

/* The bridge's connections at once, which bound its threads and memory
 * (it runs outside the sandbox's RLIMIT_DATA, nslimits.h). */
static atomic_int bridge_active;

static void *bridge_thread(void *arg)
{
	struct bridge_conn c = *(struct bridge_conn *)arg;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	cleanup_fd int up = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	free(arg);
	memcpy(sa.sun_path, c.path, strlen(c.path) + 1);
	if (up >= 0 && connect(up, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    set_nonblock(up, true) == 0 && set_nonblock(c.fd, true) == 0)
		relay(c.fd, up);
	close(c.fd);
	atomic_fetch_sub(&bridge_active, 1);
	return NULL;
}

static _Noreturn void bridge_main(int lfd, const char *path)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* Its own session: the signals sandy hands the command's process
	 * group (Ctrl-C) are not for it. */
	setsid();
	signal(SIGPIPE, SIG_IGN);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
	}
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				sleep(1);
				continue;
			}
			_exit(SANDY_EXIT_FAILURE);
		}
		struct bridge_conn *c = malloc(sizeof(*c));
		if (!c || atomic_load(&bridge_active) >= MAX_CONNECTIONS) {
			free(c);
			close(fd);
			continue;
		}
		*c = (struct bridge_conn){path, fd};
		atomic_fetch_add(&bridge_active, 1);
		if (start_thread(bridge_thread, c) < 0) {
			atomic_fetch_sub(&bridge_active, 1);
			free(c);
			close(fd);
		}
	}
}

int nsnet_bridge_start(const char *socket_path)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	cleanup_fd int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char url[64];
	int r = 0;

	if (strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		r = -ENAMETOOLONG;
	if (r == 0 && (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		       listen(fd, 128) < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) < 0))
		r = -errno;
	if (r < 0) {
		sandy_error("cannot start the network bridge on 127.0.0.1: %s", strerror(-r));
		return r;
	}
	/* The relay's parent exits at once: the relay is the sandbox init's,
	 * not a child the command would find (and wait for). */
	pid_t pid = fork();
	if (pid == 0) {
		pid_t relay_pid = fork();
		if (relay_pid == 0)
			bridge_main(fd, socket_path);
		_exit(relay_pid < 0 ? SANDY_EXIT_FAILURE : 0);
	}
	if (pid < 0 || proc_wait(pid) != 0) {
		r = pid < 0 ? -errno : -ECHILD;
		sandy_error("cannot start the network bridge: %s", strerror(-r));
		return r;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
	static const char *const names[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
					    "https_proxy"};
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(names); i++)
		r = setenv(names[i], url, 1) < 0 ? -errno : 0;
	if (r == 0 &&
	    (setenv("NO_PROXY", NO_PROXY_LIST, 1) < 0 || setenv("no_proxy", NO_PROXY_LIST, 1) < 0))
		r = -errno;
	if (r < 0)
		sandy_error("cannot set the proxy variables: %s", strerror(-r));
	return r;
}

#else

int nsnet_proxy_start(const struct nsnet_proxy *spec, pid_t *pid)
{
	(void)spec;
	(void)pid;
	return -ENOTSUP;
}

void nsnet_proxy_stop(pid_t pid)
{
	(void)pid;
}

int nsnet_bridge_start(const char *socket_path)
{
	(void)socket_path;
	return -ENOTSUP;
}

#endif
