#!/usr/bin/env bash
# Builds the Debian package (debian/: sandy and sandyfs, the rules, the
# read-only overlays, the container files, and whatever else meson
# installs) from the working tree as it is, uncommitted changes included,
# and prints the path of the .deb.
#
#   scripts/package.sh [OUTDIR]
#
# Installs what the build needs (dpkg-dev, and debian/control's
# Build-Depends when some are missing), copies the tree without .git and
# without what git ignores (the build directories) into a scratch
# directory, runs `dpkg-buildpackage -us -uc -b` there, and leaves the
# .deb in OUTDIR (default: a new directory under /var/tmp). The build log
# is shown only when the build fails. Install the result with
# `dpkg -i PATH` (as root).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-}

say() { echo "package.sh: $*" >&2; }

export DEBIAN_FRONTEND=noninteractive
if ! command -v dpkg-checkbuilddeps >/dev/null; then
	say "installing dpkg-dev"
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null
fi
# debian/control's Build-Depends as one line, for apt-get satisfy (which
# understands versions and debhelper-compat, a virtual package).
builddeps=$(awk '/^Build-Depends:/ { f = 1; sub(/^Build-Depends:/, ""); printf "%s", $0; next }
	f && /^[ \t]/ { printf "%s", $0; next } { f = 0 }' "$src/debian/control")
if ! (cd "$src" && dpkg-checkbuilddeps >/dev/null 2>&1); then
	say "installing the build dependencies: $builddeps"
	apt-get update -qq
	apt-get satisfy -y -qq --no-install-recommends "$builddeps" >/dev/null
fi

# The package's version is the changelog's; it must be meson's too.
deb_version=$(cd "$src" && dpkg-parsechangelog -S Version)
meson_version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1)
if [ "${deb_version%%-*}" != "$meson_version" ]; then
	say "debian/changelog is at $deb_version, meson.build at $meson_version: add a changelog entry"
	exit 1
fi

work=$(mktemp -d /var/tmp/sandy-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
tree=$work/sandy-$meson_version
mkdir "$tree"
# The files git knows or would add (tracked, or untracked and not
# ignored), those that exist; without git, the tree minus the usual
# build directories.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$src" && git ls-files -z --cached --others --exclude-standard) |
		(cd "$src" && while IFS= read -r -d '' f; do
			[ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"
		done) |
		tar -C "$src" --null -T - -cf - | tar -C "$tree" -xf -
else
	tar -C "$src" --exclude=./.git --exclude='./build*' --exclude='./obj-*' \
		--exclude=./debian/.debhelper --exclude=./debian/tmp --exclude=./debian/sandy \
		-cf - . | tar -C "$tree" -xf -
fi

say "building in $tree"
if ! (cd "$tree" && dpkg-buildpackage -us -uc -b -Jauto) >"$work/build.log" 2>&1; then
	cat "$work/build.log" >&2
	say "dpkg-buildpackage failed"
	exit 1
fi
debs=("$work"/sandy_*.deb)
if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then
	say "expected one sandy_*.deb in $work, found: ${debs[*]}"
	exit 1
fi
if [ -z "$outdir" ]; then
	outdir=$(mktemp -d /var/tmp/sandy-deb.XXXXXX)
	chmod 755 "$outdir"
fi
mkdir -p "$outdir"
cp "${debs[0]}" "$outdir/"
echo "$(cd "$outdir" && pwd)/$(basename "${debs[0]}")"
