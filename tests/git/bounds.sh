#!/usr/bin/env bash
# The host reads what the agent made within bounds of memory. In
# bubblewrap sessions the agent rewrites a large tracked file in place
# under a text=auto filter, and makes branches whose objects are large
# but pack small (16 MiB of one-character lines, 101 MiB of zeros, a 12
# MiB commit message, 70 files of 500 KB) and branches libgit2 cannot read
# (a ref to a blob, a ref to no object). The summary of each session, `sandy git` and
# `sandy git import` peak under a bound (what listing nothing holds, and
# a margin), name what they counted without reading it and the limit
# that said so, list the branches after the broken ones, and the import
# of the blob over its limit is refused by name, writing nothing.
source "$SANDY_SRC/tests/launcher/helpers.bash"

# Peak resident memory allowed above what sandyfs git list holds for the
# project before the agent made anything (measured below: about 20 MiB,
# 100 MiB under AddressSanitizer). The cases below cost 100 MiB to 850
# MiB more when content is read whole.
MARGIN=$((48 * 1024)) # KiB

new_project
# A large tracked file, which libgit2's status would hash, through the
# filter, when its times change and its size does not.
printf '* text=auto\n' >"$proj/.gitattributes"
yes a | head -c $((40 << 20)) >"$proj/src/big.txt"
git -C "$proj" add -A && git -C "$proj" -c user.name=t -c user.email=t@example.invalid commit -qm big
git_hash() { (cd "$proj/.git" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum; }

ident='export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid \
	GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid'

# peak_kib OUT ERR COMMAND...: runs COMMAND in the project, its stdout in
# OUT, stderr in ERR; the peak resident memory of it and what it waited
# for, in KiB, in PEAK; its status in RC.
peak_kib() {
	local o=$1 e=$2
	shift 2
	(cd "$proj" && /usr/bin/time -o "$base/time" -f %M "$@") </dev/null >"$o" 2>"$e"
	rc=$?
	peak=$(tail -n 1 "$base/time")
}

# --- the summary of a session: big.txt rewritten in place, its size
# kept, its times changed
peak_kib "$base/out" "$base/err" "$SANDY" --runtime=none --rules "$rules" -- \
	sh -c 'yes b | head -c 41943040 >src/big.txt'
summary=$(cat "$base/err") first=$peak
# The bound: what listing no branch of the agent's holds, and the margin.
peak_kib "$base/out" "$base/err" "$SANDY" git --rules "$rules"
check_eq "sandy git lists no branch of the agent's yet" "" "$(cat "$base/out")"
MEMORY_MAX=$((peak + MARGIN))
diag "bound: $peak KiB for a listing of nothing, $MEMORY_MAX KiB with the margin"
peak=$first
f=$_failed
check_eq "the session runs" 0 "$rc"
check "its summary peaks under $MEMORY_MAX KiB ($peak KiB)" test "$peak" -lt "$MEMORY_MAX"
check "it lists big.txt as changed, not read, with the limit" grep -qxF \
	"       M  src/big.txt  (40.0 MiB, over the 16 MiB read limit: judged by its size and times, not read)" \
	<<<"$summary"
[ "$_failed" = "$f" ] || sed 's/^/#   /' <<<"$summary"

# --- the agent's branches
out=$(cd "$proj" && "$SANDY" --runtime=none --rules "$rules" -- sh -c "$ident"'
	set -u
	exec 2>&1
	# mk BRANCH PATH COMMAND...: a commit on main adding PATH with the blob COMMAND prints.
	mk() {
		b=$1 p=$2
		shift 2
		blob=$("$@" | git hash-object -w --stdin) &&
			export GIT_INDEX_FILE=/tmp/index.$b && git read-tree main &&
			git update-index --add --cacheinfo "100644,$blob,$p" &&
			c=$(git commit-tree "$(git write-tree)" -p main -m "$b") &&
			git update-ref "refs/heads/$b" "$c" && echo "made: $b"
		unset GIT_INDEX_FILE
	}
	mk a-lines src/lines.txt sh -c "yes a | head -c 16777216"
	mk d-good src/good.c echo "int good;"
	mk e-zeros src/zeros.bin head -c 105906176 /dev/zero
	# 70 files of 500 KB: more than a listing reads of them in all.
	blob=$(head -c 512000 /dev/zero | git hash-object -w --stdin) &&
		export GIT_INDEX_FILE=/tmp/index.many && git read-tree main &&
		for i in $(seq 10 79); do printf "100644 %s\tsrc/many/%s.bin\n" "$blob" "$i"; done |
		git update-index --index-info &&
		c=$(git commit-tree "$(git write-tree)" -p main -m g-many) &&
		git update-ref refs/heads/g-many "$c" && echo "made: g-many"
	unset GIT_INDEX_FILE
	# A ref to a blob, and a ref to an object that is not there.
	git hash-object -w --stdin </dev/null >.git/refs/heads/b-blob && echo "made: b-blob"
	echo 0123456789abcdef0123456789abcdef01234567 >.git/refs/heads/c-none && echo "made: c-none"
	msg=/tmp/msg && yes m | head -c 12582912 >$msg &&
		c=$(git commit-tree "$(git rev-parse main^{tree})" -p main -F $msg) &&
		git update-ref refs/heads/f-message "$c" && echo "made: f-message"' </dev/null 2>"$base/err")
for m in a-lines d-good e-zeros g-many b-blob c-none f-message; do
	check "inside: $m made" grep -qx "made: $m" <<<"$out"
done

# --- the summary of a session when the agent has such branches
peak_kib "$base/out" "$base/err" "$SANDY" --runtime=none --rules "$rules" -- true
summary=$(cat "$base/err")
f=$_failed
check_eq "a session that changes nothing runs" 0 "$rc"
check "its summary peaks under $MEMORY_MAX KiB ($peak KiB)" test "$peak" -lt "$MEMORY_MAX"
check "it lists the branches that can be read" grep -qx "  a-lines: 1 commit; sandy git import a-lines" \
	<<<"$summary"
check "after those that cannot" grep -qx "  d-good: 1 commit; sandy git import d-good" <<<"$summary"
for b in b-blob c-none f-message; do
	check "it says $b cannot be read" grep -qxF "  $b: cannot be read ('sandy git' says why)" \
		<<<"$summary"
done
[ "$_failed" = "$f" ] || sed 's/^/#   /' <<<"$summary"

# --- sandy git: the listing
peak_kib "$base/out" "$base/err" "$SANDY" git --rules "$rules"
list=$(cat "$base/out" "$base/err")
f=$_failed
check_eq "sandy git says a branch could not be read (status 1)" 1 "$rc"
check "it peaks under $MEMORY_MAX KiB ($peak KiB)" test "$peak" -lt "$MEMORY_MAX"
check "it counts the 16 MiB file, without its lines" grep -qx \
	"a-lines: 1 commit, 1 file changed, 0 insertions(+), 0 deletions(-); ready to import as sandy/a-lines" \
	<<<"$list"
check "and says so, with the limit" grep -qxF \
	"  src/lines.txt: 16.0 MiB, over the 512 KiB diff limit: counted, not read" <<<"$list"
check "it names the ref to a blob and skips it" grep -qE \
	"^sandyfs: branch 'b-blob' \([0-9a-f]{12}\) cannot be read: skipped$" <<<"$list"
check "it names the ref to nothing and skips it" grep -qxF \
	"sandyfs: branch 'c-none' (0123456789ab) cannot be read: skipped" <<<"$list"
check "it says why the 12 MiB commit is not read" grep -qF \
	"is 12.0 MiB, over the 8.0 MiB sandyfs reads of one" <<<"$list"
check "it lists the branch after the broken ones" grep -qx \
	"d-good: 1 commit, 1 file changed, 1 insertion(+), 0 deletions(-); ready to import as sandy/d-good" \
	<<<"$list"
check "it reads 32 MiB of files in all, 65 of the 500 KB ones, and names the others" \
	test "$(grep -c "^  src/many/[0-9]*\.bin: past the 32.0 MiB a listing reads: counted, not read$" \
		<<<"$list")" = 5 -a "$(grep -c "^  src/many/7[5-9]\.bin: past" <<<"$list")" = 5
[ "$_failed" = "$f" ] || sed 's/^/#   /' <<<"$list"

# --- sandy git import: the blob over its limit, refused by name
before=$(git_hash)
# (The private repository's alternates name the host's objects where the
# session saw them: git says it cannot find them, and needs none here.)
zeros=$(git -C "$("$SANDYFS" store "$proj" | cut -f1)/tree/.git" rev-parse e-zeros:src/zeros.bin \
	2>/dev/null)
peak_kib "$base/out" "$base/err" "$SANDY" git --rules "$rules" import e-zeros
msg=$(cat "$base/out" "$base/err")
f=$_failed
check "the import of the 101 MiB blob is refused (status $rc)" test "$rc" -ne 0
check "it peaks under $MEMORY_MAX KiB ($peak KiB)" test "$peak" -lt "$MEMORY_MAX"
check "it names the blob, its path, size and the limit, and that nothing was written" grep -qE \
	"^sandyfs: blob $zeros at 'src/zeros.bin' of commit [0-9a-f]{12} is 101.0 MiB, over the 100.0 MiB an import copies of one: 'e-zeros' not imported \(nothing was written\)$" \
	<<<"$msg"
check_eq "the host's .git is byte-identical" "$before" "$(git_hash)"
[ "$_failed" = "$f" ] || sed 's/^/#   /' <<<"$msg"

peak_kib "$base/out" "$base/err" "$SANDY" git --rules "$rules" import a-lines
check_eq "a 16 MiB blob, under the limit, is imported" 0 "$rc"
check_eq "with its content" 16777216 "$(git -C "$proj" cat-file -s sandy/a-lines:src/lines.txt)"
done_testing
