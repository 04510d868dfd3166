#!/usr/bin/env bash
# The real agent image: `sandy build-image` makes it from Debian packages
# (mmdebstrap, the machine's apt sources) and the npm registry, with no
# image registry; a second build is served from the cache; the agent's CLI
# runs through sandy in it, and the image holds what the agent uses and
# nothing that builds a sandbox of its own. sandyfs's own image, with
# sandyfs built in it from source (on request, on a --from base, and when
# this host's is not a program the engine runs): its sandyfs runs, is not
# this build's binary, and mounts a project with the policy; the full
# build copies this build's.
source "$SANDY_SRC/tests/launcher/helpers.bash"
require_docker

new_project
image=sandy-agent:latest

# ---- sandyfs built in its own image ------------------------------------------
# What a host without a Linux sandyfs the engine runs gets (a Mac's engine in
# its VM): sandy-fs:latest with sandyfs compiled in the image's build from
# the source tree, first, so that the full build below leaves the image with
# this build's sandyfs, as the other tests expect it. Other users of this
# engine may build the tag too: the cases use the image's ID.
fs_image=sandy-fs:latest
start=$SECONDS
"$SANDY" build-image --fs-only --fs-from-source >"$base/fs-source.log" 2>&1
rc=$?
fs_id=$(docker image inspect --format '{{.Id}}' "$fs_image" 2>/dev/null)
check_eq "sandy build-image --fs-only --fs-from-source: exit status 0 ($((SECONDS - start)) s)" 0 "$rc"
[ "$rc" = 0 ] || tail -n 30 "$base/fs-source.log" | sed 's/^/# /'
check "... from the Dockerfile that builds sandyfs in a first stage" \
	grep -q 'RUN meson setup -Dtests=false' "$base/fs-source.log"
version=$(docker run --rm --network=none "$fs_id" sandyfs --version 2>&1)
check_eq "its sandyfs runs, and is this build's version" "$("$SANDYFS" --version | cut -d' ' -f1,2)" \
	"$(cut -d' ' -f1,2 <<<"$version")"
check "... the Linux flavour (O_PATH, openat2, /proc)" grep -q 'linux (O_PATH' <<<"$version"
docker run --rm --network=none --entrypoint cat "$fs_id" /usr/local/bin/sandyfs >"$base/fs-source.bin"
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = 177ELF ]; }
check "its sandyfs is a program (ELF) of its own" is_elf "$base/fs-source.bin"
check_fails "... not byte-identical to this build's: compiled in the image" \
	cmp -s "$base/fs-source.bin" "$SANDYFS"

# A mount from it, as sandy's container mode makes one (fsbox.c's
# capabilities, /dev/fuse, AppArmor unconfined, no network): the project at
# its own path, mounted inside at /mnt/w; .envrc is refused, src/x.c
# written, and the host's directory shows exactly that.
caps=(--cap-drop=ALL)
for c in SYS_ADMIN CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID SETUID SETGID; do
	caps+=(--cap-add="$c")
done
check "the project has no .envrc before" test ! -e "$proj/.envrc"
out=$(docker run --rm "${caps[@]}" --device=/dev/fuse --security-opt=apparmor=unconfined \
	--network=none --env SANDY_CACHE_DIR=/tmp/store \
	--mount "type=bind,source=$proj,target=$proj" \
	--mount "type=bind,source=$rules,target=$rules,readonly" "$fs_id" sh -c '
	mkdir -p /mnt/w && sandyfs mount --rules "$2" "$1" /mnt/w || exit 1
	grep -q " /mnt/w .* - fuse.sandyfs " /proc/self/mountinfo && echo mounted
	if e=$( (echo "export A=1" >/mnt/w/.envrc) 2>&1); then echo ".envrc written"; else echo ".envrc refused: $e"; fi
	if echo "int x;" >/mnt/w/src/x.c; then echo "src/x.c written"; fi
	sandyfs umount /mnt/w && echo unmounted' sh "$proj" "$rules" 2>&1)
check "its sandyfs mounts the project in a container of the image" grep -qx mounted <<<"$out"
# (The shell's complaint is kept on the line: docker interleaves the two
# streams of a container by chunks.)
check "... refuses .envrc" grep -q "^.envrc refused: .*Read-only file system" <<<"$out"
check "... writes src/x.c" grep -qx "src/x.c written" <<<"$out"
check "... and unmounts" grep -qx unmounted <<<"$out"
[ "$_failed" = 0 ] || sed 's/^/# /' <<<"$out"
check_eq "on the host, src/x.c arrived" "int x;" "$(cat "$proj/src/x.c" 2>&1)"
check "on the host, no .envrc" test ! -e "$proj/.envrc"
rm -f "$proj/src/x.c"

# On a base named with --from: the base the build above made (its layers
# are the image's), from the cache.
base_tag=$("$SANDY_SRC/launcher/container/base-image.sh" 2>/dev/null)
start=$SECONDS
"$SANDY" build-image --fs-only --fs-from-source --from "$base_tag" >"$base/fs-from.log" 2>&1
check_eq "build-image --fs-only --fs-from-source --from $base_tag: exit status 0 ($((SECONDS - start)) s)" \
	0 "$?"
from_id=$(docker image inspect --format '{{.Id}}' "$fs_image" 2>/dev/null)
layers() { docker image inspect --format '{{range .RootFS.Layers}}{{println .}}{{end}}' "$1"; }
# built_on IMAGE BASE: BASE's layers are the first of IMAGE's.
built_on() {
	local b
	b=$(layers "$2") && [ -n "$b" ] && [ "$(layers "$1" | head -n "$(wc -l <<<"$b")")" = "$b" ]
}
check "... the image is built on that base" built_on "$from_id" "$base_tag"
check_eq "... the same image as without --from (the same base)" "$fs_id" "$from_id"

# Not asked for: built from source when this host's sandyfs is not a Linux
# program for the engine's machine (here a script stands for a Mac's).
printf '#!/bin/sh\nexec sandyfs "$@"\n' >"$base/not-elf"
chmod +x "$base/not-elf"
SANDYFS=$base/not-elf "$SANDY" build-image --fs-only >"$base/fs-auto.log" 2>&1
check_eq "build-image --fs-only with a sandyfs the engine cannot run: exit status 0" 0 "$?"
check "... says why it builds sandyfs from its source" \
	grep -qF "'$base/not-elf' is not a Linux program for the engine's machine ($(docker info --format '{{.Architecture}}'))" \
	"$base/fs-auto.log"
check_eq "... and builds the same image from source (from the cache)" "$fs_id" \
	"$(docker image inspect --format '{{.Id}}' "$fs_image" 2>/dev/null)"

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
docker run --rm --network=none --entrypoint cat "$fs_image" /usr/local/bin/sandyfs >"$base/fs-copy.bin"
check "sandyfs's image of the full build has this build's sandyfs, copied (the engine runs it)" \
	cmp -s "$base/fs-copy.bin" "$SANDYFS"

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
