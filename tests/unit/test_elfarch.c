/* test_elfarch.c - whether a program runs on an engine's machine
 * (launcher/runtime/elfarch.c): the architectures' names as docker and podman give
 * them, ELF headers of each machine and of what must not pass (another
 * machine, 32-bit, big-endian, another system's ABI, an object file, a
 * truncated header, a script, a Mach-O program), and real files: this
 * test's own executable, which runs here, and a shell script. */
#include "launcher/runtime/elfarch.h"

#include "scratch.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

/* A little-endian 64-bit ELF header of TYPE for MACHINE, as Linux's
 * linker writes one (the bytes the check reads). */
static void header(unsigned char h[ELFARCH_HEADER_SIZE], unsigned type, unsigned machine)
{
	memset(h, 0, ELFARCH_HEADER_SIZE);
	memcpy(h, "\177ELF", 4);
	h[4] = 2; /* ELFCLASS64 */
	h[5] = 1; /* ELFDATA2LSB */
	h[6] = 1; /* EV_CURRENT */
	h[16] = type & 0xff;
	h[17] = type >> 8;
	h[18] = machine & 0xff;
	h[19] = machine >> 8;
}

static void test_names(void)
{
	ok_eq_long(elfarch_machine("x86_64"), 62, "docker's x86_64 is EM_X86_64");
	ok_eq_long(elfarch_machine("amd64"), 62, "podman's amd64 is EM_X86_64");
	ok_eq_long(elfarch_machine("aarch64"), 183, "docker's aarch64 is EM_AARCH64");
	ok_eq_long(elfarch_machine("arm64"), 183, "podman's arm64 is EM_AARCH64");
	ok_eq_long(elfarch_machine("riscv64"), 0, "an architecture not known here: 0");
	ok_eq_long(elfarch_machine(""), 0, "an empty name: 0");
	ok_eq_long(elfarch_machine(NULL), 0, "no name (the engine did not say): 0");
	ok_eq_long(elfarch_machine("X86_64"), 0, "names are as the engines print them");
}

static void test_headers(void)
{
	unsigned char h[ELFARCH_HEADER_SIZE];

	header(h, 3, 62);
	ok(elfarch_header_runs(h, sizeof(h), "x86_64"), "a PIE for x86-64 runs on x86_64");
	ok(elfarch_header_runs(h, sizeof(h), "amd64"), "... and on podman's amd64");
	ok(!elfarch_header_runs(h, sizeof(h), "aarch64"), "... not on aarch64");
	ok(!elfarch_header_runs(h, sizeof(h), NULL), "... nor on an engine that did not say");
	ok(!elfarch_header_runs(h, sizeof(h), "mips"), "... nor on one not known here");
	header(h, 2, 62);
	ok(elfarch_header_runs(h, sizeof(h), "x86_64"), "a non-PIE executable for x86-64 runs");
	header(h, 3, 183);
	ok(elfarch_header_runs(h, sizeof(h), "aarch64"), "a PIE for AArch64 runs on aarch64");
	ok(elfarch_header_runs(h, sizeof(h), "arm64"), "... and on podman's arm64");
	ok(!elfarch_header_runs(h, sizeof(h), "x86_64"), "... not on x86_64");

	header(h, 3, 62);
	h[7] = 3; /* ELFOSABI_GNU */
	ok(elfarch_header_runs(h, sizeof(h), "x86_64"), "the GNU/Linux ABI runs");
	h[7] = 9; /* ELFOSABI_FREEBSD */
	ok(!elfarch_header_runs(h, sizeof(h), "x86_64"), "FreeBSD's does not");

	header(h, 1, 62);
	ok(!elfarch_header_runs(h, sizeof(h), "x86_64"), "an object file (ET_REL) does not run");
	header(h, 4, 62);
	ok(!elfarch_header_runs(h, sizeof(h), "x86_64"), "a core file (ET_CORE) does not run");

	header(h, 3, 62);
	h[4] = 1; /* ELFCLASS32 */
	ok(!elfarch_header_runs(h, sizeof(h), "x86_64"), "a 32-bit header does not pass");
	header(h, 3, 62);
	h[5] = 2; /* ELFDATA2MSB */
	ok(!elfarch_header_runs(h, sizeof(h), "x86_64"), "a big-endian header does not pass");
	header(h, 3, 62);
	h[6] = 0;
	ok(!elfarch_header_runs(h, sizeof(h), "x86_64"), "an unknown ELF version does not pass");
	header(h, 3, 62);
	h[0] = 0;
	ok(!elfarch_header_runs(h, sizeof(h), "x86_64"), "no ELF magic: not a program of Linux");
	header(h, 3, 62);
	ok(!elfarch_header_runs(h, ELFARCH_HEADER_SIZE - 1, "x86_64"),
	   "a header cut before e_machine does not pass");
	ok(!elfarch_header_runs(h, 0, "x86_64"), "an empty file does not pass");

	/* A Mach-O executable for arm64 and x86-64: what a Mac's sandyfs is. */
	static const unsigned char macho[ELFARCH_HEADER_SIZE] = {0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0x00,
								 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
								 0x02, 0x00, 0x00, 0x00};
	ok(!elfarch_header_runs(macho, sizeof(macho), "aarch64"), "a Mach-O program does not run");
	ok(!elfarch_header_runs(macho, sizeof(macho), "x86_64"), "... on either machine");
}

static void test_files(void)
{
	struct utsname u;

	if (!ok(uname(&u) == 0, "uname"))
		return;
	/* The kernel's name is docker's: this test's executable runs here. */
	if (elfarch_machine(u.machine))
		ok_eq_long(elfarch_file_runs("/proc/self/exe", u.machine), 1,
			   "this test's own executable runs on this machine (%s)", u.machine);
	else
		ok_eq_long(elfarch_file_runs("/proc/self/exe", u.machine), 0,
			   "this machine (%s) is not one the check knows: not said to run",
			   u.machine);
	const char *other = !strcmp(u.machine, "x86_64") ? "aarch64" : "x86_64";
	ok_eq_long(elfarch_file_runs("/proc/self/exe", other), 0,
		   "... and not on the other machine (%s)", other);

	const char *dir = scratch_dir();
	char script[300], tiny[300], missing[300];
	snprintf(script, sizeof(script), "%s/script", dir);
	snprintf(tiny, sizeof(tiny), "%s/tiny", dir);
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	FILE *f = fopen(script, "w");
	if (f) {
		fputs("#!/bin/sh\nexec sandyfs \"$@\"\n", f);
		fclose(f);
	}
	f = fopen(tiny, "w");
	if (f) {
		fputs("\177ELF", f);
		fclose(f);
	}
	ok_eq_long(elfarch_file_runs(script, "x86_64"), 0, "a shell script is not one");
	ok_eq_long(elfarch_file_runs(tiny, "x86_64"), 0, "a file cut after the ELF magic is not");
	ok_eq_long(elfarch_file_runs(missing, "x86_64"), -ENOENT, "a missing file: -ENOENT");
	ok_eq_long(elfarch_file_runs(dir, "x86_64"), -EISDIR, "a directory: -EISDIR");
}

int main(void)
{
	test_names();
	test_headers();
	test_files();
	return tap_done();
}
