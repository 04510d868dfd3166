/* err.h - the one way an error message leaves a function: the function
 * returns a negative errno and, when the caller gave it a place, fills
 * *ERR with a malloc'ed message in git's style (lower case, what failed
 * first, the subject quoted: "cannot open rule file 'x.json': ..."). The
 * caller prints it, prefixed with the program's name, or passes it on. */
#ifndef SANDY_COMMON_ERR_H
#define SANDY_COMMON_ERR_H

/* Replaces *ERR (when ERR is not NULL) with the formatted message and
 * returns -ERRNUM (ERRNUM is positive). Out of memory, *ERR is NULL. */
int err_set(char **err, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
