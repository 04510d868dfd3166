#!/usr/bin/env bash
# Bad input to `sandyfs mount` and
# `sandyfs umount`. Each fails promptly with a message on stderr in git's
# style ("sandyfs: cannot mount: mountpoint '/x' does not exist": lower
# case, the subject quoted), exit status 2 for usage errors and 1 for the
# others, nothing on stdout, and the mount table exactly as before. A dead
# mount (daemon killed) is refused as a mountpoint, and `sandyfs umount`
# clears it. --help and --version succeed.
source "$SANDY_SRC/tests/lib.sh"

base=$(scratch)
src=$base/src mnt=$base/mnt file=$base/file
mkdir -p "$src" "$mnt"
echo served >"$src/hello"
echo "not a directory" >"$file"
# Relative paths land in the scratch directory, whose mount table is the
# one compared: other tests may mount and unmount elsewhere meanwhile.
cd "$base" || exit 1
mounts_here() {
	awk -v b="$base" '$5 == b || index($5, b "/") == 1' /proc/self/mountinfo
}

# run ARGS...: runs sandyfs (bounded in time); sets rc, out, err.
run() {
	local t0=$SECONDS
	timeout -k 5 20 "$SANDYFS" "$@" >"$base/out" 2>"$base/err" </dev/null
	rc=$?
	out=$(cat "$base/out") err=$(cat "$base/err")
	elapsed=$((SECONDS - t0))
}

