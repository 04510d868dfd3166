/*
 * test_rules: rule files to policy (fusefs/rules.c): the shipped files
 * load, every malformed case is rejected with file, exact line and reason
 * line and reason, extends and cycles, detection (at the root and below it,
 * with protections that do not depend on it), trust levels (release,
 * overlay files), and the sources of sfs_policy_load.
 */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "policy/policy.h"
#include "policy/rules.h"
#include "scratch.h"
#include "tap.h"

static const char *dir;

static void write_file(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void make_dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
}

static char *path_of(const char *rel)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, rel) < 0)
		exit(1);
	return p;
}

/* Loads TEXT as rule file "x.json" (after base when WITH_BASE); returns the error. */
static char *load_error(const char *text, enum sfs_trust trust, bool with_base, const char *shipped)
{
	struct sfs_loader *l = sfs_loader_new(shipped ? shipped : SANDY_SOURCE_RULES_DIR,
					      SANDY_SOURCE_OVERLAYS_DIR);
	struct sfs_policy *p = NULL;
	char *err = NULL;
	int r = 0;

	if (with_base)
		r = sfs_loader_add_type(l, "base", "test", &err);
	if (r == 0)
		r = sfs_loader_add_buffer(l, "x.json", text, strlen(text), trust, "test", &err);
	if (r == 0)
		r = sfs_loader_finish(l, &p, &err);
	sfs_policy_free(p);
	sfs_loader_free(l);
	if (r == 0) {
		free(err);
		return NULL;
	}
	return err ? err : strdup("(no message)");
}

struct errcase {
	const char *what;
	const char *text;
	enum sfs_trust trust;
	const char *want; /* the message must start with this */
};

static const struct errcase errcases[] = {
	{"syntax error (missing comma)", "{\n  \"write\": [\"a\"]\n  \"protect\": []\n}\n",
	 SFS_TRUST_USER, "x.json:3: syntax error near '\"protect\": []'"},
	{"syntax error (trailing comma)", "{\n\"write\": [\"a\",\n]}", SFS_TRUST_USER,
	 "x.json:3: syntax error"},
	{"syntax error (unterminated string)", "{\n\n\n\"write\": [\"abc\n]}\n", SFS_TRUST_USER,
	 "x.json:4: syntax error"},
	{"syntax error (unexpected end)", "{\n\"write\": [\n", SFS_TRUST_USER,
	 "x.json:3: syntax error: unexpected end of file"},
	{"syntax error (garbage after the object)", "{}\n}\n", SFS_TRUST_USER,
	 "x.json:2: syntax error"},
	{"empty file", "\n\n", SFS_TRUST_USER, "x.json:3: syntax error: empty file"},
	{"unknown key",
	 "{\n  \"name\": \"x\",\n\n  \"description\": \"d\",\n  \"write\": [],\n\n"
	 "  \"wirte\": [\"src/**\"]\n}\n",
	 SFS_TRUST_USER, "x.json:7: unknown key 'wirte'"},
	{"duplicate key", "{\n\"write\": [],\n\"hide\": [],\n\"write\": []}", SFS_TRUST_USER,
	 "x.json:4: duplicate key 'write'"},
	{"wrong type of a key", "{\n  \"write\": \"src/**\"\n}", SFS_TRUST_USER,
	 "x.json:2: wrong type for 'write': expected an array of globs"},
	{"wrong type of an element", "{\"write\": [\n  \"a\",\n  3\n]}", SFS_TRUST_USER,
	 "x.json:3: wrong type in 'write'"},
	{"wrong type of the top level", "[\n{}\n]", SFS_TRUST_USER,
	 "x.json:1: wrong type: a rule file is one JSON object"},
	{"wrong type of name", "{\n\"name\": 3}", SFS_TRUST_USER,
	 "x.json:2: wrong type for 'name'"},
	{"protect entry not an object", "{\"protect\": [\n\".vscode\"]}", SFS_TRUST_USER,
	 "x.json:2: wrong type in 'protect'"},
	{"protect without why", "{\"protect\": [\n\n  {\"path\": \"x\"}\n]}", SFS_TRUST_USER,
	 "x.json:3: 'protect' entry without 'why'"},
	{"protect with an empty why", "{\"protect\": [\n{\"path\": \"x\",\n \"why\": \"\"}]}",
	 SFS_TRUST_USER, "x.json:3: 'why' must not be empty"},
	{"unknown key in a protect entry",
	 "{\"protect\": [{\"path\": \"x\",\n \"why\": \"w\",\n \"teir\": 1}]}", SFS_TRUST_USER,
	 "x.json:3: unknown key 'teir' in a 'protect' entry"},
	{"bad tier", "{\"protect\": [{\"path\": \"x\", \"why\": \"w\",\n \"tier\": 3}]}",
	 SFS_TRUST_USER, "x.json:2: wrong value for 'tier'"},
	{"bad glob in write", "{\n\"write\": [\"ok/**\",\n\"[abc\"]}", SFS_TRUST_USER,
	 "x.json:3: bad glob '[abc' in 'write': unterminated bracket expression"},
	{"bad glob in protect", "{\"protect\": [\n{\"path\": \"foo.\", \"why\": \"w\"}]}",
	 SFS_TRUST_USER, "x.json:2: bad glob 'foo.' in 'protect'"},
	{"bad glob in hide", "{\"hide\": [\"a\",\n\"b//c\"]}", SFS_TRUST_USER,
	 "x.json:2: bad glob 'b//c' in 'hide': empty path component"},
	{"empty glob", "{\"write\": [\n\"\"]}", SFS_TRUST_USER,
	 "x.json:2: bad glob '' in 'write': empty pattern"},
	{"overlay of a glob", "{\"overlay\": [\n{\"path\": \"*.env\", \"file\": \"env-masked\"}]}",
	 SFS_TRUST_USER, "x.json:2: bad glob '*.env' in 'overlay'"},
	{"overlay of a missing file",
	 "{\"overlay\": [{\"path\": \".env\",\n \"file\": \"no-such-overlay\"}]}", SFS_TRUST_USER,
	 "x.json:2: overlay file '"},
	{"overlay without file", "{\"overlay\": [\n{\"path\": \".env\"}]}", SFS_TRUST_USER,
	 "x.json:2: 'overlay' entry without 'file'"},
	{"project overlay of a host path",
	 "{\"overlay\": [{\"path\": \"a\",\n \"file\": \"/etc/passwd\"}]}", SFS_TRUST_PROJECT,
	 "x.json:2: overlay file '/etc/passwd': only user-level rule files may name a host "
	 "path"},
	{"release in a project file", "{\n\"write\": [],\n\"release\": [\"Makefile\"]}",
	 SFS_TRUST_PROJECT,
	 "x.json:3: 'release' is only allowed in user-level rule files and on the command line"},
	{"release in a shipped file", "{\"release\": [\"Makefile\"]}", SFS_TRUST_SHIPPED,
	 "x.json:1: 'release' is only allowed"},
	{"generated trees in a project file", "{\n\"generated\": [\"**\"]}", SFS_TRUST_PROJECT,
	 "x.json:2: 'generated' is only allowed in shipped and user-level rule files"},
	{"unknown extends", "{\n\"extends\": [\"base\",\n\"nope\"]}", SFS_TRUST_USER,
	 "x.json:3: unknown rule set 'nope' in 'extends'"},
	{"bad extends name", "{\"extends\": [\"../base\"]}", SFS_TRUST_USER,
	 "x.json:1: bad rule set name '../base' in 'extends'"},
	{"escaped NUL", "{\"write\": [\n\"a\\u0000b\"]}", SFS_TRUST_USER,
	 "x.json:2: string contains a NUL character"},
	{"detect marker with a slash", "{\"detect\": [\n\"a/b\"]}", SFS_TRUST_USER,
	 "x.json:2: bad detect marker 'a/b'"},
};

