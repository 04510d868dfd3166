/* elfarch.h - whether a program file runs on a container engine's machine:
 * a Linux ELF executable for its architecture, as the file's ELF header
 * says. `sandy build-image` copies this host's sandyfs into sandyfs's own
 * image only then, and builds it from its source in the image otherwise
 * (an engine in an arm64 VM, a Mac's sandyfs). No <elf.h>: the launcher
 * builds where there is none. */
#ifndef SANDY_ELFARCH_H
#define SANDY_ELFARCH_H

#include <stdbool.h>
#include <stddef.h>

/* The ELF header's bytes up to e_machine, all the check reads. */
#define ELFARCH_HEADER_SIZE 20

/* The ELF machine (e_machine) of an engine's architecture as docker
 * (`info --format {{.Architecture}}`: the kernel's name, x86_64, aarch64)
 * or podman (`{{.Host.Arch}}`: Go's, amd64, arm64) names it; 0 for one not
 * known here. */
unsigned elfarch_machine(const char *arch);

/* Whether the N bytes at HDR begin the ELF header of a Linux executable
 * (or a shared object: a position-independent executable is one) that a
 * machine of ARCH runs. */
bool elfarch_header_runs(const unsigned char *hdr, size_t n, const char *arch);

/* The same for the file at PATH: 1 yes, 0 no, -errno when it cannot be
 * read. */
int elfarch_file_runs(const char *path, const char *arch);

#endif
