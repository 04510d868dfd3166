#!/usr/bin/env bash
# The attack matrix. For each
# caller (root through --allow-other, and the unprivileged test user through
# the same root daemon) and each world (protected names present, absent,
# missing), a fresh SOURCE is built (tests/attack/repo.bash), its fixtures
# made (attack prepare), the shipped rules apply by detection (Cargo.toml:
# rust + base), and tests/attack/attack.c attacks every target at the root,
# at depth 1 and at depth 4 with the kernel's caches warm, checking the
# host-side directory after every attempt. The daemon must still run
# afterwards, and its audit log must parse.
#
# ATTACK_RACE_SECONDS (default 3) bounds the race of each caller.
source "$SANDY_SRC/tests/lib.sh"
source "$SANDY_SRC/tests/attack/repo.bash"

attack=$SANDY_BUILD/tests/attack/attack
race=${ATTACK_RACE_SECONDS:-3}

if [ ! -x "$attack" ]; then
	not_ok "the attack driver is built ($attack)"
	done_testing
fi
if ! ensure_test_user; then
	echo "# skip the unprivileged caller: cannot create user $TEST_USER"
fi

base=$(scratch)

# sections per world: the name variants, the special cases and the race
# need the names absent; the git layout needs the submodules.
sections() {
	case $1 in
	present) echo direct,git,scan ;;
	absent) echo direct,variants,misc,race,scan ;;
	missing) echo direct,misc,scan ;;
	esac
}

for who in root user; do
	if [ $who = user ] && ! id "$TEST_USER" >/dev/null 2>&1; then
		echo "# skip $who: no user $TEST_USER"
		continue
	fi
	for world in present absent missing; do
		d=$base/$who-$world
		src=$d/src mnt=$d/mnt log=$d/audit.log pidf=$d/pid
		mkdir -p "$mnt"
		if ! make_world $world "$src" "$d" >"$d/make.log" 2>&1 ||
			! "$attack" prepare $world "$src" >>"$d/make.log" 2>&1; then
			not_ok "$who/$world: build SOURCE"
			sed 's/^/# /' "$d/make.log"
			continue
		fi
		as=()
		if [ $who = user ]; then
			chown -R "$TEST_USER:" "$src"
			as=(--as "$TEST_USER")
		fi
		# The store of private directories, which the driver checks (as
		# the unprivileged caller too).
		export ATTACK_STORE=$d/store
		mkdir -m 755 "$ATTACK_STORE"
		if ! mount_policy --allow-other --audit "$log" --pid-file "$pidf" \
			--store "$ATTACK_STORE" "$src" "$mnt"; then
			not_ok "$who/$world: sandyfs mount --allow-other"
			continue
		fi
		start=$SECONDS
		"$attack" matrix "${as[@]}" --race "$race" --only "$(sections $world)" \
			$who $world "$src" "$mnt"
		rc=$?
		diag "$who/$world: driver exit status $rc after $((SECONDS - start)) s"
		[ $rc -gt 1 ] && not_ok "$who/$world: the attack driver ended with status $rc"
		[ $rc -ne 0 ] && _failed=1
		pid=$(cat "$pidf" 2>/dev/null)
		check "$who/$world: sandyfs is still running after the attacks" pid_alive "${pid:-0}"
		check "$who/$world: the mount still answers" test -f "$mnt/Cargo.toml"
		"$attack" auditcheck "$who/$world" "$log"
		"$SANDYFS" umount "$mnt" >/dev/null 2>&1
		check "$who/$world: sandyfs umount" wait_until 5 eval "! is_mounted '$mnt'"
	done
done
done_testing