static void test_errors(void)
{
	for (size_t i = 0; i < sizeof(errcases) / sizeof(errcases[0]); i++) {
		const struct errcase *c = &errcases[i];
		char *err = load_error(c->text, c->trust, false, NULL);

		if (!ok(err && !strncmp(err, c->want, strlen(c->want)), "%s: '%s'", c->what,
			c->want))
			printf("#   got '%s'\n", err ? err : "(accepted)");
		free(err);
	}
}

static void test_more_errors(void)
{
	char *big, *err;
	size_t n = 1100 * 1024;
	struct sfs_loader *l;

	/* a raw NUL byte */
	l = sfs_loader_new(NULL, NULL);
	err = NULL;
	ok(sfs_loader_add_buffer(l, "n.json", "{\n\"a\0\": 1}", 11, SFS_TRUST_USER, "t", &err) <
			   0 &&
		   err && !strcmp(err, "n.json:2: NUL byte in rule file"),
	   "a NUL byte: 'n.json:2: NUL byte in rule file'");
	free(err);
	sfs_loader_free(l);

	big = malloc(n + 1);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	l = sfs_loader_new(NULL, NULL);
	err = NULL;
	ok(sfs_loader_add_buffer(l, "big.json", big, n, SFS_TRUST_USER, "t", &err) == -EFBIG &&
		   err && strstr(err, "larger than 1 MiB"),
	   "a file over 1 MiB is refused");
	free(err);
	sfs_loader_free(l);
	free(big);

	err = load_error("\xef\xbb\xbf{\"write\": [\"a\"]}", SFS_TRUST_USER, false, NULL);
	ok(err == NULL, "a UTF-8 byte order mark is accepted");
	free(err);

	err = load_error("{\"protect\": [{\"path\": \"x\", \"why\": \"w\", \"tier\": 1}],\n"
			 " \"release\": [\"x\"]}",
			 SFS_TRUST_USER, false, NULL);
	ok(err == NULL, "a user file may release its own tier-1 entry");
	free(err);

	err = load_error("{\n\"release\": [\n\".vscode/\"]}", SFS_TRUST_USER, true, NULL);
	ok(err && strstr(err, "x.json:3: cannot release '.vscode/': it is always protected") &&
		   strstr(err, "base.json:"),
	   "releasing a tier-0 name names both files and lines");
	if (err)
		printf("#   %s\n", err);
	free(err);

	l = sfs_loader_new(SANDY_SOURCE_RULES_DIR, NULL);
	err = NULL;
	ok(sfs_loader_add_type(l, "nosuchtype", "t", &err) < 0 && err &&
		   !strncmp(err, "unknown project type 'nosuchtype'", 33),
	   "an unknown --type is named");
	free(err);
	err = NULL;
	ok(sfs_loader_add_type(l, "Bad/Name", "t", &err) < 0 && err &&
		   strstr(err, "bad project type"),
	   "a --type that is no name is refused");
	free(err);
	err = NULL;
	ok(sfs_loader_add_file(l, "/nonexistent/r.json", SFS_TRUST_USER, "t", &err) == -ENOENT &&
		   err &&
		   !strcmp(err, "cannot open rule file '/nonexistent/r.json': No such file or "
				"directory"),
	   "a missing --rules file: git-style message");
	free(err);
	sfs_loader_free(l);
}

