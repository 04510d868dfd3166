#!/usr/bin/env bash
# The audit log. On a fresh mount of
# the "present" world (tests/attack/repo.bash), tests/attack/attack.c makes
# fewer denials than the burst allows, one at a time, and checks after each
# that exactly one parseable record arrived that names the operation, the
# path, the class, the deciding rule and rule file, the caller's pid and uid
# (root, and the test user through --allow-other) and the errno. Then a loop
# of 100,000 denials must stay within the rate limit (burst 200, then 50 a
# second), with the suppressed counters adding up to the denials.
#
# ATTACK_FLOOD (default 100000) sets the size of the loop.
source "$SANDY_SRC/tests/lib.sh"
source "$SANDY_SRC/tests/attack/repo.bash"

attack=$SANDY_BUILD/tests/attack/attack
if [ ! -x "$attack" ]; then
	not_ok "the attack driver is built ($attack)"
	done_testing
fi
user=()
if ensure_test_user; then
	user=(--user "$TEST_USER")
else
	echo "# skip the unprivileged caller's record: cannot create user $TEST_USER"
fi

base=$(scratch)
src=$base/src mnt=$base/mnt log=$base/audit.log pidf=$base/pid
mkdir -p "$mnt"
if ! make_world present "$src" "$base" >"$base/make.log" 2>&1 ||
	! "$attack" prepare present "$src" >>"$base/make.log" 2>&1; then
	not_ok "build SOURCE"
	sed 's/^/# /' "$base/make.log"
	done_testing
fi
# The test user may then change what it owns: its denials come from
# sandyfs, not from the kernel's permission checks.
[ ${#user[@]} -gt 0 ] && chown -R "$TEST_USER:" "$src"
if ! mount_policy --allow-other --audit "$log" --pid-file "$pidf" "$src" "$mnt"; then
	not_ok "sandyfs mount --allow-other --audit"
	done_testing
fi
"$attack" audit "${user[@]}" --flood "${ATTACK_FLOOD:-100000}" "$log" "$src" "$mnt" || _failed=1
check "sandyfs is still running after the flood" pid_alive "$(cat "$pidf" 2>/dev/null || echo 0)"
"$SANDYFS" umount "$mnt" >/dev/null 2>&1
check "sandyfs umount" wait_until 5 eval "! is_mounted '$mnt'"
# At the end the daemon writes what it still had suppressed.
"$attack" auditcheck "audit log after unmount" "$log" || _failed=1
done_testing
