#!/usr/bin/env bash
# The man pages sandy(1), sandyfs(1) and sandy-rules(5) the build makes
# (docs/helpgen.py) from the help texts (launcher/sandy.help,
# fusefs/sandyfs.help) and their own sources: --help prints the help text
# as it is; every option and every subcommand that `sandy --help` and
# `sandyfs --help` print is in the man page, and in README.md; the pages
# render without a warning from groff or mandoc.
source "$SANDY_SRC/tests/lib.sh"

SANDY=${SANDY:-$SANDY_BUILD/launcher/sandy}
base=$(scratch)
declare -A page=(
	[sandy]=$SANDY_BUILD/launcher/sandy.1
	[sandyfs]=$SANDY_BUILD/fusefs/sandyfs.1
	[sandy-rules]=$SANDY_BUILD/docs/sandy-rules.5
)
declare -A prog=([sandy]=$SANDY [sandyfs]=$SANDYFS)

# The options a text names: --long and -x, not the "--" before a command
# nor the hyphens inside words.
options_of() {
	perl -lne 'print $1 while /(?<![A-Za-z0-9_-])(--[a-z][a-z0-9-]*|-[A-Za-z](?![A-Za-z0-9_-]))/g' |
		sort -u
}
# The subcommands a help text's usage lines name ("sandyfs git list" too).
subcommands_of() {
	sed -nE "s/^(usage: |       )$1 (([a-z][a-z-]*)( [a-z][a-z-]*)?).*/\\2/p" |
		sed -E 's/ (\[|[A-Z]).*//' | sort -u
}
# rendered FILE: the man page as text, one line per paragraph (no
# hyphenation, no wrapping), no overstriking.
rendered() {
	groff -man -Tascii -rLL=1000n -P-cbou "$1" 2>/dev/null
}
# has_word TEXTFILE WORD: WORD appears, not as part of a longer option.
has_word() {
	grep -qE -- "(^|[^A-Za-z0-9_-])$(sed 's/[.]/\\./g' <<<"$2")([^A-Za-z0-9_-]|\$)" "$1"
}

for name in sandy sandyfs sandy-rules; do
	check "$name: the man page is built" test -s "${page[$name]}"
done

for name in sandy sandyfs; do
	help=$("${prog[$name]}" --help)
	check_eq "$name: --help exits 0" 0 "$?"
	rendered "${page[$name]}" >"$base/$name.txt"
	opts=$(options_of <<<"$help")
	cmds=$(subcommands_of "$name" <<<"$help")
	check "$name: --help names options ($(wc -l <<<"$opts"))" test -n "$opts"
	check "$name: --help names subcommands ($(echo $cmds))" test -n "$cmds"
	check_eq "$name: every option of --help is in the man page" "" \
		"$(comm -23 <(echo "$opts") <(options_of <"$base/$name.txt") | xargs)"
	check_eq "$name: every option of --help is in README.md" "" \
		"$(comm -23 <(echo "$opts") <(options_of <"$SANDY_SRC/README.md") | xargs)"
	missing=() missing_readme=()
	while IFS= read -r c; do
		has_word "$base/$name.txt" "$name $c" || missing+=("$c")
		has_word "$SANDY_SRC/README.md" "$name $c" || missing_readme+=("$c")
	done <<<"$cmds"
	check_eq "$name: every subcommand of --help is in the man page" "" "${missing[*]}"
	check_eq "$name: every subcommand of --help is in README.md" "" "${missing_readme[*]}"
	# Every line of the help text's prose and option descriptions is in
	# the man page, word for word (the man page is made from it).
	# (Not the options blocks' titles, which are headings there, nor
	# "Exit status:", which is the section's name.)
	tr -s ' \n' '  ' <"$base/$name.txt" >"$base/$name.flat"
	lost=$(sed -E 's/^ +//; s/^-[^ ]*( [A-Z][^ ]*)? +//; s/^Exit status: //' <<<"$help" |
		grep -vE "^(usage:|$name |([a-z]+ )*options( \(.*\))?:$|$)" |
		sed -E 's/ +/ /g; s/ $//; s/`//g' |
		awk -v flat="$base/$name.flat" 'BEGIN { getline text <flat }
			index(text, $0) == 0 { print }')
	check_eq "$name: every line of --help's text is in the man page" "" "$lost"
done

# --help prints the help text as it is kept, with the string macros of the
# headers its build includes (engine.h's default images, kube.h's defaults)
# where sandy.help says @MACRO@.
macros=$(sed -nE 's/^#define ([A-Z_][A-Z0-9_]*)[[:space:]]+"([^"|]*)"$/s|@\1@|\2|g/p' \
	"$SANDY_SRC/launcher/runtime/engine.h" "$SANDY_SRC/launcher/world/kube.h")
check_eq "sandy --help is launcher/sandy.help" \
	"$(sed -e "$macros" "$SANDY_SRC/launcher/sandy.help")" "$("$SANDY" --help)"
check_eq "sandyfs --help is fusefs/sandyfs.help" "$(cat "$SANDY_SRC/fusefs/sandyfs.help")" \
	"$("$SANDYFS" --help)"
check "sandyfs explain --help has the same rule options" \
	grep -qF "$(sed -n '/^rule options:/,/^$/p' "$SANDY_SRC/fusefs/sandyfs.help" | sed '/^$/d')" \
	<("$SANDYFS" explain --help)

# sandy-rules(5): the keys of a rule file, the classes, the tiers, where
# the files are.
rendered "${page[sandy-rules]}" >"$base/rules.txt"
missing=()
for w in name description extends detect write generated private protect hide overlay \
	release owned why tier immutable hidden protected writable readonly \
	rules.d/*.json .sandy/rules.json --type --rules --no-detect SANDY_RULES_DIR; do
	grep -qF -- "$w" "$base/rules.txt" || missing+=("$w")
done
check_eq "sandy-rules: names every key, class and source" "" "${missing[*]}"

# Lint: groff's warnings, all of them; mandoc's from "warning" up.
for name in sandy sandyfs sandy-rules; do
	out=$(groff -man -Tutf8 -ww -z "${page[$name]}" 2>&1)
	check_eq "$name: groff -ww renders it without a warning" "" "$out"
	if command -v mandoc >/dev/null; then
		out=$(mandoc -Tlint -Wwarning "${page[$name]}" 2>&1)
		check_eq "$name: mandoc -Tlint finds nothing" "" "$out"
	else
		not_ok "$name: mandoc -Tlint (mandoc is not installed: scripts/deps.sh installs it)"
	fi
	out=$(MANWIDTH=80 man -l "${page[$name]}" 2>&1 >/dev/null)
	check_eq "$name: man -l renders it without a message" "" "$out"
done
done_testing
