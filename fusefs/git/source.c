/* source.c - see source.h. */

#include "source.h"
#include "gitlayout.h"

#include "common/err.h"

#include <stdlib.h>
#include <string.h>

int sfs_source_policy(const struct sfs_source *s, struct sfs_policy **out, char **err)
{
	char *why = NULL;
	int r = sfs_policy_load(s->rules, s->path, out, &why);

	if (r < 0) {
		r = err_set(err, -r, "cannot load rules: %s", why ? why : strerror(-r));
		free(why);
		return r;
	}
	r = sfs_git_protect_layout(*out, s->path, &why);
	if (r < 0) {
		r = err_set(err, -r,
			    "%s; git's hooks directory cannot be protected, so nothing is mounted",
			    why ? why : strerror(-r));
		free(why);
		sfs_policy_free(*out);
		*out = NULL;
		return r;
	}
	free(why);
	sfs_policy_set_private_git(*out, s->private_git);
	return 0;
}
