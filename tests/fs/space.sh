#!/usr/bin/env bash
# Bounded space: a file written and removed through the mount
# gives its blocks back to SOURCE once nothing has it open, in both open
# modes. The daemon keeps host fds for files the kernel may still use (a
# file it opened without asking, one unlinked while open); none of them may
# outlive the file's last use, or a loop that writes and removes a big file
# fills the disk. SOURCE is a small tmpfs, so a leak shows as ENOSPC and in
# its usage.
source "$SANDY_SRC/tests/lib.sh"

base=$(scratch)
src=$base/src mnt=$base/mnt
mkdir -p "$src" "$mnt"
mount -t tmpfs -o size=96m tmpfs "$src" || { not_ok "a 96 MiB tmpfs for SOURCE"; done_testing; }
at_exit "umount -l '$src'"

used_kib() { df --output=used -k "$src" | tail -n 1 | tr -d ' '; }
# write_and_remove DIR: writes 5 files in turn through the mount, each
# removed through DIR; prints how many steps failed.
write_and_remove() {
	local i failures=0
	for i in 1 2 3 4 5; do
		dd if=/dev/zero of="$mnt/big.$i" bs=1M count=40 2>/dev/null || failures=$((failures + 1))
		rm -f "$1/big.$i" || failures=$((failures + 1))
	done
	echo $failures
}

for mode in default lazy; do
	opts=()
	[ $mode = lazy ] && opts=(--lazy-open)
	if ! mount_sandyfs "${opts[@]}" "$src" "$mnt"; then
		not_ok "$mode: mount"
		continue
	fi
	before=$(used_kib)
	# 5 x 40 MiB through a 96 MiB filesystem: only fits if each one's
	# blocks come back when it is removed, through the mount or on the host.
	check_eq "$mode: five 40 MiB files written and removed in turn" 0 "$(write_and_remove "$mnt")"
	check_eq "$mode: five 40 MiB files written, each removed on the host" 0 \
		"$(write_and_remove "$src")"
	# The same, with the file removed while still open for writing.
	(exec 3>"$mnt/open.bin" && dd if=/dev/zero bs=1M count=40 >&3 2>/dev/null &&
		rm "$mnt/open.bin" && dd if=/dev/zero bs=1M count=8 >&3 2>/dev/null)
	check_eq "$mode: a file removed while open takes writes until closed" 0 $?
	wait_until 5 eval '[ "$(used_kib)" -le $((before + 1024)) ]'
	after=$(used_kib)
	check "$mode: SOURCE has its space back (used $after KiB, before $before KiB)" \
		test "$after" -le $((before + 1024))
	check_eq "$mode: nothing is left in SOURCE" "" "$(ls -A "$src")"
	"$SANDYFS" umount "$mnt"
	check "$mode: unmounted" wait_until 5 eval '! is_mounted "$mnt"'
done

done_testing
