#!/usr/bin/env bash
# Coherence: with the kernel's caches warm
# (every affected path read, stat'ed and listed through the mount first), a
# change made on the host in SOURCE (edit, create, delete, rename, chmod, a
# git checkout of another branch) is visible through the mount within one
# second. Each latency is measured and reported.
source "$SANDY_SRC/tests/lib.sh"

LIMIT_MS=1000 # what the spec promises
WAIT_MS=5000  # how long to keep looking, to report the latency when late

base=$(scratch)
src=$base/src mnt=$base/mnt
mkdir -p "$src" "$mnt"

# --- conditions, all through the mount -------------------------------------
content_is() { [ "$(cat "$mnt/$1" 2>/dev/null)" == "$2" ]; }
size_is() { [ "$(stat -c %s "$mnt/$1" 2>/dev/null)" == "$2" ]; }
mode_is() { [ "$(stat -c %a "$mnt/$1" 2>/dev/null)" == "$2" ]; }
listed() { ls -a "$mnt/$1" >"$base/ls.out" 2>/dev/null && grep -qxF -- "$2" "$base/ls.out"; }
not_listed() { ls -a "$mnt/$1" >"$base/ls.out" 2>/dev/null && ! grep -qxF -- "$2" "$base/ls.out"; }
exists() { test -e "$mnt/$1"; }
absent() { ! test -e "$mnt/$1" && ! test -L "$mnt/$1"; }
is_dir() { test -d "$mnt/$1"; }
all() { # all 'COND ARGS' 'COND ARGS' ...: every condition holds
	local c
	for c in "$@"; do eval "$c" || return 1; done
}
# warm PATH...: read, stat and list each path (and its directory) through
# the mount, so the kernel caches entries, attributes, pages and listings.
warm() {
	local p
	for p in "$@"; do
		stat "$mnt/$p" >/dev/null 2>&1
		if [ -d "$mnt/$p" ]; then
			ls -la "$mnt/$p" >/dev/null 2>&1
		else
			cat "$mnt/$p" >/dev/null 2>&1
		fi
		ls -la "$(dirname "$mnt/$p")" >/dev/null 2>&1
	done
}
# visible DESCRIPTION CONDITION...: the host change just made shows within
# LIMIT_MS; all CONDITIONs (strings for `all`) must hold.
visible() {
	local desc=$1
	shift
	if poll_ms $WAIT_MS all "$@"; then
		diag "$desc: visible after $POLL_MS ms"
		check "$desc: visible through the mount within 1 s ($POLL_MS ms)" test $POLL_MS -le $LIMIT_MS
	else
		not_ok "$desc: visible through the mount within 1 s (not after $WAIT_MS ms)"
		local c
		for c in "$@"; do eval "$c" || diag "still false: $c"; done
	fi
}

# --- the tree ---------------------------------------------------------------
mkdir -p "$src/dir/sub" "$src/olddir/inner"
printf 'abcdefgh\n' >"$src/same"
printf 'short\n' >"$src/grow"
printf 'a rather longer line of text\n' >"$src/shrink"
printf 'before\n' >"$src/replaced"
printf 'line1\n' >"$src/appended"
printf 'doomed\n' >"$src/dir/doomed"
mkdir -p "$src/doomeddir/a/b" && printf 'x\n' >"$src/doomeddir/a/b/f"
printf 'moving\n' >"$src/dir/oldname"
printf 'in the old dir\n' >"$src/olddir/inner/file"
printf '#!/bin/sh\n' >"$src/script" && chmod 644 "$src/script"
printf 'was a file\n' >"$src/becomes_dir"

if ! mount_sandyfs "$src" "$mnt"; then
	not_ok "mount"
	done_testing
fi
ok "mount"

# In-place edits (same inode).
warm same grow shrink appended
printf 'ABCDEFGH\n' >"$src/same"
visible "edit in place, same length" "content_is same ABCDEFGH"

printf 'now a good deal longer than before\n' >"$src/grow"
visible "edit in place, longer" "content_is grow 'now a good deal longer than before'" "size_is grow 35"

printf 'tiny\n' >"$src/shrink"
visible "edit in place, shorter" "content_is shrink tiny" "size_is shrink 5"

