#!/usr/bin/env bash
# What the host's own tools make of names the agent writes through the
# mount, with the shipped rules and detection: each attack is made through
# the mount, then the host tool that would run it is run on the host, and
# a marker the planted code would write must stay absent.
#
#  - spellings: "zz:x.pth" is a .pth file on Linux (NTFS would read the
#    stream x.pth of zz): refused in the user's own venv, and the venv's
#    python does not run it; the same for a .rake, .mk, .csproj (a detect
#    marker: the next mount's detection is unchanged) and .code-workspace;
#  - the shape of a git directory: the name that would complete HEAD +
#    objects/ + refs/ (or HEAD + commondir) is refused in a writable
#    directory and at the root of a project that is no work tree, and
#    `git status` there runs no fsmonitor; in a bare repository the
#    project already holds, its config and hooks are immutable;
#  - what the repository's git configuration reaches: a hook linked into
#    scripts/, an absent include.path target, a filter's program: refused,
#    and `git commit` / `git status` on the host run none of the agent's;
#  - make: a protected Makefile that includes *.d still lets the agent's
#    build write its dependency files (SECURITY.md says why they are not
#    protected), and make in the mount builds.
source "$SANDY_SRC/tests/lib.sh"

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
G() { git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main "$@"; }

base=$(scratch)
src=$base/src mnt=$base/mnt bare=$base/bare bmnt=$base/bmnt mark=$base/marks
mkdir -p "$src" "$mnt" "$bare" "$bmnt" "$mark"

# A C project (a Makefile at the root: the c rules are detected; src/,
# lib/ and tests/ are writable), a git work tree whose config reaches into
# the tree, with the user's own venv in env/ and a bare repository among
# its test fixtures.
if ! {
	G init -q "$src" &&
		mkdir -p "$src/src" "$src/lib/tasks" "$src/scripts" "$src/tests" "$src/tools" &&
		printf 'int main(void) { return 0; }\n' >"$src/src/main.c" &&
		printf 'all: src/main.o\n\tcc -o main src/main.o\nsrc/main.o: src/main.c\n\tcc -MMD -c -o $@ $<\n-include src/*.d\n' >"$src/Makefile" &&
		printf '#!/bin/sh\nexit 0\n' >"$src/scripts/pre-commit" && chmod +x "$src/scripts/pre-commit" &&
		printf '#!/bin/sh\ncat\n' >"$src/tools/clean.sh" && chmod +x "$src/tools/clean.sh" &&
		ln -s ../../scripts/pre-commit "$src/.git/hooks/pre-commit" &&
		G -C "$src" config include.path ../.gitconfig.local &&
		G -C "$src" config filter.f.clean tools/clean.sh &&
		python3 -m venv --without-pip "$src/env" &&
		G init -q --bare "$src/tests/fixture.git" &&
		G -C "$src" add -A && G -C "$src" commit -qm initial
} >"$base/make.log" 2>&1; then
	not_ok "build the project"
	sed 's/^/# /' "$base/make.log"
	done_testing
