#!/usr/bin/env bash
# `sandyfs explain` prints, for present
# and absent paths, the class, the rule that decided it (file, line, entry)
# and its why, taken from the rule file itself; `--json` parses and says
# exactly what the text says. `sandyfs rules` lists the merged policy, as
# text and as JSON with the same rules. Paths may be given relative to
# SOURCE or as SOURCE/...; paths outside SOURCE are refused.
source "$SANDY_SRC/tests/lib.sh"

JSONFLAT=${JSONFLAT:-$SANDY_BUILD/tests/cli/jsonflat}
base=$(scratch)
# The rules of this tree, and nothing from the user running the tests.
export SANDY_RULES_DIR=$SANDY_SRC/rules SANDY_OVERLAYS_DIR=$SANDY_SRC/ro-overlays
export SANDY_CONFIG_DIR=$base/config
src=$base/proj
mkdir -p "$src/.vscode" "$src/src" "$src/sub/.git"
echo '{}' >"$src/package.json"
echo '{}' >"$src/.vscode/tasks.json"
echo 'let x = 1' >"$src/src/app.ts"

# run ARGS...: sandyfs ARGS, bounded in time; sets rc, out, err.
run() {
	timeout -k 5 30 "$SANDYFS" "$@" >"$base/out" 2>"$base/err" </dev/null
	rc=$?
	out=$(cat "$base/out") err=$(cat "$base/err")
}