# fails DESCRIPTION STATUS SUBJECT ARGS...: `sandyfs ARGS` exits with
# STATUS within 10 s, says why on stderr (a first line "sandyfs: " and a
# lower-case word or a quote, or "usage: "; naming SUBJECT in single quotes
# unless SUBJECT is empty),
# prints nothing on stdout, and leaves the mount table as it was below the
# scratch directory.
fails() {
	local desc=$1 want=$2 subject=$3
	shift 3
	local before after
	before=$(mounts_here)
	run "$@"
	after=$(mounts_here)
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		not_ok "$desc: exits with status $want (hung: killed after 20 s)"
	else
		check_eq "$desc: exits with status $want" "$want" "$rc"
	fi
	check "$desc: answers within 10 s (${elapsed} s)" test $elapsed -le 10
	local first=${err%%$'\n'*}
	if [[ $first =~ ^(sandyfs:\ [a-z\']|usage:\ ) ]] && { [ -z "$subject" ] || [[ $err == *"'$subject'"* ]]; }; then
		ok "$desc: says so on stderr${subject:+, naming '$subject'}"
	else
		not_ok "$desc: says so on stderr${subject:+, naming '$subject'}"
		diag "stderr: ${err:-<empty>}"
	fi
	check_eq "$desc: prints nothing on stdout" "" "$out"
	if [ "$before" == "$after" ]; then
		ok "$desc: leaves nothing mounted"
	else
		not_ok "$desc: leaves nothing mounted"
		diff <(echo "$before") <(echo "$after") | grep '^[<>]' | while IFS= read -r l; do diag "$l"; done
		# Do not let it linger into the next cases.
		is_mounted "$mnt" && { fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	fi
}

# --- paths ------------------------------------------------------------------
fails "SOURCE missing" 1 "$base/nope" mount "$base/nope" "$mnt"
fails "SOURCE a file" 1 "$file" mount "$file" "$mnt"
fails "MOUNTPOINT missing" 1 "$base/nope" mount "$src" "$base/nope"
fails "MOUNTPOINT a file" 1 "$file" mount "$src" "$file"
fails "--stats in a missing directory" 1 "$base/nope/stats.json" \
	mount --stats "$base/nope/stats.json" "$src" "$mnt"
check "MOUNTPOINT a file: the file is untouched" test "$(cat "$file")" == "not a directory"

# --- usage ------------------------------------------------------------------
fails "unknown option" 2 "--bogus" mount --bogus "$src" "$mnt"
fails "unknown short option" 2 "-Z" mount -Z "$src" "$mnt"
fails "unknown command" 2 "frobnicate" frobnicate "$src" "$mnt"
fails "unknown top-level option" 2 "--bogus" --bogus
fails "no command" 2 "" 
fails "mount without arguments" 2 "" mount
fails "mount without MOUNTPOINT" 2 "" mount "$src"
fails "mount with an extra argument" 2 "" mount "$src" "$mnt" "$base/extra"
fails "-o without its value" 2 "" mount "$src" "$mnt" -o
fails "umount without arguments" 2 "" umount
fails "umount with an extra argument" 2 "" umount "$mnt" "$base/extra"

# An option libfuse does not know: refused (whatever the status), nothing
# mounted, and the message names it.
before=$(mounts_here)
run mount -o no_such_fuse_option "$src" "$mnt"
check "unknown FUSE option: fails" test $rc -ne 0 -a $rc -ne 124 -a $rc -ne 137
check "unknown FUSE option: the message names it" grep -q no_such_fuse_option "$base/err"
[ $rc -ne 0 ] || { is_mounted "$mnt" && fusermount3 -u "$mnt"; }
check_eq "unknown FUSE option: leaves nothing mounted" "$before" "$(mounts_here)"

# --- umount of what is not a mount ----------------------------------------------
fails "umount of a directory that is not a mount" 1 "$mnt" umount "$mnt"
fails "umount of a missing path" 1 "$base/nope" umount "$base/nope"

# --- MOUNTPOINT already a live sandyfs mount ----------------------------------
other=$base/other
mkdir "$other" && echo other >"$other/hello"
if mount_sandyfs "$src" "$mnt"; then
	ok "mount for the live-mount case"
	fails "MOUNTPOINT already a live mount" 1 "$mnt" mount "$other" "$mnt"
	check_eq "the live mount still serves its SOURCE" served "$(cat "$mnt/hello" 2>&1)"
	check "sandyfs umount of the live mount" "$SANDYFS" umount "$mnt"
	check "the live mount is gone" wait_until 5 eval '! is_mounted "$mnt"'
else
	not_ok "mount for the live-mount case"
fi

# --- MOUNTPOINT a dead mount (ENOTCONN) ---------------------------------------
if mount_sandyfs --pid-file "$base/pid" "$src" "$mnt"; then
	ok "mount for the dead-mount case"
	pid=$(cat "$base/pid")
	kill -9 "$pid"
	check "the killed daemon is gone" wait_until 5 eval '! pid_alive $pid'
	# A name never looked up: the kernel must ask the (dead) daemon, where
	# the mountpoint's own attributes may still be answered from its cache.
	# A fresh name each time it is asked, for as long as the kernel takes
	# to see the connection gone; what stat said last, if it never does.
	dead_stat=
	dead() {
		dead_stat=$(stat "$mnt/never-looked-up-$$-$RANDOM" 2>&1)
		is_mounted "$mnt" && [[ $dead_stat == *"not connected"* ]]
	}
	check "the mount is dead (ENOTCONN) but still in the mount table" wait_until 5 dead ||
		diag "stat: $dead_stat; mounted: $(is_mounted "$mnt" && echo yes || echo no)"
	fails "MOUNTPOINT a dead mount" 1 "$mnt" mount "$src" "$mnt"
	run umount "$mnt"
	check_eq "sandyfs umount of the dead mount exits 0" 0 "$rc"
	[ $rc -eq 0 ] || diag "stderr: $err"
	check "the dead mount is gone" wait_until 5 eval '! is_mounted "$mnt"'
	check "the mountpoint is a plain directory again" eval 'stat "$mnt" >/dev/null && [ -z "$(ls -A "$mnt")" ]'
	if mount_sandyfs "$src" "$mnt"; then
		check_eq "a new mount on the same mountpoint serves SOURCE" served "$(cat "$mnt/hello" 2>&1)"
		check "sandyfs umount of the new mount" "$SANDYFS" umount "$mnt"
		check "the new mount is gone" wait_until 5 eval '! is_mounted "$mnt"'
	else
		not_ok "a new mount on the same mountpoint serves SOURCE"
	fi
else
	not_ok "mount for the dead-mount case"
fi

# --- --help, --version ----------------------------------------------------------
run --help
check_eq "--help exits 0" 0 "$rc"
check "--help shows the usage of mount and umount on stdout" \
	eval '[[ ${out,,} == *usage* && $out == *"mount"* && $out == *"umount"* ]]'
check_eq "--help writes nothing on stderr" "" "$err"
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$SANDY_SRC/meson.build" | head -n 1)
run --version
check_eq "--version exits 0" 0 "$rc"
check "--version prints the project version ($version) on stdout" \
	eval '[ -n "$version" ] && [[ $out == *"$version"* ]]'
check_eq "--version writes nothing on stderr" "" "$err"

done_testing
