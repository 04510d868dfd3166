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
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ ! -f "$dir/build.ninja" ] && ! meson setup "$dir" "${opts[@]}" >"$log" 2>&1; then
	cat "$log" >&2
	echo "build.sh: meson setup of '$dir' failed" >&2
	exit 1
fi
if ! ninja -C "$dir" >"$log" 2>&1; then
	cat "$log" >&2
	echo "build.sh: build of '$dir' failed" >&2
	exit 1
fi
echo "$dir"
