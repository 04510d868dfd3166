/* quote.c - see quote.h. */
#include "quote.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the UTF-8 sequence at S (LEN bytes left) and its code
 * point, or 0 when S does not start one: RFC 3629's table, so overlong
 * forms, surrogates and anything above U+10FFFF are not UTF-8. */
static size_t utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		*cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		*cp = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		*cp = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (i > 1 && (s[i] < 0x80 || s[i] > 0xbf))
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3f);
	}
	return n;
}

/* A code point a terminal acts on, or that reorders or hides the text
 * around it (see quote.h). */
static bool hides(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c ||
	       (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
	       (cp >= 0xe0000 && cp <= 0xe007f);
}

bool quote_needed(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		uint32_t cp;
		size_t n = utf8_seq(u + i, len - i, &cp);
		if (n == 0 || hides(cp) || cp == '"' || cp == '\\')
			return true;
		i += n;
	}
	return false;
}

static void put_escaped(FILE *f, unsigned char c)
{
	static const char letters[] = "abtnvfr";

	if (c == '"' || c == '\\')
		fprintf(f, "\\%c", c);
	else if (c >= '\a' && c <= '\r')
		fprintf(f, "\\%c", letters[c - '\a']);
	else
		fprintf(f, "\\%03o", c);
}

char *quote_mem(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	char *out = NULL;
	size_t size = 0;

	if (!quote_needed(s, len)) {
		out = malloc(len + 1);
		if (out) {
			memcpy(out, s, len);
			out[len] = '\0';
		}
		return out;
	}
	FILE *f = open_memstream(&out, &size);
	if (!f)
		return NULL;
	fputc('"', f);
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = utf8_seq(u + i, len - i, &cp);
		if (n == 0) {
			put_escaped(f, u[i++]);
		} else if (hides(cp) || cp == '"' || cp == '\\') {
			for (size_t k = 0; k < n; k++)
				put_escaped(f, u[i + k]);
			i += n;
		} else {
			fwrite(u + i, 1, n, f);
			i += n;
		}
	}
	fputc('"', f);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

char *quote_str(const char *s)
{
	return s ? quote_mem(s, strlen(s)) : strdup("");
}

int quote_json_add(cJSON *obj, const char *key, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len, bad = 0;
	uint32_t cp;

	if (!s)
		return 0;
	len = strlen(s);

	for (size_t i = 0, n; i < len; i += n ? n : 1) {
		n = utf8_seq(u + i, len - i, &cp);
		bad += n == 0;
	}
	if (bad == 0)
		return cJSON_AddStringToObject(obj, key, s) ? 0 : -ENOMEM;

	/* U+FFFD is three bytes where the stray byte was one. */
	size_t keylen = strlen(key);
	char *text = malloc(len + 2 * bad + 1), *hex = malloc(2 * len + 1),
	     *hexkey = malloc(keylen + sizeof("_hex"));
	int r = -ENOMEM;
	if (text && hex && hexkey) {
		size_t t = 0;
		for (size_t i = 0, n; i < len; i += n ? n : 1) {
			n = utf8_seq(u + i, len - i, &cp);
			if (n) {
				memcpy(text + t, u + i, n);
				t += n;
			} else {
				memcpy(text + t, "\xef\xbf\xbd", 3);
				t += 3;
			}
		}
		text[t] = '\0';
		for (size_t i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", u[i]);
		hex[2 * len] = '\0';
		snprintf(hexkey, keylen + sizeof("_hex"), "%s_hex", key);
		if (cJSON_AddStringToObject(obj, key, text) &&
		    cJSON_AddStringToObject(obj, hexkey, hex))
			r = 0;
	}
	free(text);
	free(hex);
	free(hexkey);
	return r;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int quote_json_get(const cJSON *obj, const char *key, char **out, size_t *len)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	char hexkey[256];

	*out = NULL;
	if (!cJSON_IsString(v))
		return -ENOENT;
	const cJSON *h = NULL;
	if ((size_t)snprintf(hexkey, sizeof(hexkey), "%s_hex", key) < sizeof(hexkey))
		h = cJSON_GetObjectItemCaseSensitive(obj, hexkey);
	if (!cJSON_IsString(h)) {
		*out = strdup(v->valuestring);
		if (len && *out)
			*len = strlen(*out);
		return *out ? 0 : -ENOMEM;
	}
	size_t n = strlen(h->valuestring);
	if (n % 2)
		return -EINVAL;
	char *buf = malloc(n / 2 + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n / 2; i++) {
		int a = hex_digit(h->valuestring[2 * i]), b = hex_digit(h->valuestring[2 * i + 1]);
		if (a < 0 || b < 0) {
			free(buf);
			return -EINVAL;
		}
		buf[i] = (char)(a << 4 | b);
	}
	buf[n / 2] = '\0';
	*out = buf;
	if (len)
		*len = n / 2;
	return 0;
}
