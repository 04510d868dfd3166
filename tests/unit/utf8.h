/* utf8.h - whether bytes are UTF-8, for the unit tests that check what
 * quote.c makes: written apart from it, so that it checks that code
 * rather than repeat it. */
#ifndef SANDY_TEST_UTF8_H
#define SANDY_TEST_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether LEN bytes at S are UTF-8 (RFC 3629: no overlong form, no
 * surrogate, nothing above U+10FFFF). */
static inline bool utf8_ok(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = s[i] < 0x80	       ? 1
			   : (s[i] >> 5) == 6  ? 2
			   : (s[i] >> 4) == 14 ? 3
			   : (s[i] >> 3) == 30 ? 4
					       : 0;
		if (n == 0 || i + n > len)
			return false;
		uint32_t cp = n == 1 ? s[i] : s[i] & (0x7f >> n);
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
		if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += n;
	}
	return true;
}

#endif
