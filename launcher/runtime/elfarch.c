/* elfarch.c - see elfarch.h. */

#include "elfarch.h"

#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* The ELF header's fields read here (the System V ABI's numbers). */
#define EI_CLASS      4
#define EI_DATA	      5
#define EI_VERSION    6
#define EI_OSABI      7
#define ELFCLASS64    2
#define ELFDATA2LSB   1
#define EV_CURRENT    1
#define ELFOSABI_NONE 0
#define ELFOSABI_GNU  3
#define ET_EXEC	      2
#define ET_DYN	      3
#define EM_X86_64     62
#define EM_AARCH64    183

/* The architectures the engines sandy knows run on; the rest are not
 * guessed at: sandyfs is then built in the image. */
static const struct arch {
	const char *kernel, *go;
	unsigned machine;
} arches[] = {
	{"x86_64", "amd64", EM_X86_64},
	{"aarch64", "arm64", EM_AARCH64},
};

unsigned elfarch_machine(const char *arch)
{
	for (size_t i = 0; arch && i < ARRAY_SIZE(arches); i++)
		if (!strcmp(arch, arches[i].kernel) || !strcmp(arch, arches[i].go))
			return arches[i].machine;
	return 0;
}

bool elfarch_header_runs(const unsigned char *hdr, size_t n, const char *arch)
{
	unsigned machine = elfarch_machine(arch);

	if (!machine || n < ELFARCH_HEADER_SIZE || memcmp(hdr, "\177ELF", 4) != 0)
		return false;
	/* Both machines are 64-bit little-endian; so are the fields below. */
	if (hdr[EI_CLASS] != ELFCLASS64 || hdr[EI_DATA] != ELFDATA2LSB ||
	    hdr[EI_VERSION] != EV_CURRENT)
		return false;
	/* Linux's programs carry either; another system's (FreeBSD's) its own. */
	if (hdr[EI_OSABI] != ELFOSABI_NONE && hdr[EI_OSABI] != ELFOSABI_GNU)
		return false;
	unsigned type = hdr[16] | (unsigned)hdr[17] << 8;
	unsigned e_machine = hdr[18] | (unsigned)hdr[19] << 8;
	return (type == ET_EXEC || type == ET_DYN) && e_machine == machine;
}

int elfarch_file_runs(const char *path, const char *arch)
{
	unsigned char hdr[ELFARCH_HEADER_SIZE];
	cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;

	if (fd < 0)
		return -errno;
	while (got < sizeof(hdr)) {
		ssize_t k = read(fd, hdr + got, sizeof(hdr) - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return elfarch_header_runs(hdr, got, arch);
}
