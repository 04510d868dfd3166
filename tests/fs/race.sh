#!/usr/bin/env bash
# Race safety. While a host-side loop keeps
# replacing SOURCE/d with a symlink to a directory outside SOURCE and back,
# reads, writes and namespace operations through the mount on d never touch
# the outside directory (checked on the host: contents, modes, times
# including atime, xattrs, entries) and never read anything from it.
#
# The clients run in a private mount namespace where a tmpfs hides the
# outside directory: when the kernel itself sees MNT/d as a symlink and
# follows it (to the absolute host path or to a relative one), it lands in
# that empty tmpfs, so anything of the outside directory that shows up can
# only have come through sandyfs.
source "$SANDY_SRC/tests/lib.sh"

RACE_SECONDS=${RACE_SECONDS:-5}

base=$(scratch)
src=$base/src out=$base/outside mnt=$base/mnt logs=$base/logs
mkdir -p "$src/d" "$out/keep" "$mnt" "$logs"
token="outside-secret-$$-$RANDOM$RANDOM"

# Inside: d with the same names the outside has, harmless contents.
echo "inside secret" >"$src/d/secret"
echo "inside file" >"$src/d/file"

# Outside: the secret, a file of the same name as one inside, an entry only
# the outside has (its name carries the token too, so a directory listing
# of the outside shows up in the reads), xattrs, old times.
echo "$token" >"$out/secret"
echo "$token file" >"$out/file"
echo "$token kept" >"$out/keep/inner"
mkdir "$out/only-$token"
chmod 640 "$out/secret"
setfattr -n user.tag -v "$token" "$out/file"
setfattr -n user.tag -v dir "$out/keep"
touch -h -d '2001-02-03 04:05:06.789' "$out/secret" "$out/file" "$out/keep/inner" "$out/keep"

listing() { (cd "$out" && find . -printf '%p %y\n' | LC_ALL=C sort && find . -type f -exec cksum {} + | LC_ALL=C sort -k3); }
known=("$out" "$out/secret" "$out/file" "$out/keep" "$out/keep/inner" "$out/only-$token")
# stat and getfattr only: no readdir, no read, so the atimes stay as set.
metadata() {
	stat -c '%n %F %a %u:%g %s %h %i atime=%x mtime=%y ctime=%z' "${known[@]}" 2>&1
	getfattr -h -d -m - --absolute-names "${known[@]}" 2>/dev/null
}
list_before=$(listing)
# Reading the outside sets its atimes to now; put them back to 2001 so that
# relatime would bump them on any read or readdir of the outside.
touch -h -a -d '2001-02-03 04:05:06' "${known[@]}"
meta_before=$(metadata)

# The swapper: flips d between the real directory and a symlink to the
# outside (relative and absolute), atomically (RENAME_EXCHANGE) and through
# a rename + symlink + unlink + rename sequence, as fast as it can.
cat >"$base/swap.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	if (argc != 4 || chdir(argv[1]) != 0)
		return 2;
	const char *targets[2] = { "../outside", argv[2] };
	time_t end = time(NULL) + atoi(argv[3]);
	long swaps = 0, errors = 0;
	for (long i = 0; time(NULL) < end; i++) {
		const char *t = targets[i & 1];
		if (i & 2) {
			/* atomic exchange of the directory and a symlink */
			if (symlink(t, "d.link") != 0) { errors++; continue; }
			if (renameat2(AT_FDCWD, "d", AT_FDCWD, "d.link", RENAME_EXCHANGE) != 0) errors++;
			for (volatile int k = 0; k < 2000; k++) ;
			if (renameat2(AT_FDCWD, "d", AT_FDCWD, "d.link", RENAME_EXCHANGE) != 0) errors++;
			if (unlink("d.link") != 0) errors++;
		} else {
			/* non-atomic: a window with no d at all */
			if (rename("d", "d.hold") != 0) { errors++; continue; }
			if (symlink(t, "d") != 0) errors++;
			for (volatile int k = 0; k < 2000; k++) ;
			if (unlink("d") != 0) errors++;
			if (rename("d.hold", "d") != 0) errors++;
		}
		swaps++;
	}
	printf("%ld %ld\n", swaps, errors);
	return 0;
}
EOF
if ! "${CC:-cc}" -O2 -o "$base/swap" "$base/swap.c"; then
	not_ok "build the swapper"
	done_testing
fi

