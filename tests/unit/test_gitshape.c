/* test_gitshape.c - the shape of a git directory (fusefs/policy/gitshape.c):
 * which names are its parts, in every spelling a host folds to them, when
 * they complete it, and which names git reads commands from inside it. */
#include "policy/gitshape.h"
#include "tap.h"

#include <errno.h>
#include <string.h>

static unsigned part(const char *name)
{
	return sfs_gitdir_part(name, strlen(name));
}

static bool command(const char *name)
{
	return sfs_gitdir_command_name(name, strlen(name));
}

int main(void)
{
	ok(part("HEAD") == SFS_GITDIR_HEAD && part("head") == SFS_GITDIR_HEAD &&
		   part("HEAD.") == SFS_GITDIR_HEAD && part("HE\xe2\x80\x8c" "AD") == SFS_GITDIR_HEAD,
	   "HEAD, in any case, with a trailing dot or an HFS+ ignorable");
	ok(part("objects") == SFS_GITDIR_OBJECTS && part("Refs") == SFS_GITDIR_REFS &&
		   part("commondir") == SFS_GITDIR_COMMONDIR,
	   "objects, refs and commondir");
	ok(part("HEADS") == 0 && part("ref") == 0 && part("object") == 0 && part("") == 0,
	   "other names are no part");

	ok(!sfs_gitdir_complete(0) && !sfs_gitdir_complete(SFS_GITDIR_HEAD) &&
		   !sfs_gitdir_complete(SFS_GITDIR_HEAD | SFS_GITDIR_OBJECTS) &&
		   !sfs_gitdir_complete(SFS_GITDIR_OBJECTS | SFS_GITDIR_REFS) &&
		   !sfs_gitdir_complete(SFS_GITDIR_COMMONDIR | SFS_GITDIR_OBJECTS | SFS_GITDIR_REFS),
	   "no repository without HEAD, nor with HEAD and one of objects and refs");
	ok(sfs_gitdir_complete(SFS_GITDIR_HEAD | SFS_GITDIR_OBJECTS | SFS_GITDIR_REFS) &&
		   sfs_gitdir_complete(SFS_GITDIR_HEAD | SFS_GITDIR_COMMONDIR),
	   "HEAD with objects and refs, or with a commondir, is one");

	ok(command("config") && command("CONFIG") && command("config.worktree") &&
		   command("commondir") && command("hooks") && command("Hooks:x"),
	   "config, config.worktree, commondir and hooks are what git reads commands from");
	ok(!command("description") && !command("HEAD") && !command("objects") &&
		   !command("info") && !command("configs"),
	   "the rest of a git directory is not");

	struct sfs_decision d = {.allowed = true};
	sfs_gitdir_refuse(&d, true);
	ok(!d.allowed && d.err == EROFS && d.cls == SFS_CLASS_IMMUTABLE && d.rule &&
		   strstr(d.why, "complete"),
	   "the refusal of a completing name: immutable, EROFS, and why");
	sfs_gitdir_refuse(&d, false);
	ok(!d.allowed && d.err == EROFS && strstr(d.why, "config and hooks"),
	   "and of a change inside one");
	return tap_done();
}