static void test_extends(void)
{
	char *shipped = path_of("shipped"), *err;
	struct sfs_loader *l;
	struct sfs_policy *p = NULL;

	make_dir("shipped");
	write_file("shipped/a.json", "{\"extends\": [\"b\"], \"write\": [\"a/**\"]}");
	write_file("shipped/b.json", "{\n\n\"extends\": [\"c\", \"a\"]}");
	write_file("shipped/c.json", "{\"write\": [\"c/**\"]}");
	write_file("shipped/self.json", "{\"extends\": [\n\"self\"]}");
	write_file("shipped/d.json", "{\"extends\": [\"c\"], \"write\": [\"d/**\"]}");
	write_file("shipped/e.json", "{\"extends\": [\"d\", \"c\"]}");
	write_file("shipped/broken.json", "{\"write\": [\n\"[\"]}");
	write_file("shipped/f.json", "{\"extends\": [\"broken\"]}");

	l = sfs_loader_new(shipped, NULL);
	err = NULL;
	ok(sfs_loader_add_type(l, "a", "t", &err) == -ELOOP && err &&
		   strstr(err, "b.json:3: 'extends' cycle: 'a' -> 'b' -> 'a'"),
	   "an extends cycle is named with its file and line");
	if (err)
		printf("#   %s\n", err);
	free(err);
	sfs_loader_free(l);

	l = sfs_loader_new(shipped, NULL);
	err = NULL;
	ok(sfs_loader_add_type(l, "self", "t", &err) == -ELOOP && err &&
		   strstr(err, "self.json:2: 'extends' cycle: 'self' -> 'self'"),
	   "a file extending itself is a cycle");
	free(err);
	sfs_loader_free(l);

	l = sfs_loader_new(shipped, NULL);
	err = NULL;
	ok(sfs_loader_add_type(l, "f", "t", &err) < 0 && err &&
		   strstr(err, "broken.json:2: bad glob '['"),
	   "an error in an extended file names that file");
	free(err);
	sfs_loader_free(l);

	l = sfs_loader_new(shipped, NULL);
	err = NULL;
	if (ok(sfs_loader_add_type(l, "e", "t", &err) == 0 && sfs_loader_finish(l, &p, &err) == 0,
	       "a diamond (e -> d -> c, e -> c) loads")) {
		ok(sfs_policy_source_count(p) == 3, "each file is loaded once (%zu sources)",
		   sfs_policy_source_count(p));
		struct sfs_decision d;

		sfs_policy_decide(p, "c/x", SFS_OP_CREATE, &d);
		ok(d.allowed && strstr(d.rule_file, "c.json"), "rules of an extended file apply");
	}
	free(err);
	sfs_policy_free(p);
	sfs_loader_free(l);
	free(shipped);
}

/* base and every shipped project type. */
static void shipped_names(struct strv *names)
{
	char *err = NULL;

	setenv("SANDY_RULES_DIR", SANDY_SOURCE_RULES_DIR, 1);
	if (strv_push(names, "base") < 0 || sfs_shipped_types(names, &err) < 0)
		printf("# cannot list the shipped types: %s\n", err ? err : "?");
	free(err);
}

static void test_shipped(void)
{
	cleanup_strv struct strv list = {0};

	shipped_names(&list);
	ok(list.n > 20, "%zu shipped rule files", list.n);
	const char *const *types = (const char *const *)list.v;
	for (size_t i = 0; i < list.n; i++) {
		struct sfs_loader *l =
			sfs_loader_new(SANDY_SOURCE_RULES_DIR, SANDY_SOURCE_OVERLAYS_DIR);
		struct sfs_policy *p = NULL;
		char *err = NULL;
		int protect = 0, nowhy = 0, noline = 0;

		if (!ok(sfs_loader_add_type(l, types[i], "t", &err) == 0 &&
				sfs_loader_finish(l, &p, &err) == 0,
			"shipped rules/%s.json loads", types[i]))
			printf("#   %s\n", err ? err : "?");
		for (size_t k = 0; p && k < sfs_policy_rule_count(p); k++) {
			const struct sfs_rule *r = sfs_policy_rule(p, k);

			if (r->cls == SFS_CLASS_PROTECTED) {
				protect++;
				if (strlen(r->why) < 10)
					nowhy++;
			}
			if (r->line <= 0)
				noline++;
		}
		ok(p && protect > 0 && nowhy == 0 && noline == 0,
		   "rules/%s.json: %d protect entries, each with a why and a line", types[i],
		   protect);
		free(err);
		sfs_policy_free(p);
		sfs_loader_free(l);
	}
}

