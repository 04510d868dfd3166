#!/usr/bin/env bash
# Configures and builds one flavour of the tree.
#   scripts/build.sh [normal|fallback|asan|fuzz|bundled]   (default: normal)
# normal   -> build/          the binary users run
# fallback -> build-fallback/ the portability layer without O_PATH, openat2, /proc
# asan     -> build-asan/     AddressSanitizer + UndefinedBehaviorSanitizer
# fuzz     -> build-fuzz/     clang, plus the libFuzzer targets (tests/fuzz)
# bundled  -> build-bundled/  libfuse 3.18.3 built in (subprojects/libfuse.wrap,
#                             downloaded from Debian's archive at setup): FUSE
#                             over io_uring, no security.capability lookup per write
set -eu
cd "$(dirname "$0")/.."
flavour=${1:-normal}
setup_env=()
case $flavour in
normal) dir=build opts=() ;;
fallback) dir=build-fallback opts=(-Dportable_fallback=true) ;;
asan) dir=build-asan opts=(-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug) ;;
fuzz) dir=build-fuzz opts=(-Dfuzz=true) setup_env=(CC=clang) ;;
bundled) dir=build-bundled opts=(-Dlibfuse=bundled) ;;
*)
	echo "build.sh: unknown flavour '$flavour' (normal, fallback, asan, fuzz, bundled)" >&2
	exit 2
	;;
esac
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ ! -f "$dir/build.ninja" ] &&
	! env "${setup_env[@]}" meson setup "$dir" "${opts[@]}" >"$log" 2>&1; then
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
