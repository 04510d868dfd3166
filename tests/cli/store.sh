#!/usr/bin/env bash
# The project's store: where `sandyfs mount` keeps the private directories
# (node_modules, .venv, ...) and ownership records. `sandyfs store` says
# where it is and how big; --clear removes it, but not while a mount of the
# project uses it. `sandyfs explain` names the owned files and where a
# private path lives. Everything is checked on the host.
source "$SANDY_SRC/tests/lib.sh"

base=$(scratch)
export SANDY_RULES_DIR=$SANDY_SRC/rules SANDY_OVERLAYS_DIR=$SANDY_SRC/ro-overlays
export SANDY_CONFIG_DIR=$base/config SANDY_CACHE_DIR=$base/cache
src=$base/proj mnt=$base/mnt
mkdir -p "$src/src" "$mnt"
printf '{"name": "p", "version": "1.0.0"}\n' >"$src/package.json"
printf 'host file\n' >"$src/LICENSE"

run() {
	timeout -k 5 30 "$SANDYFS" "$@" >"$base/out" 2>"$base/err" </dev/null
	rc=$?
	out=$(cat "$base/out") err=$(cat "$base/err")
}

# The default store: one per project, under $SANDY_CACHE_DIR/projects.
run store "$src"
check_eq "store of a project never mounted: exit 0" 0 "$rc"
store=${out%%$'\t'*}
check "the default store is under \$SANDY_CACHE_DIR/projects, named after the project" \
	eval '[[ $store == "$SANDY_CACHE_DIR/projects/proj-"* ]]'
check "it does not exist yet, and asking made nothing" test ! -e "$store"
check "its size is 0" eval '[[ $out == *"0.0 MiB in 0 files" ]]'
other=$base/other
mkdir -p "$other"
run store "$other"
check "another project has another store" eval '[[ ${out%%$'"'"'\t'"'"'*} != "$store" ]]'

# A session: a private directory and an owned file.
if ! mount_policy --pid-file "$base/pid" "$src" "$mnt"; then
	not_ok "mount with the default store"
	done_testing
fi
check "npm-like install: mkdir -p node_modules/pkg" mkdir -p "$mnt/node_modules/pkg"
check "a file in it" sh -c "printf 'module.exports = 1\n' >'$mnt/node_modules/pkg/index.js'"
check "a file the agent makes at the root" sh -c "printf 'notes\n' >'$mnt/notes.dat'"
check "the store holds the private directory" test -f "$store/tree/node_modules/pkg/index.js"
check "SOURCE does not" test ! -e "$src/node_modules"
check_eq "the store says which project it serves" "$(realpath "$src")" "$(cat "$store/source")"
run store "$src"
check "store while mounted: its path and a size" \
	eval '[ $rc = 0 ] && [[ $out == "$store"$'"'"'\t'"'"'*" MiB in "*" files" ]]'
run store --clear "$src"
check_eq "clear while mounted: refused (exit 1)" 1 "$rc"
check_eq "clear while mounted: says why" \
	"sandyfs: cannot clear store '$store': a mount of the project is using it" "$err"
check "clear while mounted: the store is untouched" test -f "$store/tree/node_modules/pkg/index.js"

run explain "$src" notes.dat LICENSE node_modules/pkg/index.js
mapfile -t lines <<<"$out"
check_eq "explain: a file the agent made is owned" "notes.dat: owned (present)" "${lines[0]}"
check "explain: its rule is the built-in owned rule" \
	eval '[[ ${lines[1]} == "    rule: (built-in) owned[0]"* ]]'
check "explain: a host file stays readonly" eval '[[ $out == *$'"'"'\nLICENSE: readonly (present)\n'"'"'* ]]'
check "explain: a private path is present, in the store" \
	eval '[[ $out == *"node_modules/pkg/index.js: private (present)"* && $out == *"    store: $store/tree/node_modules/pkg/index.js"* ]]'
run explain --json "$src" notes.dat
check "explain --json: owned true" eval '[[ $out == *"\"class\":"*"\"owned\""* && $out == *"\"owned\":"*"true"* ]]'

"$SANDYFS" umount "$mnt"
wait_until 5 eval "! kill -0 $(cat "$base/pid" 2>/dev/null || echo 0) 2>/dev/null"

# A second session finds both where the first left them.
if mount_policy --pid-file "$base/pid" "$src" "$mnt"; then
	check "second session: the private directory is back" \
		test -f "$mnt/node_modules/pkg/index.js"
	check "second session: the owned file may still be changed" \
		sh -c "printf 'more\n' >>'$mnt/notes.dat'"
	check_eq "second session: ... on the host" "$(printf 'notes\nmore')" "$(cat "$src/notes.dat")"
	check "second session: and removed" rm "$mnt/notes.dat"
	check "second session: a host file still may not" \
		eval '! sh -c "printf x >>\"$mnt/LICENSE\"" 2>/dev/null'
	check_eq "second session: LICENSE unchanged on the host" "host file" "$(cat "$src/LICENSE")"
	"$SANDYFS" umount "$mnt"
	wait_until 5 eval "! kill -0 $(cat "$base/pid" 2>/dev/null || echo 0) 2>/dev/null"
else
	not_ok "second mount"
fi

run store --clear "$src"
check_eq "clear once unmounted: exit 0" 0 "$rc"
check_eq "clear: says what it removed" "cleared $store" "$out"
check "clear: the store is gone" test ! -e "$store"
check "clear: SOURCE is untouched" eval '[ -f "$src/package.json" ] && [ ! -e "$src/node_modules" ]'
run store --clear "$src"
check_eq "clearing a store that is gone: exit 0" 0 "$rc"

# --store DIR, for mount and store alike; bad input.
mine=$base/mystore
if mount_policy --store "$mine" "$src" "$mnt"; then
	mkdir -p "$mnt/.venv/bin"
	check "--store: the private directory lands in DIR/tree" test -d "$mine/tree/.venv/bin"
	"$SANDYFS" umount "$mnt"
else
	not_ok "mount --store"
fi
run store --store "$mine" "$src"
check "store --store DIR: that store" eval '[[ $out == "$mine"$'"'"'\t'"'"'* ]]'
run store "$base/nonexistent"
check "store of a missing SOURCE: exit 1 and a message" \
	eval '[ $rc = 1 ] && [[ $err == "sandyfs: cannot resolve source '"'"'$base/nonexistent'"'"'"* ]]'
run store
check "store without SOURCE: usage error (exit 2)" eval '[ $rc = 2 ]'
printf 'x\n' >"$base/afile"
run mount --store "$base/afile/x" "$src" "$mnt"
check "mount with a store that cannot be made: exit 1, nothing mounted" \
	eval '[ $rc = 1 ] && [[ $err == "sandyfs: cannot make store directory '"'"'$base/afile/x'"'"'"* ]] && ! is_mounted "$mnt"'
done_testing