static void test_lines(void)
{
	const char *text = "{\n"
			   "  \"write\": [\"a/**\",\n"
			   "             \"b/**\"],\n"
			   "  \"protect\": [\n"
			   "    {\"why\": \"w\",\n"
			   "     \"path\": \"p\"},\n"
			   "    {\"path\": \"q\", \"why\": \"w\", \"tier\": 2}\n"
			   "  ],\n"
			   "  \"hide\": [\"h\", {\"path\": \"i\"}]\n"
			   "}\n";
	static const struct {
		const char *pattern, *key;
		int line, index;
	} want[] = {{"a/**", "write", 2, 0}, {"b/**", "write", 3, 1}, {"p", "protect", 6, 0},
		    {"q", "protect", 7, 1},  {"h", "hide", 9, 0},     {"i", "hide", 9, 1}};
	struct sfs_loader *l = sfs_loader_new(NULL, NULL);
	struct sfs_policy *p = NULL;
	char *err = NULL;

	if (!ok(sfs_loader_add_buffer(l, "lines.json", text, strlen(text), SFS_TRUST_USER, "t",
				      &err) == 0 &&
			sfs_loader_finish(l, &p, &err) == 0,
		"a multi-line rule file loads"))
		printf("#   %s\n", err ? err : "?");
	for (size_t i = 0; p && i < sizeof(want) / sizeof(want[0]); i++) {
		const struct sfs_rule *r = NULL;

		for (size_t k = 0; k < sfs_policy_rule_count(p); k++)
			if (!strcmp(sfs_policy_rule(p, k)->pattern, want[i].pattern))
				r = sfs_policy_rule(p, k);
		ok(r && r->line == want[i].line && r->index == want[i].index &&
			   !strcmp(r->key, want[i].key) && !strcmp(r->file, "lines.json"),
		   "%s '%s' is entry %d at line %d", want[i].key, want[i].pattern, want[i].index,
		   want[i].line);
	}
	free(err);
	sfs_policy_free(p);
	sfs_loader_free(l);
}

static const struct sfs_rule_source *find_source(const struct sfs_policy *p, const char *part)
{
	for (size_t i = 0; i < sfs_policy_source_count(p); i++)
		if (strstr(sfs_policy_source(p, i)->path, part))
			return sfs_policy_source(p, i);
	return NULL;
}

static void test_detect(void)
{
	char *src = path_of("proj");
	struct sfs_loader *l;
	struct sfs_policy *p = NULL;
	const struct sfs_rule_source *s;
	char *err = NULL;
	int fd;

	make_dir("proj");
	write_file("proj/package.json", "{}");
	write_file("proj/go.mod", "module x\n");
	write_file("proj/x.gemspec", "");
	fd = open(src, O_RDONLY | O_DIRECTORY);
	l = sfs_loader_new(SANDY_SOURCE_RULES_DIR, SANDY_SOURCE_OVERLAYS_DIR);
	ok(sfs_loader_add_type(l, "base", "always", &err) == 0 &&
		   sfs_loader_detect(l, fd, &err) == 0 && sfs_loader_finish(l, &p, &err) == 0,
	   "detection runs");
	s = p ? find_source(p, "/node.json") : NULL;
	ok(s && !strcmp(s->origin, "detected: package.json"), "package.json selects node");
	s = p ? find_source(p, "/go.json") : NULL;
	ok(s && !strcmp(s->origin, "detected: go.mod"), "go.mod selects go");
	s = p ? find_source(p, "/ruby.json") : NULL;
	ok(s && !strcmp(s->origin, "detected: *.gemspec"),
	   "a glob marker (*.gemspec) selects ruby");
	ok(p && !find_source(p, "/python.json") && !find_source(p, "/rust.json"),
	   "types without a marker are not included");
	close(fd);
	free(err);
	free(src);
	sfs_policy_free(p);
	sfs_loader_free(l);
}

static int load_with(const struct sfs_rule_opts *o, const char *src, struct sfs_policy **p,
		     char **err)
{
	*p = NULL;
	*err = NULL;
	return sfs_policy_load(o, src, p, err);
}

static enum sfs_class class_of(const struct sfs_policy *p, const char *path, struct sfs_decision *d)
{
	return sfs_policy_classify(p, path, d);
}

