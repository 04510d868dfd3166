#!/usr/bin/env bash
# sandy and what the agent makes: a file it creates outside the write globs
# is its own (the summary says so), a private directory (node_modules) is
# kept in the project's store and never in the project (the summary says
# where), the note for the agent explains both, and `sandy clean` removes
# the store. Without a container (--runtime=none), checked on the host.
source "$SANDY_SRC/tests/launcher/helpers.bash"

base=$(scratch)
proj=$base/proj
make_repo "$proj" || exit 1
printf 'host notes\n' >"$proj/NOTES"
store=$("$SANDYFS" store "$proj" | cut -f1)

out=$(cd "$proj" && "$SANDY" --runtime=none -- sh -c '
	mkdir -p node_modules/pkg && echo "module.exports = 1" >node_modules/pkg/index.js &&
		echo "installed"
	echo object >made.o && echo "made.o written"
	echo changed >>NOTES && echo "NOTES written" || echo "NOTES refused"
	sed -n "/^These directories are private/,/\.$/p; /is yours/p" "$SANDY_POLICY"' \
	</dev/null 2>"$base/err")
rc=$?
err=$(cat "$base/err")
check_eq "the exit status is the command's" 0 "$rc"
check "a private directory is made" grep -qx installed <<<"$out"
check "a new file outside the write globs is made" grep -qx "made.o written" <<<"$out"
check "a host file outside the write globs is refused" grep -qx "NOTES refused" <<<"$out"
check_eq "NOTES is unchanged on the host" "host notes" "$(cat "$proj/NOTES")"
check "node_modules is not in the project" test ! -e "$proj/node_modules"
check "node_modules is in the store" test -f "$store/tree/node_modules/pkg/index.js"
check_eq "made.o is on the host" object "$(cat "$proj/made.o" 2>&1)"
check "the note says what the agent creates is its own" grep -q "is yours" <<<"$out"
check "the note names the private directories" \
	grep -q "These directories are private to the sandbox:.*node_modules/" <<<"$out"
check "the summary marks the agent's own file" \
	grep -Eq "^ +A +made\.o  \(the agent's own\)$" <<<"$err"
check "the summary says where the private directories are kept" \
	grep -qF "are kept in $store" <<<"$err"
check "the summary names the clean command" grep -qF "'sandy clean' removes them" <<<"$err"
check "the summary lists the NOTES denial" grep -Eq "e\.g\. [a-z]+ 'NOTES'" <<<"$err"
check "nothing left mounted" no_sandy_mounts "$proj"

out=$("$SANDY" clean "$proj" 2>&1)
check_eq "sandy clean: exit 0" 0 "$?"
check_eq "sandy clean: says what it removed" "cleared $store" "$out"
check "sandy clean: the store is gone" test ! -e "$store"
check "sandy clean: the project is untouched" eval '[ -f "$proj/made.o" ] && [ "$(cat "$proj/NOTES")" = "host notes" ]'
out=$(cd "$proj" && "$SANDY" clean 2>&1)
check_eq "sandy clean of a project without a store: exit 0" 0 "$?"
"$SANDY" clean a b >/dev/null 2>&1
check_eq "sandy clean with two projects: usage error (125)" 125 "$?"
done_testing