# lines_of_out: the lines of $out in lines[], padded so that a short or
# empty output fails the checks instead of stopping the script (set -u).
lines_of_out() {
	mapfile -t lines <<<"$out"
	while [ ${#lines[@]} -lt 32 ]; do lines+=(""); done
}

# from_rule_file RULE_LINE WHY: RULE_LINE ("FILE:LINE: KEY[I] 'PATTERN'...")
# points at a line of FILE that holds PATTERN, and for protect entries WHY.
from_rule_file() {
	local re="^    rule: (/[^:]+):([0-9]+): ([a-z]+)\[([0-9]+)\] '([^']*)'"
	[[ $1 =~ $re ]] || {
		diag "not a rule line: $1"
		return 1
	}
	local file=${BASH_REMATCH[1]} line=${BASH_REMATCH[2]} key=${BASH_REMATCH[3]}
	local pattern=${BASH_REMATCH[5]} text
	text=$(sed -n "${line}p" "$file")
	[[ $text == *"\"$pattern\""* ]] || {
		diag "$file:$line does not hold '$pattern': $text"
		return 1
	}
	if [ "$key" = protect ] && [[ $text != *"\"why\": \"$2\""* ]]; then
		diag "$file:$line has another why: $text"
		return 1
	fi
}

[ -x "$JSONFLAT" ] || not_ok "the JSON checker '$JSONFLAT' is built"

# A present protected file, an absent one, writable, hidden, overlay,
# immutable, and the default.
run explain "$src" .vscode/tasks.json
check_eq "explain exits 0" 0 "$rc"
lines_of_out
check_eq "present protected path: class" ".vscode/tasks.json: protected (present)" "${lines[0]}"
check "present protected path: deciding rule in rules/base.json" \
	eval '[[ ${lines[1]} == "    rule: $SANDY_SRC/rules/base.json:"*"protect["*"] '"'"'.vscode/'"'"' (tier 0, always)" ]]'
check "present protected path: the why is the rule file's" \
	from_rule_file "${lines[1]}" "${lines[2]#    why:  }"

run explain "$src" .claude/settings.json
lines_of_out
check_eq "absent protected path: class" ".claude/settings.json: protected (absent)" "${lines[0]}"
check "absent protected path: deciding rule and why from the rule file" \
	from_rule_file "${lines[1]}" "${lines[2]#    why:  }"
check "absent protected path: the pattern that matched" \
	eval '[[ ${lines[1]} == *"'"'"'.claude/'"'"'"* ]]'

run explain "$src" src/app.ts src/new/dir/file.ts
lines_of_out
check_eq "present writable path" "src/app.ts: writable (present)" "${lines[0]}"
check "writable path: a write rule of rules/node.json (detected)" \
	eval '[[ ${lines[1]} == "    rule: $SANDY_SRC/rules/node.json:"*"write["* ]]'
check "writable path: the rule is in the file" from_rule_file "${lines[1]}" ""
check_eq "absent writable path" "src/new/dir/file.ts: writable (absent)" "${lines[3]}"

run explain "$src" .env
lines_of_out
check_eq "overlay: class" ".env: overlay (absent)" "${lines[0]}"
check "overlay: the host file served exists" eval '[ -f "${lines[3]#    overlay: }" ]'
run explain "$src" .env.local
lines_of_out
check_eq "hidden: class" ".env.local: hidden (absent)" "${lines[0]}"
check "hidden: rule and why from the file" from_rule_file "${lines[1]}" ""
check_eq "hidden: what to do" "    todo: hidden: it stays outside the sandbox" "${lines[3]}"
run explain "$src" sub/.git/config
lines_of_out
check_eq "immutable: class" "sub/.git/config: immutable (absent)" "${lines[0]}"
check_eq "immutable: built-in rule" "    rule: (built-in) immutable[0] '.git'" "${lines[1]}"
run explain "$src" README
lines_of_out
check_eq "default: class" "README: readonly (absent)" "${lines[0]}"
check_eq "default: rule" "    rule: (default)" "${lines[1]}"
check "default, absent: what the agent creates there is owned" \
	eval '[[ ${lines[4]} == "    todo: absent: what the agent creates here is owned by it"* ]]'

# The same path in every accepted spelling gives the same answer.
run explain "$src" .vscode/tasks.json
want=$out
run explain "$src" "$src/.vscode/tasks.json"
check_eq "SOURCE/PATH (absolute) is the same path" "$want" "$out"
run explain "$src" ./src/../.vscode//tasks.json
check_eq "'.', '..' and '//' are resolved lexically" "$want" "$out"
out=$(cd "$base" && "$SANDYFS" explain proj proj/.vscode/tasks.json 2>&1)
check_eq "SOURCE/PATH with a relative SOURCE" "$want" "$out"
run explain "$src" .VSCode./TASKS.json
check "a case/NTFS spelling is the protected name" eval '[[ $out == ".VSCode./TASKS.json: protected "* ]]'

# --json: parses, and renders back to exactly the text output.
render() {
	awk '
	function flush() {
		if (cur == "") return
		printf "%s: %s (%s)\n", (v["path"] == "" ? "." : v["path"]), v["class"],
			(v["exists"] == "true" ? "present" : "absent")
		r = v["rule.file"]
		if (v["rule.key"] != "") {
			r = (+v["rule.line"] > 0 ? r ":" v["rule.line"] ": " : r " ")
			r = r v["rule.key"] "[" v["rule.index"] "] '"'"'" v["rule.pattern"] "'"'"'"
			if ("rule.tier" in v)
				r = r " (tier " v["rule.tier"] (+v["rule.tier"] > 0 ? ", releasable)" : ", always)")
		}
		print "    rule: " r
		print "    why:  " v["why"]
		if ("overlay_file" in v) print "    overlay: " v["overlay_file"]
		if ("store_path" in v) print "    store: " v["store_path"]
		if (v["writable_below"] == "true")
			print "    below: write rules match paths below it (mkdir allowed)"
		if ("advice" in v) print "    todo: " v["advice"]
		delete v
	}
	{
		i = index($0, "="); k = substr($0, 1, i - 1); val = substr($0, i + 1)
		match(k, /^\[[0-9]+\]\./)
		n = substr(k, 2, RLENGTH - 3); f = substr(k, RLENGTH + 1)
		if (n != cur) { flush(); cur = n }
		v[f] = val
	}
	END { flush() }'
}
paths=(.vscode/tasks.json .claude/settings.json src/app.ts src/x/y.ts .env .env.local
	sub/.git/config README package.json lib "" absent/deep/a/b/c.ts node_modules/x/y.js
	made-by-agent.txt)
run explain "$src" "${paths[@]}"
text=$out
run explain --json "$src" "${paths[@]}"
check_eq "explain --json exits 0" 0 "$rc"
echo "$out" >"$base/explain.json"
check "explain --json parses" eval '"$JSONFLAT" <"$base/explain.json" >"$base/explain.flat"'
check_eq "explain --json has one object per path" "${#paths[@]}" \
	"$(grep -c '^\[[0-9]*\]\.class=' "$base/explain.flat")"
check_eq "explain --json says what the text says" "$text" "$(render <"$base/explain.flat")"

# sandyfs rules: the sources and every rule, in text and JSON alike.
run rules "$src"
check_eq "rules exits 0" 0 "$rc"
check "rules names base as always included" eval '[[ $out == *"/rules/base.json (always)"* ]]'
check "rules names node as detected by package.json" \
	eval '[[ $out == *"/rules/node.json (detected: package.json)"* ]]'
check "rules includes the protections of undetected types" \
	eval '[[ $out == *"/rules/rust.json (not detected: its protections only)"* ]]'
check "rules lists no write glob of an undetected type" \
	eval '! grep -q "rust.json:.*write\[" <<<"$out"'
check "rules says whether what the agent creates is owned" \
	eval '[[ $out == *$'"'"'\nowned:\n    what the agent creates through the mount'"'"'* ]]'
text_rules=$(grep -c '^        from: ' <<<"$out")
text_sources=$(sed -n '/^sources:/,/^immutable:/p' <<<"$out" | grep -c '^    /')
run rules --json "$src"
echo "$out" >"$base/rules.json"
check "rules --json parses" eval '"$JSONFLAT" <"$base/rules.json" >"$base/rules.flat"'
check_eq "rules --json lists the same rules" "$text_rules" \
	"$(grep -c '^rules\[[0-9]*\]\.class=' "$base/rules.flat")"
check_eq "rules --json lists the same sources" "$text_sources" \
	"$(grep -c '^sources\[[0-9]*\]\.path=' "$base/rules.flat")"
check "rules --json carries every why" eval \
	'[ "$(grep -c "^rules\[[0-9]*\]\.why=." "$base/rules.flat")" = "$text_rules" ]'

run rules --type rust --no-detect "$src"
check "--type selects a project type and turns detection off" \
	eval '[[ $out == *"/rules/rust.json (--type)"* && $out == *"/rules/node.json (not detected: its protections only)"* ]]'

# Protection does not depend on detection: a Python project with one crate
# in a subfolder protects that crate's build script and cargo config (rust
# is detected there), and names of types detected nowhere.
py=$base/pyproj
mkdir -p "$py/crates/foo/src"
printf '[project]\nname = "p"\n' >"$py/pyproject.toml"
printf '[package]\nname = "foo"\n' >"$py/crates/foo/Cargo.toml"
run explain "$py" crates/foo/.cargo/config.toml crates/foo/build.rs crates/foo/src/lib.rs \
	crates/foo/target/debug/foo package.json
check "crate in a subfolder: its .cargo/config.toml is protected" \
	grep -qx 'crates/foo/.cargo/config.toml: protected (absent)' <<<"$out"
check "crate in a subfolder: its build.rs is protected" \
	grep -qx 'crates/foo/build.rs: protected (absent)' <<<"$out"
check "crate in a subfolder: its sources are writable" \
	grep -qx 'crates/foo/src/lib.rs: writable (absent)' <<<"$out"
check "crate in a subfolder: its target/ is private" \
	grep -qx 'crates/foo/target/debug/foo: private (absent)' <<<"$out"
check "a type detected nowhere still protects its names (package.json)" \
	grep -qx 'package.json: protected (absent)' <<<"$out"
run rules "$py"
check "rules: rust detected in the subfolder" \
	eval '[[ $out == *"/rules/rust.json (detected: crates/foo/Cargo.toml)"* ]]'

# Refusals: outside SOURCE, usage errors, missing SOURCE.
run explain "$src" /etc/passwd
check_eq "an absolute path outside SOURCE: exit 1" 1 "$rc"
check_eq "an absolute path outside SOURCE: message" \
	"sandyfs: path '/etc/passwd' is outside '$src'" "$err"
run explain "$src" ../x
check "a relative path leaving SOURCE is refused" eval '[ $rc = 1 ] && [[ $err == *"is outside"* ]]'
run explain "$src"
check "explain without PATH is a usage error (exit 2)" \
	eval '[ $rc = 2 ] && [[ $err == "sandyfs: explain needs SOURCE and at least one PATH"* ]]'
run explain --bogus "$src" x
check "an unknown option is a usage error (exit 2)" \
	eval '[ $rc = 2 ] && [[ $err == "sandyfs: unknown option '"'"'--bogus'"'"'"* ]]'
run rules
check "rules without SOURCE is a usage error (exit 2)" eval '[ $rc = 2 ]'
run explain "$base/nonexistent" x
check_eq "a missing SOURCE: message" \
	"sandyfs: cannot load rules: cannot open source directory '$base/nonexistent': No such file or directory" \
	"$err"
run explain --help
check "explain --help prints usage on stdout" eval '[ $rc = 0 ] && [[ $out == "usage: sandyfs explain"* ]]'

# sandy under sudo: root's environment (its HOME, no SANDY_CONFIG_DIR),
# SUDO_UID the user's. The user's rules.d is the one read, as the
# gateway reads the user's config.json: a protection the user added
# holds there too.
ensure_test_user || exit 1
uhome=$(getent passwd "$TEST_USER" | cut -d: -f6)
urules=$uhome/.config/sandy/rules.d
ufile=$urules/sandy-explain-sudo-$$.json
# Only what this makes is removed afterwards.
for d in "$uhome/.config" "$uhome/.config/sandy" "$urules"; do
	[ -d "$d" ] || at_exit "rmdir '$d'"
done
mkdir -p "$urules" && at_exit "rm -f '$ufile'"
printf '{"name": "mine", "protect": [{"path": "sudo-only-%s.md", "why": "the user says so"}]}\n' $$ >"$ufile"
mkdir -p "$base/roothome"
sudo_explain() {
	env -u SANDY_CONFIG_DIR -u XDG_CONFIG_HOME HOME="$1" SUDO_UID="$(id -u "$TEST_USER")" \
		SUDO_GID="$(id -g "$TEST_USER")" "$SANDY_BUILD/launcher/sandy" explain -C "$src" \
		"sudo-only-$$.md" 2>&1
}
out=$(sudo_explain "$base/roothome")
check "sandy explain under sudo (HOME root's): the user's rules.d protects" \
	eval '[[ $out == "sudo-only-$$.md: protected"* ]] && [[ $out == *"the user says so"* ]]'
[[ $out == "sudo-only-$$.md: protected"* ]] || diag "$out"
out=$(SANDY_CONFIG_DIR=$base/config "$SANDY_BUILD/launcher/sandy" explain -C "$src" "sudo-only-$$.md" 2>&1)
check "without sudo, SANDY_CONFIG_DIR elsewhere: not protected" \
	eval '[[ $out != *"protected"* ]]'

done_testing
