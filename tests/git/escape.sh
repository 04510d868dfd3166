#!/usr/bin/env bash
# What sandy prints that the agent chose reaches the terminal escaped: the
# agent (a bubblewrap session) names files, a refused path, branches and
# a commit subject with OSC 52 (set the clipboard), CSI (move the cursor,
# erase a line), C1 controls as UTF-8 and bytes that are not UTF-8. The
# end-of-session summary, `sandy git` and an import's refusal then hold no
# control character and no byte that is not UTF-8, and show each name in
# git's quoted form; the audit log stays strict JSON, with the refused
# name's very bytes in path_hex.
source "$SANDY_SRC/tests/launcher/helpers.bash"

new_project
share=$base/share
mkdir -p "$share" "$proj/.vscode"

# printable: stdin is UTF-8, and holds no control character but newlines
# and no format character that reorders or hides text.
printable() {
	python3 -c '
import sys
text = sys.stdin.buffer.read().decode("utf-8")  # strict: fails on a stray byte
hiding = {0x061c, 0xfeff} | set(range(0x200b, 0x2010)) | set(range(0x2028, 0x202f)) | \
	set(range(0x2060, 0x206a))
bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f or
	ord(c) in hiding]
sys.exit(1 if bad else 0)'
}

show() { sed 's/^/#   /' | cat -v; }

ident='export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid \
	GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid'

# The names, as the agent's sh makes them.
agent_names='
	osc=$(printf "src/A  notes\033]52;c;aGk=\007\033[1A\033[2K")
	ff=$(printf "src/bad\377name")
	refused=$(printf ".vscode/\377\033]52;c;aGk=\007")
	branch=$(printf "br\302\233x")
	subject=$(printf "subj \033[31mred\033[0m\033[1A\033[2K")'