printf 'line2\n' >>"$src/appended"
visible "append" "size_is appended 12" "content_is appended $'line1\nline2'"

# An editor's save: write a new file and rename it over the old one.
warm replaced
printf 'after the save\n' >"$src/.replaced.tmp" && mv "$src/.replaced.tmp" "$src/replaced"
visible "edit by rename over the file" "content_is replaced 'after the save'"

# Create, in a directory whose listing is cached, after a failed lookup of
# the same name (a cached negative entry).
warm dir dir/newfile
printf 'fresh\n' >"$src/dir/newfile"
visible "create a file" "exists dir/newfile" "listed dir newfile" "content_is dir/newfile fresh"

warm dir/newdir
mkdir "$src/dir/newdir" && printf 'deep\n' >"$src/dir/newdir/f"
visible "create a directory with a file" "is_dir dir/newdir" "listed dir newdir" "content_is dir/newdir/f deep"

# Delete.
warm dir/doomed
rm "$src/dir/doomed"
visible "delete a file" "absent dir/doomed" "not_listed dir doomed"

warm doomeddir doomeddir/a doomeddir/a/b doomeddir/a/b/f
rm -r "$src/doomeddir"
visible "delete a directory tree" "absent doomeddir/a/b/f" "absent doomeddir" "not_listed . doomeddir"

# Rename.
warm dir/oldname dir/newname
mv "$src/dir/oldname" "$src/dir/newname"
visible "rename a file" "absent dir/oldname" "content_is dir/newname moving" \
	"listed dir newname" "not_listed dir oldname"

warm olddir olddir/inner olddir/inner/file newdir
mv "$src/olddir" "$src/newdir"
visible "rename a directory" "absent olddir" "content_is newdir/inner/file 'in the old dir'" \
	"listed . newdir" "not_listed . olddir"

# Metadata and type changes.
warm script
chmod 755 "$src/script"
visible "chmod" "mode_is script 755"

warm becomes_dir
rm "$src/becomes_dir" && mkdir "$src/becomes_dir" && printf 'now inside\n' >"$src/becomes_dir/f"
visible "a file replaced by a directory" "is_dir becomes_dir" "content_is becomes_dir/f 'now inside'"

# A file replaced on the host (written aside, renamed over it, as git does
# with .git/index) and opened through the mount at once, before the daemon
# has heard of it: the open finds the new file, and fstat and read work
# (cat does both). 50 times, as fast as the shell goes.
printf 'generation 0\n' >"$src/replaced"
warm replaced
bad=0
for i in $(seq 1 50); do
	printf 'generation %d\n' "$i" >"$src/replaced.tmp" && mv "$src/replaced.tmp" "$src/replaced"
	got=$(cat "$mnt/replaced" 2>&1)
	[ "$got" == "generation $i" ] || { bad=$((bad + 1)); last=$got; }
done
check_eq "a file replaced on the host and opened at once reads whole, 50 times${last:+ (last: $last)}" 0 $bad

# --- git checkout -------------------------------------------------------------
repo=$src/repo
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$repo" -c user.name=sandy -c user.email=sandy@example.invalid -c advice.detachedHead=false "$@"; }
mkdir -p "$repo"
g init -q -b main
mkdir -p "$repo/src" "$repo/old"
printf 'int main(void) { return 0; }\n' >"$repo/src/main.c"
printf 'version 1\n' >"$repo/VERSION"
printf 'unchanged\n' >"$repo/README"
printf 'only on main\n' >"$repo/old/legacy.txt"
printf 'removed on feature\n' >"$repo/removed.txt"
g add -A && g commit -q -m main
main_head=$(g rev-parse HEAD)
g checkout -q -b feature
printf 'int main(void) { return 42; }\n' >"$repo/src/main.c" # same length
printf 'version 2, much longer\n' >"$repo/VERSION"             # other length
git -C "$repo" rm -q -r old removed.txt
mkdir -p "$repo/new/deeper"
printf 'added on feature\n' >"$repo/new/deeper/added.txt"
printf 'top-level addition\n' >"$repo/added.txt"
g add -A && g commit -q -m feature
feature_head=$(g rev-parse HEAD)
g checkout -q main

warm repo repo/src repo/src/main.c repo/VERSION repo/README repo/old repo/old/legacy.txt \
	repo/removed.txt repo/new repo/added.txt repo/.git/HEAD repo/.git/index
