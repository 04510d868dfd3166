/* allow.c - see allow.h. */

#include "allow.h"
#include "session.h"
#include "runtime/gateway.h"
#include "world/egress.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>

int session_allow(const char *domain, const char *session_id)
{
	const char *why;
	cleanup_free char *rundir = NULL, *dir = NULL, *engine = NULL, *name = NULL;
	cleanup_free char *netdir = NULL, *lockpath = NULL, *lower = NULL, *kind = NULL;
	cleanup_strv struct strv allow = {0}, up = {0};
	int r;

	/* Checked before anything else looks at it. */
	if (egress_domain_check(domain, &why) < 0) {
		sandy_error("bad domain '%s': %s", domain, why);
		return SANDY_EXIT_FAILURE;
	}
	if (session_rundir(&rundir) < 0 ||
	    session_find_live(rundir, session_id, "allowlist", &dir) < 0)
		return SANDY_EXIT_FAILURE;
	netdir = sandy_asprintf("%s/net", dir);
	lockpath = sandy_asprintf("%s/allow.lock", netdir ? netdir : "");
	lower = strdup(domain);
	if (!netdir || !lockpath || !lower)
		return SANDY_EXIT_FAILURE;
	for (char *c = lower; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	/* One `sandy allow` at a time changes a session's list. */
	cleanup_fd int lock = open(lockpath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX) < 0) {
		sandy_error("cannot lock '%s': %s", lockpath, strerror(errno));
		return SANDY_EXIT_FAILURE;
	}
	r = session_read_key(dir, "allowlist", &kind);
	bool proxy = r == 0 && !strcmp(kind, "proxy");
	if (r == 0 && proxy)
		r = gateway_read_allow(netdir, &allow);
	if (r == 0 && !proxy)
		r = session_read_key(dir, "runtime", &engine);
	if (r == 0 && !proxy)
		r = session_read_key(dir, "gateway", &name);
	if (r == 0 && !proxy)
		r = gateway_read_lists(netdir, &allow, &up);
	if (r < 0) {
		sandy_error("cannot read the network settings of session '%s': %s", dir,
			    strerror(-r));
		return SANDY_EXIT_FAILURE;
	}
	for (size_t i = 0; i < allow.n; i++)
		if (!strcmp(allow.v[i], lower)) {
			sandy_note("'%s' is already allowed in session '%s'", lower,
				   dir + strlen(rundir) + 1);
			return 0;
		}
	if ((r = strv_push(&allow, lower)) < 0)
		return SANDY_EXIT_FAILURE;
	egress_dedup(&allow);
	/* The proxy reads the file again at its next request. */
	r = proxy ? gateway_write_allow(netdir, &allow) : gateway_write_lists(netdir, &allow, &up);
	if (r < 0) {
		sandy_error("cannot write the allowlist in '%s': %s", netdir, strerror(-r));
		return SANDY_EXIT_FAILURE;
	}
	if (!proxy) {
		cleanup_free char *errout = NULL;
		int status = gateway_reload(engine, name, &errout);
		if (status != 0) {
			sandy_error("cannot make the gateway '%s' reread its allowlist: %s", name,
				    status < 0		? strerror(-status)
				    : errout && *errout ? errout
							: "failed");
			return SANDY_EXIT_FAILURE;
		}
	}
	sandy_note("allowed '%s' in session '%s'", lower, dir + strlen(rundir) + 1);
	return 0;
}