out=$(cd "$proj" && SANDY_SHARE_DIR=$share "$SANDY" --runtime=none --rules "$rules" -- sh -c "$ident$agent_names"'
	set -u
	exec 2>/dev/null # what the agent prints is its own; the summary is sandy'"'"'s
	git checkout -q -b "$branch" && echo "int b;" >src/b.c && git add src/b.c &&
		git commit -qm "$subject" && git checkout -q main && echo "made: branch"
	echo one >"$osc" && echo two >"$ff" && echo "made: files"
	echo x >"$refused" || echo "made: refusal"
	# A branch that plants a protected name with escapes in it, to be refused
	blob=$(echo "{}" | git hash-object -w --stdin)
	export GIT_INDEX_FILE=/tmp/index.plant
	git read-tree main && git update-index --add --cacheinfo "100644,$blob,$(printf ".vscode/\033[2Ktasks.json")" &&
		c=$(git commit-tree "$(git write-tree)" -p main -m plant) &&
		git update-ref refs/heads/plant "$c" && echo "made: plant"
	unset GIT_INDEX_FILE
	grep -q "bytes in hex in path_hex" "$SANDY_POLICY" && echo "made: note"
	cp "$SANDY_DENIALS" "$HOME/shared/denials.jsonl"' </dev/null 2>"$base/err")
check_eq "the session ran" 0 "$?"
summary=$(cat "$base/err")
for m in files refusal branch plant; do
	check "inside: $m made" grep -qx "made: $m" <<<"$out"
done
check "the policy note tells the agent how a name that is not UTF-8 is logged" \
	grep -qx "made: note" <<<"$out"

f=$_failed
check "the summary is UTF-8 with no control character" printable <"$base/err"
check "the summary lists the OSC 52 name escaped" grep -qxF \
	'       A  "src/A  notes\033]52;c;aGk=\a\033[1A\033[2K"' <<<"$summary"
check "the summary lists the 0xff name escaped" grep -qxF '       A  "src/bad\377name"' <<<"$summary"
check "the summary names the refused path escaped" grep -qF \
	"e.g. create '\".vscode/\\377\\033]52;c;aGk=\\a\"'" <<<"$summary"
check "the summary names the branch escaped" grep -qF \
	'  "br\302\233x": 1 commit; sandy git import "br\302\233x"' <<<"$summary"
[ "$_failed" = "$f" ] || show <<<"$summary"

# The audit log: strict JSON in UTF-8, and the refused name's bytes.
log=$share/denials.jsonl
check "the agent could read the audit log" test -s "$log"
check "every line of the audit log is strict JSON in UTF-8, the name's bytes in path_hex" \
	python3 -c '
import json, sys
want = b".vscode/\xff\x1b]52;c;aGk=\x07"
found = False
for raw in open(sys.argv[1], "rb"):
    rec = json.loads(raw.decode("utf-8"))  # strict: a stray byte fails
    if "path_hex" in rec and bytes.fromhex(rec["path_hex"]) == want:
        found = rec["path"] == want.decode("utf-8", "replace")
sys.exit(0 if found else 1)' "$log"

# sandy explain and sandyfs rules: a path and a detected directory.
expl=$(cd "$proj" && "$SANDY" explain --rules "$rules" "$(printf 'src/A  notes\033]52;c;aGk=\a\033[1A\033[2K')" 2>&1)
check "sandy explain shows the path escaped" grep -qxF \
	'"src/A  notes\033]52;c;aGk=\a\033[1A\033[2K": writable (present)' <<<"$expl"
check "with no control character" printable <<<"$expl"
# (Markers are protected: the agent makes none. The project's own names
# are anyone's, a clone's say.)
mkdir "$proj/$(printf 'src/tool\033[2K')" && touch "$proj/$(printf 'src/tool\033[2K')/Cargo.toml"
srcs=$("$SANDYFS" rules --rules "$rules" "$proj" 2>&1)
check "sandyfs rules names the directory a type was detected in, escaped" grep -qF \
	'detected: "src/tool\033[2K"/Cargo.toml' <<<"$srcs"
check "with no control character" printable <<<"$srcs"

# sandy git: the listing, and an import that is refused.
list=$(cd "$proj" && "$SANDY" git --rules "$rules" 2>&1)
f=$_failed
check "sandy git's listing is UTF-8 with no control character" printable <<<"$list"
check "it names the branch escaped" grep -qF \
	'"br\302\233x": 1 commit, 1 file changed' <<<"$list"
check "and its commit's subject" grep -qE \
	'^  [0-9a-f]{12} "subj \\033\[31mred\\033\[0m\\033\[1A\\033\[2K"$' <<<"$list"
check "and the path its refusal names" grep -qF \
	"adds '\".vscode/\\033[2Ktasks.json\"': protected" <<<"$list"
[ "$_failed" = "$f" ] || show <<<"$list"

before=$(git -C "$proj" for-each-ref)
imp=$(cd "$proj" && "$SANDY" git --rules "$rules" import plant 2>&1)
st=$?
check "the import of the planting branch is refused (status $st)" test "$st" -ne 0
f=$_failed
check "its refusal is UTF-8 with no control character" printable <<<"$imp"
check "it names the path escaped" grep -qF "'\".vscode/\\033[2Ktasks.json\"'" <<<"$imp"
check_eq "no ref was written" "$before" "$(git -C "$proj" for-each-ref)"
[ "$_failed" = "$f" ] || show <<<"$imp"

imp=$(cd "$proj" && "$SANDY" git --rules "$rules" import "$(printf 'br\302\233x')" 2>&1)
check "the branch with a C1 control in its name is imported" \
	git -C "$proj" rev-parse -q --verify "refs/heads/sandy/$(printf 'br\302\233x')"
check "and said so, escaped" grep -qxF \
	'imported "br\302\233x" as "sandy/br\302\233x"'" ($(git -C "$proj" rev-parse --short=12 "refs/heads/sandy/$(printf 'br\302\233x')"))" <<<"$imp"
check "with no control character" printable <<<"$imp"
done_testing