static void test_load(void)
{
	char *src = path_of("full"), *cfg = path_of("config"), *cmd = path_of("cmd.json"), *err;
	struct sfs_rule_opts o = {0};
	struct sfs_policy *p;
	struct sfs_decision d;
	const struct sfs_rule *released = NULL;

	make_dir("full");
	make_dir("full/.sandy");
	make_dir("config");
	make_dir("config/rules.d");
	write_file("full/Makefile", "all:\n");
	write_file("full/.sandy/rules.json",
		   "{\"write\": [\"proj/**\"],\n"
		   " \"protect\": [{\"path\": \"secret.txt\", \"why\": \"project says so\"}]}");
	write_file("config/rules.d/u.json",
		   "{\"release\": [\"Makefile\"], \"write\": [\"extra/**\"]}");
	write_file("config/rules.d/ignored.txt", "not json");
	setenv("SANDY_RULES_DIR", SANDY_SOURCE_RULES_DIR, 1);
	setenv("SANDY_OVERLAYS_DIR", SANDY_SOURCE_OVERLAYS_DIR, 1);
	setenv("SANDY_CONFIG_DIR", cfg, 1);

	if (ok(load_with(&o, src, &p, &err) == 0,
	       "SOURCE with detection, user and project rules")) {
		ok(find_source(p, "/c.json") && find_source(p, "u.json") &&
			   find_source(p, ".sandy/rules.json"),
		   "c detected, user rules.d and project file read");
		ok(class_of(p, "Makefile", &d) == SFS_CLASS_WRITABLE && d.rule &&
			   !strcmp(d.rule->pattern, "Makefile") && d.rule->released_by &&
			   strstr(d.why, "released"),
		   "a user release of Makefile makes it writable, by the released entry");
		ok(class_of(p, "sub/Makefile", &d) == SFS_CLASS_WRITABLE,
		   "an entry without a slash names the file at any depth, and so does its release");
		for (size_t i = 0; i < sfs_policy_rule_count(p); i++)
			if (sfs_policy_rule(p, i)->released_by)
				released = sfs_policy_rule(p, i);
		ok(released && !strcmp(released->pattern, "Makefile") &&
			   strstr(released->released_by, "u.json:1"),
		   "the released rule is listed with where it was released");
		ok(class_of(p, "sub/GNUmakefile", &d) == SFS_CLASS_PROTECTED,
		   "other c protections stay");
		ok(class_of(p, "extra/a", &d) == SFS_CLASS_WRITABLE, "user write globs apply");
		ok(class_of(p, "proj/a/b", &d) == SFS_CLASS_WRITABLE, "project write globs apply");
		ok(class_of(p, "secret.txt", &d) == SFS_CLASS_PROTECTED &&
			   !strcmp(d.why, "project says so"),
		   "project protections apply with their why");
		ok(class_of(p, ".sandy/rules.json", &d) == SFS_CLASS_PROTECTED,
		   "the project rule file itself is protected");
		sfs_policy_free(p);
	}
	free(err);

	sfs_rule_opts_parse(&o, 't', "python");
	if (ok(load_with(&o, src, &p, &err) == 0, "--type python")) {
		ok(find_source(p, "/python.json") && find_source(p, "/c.json") &&
			   !strcmp(find_source(p, "/c.json")->origin,
				   "not detected: its protections only") &&
			   class_of(p, "include/x.inc", &d) == SFS_CLASS_READONLY &&
			   class_of(p, "include/x.h", &d) == SFS_CLASS_WRITABLE &&
			   class_of(p, "Makefile", &d) == SFS_CLASS_WRITABLE,
		   "--type turns detection off: c gives its protections, no write globs (its "
		   "include/ stays read-only; a header is writable in every project), and the "
		   "user's release of Makefile still holds");
		ok(class_of(p, "setup.py", &d) == SFS_CLASS_PROTECTED, "python rules apply");
		sfs_policy_free(p);
	}
	free(err);
	sfs_rule_opts_free(&o);

	sfs_rule_opts_parse(&o, SFS_OPT_NO_DETECT, NULL);
	if (ok(load_with(&o, src, &p, &err) == 0, "--no-detect")) {
		ok(find_source(p, "/base.json") &&
			   !strcmp(find_source(p, "/c.json")->origin,
				   "not detected: its protections only") &&
			   class_of(p, "sub/GNUmakefile", &d) == SFS_CLASS_PROTECTED,
		   "base, and the protections of every type");
		sfs_policy_free(p);
	}
	free(err);

	write_file("cmd.json", "{\n\"release\": [\".envrc\"]}");
	sfs_rule_opts_parse(&o, 'r', cmd);
	ok(load_with(&o, src, &p, &err) < 0 && err && strstr(err, "cmd.json:2: cannot release"),
	   "--rules releasing a tier-0 name is an error");
	free(err);
	sfs_rule_opts_free(&o);

	write_file("config/rules.d/v.json", "{\"wirte\": []}");
	ok(load_with(&o, src, &p, &err) < 0 && err && strstr(err, "v.json:1: unknown key 'wirte'"),
	   "a broken user file is an error");
	free(err);
	{
		char *v = path_of("config/rules.d/v.json");

		unlink(v);
		free(v);
	}

	write_file("full/.sandy/rules.json", "{\"release\": [\"Makefile\"]}");
	ok(load_with(&o, src, &p, &err) < 0 && err &&
		   strstr(err, ".sandy/rules.json:1: 'release' is only allowed"),
	   "a project file may not release");
	free(err);

	{
		char *rj = path_of("full/.sandy/rules.json"),
		     *cj = path_of("config/rules.d/u.json");

		unlink(rj);
		if (symlink(cj, rj) == 0)
			ok(load_with(&o, src, &p, &err) < 0 && err && strstr(err, "is a symlink"),
			   "a symlinked project rule file is refused");
		else
			ok(false, "symlink for the project rule file");
		free(err);
		unlink(rj);
		free(rj);
		free(cj);
	}

	ok(load_with(&o, "/nonexistent/src", &p, &err) < 0 && err &&
		   !strcmp(err, "cannot open source directory '/nonexistent/src': No such file or "
				"directory"),
	   "a missing SOURCE: git-style message");
	free(err);

	sfs_rule_opts_parse(&o, 't', "nosuch");
	ok(load_with(&o, src, &p, &err) < 0 && err && strstr(err, "unknown project type 'nosuch'"),
	   "an unknown --type is an error");
	free(err);
	sfs_rule_opts_free(&o);
	unsetenv("SANDY_CONFIG_DIR");
	free(src);
	free(cfg);
	free(cmd);
}

