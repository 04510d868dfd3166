#!/usr/bin/env bash
# Makes a tiny image from the host's static busybox with `docker import`,
# for the launcher tests and the demo on machines that cannot reach a
# registry. (The real agent image comes from the Dockerfile beside this
# script, through `sandy build-image`.) Does nothing when the image exists.
#
# usage: launcher/container/busybox-image.sh [TAG] [PROGRAM...]
#        ENGINE=podman launcher/container/busybox-image.sh ...
# TAG defaults to sandy-busybox:latest. Each PROGRAM (for example git,
# ssh-add) is copied from the host with the shared libraries it loads.
set -eu
tag=${1:-sandy-busybox:latest}
[ $# -gt 0 ] && shift
engine=${ENGINE:-docker}
bb=/bin/busybox

"$engine" image inspect "$tag" >/dev/null 2>&1 && exit 0
if ! [ -x $bb ] || ! LC_ALL=C ldd $bb 2>&1 | grep -q 'not a dynamic'; then
	echo "busybox-image.sh: a static $bb is needed: install busybox-static" >&2
	exit 1
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,etc,tmp,workspace,run,proc,sys,dev,home/sandy}
# mktemp made it 0700: the image's / would be closed to a container user
# that is not root.
chmod 0755 "$root"
# Like any distribution's /tmp: the container user is not root.
chmod 1777 "$root/tmp"
cp $bb "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ "$applet" = busybox ] || ln -s busybox "$root/bin/$applet"
done
for prog in "$@"; do
	path=$(command -v "$prog") || {
		echo "busybox-image.sh: '$prog' is not installed here" >&2
		exit 1
	}
	path=$(readlink -f "$path")
	mkdir -p "$root$(dirname "$path")"
	cp "$path" "$root$path"
	ln -sf "$path" "$root/bin/$prog"
	for lib in $(ldd "$path" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"
tar -C "$root" -c . | "$engine" import --change 'CMD ["/bin/sh"]' - "$tag" >/dev/null
