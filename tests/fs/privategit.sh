#!/usr/bin/env bash
# --private-git over a cloned repository: its objects are in pack files, as
# in every project that came from a clone (a repository made by commits
# alone has loose objects only). The daemon makes the private repository
# at mount and serves it: git through the mount reads the history, commits
# into the private repository, and the host's .git stays byte for byte as
# it was.
source "$SANDY_SRC/tests/lib.sh"

base=$(scratch)
up=$base/up src=$base/src mnt=$base/mnt store=$base/store
mkdir -p "$up" "$mnt"
g() { git -c user.email=t@example.org -c user.name=test -c init.defaultBranch=main "$@"; }
g -C "$up" init -q
for i in 1 2 3; do
	echo "version $i" >"$up/main.c"
	g -C "$up" add main.c
	g -C "$up" commit -qm "commit $i"
done
g clone -q "file://$up" "$src"
g -C "$src" gc -q
head=$(git -C "$src" rev-parse HEAD)
check "the clone's objects are all in pack files" \
	eval '[ -n "$(ls "$src/.git/objects/pack/"*.pack 2>/dev/null)" ] &&
		[ "$(git -C "$src" count-objects -v | sed -n "s/^count: //p")" = 0 ]'
# Every file of the host's .git, hashed.
host_git() { (cd "$src/.git" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
before=$(host_git)

if ! mount_foreground "$mnt" "$base/daemon.err" \
	"$SANDYFS" mount "${ALLOW_ALL[@]}" --store "$store" --private-git -f "$src" "$mnt"; then
	not_ok "the mount with --private-git comes up"
	diag "daemon: $(head -5 "$base/daemon.err")"
	done_testing
fi
ok "the mount with --private-git comes up"
check "the daemon is still running" kill -0 $FG_PID
check_eq "git through the mount reads HEAD from the packs" "$head" \
	"$(git -C "$mnt" rev-parse HEAD 2>&1)"
check_eq "git through the mount reads the history" 3 \
	"$(git -C "$mnt" rev-list --count HEAD 2>&1)"
check_eq "git through the mount sees a clean tree" "" "$(git -C "$mnt" status --porcelain 2>&1)"
echo "version 4" >"$mnt/main.c"
g -C "$mnt" commit -qam "commit 4" 2>"$base/commit.err"
check "a commit through the mount succeeds" test $? -eq 0
check_eq "... onto the clone's history" "$head" "$(git -C "$mnt" rev-parse HEAD~1 2>&1)"
check "... and git fsck through the mount is clean" git -C "$mnt" fsck --no-progress
check_eq "the host's .git is byte for byte as it was" "$before" "$(host_git)"
check_eq "the host's HEAD is still the clone's" "$head" "$(git -C "$src" rev-parse HEAD)"
check_eq "the file itself reached the host" "version 4" "$(cat "$src/main.c")"
"$SANDYFS" umount "$mnt"
wait $FG_PID
check_eq "the daemon exits with status 0" 0 $?
check "the daemon reported no error" eval '! grep -qi "error\|cannot" "$base/daemon.err"'
[ -s "$base/daemon.err" ] && diag "daemon stderr: $(head -c 3000 "$base/daemon.err")"
done_testing