/* Detection below the root, and protections that do not depend on it. */
static void test_detect_deep(void)
{
	char *src = path_of("mono");
	struct sfs_rule_opts o = {0};
	struct sfs_policy *p = NULL;
	struct sfs_decision d;
	const struct sfs_rule_source *s;
	char *err = NULL;

	make_dir("mono");
	make_dir("mono/crates");
	make_dir("mono/crates/foo");
	make_dir("mono/node_modules");
	make_dir("mono/node_modules/pkg");
	make_dir("mono/.hidden");
	make_dir("mono/a");
	make_dir("mono/a/b");
	make_dir("mono/a/b/c");
	make_dir("mono/a/b/c/d");
	make_dir("mono/a/b/c/d/e");
	write_file("mono/pyproject.toml", "[project]\n");
	write_file("mono/crates/foo/Cargo.toml", "[package]\n");
	write_file("mono/node_modules/pkg/package.json", "{}");
	write_file("mono/.hidden/go.mod", "module x\n");
	write_file("mono/a/b/c/d/meson.build", "project('x')\n");
	write_file("mono/a/b/c/d/e/Gemfile", "");
	setenv("SANDY_RULES_DIR", SANDY_SOURCE_RULES_DIR, 1);
	setenv("SANDY_OVERLAYS_DIR", SANDY_SOURCE_OVERLAYS_DIR, 1);
	setenv("SANDY_CONFIG_DIR", "/nonexistent", 1);
	if (!ok(load_with(&o, src, &p, &err) == 0,
		"a Python project with a crate in a subfolder")) {
		printf("#   %s\n", err ? err : "?");
		goto out;
	}
	s = find_source(p, "/rust.json");
	ok(s && !strcmp(s->origin, "detected: crates/foo/Cargo.toml"),
	   "rust is detected in crates/foo (origin '%s')", s ? s->origin : "none");
	ok(class_of(p, "crates/foo/build.rs", &d) == SFS_CLASS_PROTECTED &&
		   class_of(p, "crates/foo/.cargo/config.toml", &d) == SFS_CLASS_PROTECTED &&
		   class_of(p, "crates/foo/Cargo.toml", &d) == SFS_CLASS_PROTECTED,
	   "the crate's build.rs, .cargo/config.toml and Cargo.toml are protected");
	ok(class_of(p, "other/.cargo/config.toml", &d) == SFS_CLASS_PROTECTED &&
		   class_of(p, "build.rs", &d) == SFS_CLASS_PROTECTED,
	   "and so are those names anywhere else");
	ok(class_of(p, "crates/foo/src/lib.rs", &d) == SFS_CLASS_WRITABLE &&
		   class_of(p, "crates/foo/deep/src/x", &d) == SFS_CLASS_WRITABLE &&
		   class_of(p, "crates/foo/Cargo.lock", &d) == SFS_CLASS_WRITABLE,
	   "rust's write globs apply below crates/foo, anchored ones there");
	ok(class_of(p, "crates/foo/target/debug/x", &d) == SFS_CLASS_PRIVATE &&
		   class_of(p, "target/debug/x", &d) == SFS_CLASS_READONLY &&
		   class_of(p, "Cargo.lock", &d) == SFS_CLASS_READONLY &&
		   class_of(p, "benches/data.bin", &d) == SFS_CLASS_READONLY &&
		   class_of(p, "lib.rs", &d) == SFS_CLASS_WRITABLE,
	   "rust's target/ is private in the crate only, and its globs stay out of the root "
	   "(a .rs file is writable in every project)");
	ok(class_of(p, "src/pkg/mod.py", &d) == SFS_CLASS_WRITABLE &&
		   class_of(p, "x/__pycache__/m.pyc", &d) == SFS_CLASS_PRIVATE &&
		   class_of(p, ".tox/py/bin/python", &d) == SFS_CLASS_PRIVATE,
	   "python, detected at the root, applies everywhere");
	ok(!strcmp(find_source(p, "/node.json")->origin, "not detected: its protections only") &&
		   class_of(p, "package.json", &d) == SFS_CLASS_PROTECTED,
	   "a package.json inside node_modules detects nothing; node's protections apply");
	ok(!strcmp(find_source(p, "/go.json")->origin, "not detected: its protections only"),
	   "markers in hidden directories detect nothing");
	s = find_source(p, "/c.json");
	ok(s && !strcmp(s->origin, "detected: a/b/c/d/meson.build") &&
		   class_of(p, "a/b/c/d/builddir/Makefile", &d) == SFS_CLASS_WRITABLE &&
		   class_of(p, "builddir/Makefile", &d) == SFS_CLASS_PROTECTED,
	   "four levels down is still searched; generated trees apply there only");
	ok(!strcmp(find_source(p, "/ruby.json")->origin, "not detected: its protections only"),
	   "five levels down is not searched");
out:
	sfs_policy_free(p);
	free(err);
	free(src);
	unsetenv("SANDY_CONFIG_DIR");
}

/* What detection adds, the agent must not be able to plant: every detect
 * marker of every shipped type is protected, present or absent. */
