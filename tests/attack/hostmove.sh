#!/usr/bin/env bash
# A directory moved on the host is judged where it is
# now, not where the daemon last saw it. A process inside the mount sits in
# src/tN/a/work (writable) while the host renames that directory, or the
# one above it, to .husky (protected); what the process then creates in
# its working directory must not land in .husky, whether it tries at once
# (the move not yet heard) or after the daemon has heard it. The host-side
# directory is checked after each attempt. A rename back makes it writable
# again. The same holds for a file that was there before the move: a write
# through an fd opened before it, or a chmod or truncate through the
# working directory, must not change it once it is in .husky.
source "$SANDY_SRC/tests/lib.sh"

base=$(scratch)
src=$base/src mnt=$base/mnt
mkdir -p "$src" "$mnt"
# A Rust project: the shipped rust rules make src/ writable.
printf '[package]\nname = "m"\nversion = "0.1.0"\n' >"$src/Cargo.toml"
if ! mount_policy --allow-other "$src" "$mnt"; then
	not_ok "sandyfs mount --allow-other"
	done_testing
fi

# attempt DESC MOVED DELAY: a process in $mnt/src/tN/a/work writes a first
# file (allowed), waits until the host has moved src/tN/MOVED to .husky and
# DELAY seconds more, then creates "planted" in its working directory. Each
# attempt has a tree of its own (tN), so that what the kernel cached of the
# last one (for 0.5 s where the host cannot be watched) plays no part.
n=0
attempt() {
	local desc=$1 moved=$2 delay=$3 fifo=$base/fifo result=$base/result
	n=$((n + 1))
	local dir=src/t$n/a/work
	rm -rf "$src/.husky" "$fifo" "$result"
	mkdir -p "$src/$dir"
	mkfifo "$fifo"
	(
		cd "$mnt/$dir" && echo first >first
		# Read the go-ahead whatever happened, so the writer never hangs.
		read -r _ <"$fifo"
		sleep "$delay"
		{ echo planted >planted; } 2>/dev/null
		echo "rc=$?" >"$result"
	) &
	local pid=$!
	check "$desc: a first file is written through the mount" \
		wait_until 5 test -f "$src/$dir/first"
	mv "$src/src/t$n/$moved" "$src/.husky"
	echo go >"$fifo"
	wait $pid
	check_eq "$desc: creating there fails" "rc=1" "$(cat "$result" 2>/dev/null)"
	local landed
	landed=$(find "$src/.husky" -name planted 2>/dev/null)
	check_eq "$desc: nothing lands in .husky on the host" "" "$landed"
	check_eq "$desc: nor anywhere else" "" "$(find "$src" -name planted)"
}

# existing DESC MOVED DELAY: as attempt, on a file made before the move:
# appended to through an fd opened before it, then chmod-ed and truncated
# by name from the working directory.
existing() {
	local desc=$1 moved=$2 delay=$3 fifo=$base/fifo result=$base/result
	n=$((n + 1))
	local dir=src/t$n/a/work
	rm -rf "$src/.husky" "$fifo" "$result"
	mkdir -p "$src/$dir"
	mkfifo "$fifo"
	(
		cd "$mnt/$dir" && echo first >first && exec 3>>first
		read -r _ <"$fifo"
		sleep "$delay"
		{ echo appended >&3; } 2>/dev/null
		a=$?
		chmod 0777 first 2>/dev/null
		c=$?
		truncate -s 0 first 2>/dev/null
		echo "append=$a chmod=$c truncate=$?" >"$result"
	) &
	local pid=$!
	check "$desc: the file is written through the mount" \
		wait_until 5 test -f "$src/$dir/first"
	mv "$src/src/t$n/$moved" "$src/.husky"
	echo go >"$fifo"
	wait $pid
	local f
	f=$(find "$src/.husky" -name first)
	check_eq "$desc: the append through the old fd fails" append=1 \
		"$(cut -d' ' -f1 "$result" 2>/dev/null)"
	check_eq "$desc: the chmod fails" chmod=1 "$(cut -d' ' -f2 "$result" 2>/dev/null)"
	check_eq "$desc: the truncate fails" truncate=1 "$(cut -d' ' -f3 "$result" 2>/dev/null)"
	check_eq "$desc: the file in .husky is unchanged on the host" "first 644" \
		"$(cat "$f" 2>&1) $(stat -c %a "$f" 2>&1)"
}

for delay in 0 0.5; do
	attempt "work moved to .husky, write after ${delay} s" a/work $delay
	attempt "its parent moved to .husky, write after ${delay} s" a $delay
	existing "work moved to .husky, a file of it changed after ${delay} s" a/work $delay
	existing "its parent moved to .husky, a file of it changed after ${delay} s" a $delay
done

# Moved away and back, the same working directory is writable again.
rm -rf "$src/.husky"
mkdir -p "$src/src/back/a/work"
(cd "$mnt/src/back/a/work" && echo first >first && sleep 1 && echo again >again) &
pid=$!
wait_until 5 test -f "$src/src/back/a/work/first"
mv "$src/src/back/a" "$src/.husky" && mv "$src/.husky" "$src/src/back/a"
wait $pid
check "moved away and back: a write there succeeds" \
	test "$(cat "$src/src/back/a/work/again" 2>/dev/null)" == again

done_testing
