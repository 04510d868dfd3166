/* doctor.h - `sandy doctor`: checks what a session with the same options
 * needs (FUSE, sandyfs, the container engine, the images, bubblewrap) and
 * reports each item on a line of its own, with the command that fixes a
 * problem. It asks the very checks a session makes (host.h, engine.h), so
 * its verdict is the session's. */
#ifndef SANDY_DOCTOR_H
#define SANDY_DOCTOR_H

#include "run.h"

/* Prints the report for a session with options O on stdout. Returns 0 when
 * the session would start, else SANDY_EXIT_FAILURE. */
int doctor_run(const struct sandy_opts *o);

#endif
