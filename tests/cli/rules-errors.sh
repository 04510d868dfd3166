#!/usr/bin/env bash
# A rule file with a syntax error, an
# unknown key, a wrong type, a bad glob, an unknown extends, an extends
# cycle (or a missing why, a duplicate key, a release where none is allowed)
# is rejected with a message naming the file, the line and the reason, and
# a non-zero exit; `sandyfs mount` with such a file leaves no mount behind.
# The file may come from --rules, from ~/.config/sandy/rules.d, from the
# project's .sandy/rules.json or from the shipped rules (extends, --type).
source "$SANDY_SRC/tests/lib.sh"

base=$(scratch)
base=$(cd "$base" && pwd -P) # mount names files by their real path
shipped=$base/shipped
cp -r "$SANDY_SRC/rules" "$shipped"
export SANDY_RULES_DIR=$shipped SANDY_OVERLAYS_DIR=$SANDY_SRC/ro-overlays
export SANDY_CONFIG_DIR=$base/config
mkdir -p "$SANDY_CONFIG_DIR/rules.d"
src=$base/src mnt=$base/mnt
mkdir -p "$src" "$mnt"
echo 'x' >"$src/file"

# run ARGS...: sandyfs ARGS, bounded in time; sets rc, out, err.
run() {
	timeout -k 5 30 "$SANDYFS" "$@" >"$base/out" 2>"$base/err" </dev/null
	rc=$?
	out=$(cat "$base/out") err=$(cat "$base/err")
}

# rejected DESCRIPTION WHERE REASON [RULE OPTIONS...]: explain, rules and
# mount all fail (exit 1) and say "WHERE: REASON" (WHERE is FILE:LINE);
# the mount leaves nothing mounted.
rejected() {
	local desc=$1 where=$2 reason=$3
	shift 3
	local want="sandyfs: cannot load rules: $where: $reason"

	run explain "$@" "$src" file
	if [ "$rc" = 1 ] && [[ $err == "$want"* ]] && [ -z "$out" ]; then
		ok "$desc: explain says '$where: $reason'"
	else
		not_ok "$desc: explain says '$where: $reason'"
		diag "exit $rc, stderr: $err"
	fi
	run rules "$@" "$src"
	if [ "$rc" = 1 ] && [[ $err == "$want"* ]]; then
		ok "$desc: rules fails the same way"
	else
		not_ok "$desc: rules fails the same way"
		diag "exit $rc, stderr: $err"
	fi
	run mount "$@" "$src" "$mnt"
	if is_mounted "$mnt"; then
		_mounts+=("$mnt")
		unmount_all
		not_ok "$desc: mount is refused, nothing mounted"
		diag "mounted despite the broken rules"
	elif [ "$rc" != 0 ] && [[ $err == *"$where: $reason"* ]] &&
		[ -z "$(ls -A "$mnt")" ]; then
		ok "$desc: mount is refused, nothing mounted"
	else
		not_ok "$desc: mount is refused, nothing mounted"
		diag "exit $rc, stderr: $err"
	fi
}

f=$base/syntax.json
printf '{\n  "write": ["src/**"]\n  "protect": []\n}\n' >"$f"
rejected "syntax error" "$f:3" "syntax error near" -r "$f"

f=$base/unknown.json
printf '{\n  "name": "x",\n\n  "description": "d",\n  "write": [],\n\n  "wirte": ["src/**"]\n}\n' >"$f"
rejected "unknown key" "$f:7" "unknown key 'wirte'" -r "$f"

f=$base/type.json
printf '{\n  "write": "src/**"\n}\n' >"$f"
rejected "wrong type" "$f:2" "wrong type for 'write': expected an array of globs" -r "$f"

f=$base/glob.json
printf '{\n  "write": ["ok/**",\n            "src/[abc"]\n}\n' >"$f"
rejected "bad glob" "$f:3" "bad glob 'src/[abc' in 'write': unterminated bracket expression" \
	-r "$f"

f=$base/extends.json
printf '{\n  "extends": ["base",\n              "nosuchtype"]\n}\n' >"$f"
rejected "unknown extends" "$f:3" "unknown rule set 'nosuchtype' in 'extends'" -r "$f"

printf '{\n  "extends": ["cyc-b"]\n}\n' >"$shipped/cyc-a.json"
printf '{\n\n  "extends": ["base", "cyc-a"]\n}\n' >"$shipped/cyc-b.json"
rejected "extends cycle" "$shipped/cyc-b.json:3" "'extends' cycle: 'cyc-a' -> 'cyc-b' -> 'cyc-a'" \
	--type cyc-a
rm "$shipped/cyc-a.json" "$shipped/cyc-b.json"

f=$base/why.json
printf '{\n  "protect": [\n    {"path": "x"}\n  ]\n}\n' >"$f"
rejected "protect entry without why" "$f:3" "'protect' entry without 'why'" -r "$f"

f=$base/dup.json
printf '{\n  "write": [],\n  "write": ["a"]\n}\n' >"$f"
rejected "duplicate key" "$f:3" "duplicate key 'write'" -r "$f"

f=$base/tier0.json
printf '{\n  "release": [\n    ".vscode/"\n  ]\n}\n' >"$f"
rejected "releasing an always-protected name" "$f:3" "cannot release '.vscode/'" -r "$f"

printf '{\n  "wirte": []\n}\n' >"$SANDY_CONFIG_DIR/rules.d/broken.json"
rejected "a broken user rule file" "$SANDY_CONFIG_DIR/rules.d/broken.json:2" "unknown key 'wirte'"
rm "$SANDY_CONFIG_DIR/rules.d/broken.json"

mkdir -p "$src/.sandy"
printf '{\n  "write": ["**"],\n  "release": ["Makefile"]\n}\n' >"$src/.sandy/rules.json"
rejected "release in the project's rule file" "$src/.sandy/rules.json:3" \
	"'release' is only allowed in user-level rule files and on the command line"
printf '{"write": [\n"**",\n}\n' >"$src/.sandy/rules.json"
rejected "a syntax error in the project's rule file" "$src/.sandy/rules.json:3" "syntax error"
rm -r "$src/.sandy"

printf '{\n  "protect": [{"path": ".vscode/", "why": "x"}],\n  "wirte": []\n}\n' \
	>"$shipped/node.json"
echo '{}' >"$src/package.json"
rejected "a broken shipped file selected by detection" "$shipped/node.json:3" "unknown key 'wirte'"
cp "$SANDY_SRC/rules/node.json" "$shipped/node.json"

run explain -r "$base/missing.json" "$src" file
check_eq "a missing --rules file: message" \
	"sandyfs: cannot load rules: cannot open rule file '$base/missing.json': No such file or directory" \
	"$err"
check_eq "a missing --rules file: exit 1" 1 "$rc"
run explain --type nosuch "$src" file
check "an unknown --type is named" \
	eval '[ $rc = 1 ] && [[ $err == "sandyfs: cannot load rules: unknown project type '"'"'nosuch'"'"'"* ]]'

done_testing
