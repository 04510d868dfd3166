#!/usr/bin/env bash
# The source tree keeps the layers docs/DESIGN.md draws (tests/tools/layout.py
# holds the rules): each folder includes only its own layer and those
# below, no include cycle between modules, no libgit2 or libfuse in
# fusefs/policy/, cli/ headers private to cli/, the engine module apart
# from sandyfs's box and daemon modules, short command functions. Each rule
# is also shown to catch a copy of the tree broken against it, so that none
# passes by checking nothing.
source "$SANDY_SRC/tests/lib.sh"

checker=$SANDY_SRC/tests/tools/layout.py
base=$(scratch)

out=$(python3 "$checker" "$SANDY_SRC" 2>&1)
rc=$?
echo "$out"
grep -q '^not ok' <<<"$out" && _failed=1
[ $rc -eq 0 ] || [[ $out == *"not ok"* ]] || not_ok "layout.py ran (status $rc)"
grep -q '^ok' <<<"$out" || not_ok "layout.py checked something"

# broken RULE-TEXT EDIT...: a copy of the tree with EDIT applied (a shell
# command run in the copy) breaks the rule whose line contains RULE-TEXT.
broken() {
	local rule=$1 edit=$2 copy
	copy=$(mktemp -d "$base/copy.XXXXXX")
	(cd "$SANDY_SRC" && cp -r common fusefs launcher "$copy/")
	if ! (cd "$copy" && eval "$edit"); then
		not_ok "plant: $edit"
		return
	fi
	local res
	res=$(python3 "$checker" "$copy" 2>&1)
	if grep -q "^not ok - .*$rule" <<<"$res"; then
		ok "a tree broken by '$edit' fails '$rule'"
	else
		not_ok "a tree broken by '$edit' fails '$rule'"
		sed 's/^/#   /' <<<"$res"
	fi
	rm -rf "$copy"
}

broken "layers below it" 'sed -i "1i #include \"guard.h\"" fusefs/policy/glob.c'
broken "layers below it" 'sed -i "1i #include \"session/run.h\"" launcher/world/egress.c'
broken "layers below it" 'sed -i "1i #include \"launcher/sys/sandy.h\"" common/strv.c'
broken "include cycle" 'sed -i "1i #include \"git/gitrefs.h\"" fusefs/git/gitlayout.c && sed -i "1i #include \"gitlayout.h\"" fusefs/git/gitrefs.c'
broken "libgit2 or libfuse" 'sed -i "1i #include <git2.h>" fusefs/policy/canon.c'
broken "libgit2 or libfuse" 'sed -i "s/^policy_deps = \[/policy_deps = [git2_dep, /" fusefs/policy/meson.build'
broken "cli/ header" 'echo "int x;" >fusefs/cli/opts.h && sed -i "1i #include \"cli/opts.h\"" fusefs/ops.c'
broken "engine module" 'sed -i "1i #include \"fsbox.h\"" launcher/runtime/engine.c'
broken "longer than" 'printf "static int long_one(void)\n{\n%s\treturn 0;\n}\n" "$(printf "\t;\n%.0s" $(seq 130))" >>launcher/cli/main.c'

done_testing