static void test_markers_protected(void)
{
	cleanup_strv struct strv list = {0};
	char *src = path_of("empty");
	struct sfs_rule_opts o = {0};
	struct sfs_policy *p = NULL;
	char *err = NULL;
	int bad = 0, n = 0;

	make_dir("empty");
	setenv("SANDY_CONFIG_DIR", "/nonexistent", 1);
	if (!ok(load_with(&o, src, &p, &err) == 0, "an empty project loads"))
		goto out;
	shipped_names(&list);
	const char *const *types = (const char *const *)list.v;
	for (size_t i = 0; i < list.n; i++) {
		char *path = NULL, *text = NULL;
		size_t len = 0;
		FILE *f;

		if (asprintf(&path, "%s/%s.json", SANDY_SOURCE_RULES_DIR, types[i]) < 0)
			break;
		f = fopen(path, "r");
		cJSON *root = f && getdelim(&text, &len, '\0', f) >= 0 ? cJSON_Parse(text) : NULL;
		const cJSON *m;
		cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "detect"))
		{
			const char *name = m->valuestring;
			struct sfs_decision d;
			char full[200];

			/* "*.gemspec" as "x.gemspec", at the root and below */
			for (int depth = 0; depth < 2; depth++) {
				snprintf(full, sizeof(full), "%s%s%s", depth ? "sub/dir/" : "",
					 name[0] == '*' ? "x" : "",
					 name[0] == '*' ? name + 1 : name);
				n++;
				/* A private marker (Terraform's .terraform/) is never
				 * in SOURCE: what the agent makes there is in the store. */
				enum sfs_class c = class_of(p, full, &d);
				if (c != SFS_CLASS_PROTECTED && c != SFS_CLASS_PRIVATE && bad++ < 5)
					printf("#   %s marker '%s' is %s\n", types[i], full,
					       sfs_class_name(d.cls));
			}
		}
		cJSON_Delete(root);
		if (f)
			fclose(f);
		free(text);
		free(path);
	}
	ok(bad == 0 && n > 150,
	   "all %d detect markers (at the root and below) are protected, or private", n);
out:
	sfs_policy_free(p);
	free(err);
	free(src);
	unsetenv("SANDY_CONFIG_DIR");
}

static void test_new_keys(void)
{
	char *err;

	err = load_error("{\"owned\": \"no\"}", SFS_TRUST_USER, false, NULL);
	ok(err && strstr(err, "x.json:1: wrong type for 'owned': expected true or false"),
	   "'owned' must be a boolean");
	free(err);
	err = load_error("{\"private\": [{\"path\": \"x/\", \"wy\": \"y\"}]}", SFS_TRUST_USER,
			 false, NULL);
	ok(err && strstr(err, "unknown key 'wy' in a 'private' entry"),
	   "a 'private' entry with an unknown key is an error");
	err = (free(err), load_error("{\"private\": [\"[x\"]}", SFS_TRUST_USER, false, NULL));
	ok(err && strstr(err, "bad glob '[x' in 'private'"), "a bad 'private' glob is an error");
	err = (free(err), load_error("{\"generated\": [7]}", SFS_TRUST_USER, false, NULL));
	ok(err && strstr(err, "wrong type in 'generated': expected a glob string"),
	   "'generated' takes glob strings");
	err = (free(err), load_error("{\"private\": [{\"path\": \"x/\", \"except\": [\"y\"]}]}",
				     SFS_TRUST_USER, false, NULL));
	ok(err && strstr(err, "unknown key 'except' in a 'private' entry"),
	   "'except' belongs to hide entries alone");
	err = (free(err), load_error("{\"hide\": [{\"path\": \"x*\", \"except\": [7]}]}",
				     SFS_TRUST_USER, false, NULL));
	ok(err && strstr(err, "wrong type in 'except' of 'hide': expected a glob"),
	   "'except' takes globs");
	err = (free(err), load_error("{\"hide\": [{\"path\": \"x*\", \"except\": [\"[y\"]}]}",
				     SFS_TRUST_USER, false, NULL));
	ok(err && strstr(err, "bad glob '[y' in 'hide'"), "a bad 'except' glob is an error");
	free(err);
}

/* A hide entry's exceptions stay visible, in every spelling the entry
 * would match; what else the entry matches stays hidden, and so does what
 * another entry hides. */
static void test_hide_except(void)
{
	struct sfs_policy *p = NULL;
	struct sfs_decision d;
	char *err = NULL;
	struct sfs_loader *l = sfs_loader_new(NULL, NULL);
	static const char text[] =
		"{\"hide\": [{\"path\": \".env.*\", \"except\": [\".env.example\", \".env.s*\"]},\n"
		"  \".env.secret\"]}";

	if (!ok(l && sfs_loader_add_buffer(l, "h.json", text, strlen(text), SFS_TRUST_USER,
					   "test", &err) == 0 &&
			sfs_loader_finish(l, &p, &err) == 0,
		"a hide entry with exceptions loads")) {
		printf("#   %s\n", err ? err : "?");
		sfs_loader_free(l);
		free(err);
		return;
	}
	ok(class_of(p, ".env.local", &d) == SFS_CLASS_HIDDEN && !strcmp(d.rule->pattern, ".env.*"),
	   "what the entry matches is hidden");
	ok(class_of(p, ".env.example", &d) != SFS_CLASS_HIDDEN &&
		   class_of(p, "a/b/.env.example", &d) != SFS_CLASS_HIDDEN &&
		   class_of(p, ".env.sample", &d) != SFS_CLASS_HIDDEN,
	   "its exceptions are not, at any depth");
	ok(class_of(p, ".ENV.EXAMPLE", &d) != SFS_CLASS_HIDDEN &&
		   class_of(p, ".env.example.", &d) != SFS_CLASS_HIDDEN,
	   "in the spellings the entry would match them by");
	ok(class_of(p, ".env.secret", &d) == SFS_CLASS_HIDDEN,
	   "an exception of one entry does not show what another hides");
	ok(class_of(p, ".env.example/x", &d) != SFS_CLASS_HIDDEN,
	   "below an exception, nothing is hidden by the entry");
	sfs_policy_free(p);
	sfs_loader_free(l);
	free(err);
}

