#!/usr/bin/env bash
# The scripts `meson test` runs (tests/meson.build gives them as arguments,
# DIR/NAME.sh) are exactly the ones tests/run.sh globs.
source "$SANDY_SRC/tests/lib.sh"

registered=$(printf '%s\n' "$@" | sort)
globbed=$(cd "$SANDY_SRC/tests" && printf '%s\n' {cli,fs,attack,workflows,launcher,network,install,git}/*.sh | sort)
check "tests/meson.build lists scripts ($#)" test $# -gt 0
while IFS= read -r s; do
	diag "not registered in tests/meson.build: $s"
done < <(comm -13 <(echo "$registered") <(echo "$globbed"))
while IFS= read -r s; do
	diag "registered in tests/meson.build, not in tests/: $s"
done < <(comm -23 <(echo "$registered") <(echo "$globbed"))
check "every script tests/run.sh runs is registered with meson, and no other" \
	test "$globbed" == "$registered"
done_testing
