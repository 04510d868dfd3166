#!/usr/bin/env bash
# Configures and builds one flavour of the tree.
#   scripts/build.sh [normal|fallback|asan]   (default: normal)
# normal   -> build/          the binary users run
# fallback -> build-fallback/ the portability layer without O_PATH, openat2, /proc
# asan     -> build-asan/     AddressSanitizer + UndefinedBehaviorSanitizer
set -eu
cd "$(dirname "$0")/.."
flavour=${1:-normal}
case $flavour in
normal) dir=build opts=() ;;
fallback) dir=build-fallback opts=(-Dportable_fallback=true) ;;
asan) dir=build-asan opts=(-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug) ;;
*)
	echo "build.sh: unknown flavour '$flavour' (normal, fallback, asan)" >&2
	exit 2
	;;
esac
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "${opts[@]}" >/dev/null
fi
ninja -C "$dir" >/dev/null
echo "$dir"
