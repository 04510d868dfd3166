/* audit.c - see audit.h. */
#include "audit.h"
#include "common/quote.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sfs_audit {
	pthread_mutex_t lock;
	int fd;
	struct sfs_audit_limits limits;
	double tokens;
	struct timespec last_refill;
	uint64_t suppressed; /* dropped since the last suppressed record */
	uint64_t written, suppressed_total;
};

int sfs_audit_open(const char *path, const struct sfs_audit_limits *limits, struct sfs_audit **out)
{
	struct sfs_audit *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
	if (a->fd < 0) {
		int e = errno;
		free(a);
		return -e;
	}
	pthread_mutex_init(&a->lock, NULL);
	a->limits = *limits;
	a->tokens = limits->burst;
	clock_gettime(CLOCK_MONOTONIC, &a->last_refill);
	*out = a;
	return 0;
}

static void iso_time(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

static const char *errno_name(int err)
{
	switch (err) {
	case EROFS:
		return "EROFS";
	case ENOENT:
		return "ENOENT";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case EXDEV:
		return "EXDEV";
	case ESTALE:
		return "ESTALE";
	default:
		return "EIO";
	}
}

/* One line, written with a single write(2) so that records from several
 * daemons appending to one file never interleave. Lock held. */
static void write_json(struct sfs_audit *a, cJSON *obj)
{
	char *text = obj ? cJSON_PrintUnformatted(obj) : NULL;

	if (text) {
		size_t len = strlen(text);
		text[len] = '\n';
		if (write(a->fd, text, len + 1) == (ssize_t)len + 1)
			a->written++;
		free(text);
	}
	cJSON_Delete(obj);
}

static void write_suppressed(struct sfs_audit *a)
{
	char now[40];
	cJSON *o = cJSON_CreateObject();

	iso_time(now, sizeof(now));
	if (o) {
		cJSON_AddStringToObject(o, "time", now);
		cJSON_AddNumberToObject(o, "suppressed", (double)a->suppressed);
	}
	write_json(a, o);
	a->suppressed = 0;
}

static void refill(struct sfs_audit *a)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	double dt = (double)(now.tv_sec - a->last_refill.tv_sec) +
		    (double)(now.tv_nsec - a->last_refill.tv_nsec) / 1e9;
	a->last_refill = now;
	a->tokens += dt * a->limits.rate;
	if (a->tokens > a->limits.burst)
		a->tokens = a->limits.burst;
}

void sfs_audit_denial(struct sfs_audit *a, const struct sfs_audit_record *r)
{
	char now[40];

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	refill(a);
	/* The suppressed record needs a token too, so a steady loop costs
	 * at most the configured rate in lines. */
	if (a->tokens < (a->suppressed ? 2.0 : 1.0)) {
		a->suppressed++;
		a->suppressed_total++;
		pthread_mutex_unlock(&a->lock);
		return;
	}
	if (a->suppressed) {
		write_suppressed(a);
		a->tokens -= 1.0;
	}
	a->tokens -= 1.0;
	iso_time(now, sizeof(now));
	/* Names come from the agent and need not be UTF-8: quote_json_add
	 * keeps the line JSON and the bytes recoverable (PATH_hex). */
	cJSON *o = cJSON_CreateObject();
	if (o) {
		cJSON_AddStringToObject(o, "time", now);
		quote_json_add(o, "op", r->op);
		quote_json_add(o, "path", r->path);
		if (r->target)
			quote_json_add(o, "target", r->target);
		quote_json_add(o, "class", r->cls);
		quote_json_add(o, "rule_file", r->rule_file ? r->rule_file : "");
		quote_json_add(o, "rule", r->rule ? r->rule : "");
		quote_json_add(o, "why", r->why ? r->why : "");
		cJSON_AddNumberToObject(o, "pid", r->pid);
		cJSON_AddNumberToObject(o, "uid", r->uid);
		cJSON_AddStringToObject(o, "errno", errno_name(r->err));
	}
	write_json(a, o);
	pthread_mutex_unlock(&a->lock);
}

void sfs_audit_counts(struct sfs_audit *a, uint64_t *written, uint64_t *suppressed)
{
	pthread_mutex_lock(&a->lock);
	*written = a->written;
	*suppressed = a->suppressed_total;
	pthread_mutex_unlock(&a->lock);
}

void sfs_audit_close(struct sfs_audit *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	if (a->suppressed)
		write_suppressed(a);
	pthread_mutex_unlock(&a->lock);
	close(a->fd);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