static void test_opts(void)
{
	struct sfs_rule_opts o = {0};

	ok(sfs_rule_opts_parse(&o, 't', "node") == 1 && sfs_rule_opts_parse(&o, 't', "go") == 1 &&
		   sfs_rule_opts_parse(&o, 'r', "x.json") == 1 &&
		   sfs_rule_opts_parse(&o, SFS_OPT_NO_DETECT, NULL) == 1 &&
		   sfs_rule_opts_parse(&o, 'f', NULL) == 0,
	   "rule options are consumed, others are not");
	ok(o.types.n == 2 && !strcmp(o.types.v[1], "go") && o.files.n == 1 && o.no_detect,
	   "rule options are recorded in order");
	sfs_rule_opts_free(&o);
	ok(o.types.n == 0 && !o.types.v, "rule options free");
}

/* A release must name an entry as written; one for a single project lives
 * in the user's configuration ("projects"); a released directory entry
 * makes what is below it writable, mkdir included. */
static void test_release_kinds(void)
{
	char *src = path_of("rel"), *other = path_of("rel-other"), *cfg = path_of("relcfg"),
	     *err = NULL, *text = NULL;
	struct sfs_rule_opts o = {0};
	struct sfs_policy *p;
	struct sfs_decision d;

	make_dir("rel");
	make_dir("rel-other");
	make_dir("relcfg");
	make_dir("relcfg/rules.d");
	setenv("SANDY_CONFIG_DIR", cfg, 1);

	write_file("relcfg/rules.d/w.json", "{\"release\": [\".github/workflows/\"]}");
	ok(load_with(&o, src, &p, &err) < 0 && err &&
		   strstr(err, "w.json:1: cannot release '.github/workflows/': no protect entry is "
			       "written so; the nearest is '**/.github/workflows/' (") &&
		   strstr(err, "base.json:"),
	   "a release spelled otherwise than its entry is an error that names the entry");
	free(err);
	err = NULL;

	write_file("relcfg/rules.d/w.json", "{\"release\": [\"Makefle\"]}");
	ok(load_with(&o, src, &p, &err) < 0 && err && strstr(err, "the nearest is 'Makefile'"),
	   "a misspelt release names the entry it is nearest");
	free(err);
	err = NULL;

	write_file("relcfg/rules.d/w.json", "{\"release\": [\"no-such-thing-at-all.conf\"]}");
	ok(load_with(&o, src, &p, &err) < 0 && err &&
		   strstr(err, "cannot release 'no-such-thing-at-all.conf': no protect entry is "
			       "written so (see"),
	   "a release near no entry says where to look");
	free(err);
	err = NULL;

	if (asprintf(&text, "{\"projects\": [\"%s\"],\n \"release\": [\"**/.github/workflows/\"]}",
		     src) < 0)
		abort();
	write_file("relcfg/rules.d/w.json", text);
	free(text);
	if (ok(load_with(&o, src, &p, &err) == 0, "a release for one project loads")) {
		ok(class_of(p, ".github/workflows/ci", &d) == SFS_CLASS_WRITABLE && d.rule &&
			   !strcmp(d.rule->pattern, "**/.github/workflows/"),
		   "the released directory entry makes a file below it writable");
		ok(sfs_policy_write_possible_below(p, ".github") &&
			   sfs_policy_write_possible_below(p, ".github/workflows"),
		   "and the directories on the way may be made");
		ok(class_of(p, ".github/CODEOWNERS", &d) != SFS_CLASS_WRITABLE,
		   "beside it nothing changes");
		sfs_policy_free(p);
	}
	free(err);
	err = NULL;
	if (ok(load_with(&o, other, &p, &err) == 0, "another project loads the same rules.d")) {
		ok(class_of(p, ".github/workflows/ci", &d) == SFS_CLASS_PROTECTED,
		   "where the file names another project, its release does not apply");
		sfs_policy_free(p);
	}
	free(err);
	err = NULL;

	write_file("relcfg/rules.d/w.json", "{\"projects\": [\"rel\"]}");
	ok(load_with(&o, src, &p, &err) < 0 && err && strstr(err, "expected an absolute path"),
	   "a project is named by its absolute path");
	free(err);
	err = NULL;
	write_file("rel/.sandy-x", "");
	make_dir("rel/.sandy");
	write_file("rel/.sandy/rules.json", "{\"projects\": [\"/x\"]}");
	write_file("relcfg/rules.d/w.json", "{}");
	ok(load_with(&o, src, &p, &err) < 0 && err &&
		   strstr(err, "'projects' is only allowed in user-level rule files"),
	   "a project's own rule file cannot say which projects it is for");
	free(err);
	sfs_rule_opts_free(&o);
	free(src);
	free(other);
	free(cfg);
}

int main(void)
{
	dir = scratch_dir();
	test_errors();
	test_more_errors();
	test_extends();
	test_shipped();
	test_lines();
	test_detect();
	test_detect_deep();
	test_markers_protected();
	test_new_keys();
	test_hide_except();
	test_load();
	test_release_kinds();
	test_opts();
	return tap_done();
}