# The clients: one loop per kind of operation, all on MNT/d, until the
# deadline. Every byte read goes to reads.*; attempts are counted.
cat >"$base/clients.sh" <<'EOF'
mnt=$1 out=$2 logs=$3 deadline=$4
mount -t tmpfs -o size=16m sandy-race-mask "$out" || exit 1
readers() {
	local n=0
	while [ $EPOCHSECONDS -lt $deadline ]; do
		cat "$mnt/d/secret" "$mnt/d/file" "$mnt/grab" "$mnt/d/moved"
		ls -a "$mnt/d" "$mnt/d/keep" "$mnt"
		stat -c '%n %s %a %i' "$mnt/d" "$mnt/d/"*
		getfattr -d -m - "$mnt/d/file"
		head -c 100 "$mnt/d/keep/inner"
		n=$((n + 1))
	done >"$logs/reads.readers" 2>/dev/null
	echo "readers $n" >"$logs/count.readers"
}
# A reader (and writer) holding d as its working directory across the swaps.
cwd_reader() {
	local n=0 line
	while [ $EPOCHSECONDS -lt $deadline ]; do
		cd "$mnt/d" 2>/dev/null || continue
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			while IFS= read -r line; do echo "$line"; done <secret
			while IFS= read -r line; do echo "$line"; done <file
			echo ./*
			echo "written through the held directory" >cwd.new
			echo more >>file
			n=$((n + 1))
		done
		cd /
	done >"$logs/reads.cwd" 2>/dev/null
	echo "cwd-reads $n" >"$logs/count.cwd"
}
writers() {
	local n=0
	while [ $EPOCHSECONDS -lt $deadline ]; do
		echo created >"$mnt/d/newfile.$n"
		echo overwritten >"$mnt/d/file"
		echo appended >>"$mnt/d/secret"
		truncate -s 3 "$mnt/d/secret"
		truncate -s 100 "$mnt/d/file"
		chmod 600 "$mnt/d/file"
		chmod 644 "$mnt/d/secret"
		touch -d '2030-01-01' "$mnt/d/file"
		touch "$mnt/d/secret"
		setfattr -n user.race -v "$n" "$mnt/d/file"
		setfattr -x user.tag "$mnt/d/file"
		mkfifo "$mnt/d/fifo.$n"
		ln "$mnt/d/file" "$mnt/d/hardlink.$n"
		ln -s file "$mnt/d/symlink.$n"
		rm -f "$mnt/d/newfile.$n" "$mnt/d/hardlink.$n" "$mnt/d/symlink.$n" "$mnt/d/fifo.$n"
		rm -f "$mnt/d/file"
		n=$((n + 1))
	done >/dev/null 2>&1
	echo "writes $n" >"$logs/count.writers"
}
namespace() {
	local n=0
	while [ $EPOCHSECONDS -lt $deadline ]; do
		mkdir "$mnt/d/sub"
		rmdir "$mnt/d/sub" "$mnt/d/keep"
		echo renamed >"$mnt/tmp.$n"
		mv -f "$mnt/tmp.$n" "$mnt/d/moved"
		mv -f "$mnt/d/secret" "$mnt/grab" && cat "$mnt/grab" >>"$logs/reads.namespace" &&
			mv -f "$mnt/grab" "$mnt/d/secret"
		mv -f "$mnt/d/file" "$mnt/d/file.renamed" && mv -f "$mnt/d/file.renamed" "$mnt/d/file"
		rm -f "$mnt/d/moved" "$mnt/d/keep/inner"
		rm -rf "$mnt/d/only-"*
		n=$((n + 1))
	done >/dev/null 2>&1
	echo "namespace-ops $n" >"$logs/count.namespace"
}
readers &
cwd_reader &
writers &
namespace &
wait
EOF

if ! mount_sandyfs --pid-file "$base/pid" "$src" "$mnt"; then
	not_ok "mount"
	done_testing
fi
pid=$(cat "$base/pid")
check_eq "the mount serves d before the race" "inside secret" "$(cat "$mnt/d/secret")"
# Warm the kernel's caches on d and its entries.
ls -la "$mnt/d" >/dev/null
stat "$mnt/d/secret" "$mnt/d/file" >/dev/null

deadline=$((EPOCHSECONDS + RACE_SECONDS + 1))
"$base/swap" "$src" "$out" $((RACE_SECONDS + 1)) >"$logs/swaps" &
swapper=$!
kill_at_exit $swapper
timeout -k 5 $((RACE_SECONDS + 30)) unshare -m --propagation private \
	bash "$base/clients.sh" "$mnt" "$out" "$logs" $deadline &
clients=$!
kill_at_exit -$clients
wait $clients
crc=$?
wait $swapper
src_rc=$?

check_eq "the clients ran to their deadline" 0 $crc
check_eq "the swapper ran to its end" 0 $src_rc
read -r swaps swap_errors <"$logs/swaps"
diag "swaps: ${swaps:-?} (errors ${swap_errors:-?}) in $RACE_SECONDS s"
for f in "$logs"/count.*; do diag "attempts: $(cat "$f")"; done
check "the swapper flipped d at least 1000 times" test "${swaps:-0}" -ge 1000
check "d is a directory again on the host" test -d "$src/d" -a ! -L "$src/d"

# The outside is untouched: first the times (before any readdir or read
# here bumps an atime), then entries and contents.
meta_after=$(metadata)
list_after=$(listing)
check "outside: modes, owners, sizes, link counts, times (a, m, c) and xattrs unchanged" \
	test "$meta_before" == "$meta_after"
check "outside: the same entries with the same contents" test "$list_before" == "$list_after"
if [ "$meta_before" != "$meta_after" ] || [ "$list_before" != "$list_after" ]; then
	diff <(echo "$meta_before"; echo "$list_before") <(echo "$meta_after"; echo "$list_after") |
		grep '^[<>]' | head -30 | while IFS= read -r l; do diag "$l"; done
fi

# Nothing of the outside was ever read through the mount.
leaks=$(cat "$logs"/reads.* 2>/dev/null | grep -ac -- "$token")
check_eq "no read or listing through the mount returned anything of the outside" 0 "$leaks"
[ "$leaks" != 0 ] && cat "$logs"/reads.* | grep -a -- "$token" | sort | uniq -c | head -5 |
	while IFS= read -r l; do diag "leaked: $l"; done
inside=$(cat "$logs"/reads.* 2>/dev/null | grep -ac '^inside \|^overwritten\|^ins$')
diag "reads that returned inside content: $inside"
check "reads through the mount did reach d during the race" test "$inside" -gt 0

# sandyfs survived it and still serves d.
check "the daemon is still running" pid_alive "$pid"
check "d is a directory through the mount again" wait_until 2 test -d "$mnt/d"
echo after >"$src/d/after"
check "a file written on the host into d reads back through the mount" \
	wait_until 2 grep -qxs after "$mnt/d/after"
done_testing