fi
site=$(echo "$src"/env/lib/python3*/site-packages)
site=${site#"$src/"}

if ! mount_policy "$src" "$mnt" 2>"$base/mount.err"; then
	not_ok "sandyfs mount with the shipped rules"
	sed 's/^/# /' "$base/mount.err"
	done_testing
fi

# refused DESCRIPTION HOSTPATH COMMAND...: COMMAND through the mount fails
# with EROFS and HOSTPATH stays as it was (absent, or the same bytes).
refused() {
	local desc=$1 host=$2 before="" out rc
	shift 2
	[ -e "$host" ] && before=$(cksum <"$host")
	out=$("$@" 2>&1)
	rc=$?
	local after=""
	[ -e "$host" ] && after=$(cksum <"$host")
	if [ $rc -ne 0 ] && [[ $out == *"Read-only file system"* ]] && [ "$after" == "$before" ]; then
		ok "$desc: EROFS, the host file unchanged"
	else
		not_ok "$desc: status $rc, host file ${after:-absent} (was ${before:-absent})"
		diag "$out"
	fi
}
write() { printf '%s\n' "$2" >"$1"; }

# --- spellings --------------------------------------------------------------
pth="import os; open('$mark/pth', 'w')"
refused "'zz:x.pth' in the user's venv" "$src/$site/zz:x.pth" write "$mnt/$site/zz:x.pth" "$pth"
refused "'zz\\x.pth' in the user's venv" "$src/$site/zz\\x.pth" write "$mnt/$site/zz\\x.pth" "$pth"
"$src/env/bin/python" -c pass
check "the venv's python ran no .pth of the agent's" test ! -e "$mark/pth"
refused "'lib/tasks/zz:x.rake'" "$src/lib/tasks/zz:x.rake" write "$mnt/lib/tasks/zz:x.rake" 'system("touch x")'
refused "'x:y.mk'" "$src/x:y.mk" write "$mnt/x:y.mk" '$(shell touch x)'
refused "'w:x.code-workspace'" "$src/w:x.code-workspace" write "$mnt/w:x.code-workspace" '{}'
refused "'src/x:y.csproj', a detect marker" "$src/src/x:y.csproj" write "$mnt/src/x:y.csproj" '<Project/>'
rules=$("$SANDYFS" rules "$src" 2>&1)
check "the next mount's detection still finds no .NET project" \
	grep -q 'dotnet.json (not detected' <<<"$rules"

# --- the shape of a git directory -------------------------------------------
check "mkdir src/objects src/refs through the mount" mkdir "$mnt/src/objects" "$mnt/src/refs"
refused "src/HEAD, which would make src/ a repository" "$src/src/HEAD" \
	write "$mnt/src/HEAD" 'ref: refs/heads/main'
check "a config for it is only a file in a directory git passes by" \
	write "$mnt/src/config" "$(printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = touch %s/fsmonitor' "$mark")"
refused "src/commondir beside a HEAD (the other way to the shape)" "$src/src/commondir" \
	sh -c "mkdir '$mnt/src/w' && echo 'ref: refs/heads/main' >'$mnt/src/w/HEAD' && echo ../.. >'$mnt/src/w/commondir'"
refused "mv of a directory to refs/ beside HEAD and objects/" "$src/src/w/refs" \
	sh -c "mkdir '$mnt/src/w/objects' '$mnt/src/w/r' && mv '$mnt/src/w/r' '$mnt/src/w/refs'"
refused "a symlink named HEAD" "$src/src/HEAD" ln -s refs/heads/main "$mnt/src/HEAD"
(cd "$src/src" && git status >/dev/null 2>&1)
check "git status in src/ on the host ran no fsmonitor" test ! -e "$mark/fsmonitor"
check "git on the host still finds the project's .git from src/" \
	test "$(cd "$src/src" && git rev-parse --absolute-git-dir 2>/dev/null)" == "$src/.git"

# The bare repository the project holds: its config and hooks are git's.
refused "the config of a bare repository in tests/" "$src/tests/fixture.git/config" \
	sh -c "printf '[core]\n\tfsmonitor = touch $mark/fixture\n' >>'$mnt/tests/fixture.git/config'"
refused "a hook in it" "$src/tests/fixture.git/hooks/post-checkout" \
	write "$mnt/tests/fixture.git/hooks/post-checkout" "touch $mark/fixture"
check "a file beside them in tests/ is written" write "$mnt/tests/fixture.git.md" notes
(cd "$src/tests/fixture.git" && git status >/dev/null 2>&1)
check "git in the bare repository on the host ran nothing of the agent's" test ! -e "$mark/fixture"

# At the root of a project that is no work tree.
if mkdir -p "$bare/docs" && printf 'x\n' >"$bare/docs/a.md" && mount_policy "$bare" "$bmnt" 2>"$base/bmount.err"; then
	check "mkdir objects refs at the root of a plain project" mkdir "$bmnt/objects" "$bmnt/refs"
	refused "HEAD at its root" "$bare/HEAD" write "$bmnt/HEAD" 'ref: refs/heads/main'
	(cd "$bare" && git status >/dev/null 2>&1)
	check "git on the host takes it for no repository" \
		sh -c "! (cd '$bare' && git rev-parse --git-dir >/dev/null 2>&1)"
else
	not_ok "mount the plain project"
	sed 's/^/# /' "$base/bmount.err"
fi

# --- what the repository's git configuration reaches ------------------------
refused "scripts/pre-commit, which .git/hooks/pre-commit links to" "$src/scripts/pre-commit" \
	write "$mnt/scripts/pre-commit" "$(printf '#!/bin/sh\ntouch %s/hook' "$mark")"
refused ".gitconfig.local, which include.path names (absent)" "$src/.gitconfig.local" \
	write "$mnt/.gitconfig.local" "$(printf '[core]\n\tfsmonitor = touch %s/include' "$mark")"
refused "tools/clean.sh, a filter's program" "$src/tools/clean.sh" \
	write "$mnt/tools/clean.sh" "$(printf '#!/bin/sh\ntouch %s/filter; cat' "$mark")"
check "the sibling scripts/other.sh is writable" write "$mnt/scripts/other.sh" 'echo hi'
why=$("$SANDYFS" explain "$src" .gitconfig.local 2>&1)
check "sandyfs explain names the setting that protects .gitconfig.local" \
	grep -q 'include.path in .*config includes this file' <<<"$why"
echo '/* a change */' >>"$src/src/main.c"
(cd "$src" && G commit -qam "on the host" && git status >/dev/null 2>&1)
check "git commit and git status on the host ran none of the agent's code" \
	sh -c "! ls '$mark' | grep -q ."

# --- make --------------------------------------------------------------------
if out=$(cd "$mnt" && make 2>&1) && [ -f "$src/src/main.d" ]; then
	ok "make in the mount builds, writing src/main.d beside the object"
else
	not_ok "make in the mount builds, writing src/main.d beside the object"
	diag "$out"
fi

done_testing
