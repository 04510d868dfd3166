#!/usr/bin/env bash
# The real agent image: `sandy build-image` makes it from Debian packages
# (mmdebstrap, the machine's apt sources) and the npm registry, with no
# image registry; a second build is served from the cache; the agent's CLI
# runs through sandy in it, and the image holds what the agent uses and
# nothing that builds a sandbox of its own.
source "$SANDY_SRC/tests/launcher/helpers.bash"
require_docker

new_project
image=sandy-agent:latest

SANDY_IMAGE= "$SANDY" build-image >"$base/build.log" 2>&1
rc=$?
check_eq "sandy build-image: exit status 0" 0 "$rc"
[ "$rc" = 0 ] || tail -n 30 "$base/build.log" | sed 's/^/# /'
id1=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null)
check "the image is there" test -n "$id1"
check "its base is made from Debian packages (sandy-base), not pulled" \
	eval "docker image ls --format '{{.Repository}}' | grep -qx sandy-base"

SANDY_IMAGE= "$SANDY" build-image >"$base/build2.log" 2>&1
check_eq "a second build-image: exit status 0" 0 "$?"
check_eq "a second build-image gives the same image (cached by content)" "$id1" \
	"$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null)"
check_fails "a second build-image does not make the base again" \
	grep -q 'building sandy-base' "$base/build2.log"

out=$("$SANDY" -q --image "$image" "$proj" -- claude --version </dev/null 2>"$base/err")
check_eq "sandy -- claude --version: exit status 0" 0 "$?"
check "claude --version prints a version through sandy" grep -Eq '[0-9]+\.[0-9]+\.[0-9]+' <<<"$out"
[ "$_failed" = 0 ] || sed 's/^/# /' "$base/err"

out=$("$SANDY" -q --image "$image" "$proj" -- sh -c '
	for p in git gh rg node npm ssh; do command -v $p >/dev/null && echo "has $p"; done
	for p in bwrap socat; do command -v $p >/dev/null && echo "has $p"; done
	echo "home=$HOME uid=$(id -u)"' </dev/null 2>&1)
for p in git gh rg node npm ssh; do
	check "the image has $p" grep -qx "has $p" <<<"$out"
done
check_fails "the image has no bubblewrap" grep -qx "has bwrap" <<<"$out"
check_fails "the image has no socat" grep -qx "has socat" <<<"$out"
check_eq "the agent runs as the host user with the agent's home" "home=/home/sandy uid=$(id -u)" \
	"$(grep '^home=' <<<"$out")"
check "nothing left mounted" no_sandy_mounts "$proj"
check "no container left" no_container "$proj"
done_testing
