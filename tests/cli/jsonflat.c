/*
 * jsonflat: a JSON checker for the shell tests, so they need neither jq nor
 * python. Reads one JSON document from stdin; exits 1 with a message when
 * it does not parse, else prints one line per scalar, "PATH=VALUE", with
 * PATH like [0].rule.file and strings raw (newline as \n, backslash as \\).
 *
 * usage: jsonflat < file.json
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_string(const char *s)
{
	for (; *s; s++) {
		if (*s == '\n')
			fputs("\\n", stdout);
		else if (*s == '\\')
			fputs("\\\\", stdout);
		else
			putchar(*s);
	}
}

static void flat(const cJSON *item, char *path, size_t len, size_t cap)
{
	if (cJSON_IsObject(item) || cJSON_IsArray(item)) {
		int i = 0;

		for (const cJSON *c = item->child; c; c = c->next, i++) {
			int n = cJSON_IsArray(item) ? snprintf(path + len, cap - len, "[%d]", i)
						    : snprintf(path + len, cap - len, "%s%s",
							       len ? "." : "", c->string);

			if (n < 0 || (size_t)n >= cap - len) {
				fprintf(stderr, "jsonflat: path too long\n");
				exit(1);
			}
			flat(c, path, len + (size_t)n, cap);
			path[len] = '\0';
		}
		return;
	}
	printf("%s=", path);
	if (cJSON_IsString(item))
		put_string(item->valuestring);
	else if (cJSON_IsNumber(item) && item->valuedouble == (double)(long long)item->valuedouble)
		printf("%lld", (long long)item->valuedouble);
	else if (cJSON_IsNumber(item))
		printf("%g", item->valuedouble);
	else if (cJSON_IsBool(item))
		fputs(cJSON_IsTrue(item) ? "true" : "false", stdout);
	else
		fputs("null", stdout);
	putchar('\n');
}

int main(void)
{
	size_t cap = 1 << 16, n = 0, r;
	char *buf = malloc(cap), path[4096] = "";
	const char *end = NULL;
	cJSON *root;

	while (buf && (r = fread(buf + n, 1, cap - n - 1, stdin)) > 0) {
		n += r;
		if (n + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf)
		return 1;
	buf[n] = '\0';
	root = cJSON_ParseWithLengthOpts(buf, n + 1, &end, 1);
	if (!root) {
		fprintf(stderr, "jsonflat: invalid JSON at byte %ld\n",
			end ? (long)(end - buf) : -1L);
		return 1;
	}
	flat(root, path, 0, sizeof(path));
	cJSON_Delete(root);
	free(buf);
	return 0;
}
