#!/usr/bin/env bash
# The attack suite's mount-level cases once more, through sandyfs served from
# a container of sandy's fs image (tests/attack/boxed-sandyfs), as sandy's
# container mode serves a project where the engine does not see this host's
# mounts. The FUSE code is the same; what is under test is the plumbing: the
# capabilities the container has, the same-path binds, the mount reaching
# the host through a shared bind, the audit log and the store written from
# inside. Each script's cases count here as its own, and check the host-side
# directories as they do for a host mount. One thing differs, and is
# asserted as such: an audit record's pid is 0, since the daemon runs in a
# pid namespace of its own, where the kernel gives a caller outside none
# (ATTACK_PID_UNSEEN).
source "$SANDY_SRC/tests/launcher/helpers.bash"
ensure_docker || {
	not_ok "docker answers"
	done_testing
}
ok "docker answers"
check "sandy build-image --fs-only makes sandy-fs:latest" \
	"$SANDY" build-image --fs-only >/dev/null 2>&1 || done_testing

wrapper=$SANDY_SRC/tests/attack/boxed-sandyfs
# The scripts' scratch directories, in one shared mount: a mount made in the
# container below it reaches this host, as sandy's container mode has it
# reach the agent's container. Unmounted before the scratch directories go.
shared=$(scratch)
mount --bind "$shared" "$shared" && mount --make-shared "$shared" || {
	not_ok "a shared mount for the scratch directories"
	done_testing
}
at_exit "'$wrapper' cleanup; umount -l '$shared'"
export BOXED_SANDYFS_SHARED=$shared

for script in matrix hostmove chains audit gitlayout; do
	diag "tests/attack/$script.sh through sandyfs in its container"
	TEST_BASE=$shared SANDYFS_HOST=$SANDYFS SANDYFS=$wrapper ATTACK_PID_UNSEEN=1 \
		bash "$SANDY_SRC/tests/attack/$script.sh" 2>&1 |
		sed -E "/^(not )?ok /s/^((not )?ok )(- )?/\\1- $script: /"
	rc=${PIPESTATUS[0]}
	[ "$rc" -ne 0 ] && not_ok "$script.sh ended with status $rc"
done

# Nothing left of the boxes: every daemon ended with its mount (those the
# scripts unmounted themselves leave an ended container, removed here), no
# mount below the shared one.
check_eq "no sandyfs container of the wrapper still runs" "" \
	"$(docker ps -q --filter label=sandy.test=boxed-sandyfs)"
"$wrapper" cleanup
check_eq "and none is left once removed" "" \
	"$(docker ps -aq --filter label=sandy.test=boxed-sandyfs)"
check_eq "no mount is left below $shared" "" \
	"$(awk -v d="$shared/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo)"
done_testing
