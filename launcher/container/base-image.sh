#!/usr/bin/env bash
# Makes the agent image's base, a Debian 12 root filesystem with the tools
# the agent uses, from Debian packages alone with mmdebstrap (the machine's
# apt sources, no image registry), and imports it. Does nothing when the
# image exists. The certificate authorities this machine adds locally
# (/usr/local/share/ca-certificates: a company's TLS proxy, for one) are
# trusted inside too, so that npm and git reach what the host reaches. The
# tag carries a hash of this script and of those certificates, so a changed
# package list or a new CA makes a new base.
#
# usage: launcher/container/base-image.sh [REPOSITORY]   (prints the tag it made)
#        ENGINE=podman launcher/container/base-image.sh ...
set -eu
repo=${1:-sandy-base}
engine=${ENGINE:-docker}
suite=bookworm
packages=ca-certificates,git,gh,curl,jq,less,procps,ripgrep,openssh-client,nodejs,npm,passwd,libfuse3-3,libgit2-1.5,libpcre2-8-0,libcjson1,libutf8proc2
cas=/usr/local/share/ca-certificates
tag=$repo:$( (cat "$0"; find "$cas" -name '*.crt' -type f 2>/dev/null | sort | xargs -r cat) |
	sha256sum | cut -c1-12)

if "$engine" image inspect "$tag" >/dev/null 2>&1; then
	echo "$tag"
	exit 0
fi
if ! command -v mmdebstrap >/dev/null; then
	echo "base-image.sh: mmdebstrap is needed: install it (apt-get install mmdebstrap)" >&2
	exit 1
fi
# The machine's own apt sources, so that a mirror or proxy it is set up
# for is used here too.
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -s "$f" ] && grep -q "$suite" "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || sources=(http://deb.debian.org/debian)
echo "base-image.sh: building $tag from Debian packages (${sources[*]})" >&2
hooks=()
if [ -n "$(find "$cas" -name '*.crt' -type f 2>/dev/null)" ]; then
	hooks+=(--customize-hook="copy-in $cas /usr/local/share"
		--customize-hook='chroot "$1" update-ca-certificates >/dev/null')
fi
mmdebstrap --quiet --variant=apt --include="$packages" "${hooks[@]}" \
	--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
	"$suite" - "${sources[@]}" |
	"$engine" import --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "$tag"