check_eq "through the mount, the repository is on main" "$main_head" \
	"$(git -C "$mnt/repo" --no-optional-locks rev-parse HEAD 2>/dev/null)"

g checkout -q feature
visible "git checkout main -> feature" \
	"content_is repo/src/main.c 'int main(void) { return 42; }'" \
	"content_is repo/VERSION 'version 2, much longer'" \
	"content_is repo/README unchanged" \
	"absent repo/old/legacy.txt" "absent repo/old" "absent repo/removed.txt" \
	"not_listed repo removed.txt" "listed repo added.txt" \
	"content_is repo/new/deeper/added.txt 'added on feature'" \
	"content_is repo/added.txt 'top-level addition'"
git_sees() { # HEAD and a clean tree, as git reads them through the mount
	[ "$(git -C "$mnt/repo" --no-optional-locks rev-parse HEAD 2>/dev/null)" == "$1" ] &&
		[ -z "$(git -C "$mnt/repo" --no-optional-locks status --porcelain 2>&1)" ]
}
visible "git through the mount sees feature checked out and a clean tree" "git_sees $feature_head"

g checkout -q main
visible "git checkout feature -> main" \
	"content_is repo/src/main.c 'int main(void) { return 0; }'" \
	"content_is repo/VERSION 'version 1'" \
	"content_is repo/old/legacy.txt 'only on main'" "content_is repo/removed.txt 'removed on feature'" \
	"absent repo/new" "absent repo/added.txt" "listed repo removed.txt" "not_listed repo added.txt"
visible "git through the mount sees main checked out and a clean tree" "git_sees $main_head"

# --- a host change while the mount is busy in the same directory -------------
# An install or a build through the mount makes and removes the same names
# over and over; the host's events for them come by the thousand. A change
# made on the host meanwhile must not wait behind them.
mkdir -p "$src/busy"
printf 'before\n' >"$src/busy/h"
warm busy/h busy
bursts=()
for w in 1 2 3 4; do
	python3 - "$mnt/busy" "$w" 4 <<'PY' &
import os, sys, time
d, w, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
while time.monotonic() < until:
    for n in ("a", "b"):
        p = os.path.join(d, n + w)
        with open(p, "w") as f:
            f.write("x")
        os.unlink(p)
PY
	bursts+=($!)
done
sleep 1.5
rm "$src/busy/h" && printf 'after, longer\n' >"$src/busy/h" && chmod 600 "$src/busy/h"
visible "host edit in a directory busy with work through the mount" \
	"content_is busy/h 'after, longer'" "mode_is busy/h 600"
burst_status=0
for b in "${bursts[@]}"; do wait "$b" || burst_status=1; done
check "the work through the mount ran to its end" test $burst_status -eq 0

# The daemon's own reads change nothing the host shows: its index of
# SOURCE's symlinks reads every link when the mount starts and each one
# the host or the mount makes, and a read of a link whose access time is
# older than its change time would otherwise set it to now (relatime),
# which a native directory never does by itself. Checked on the host,
# for a link that was there at mount time and for one made through the
# mount whose times are then set, each after the index has read it.
qbase=$(scratch)
qsrc=$qbase/src qmnt=$qbase/mnt
mkdir -p "$qsrc" "$qmnt"
echo x >"$qsrc/f"
ln -s f "$qsrc/old"
old_times() { touch -h -a -d @1111111111 "$1" && touch -h -m -d @1222222222 "$1"; }
old_times "$qsrc/old"
if mount_sandyfs "$qsrc" "$qmnt"; then
	ln -s f "$qmnt/new" # a symlink's check waits for the index
	ln -s f "$qmnt/made" && old_times "$qmnt/made"
	sleep 1.5 # the watcher's batch, then the index reads "made"
	check_eq "a link there at mount time: its access time on the host is unchanged" \
		1111111111 "$(stat -c %X "$qsrc/old")"
	check_eq "a link made through the mount, its times set: unchanged on the host 1.5 s on" \
		1111111111 "$(stat -c %X "$qsrc/made")"
	check_eq "... and its target is what the mount made" f "$(readlink "$qsrc/made")"
else
	not_ok "mount for the access-time cases"
fi

done_testing
