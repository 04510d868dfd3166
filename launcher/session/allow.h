/* allow.h - `sandy allow`: a domain added to a running session's
 * allowlist, found among the sessions of the user's runtime directory. */
#ifndef SANDY_ALLOW_H
#define SANDY_ALLOW_H

/* Checks DOMAIN, finds the running session (SESSION_ID, or the only one
 * with an allowlist), adds DOMAIN to its allowlist and has its resolver
 * reread it (a proxy rereads it by itself). Exit status for sandy. */
int session_allow(const char *domain, const char *session_id);

#endif
