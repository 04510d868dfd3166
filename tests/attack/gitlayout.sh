#!/usr/bin/env bash
# The git layout that
# only libgit2 can tell, read at mount time. The repository keeps its gitdir
# inside a writable tree (git init --separate-git-dir: SOURCE/.git is a
# "gitdir:" file naming src/gitdir), sets core.hooksPath to src/githooks
# (absent, writable by the rules) and has a linked worktree at src/wt. None
# of these may change through the mount, whoever owns SOURCE: once owned by
# root (the daemon's own uid) and once by the test user (the daemon runs as
# root with --allow-other, as sandy runs it for a container). Every case
# checks the host side: a manifest of all names, modes and checksums.
source "$SANDY_SRC/tests/lib.sh"
source "$SANDY_SRC/tests/attack/repo.bash"

base=$(scratch)
owners=(root)
if ensure_test_user; then
	owners+=("$TEST_USER")
else
	echo "# skip SOURCE owned by the test user: cannot create user $TEST_USER"
fi

manifest() {
	(cd "$1" && find . -printf '%p %y %m %U:%G %s\n' | LC_ALL=C sort &&
		find . -type f -exec cksum {} + | LC_ALL=C sort -k3)
}

for owner in "${owners[@]}"; do
	d=$base/$owner src=$base/$owner/src mnt=$base/$owner/mnt
	mkdir -p "$mnt" "$src"
	if ! {
		printf '[package]\nname = "v"\nversion = "0.1.0"\n' >"$src/Cargo.toml" &&
			mkdir -p "$src/src" && echo 'fn main() {}' >"$src/src/main.rs" &&
			G init -q --separate-git-dir "$src/src/gitdir" "$src" &&
			G -C "$src" add -A && G -C "$src" commit -qm initial &&
			G -C "$src" config core.hooksPath src/githooks &&
			G -C "$src" worktree add -q -b wt "$src/src/wt" &&
			printf '#!/bin/sh\nexit 0\n' >"$src/src/gitdir/hooks/pre-commit"
	} >"$d/make.log" 2>&1; then
		not_ok "$owner: build the repository"
		sed 's/^/# /' "$d/make.log"
		continue
	fi
	chown -R "$owner:" "$src"
	if ! mount_policy --allow-other "$src" "$mnt" 2>"$d/mount.err"; then
		not_ok "$owner-owned: sandyfs mount --allow-other"
		continue
	fi
	[ -s "$d/mount.err" ] && sed "s/^/# $owner-owned: sandyfs says: /" "$d/mount.err"

	before=$(manifest "$src")
	# refused DESCRIPTION COMMAND...: COMMAND (run as root, through the
	# mount) fails with EROFS and the host manifest is unchanged.
	refused() {
		local desc=$1 out now
		shift
		out=$("$@" 2>&1)
		local rc=$?
		now=$(manifest "$src")
		if [ $rc -ne 0 ] && [[ $out == *"Read-only file system"* ]] && [ "$now" == "$before" ]; then
			ok "$owner-owned: $desc: EROFS, host unchanged"
		else
			not_ok "$owner-owned: $desc: EROFS, host unchanged (exit $rc)"
			diag "output: $(echo "$out" | tail -2)"
			diff <(echo "$before") <(echo "$now") | head -6 | sed 's/^/# /'
			before=$now
		fi
	}
	refused "append to the gitdir's config (src/gitdir/config)" \
		bash -c "printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >>'$mnt/src/gitdir/config'"
	refused "a hook in the gitdir (src/gitdir/hooks/post-checkout)" \
		bash -c "printf '#!/bin/sh\n' >'$mnt/src/gitdir/hooks/post-checkout'"
	refused "chmod +x of the gitdir's hook" chmod +x "$mnt/src/gitdir/hooks/pre-commit"
	refused "mv src/gitdir src/gd" mv -T "$mnt/src/gitdir" "$mnt/src/gd"
	refused "rm -r src/gitdir/info" rm -r "$mnt/src/gitdir/info"
	refused "mkdir of the absent core.hooksPath src/githooks" mkdir "$mnt/src/githooks"
	refused "a file at core.hooksPath src/githooks" sh -c "echo x >'$mnt/src/githooks'"
	refused "rewrite of SOURCE/.git (the gitdir: file)" \
		sh -c "echo 'gitdir: src/evil' >'$mnt/.git'"
	refused "rewrite of the worktree's src/wt/.git" \
		sh -c "echo 'gitdir: ../evil' >'$mnt/src/wt/.git'"
	refused "rm of the worktree's src/wt/.git" rm -f "$mnt/src/wt/.git"
	refused "mv src/wt (holding its .git)" mv -T "$mnt/src/wt" "$mnt/src/wt2"
	refused "ln -s to the gitdir" ln -s gitdir/config "$mnt/src/cfg"
	if echo '// edited' >>"$mnt/src/main.rs" && grep -q edited "$src/src/main.rs"; then
		ok "$owner-owned: a writable file beside them (control) takes an edit"
	else
		not_ok "$owner-owned: a writable file beside them (control) takes an edit"
	fi
	"$SANDYFS" umount "$mnt" >/dev/null 2>&1
	check "$owner-owned: sandyfs umount" wait_until 5 eval "! is_mounted '$mnt'"
done
done_testing
