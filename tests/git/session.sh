#!/usr/bin/env bash
# The agent's own repository, end to end with real git through sandy
# (bubblewrap sessions: the host's git is the agent's): it commits,
# branches, stashes, rebases and adds a worktree while every file under the
# host's .git stays byte-identical; `sandy git import` brings an ordinary
# branch back as sandy/BRANCH with the very same objects, and refuses, with
# commit, path and rule, branches that plant protected names by every route
# a tree allows, writing nothing; a push from inside reaches a bare remote,
# and the opt-in push gate refuses the one that would carry a protected
# path. A docker session shows the container's side of the layering.
source "$SANDY_SRC/tests/launcher/helpers.bash"

base=$(scratch)
proj=$base/proj
rules=$base/rules.json
share=$base/share
write_test_rules "$rules" || exit 1
make_repo "$proj" || exit 1
printf 'export HOST=1\n' >"$proj/.envrc"
git -C "$proj" add .envrc
git -C "$proj" -c user.name=t -c user.email=t@example.invalid commit -qm "host: direnv"
git -C "$proj" config user.name "Host User"
git -C "$proj" config core.hooksPath .githooks
git -C "$proj" config filter.evil.clean "touch $base/filter-ran"
mkdir -p "$share"
clean_leftovers "$proj"

# Every file under the host's .git, hashed.
git_hash() { (cd "$proj/.git" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum; }
before=$(git_hash)

# sandy_none ARGS... -- SCRIPT: a bubblewrap session in the project, whose
# output lands in OUT and ERR, status in RC.
sandy_none() {
	out=$(cd "$proj" && SANDY_SHARE_DIR=$share "$SANDY" --runtime=none --rules "$rules" "$@" \
		</dev/null 2>"$base/err")
	rc=$?
	err=$(cat "$base/err")
}

dump() {
	diag "stdout:"
	sed 's/^/#   /' <<<"$out"
	diag "stderr:"
	sed 's/^/#   /' <<<"$err"
}

ident='export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid \
	GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid'

# --- commit, branch, stash, rebase, worktree inside; the host's .git untouched
f=$_failed
sandy_none -- sh -c "$ident"'
	set -u
	ok() { echo "did: $1"; }
	git config user.name >/dev/null && echo "name=$(git config user.name)"
	echo "hooks=$(git config core.hooksPath || echo none) filter=$(git config filter.evil.clean || echo none)"
	echo "int one;" >>src/main.c && git commit -qam "agent: one" && ok commit
	git branch feat && git checkout -q feat && ok branch
	echo "int two;" >src/two.c && git add src/two.c && git commit -qm "agent: two" && ok commit2
	echo "int wip;" >>src/two.c && git stash -q && test "$(git stash list | wc -l)" = 1 &&
		! grep -q wip src/two.c && git stash pop -q && grep -q wip src/two.c && ok stash
	git commit -qam "agent: wip" && ok commit3
	git checkout -q main && echo "int three;" >src/three.c && git add src/three.c &&
		git commit -qm "agent: three on main" && git checkout -q feat && ok main-moved
	git rebase -q main && test -f src/three.c && ok rebase
	git worktree add -q .worktrees/side && ok worktree
	(cd .worktrees/side && echo "int side;" >src/side.c && git add src/side.c &&
		git commit -qm "agent: side" && ok worktree-commit)
	git status --porcelain | grep -q worktrees && echo "worktrees shown as untracked"
	git fsck --no-dangling 2>&1 | grep -v "^Checking" | head -3
	echo "tip=$(git rev-parse feat) tree=$(git rev-parse feat^{tree})"'
for step in commit branch commit2 stash commit3 main-moved rebase worktree worktree-commit; do
	check "inside: $step" grep -qx "did: $step" <<<"$out"
done
check_eq "inside: the agent's git has the host's identity from its config" "name=Host User" \
	"$(grep '^name=' <<<"$out")"
check_eq "inside: no hooksPath or filter reaches the agent's config" \
	"hooks=none filter=none" "$(grep '^hooks=' <<<"$out")"
check_fails "inside: .worktrees/ is not untracked noise" grep -q "worktrees shown" <<<"$out"
check_eq "the host's .git is byte-identical after the session" "$before" "$(git_hash)"
check_eq "the host's branches are as they were" "main" \
	"$(git -C "$proj" for-each-ref --format='%(refname:short)' refs/heads)"
check "the agent's worktree is not in the project on the host" test ! -e "$proj/.worktrees"
check "the summary lists the branches waiting to be imported" \
	grep -Eq '^  feat: 4 commits; sandy git import feat$' <<<"$err"
[ "$_failed" = "$f" ] || dump
tip=$(sed -n 's/^tip=\([0-9a-f]*\) .*/\1/p' <<<"$out")
tree=$(sed -n 's/.* tree=\([0-9a-f]*\)$/\1/p' <<<"$out")

# --- a second session: the agent's branches are kept, the host's follow
git -C "$proj" -c user.name=t -c user.email=t@example.invalid commit -q --allow-empty -m "host: later"
host_main=$(git -C "$proj" rev-parse main)
before=$(git_hash)
sandy_none -- sh -c 'git rev-parse feat; git rev-parse main; git log -1 --format=%s main'
check_eq "a later session keeps the agent's feat" "$tip" "$(sed -n 1p <<<"$out")"
check "a later session keeps the agent's own main (it moved it)" \
	grep -qx "agent: three on main" <<<"$out"
check "sandyfs says which refs it kept" grep -q "kept the agent's own .*refs/heads/main" <<<"$err"
check_eq "the host's .git is untouched by the second session" "$before" "$(git_hash)"

# --- listing and importing an ordinary branch
list=$(cd "$proj" && "$SANDY" git --rules "$rules" 2>&1)
check "sandy git lists feat as ready" grep -q '^feat: 4 commits, .*ready to import as sandy/feat$' \
	<<<"$list"
check "sandy git lists its commits" grep -Eq '^  [0-9a-f]{12} agent: wip$' <<<"$list"
status_before=$(git -C "$proj" status --porcelain)
imp=$(cd "$proj" && "$SANDY" git --rules "$rules" import feat 2>&1)
check_eq "sandy git import feat succeeds" 0 "$?"
check "it says what it did" grep -q "^imported feat as sandy/feat" <<<"$imp"
check_eq "sandy/feat is the agent's very commit" "$tip" \
	"$(git -C "$proj" rev-parse --verify -q refs/heads/sandy/feat)"
check_eq "with the agent's very tree" "$tree" "$(git -C "$proj" rev-parse 'sandy/feat^{tree}')"
check "every object of sandy/feat is in the host's repository" \
	git -C "$proj" fsck --no-dangling --connectivity-only
check_eq "the content arrived" "int two;" "$(git -C "$proj" show sandy/feat:src/two.c | head -1)"
check_eq "the user's own branch did not move" "$host_main" "$(git -C "$proj" rev-parse main)"
check_eq "the working tree was not touched" "$status_before" "$(git -C "$proj" status --porcelain)"
again=$(cd "$proj" && "$SANDY" git --rules "$rules" import feat 2>&1)
check "importing again is a no-op" grep -q "already at" <<<"$again"
list=$(cd "$proj" && "$SANDY" git --rules "$rules" 2>&1)
check_fails "an imported branch is no longer listed" grep -q '^feat:' <<<"$list"

# --- branches that plant protected names, each by another route
f=$_failed
sandy_none -- sh -c "$ident"'
	set -u
	blob() { printf "%s\n" "$1" | git hash-object -w --stdin; }
	# mk BRANCH COMMAND...: a branch from main whose one commit has what
	# COMMAND makes of main'"'"'s tree in a scratch index (the working
	# tree is left alone: checking such trees out is what is refused).
	mk() {
		b=$1
		shift
		export GIT_INDEX_FILE=/tmp/index.$b
		git read-tree main && "$@" && t=$(git write-tree) &&
			c=$(git commit-tree "$t" -p main -m "plant: $b") &&
			git update-ref "refs/heads/$b" "$c" && echo "made: $b"
		unset GIT_INDEX_FILE
	}
	add() { git update-index --add --cacheinfo "$1,$2,$3"; }
	mk vscode add 100644 "$(blob "{\"tasks\":[]}")" .vscode/tasks.json
	mk envrc add 100644 "$(blob "export EVIL=1")" .envrc
	mk mode git update-index --chmod=+x .envrc
	mk case add 100644 "$(blob evil)" .ENVRC
	mk unicode add 100644 "$(blob evil)" "$(printf ".en\342\200\213vrc")"
	mk submodule add 160000 "$(git rev-parse main)" vendor/lib
	mk symlink add 120000 "$(printf %s .git/hooks | git hash-object -w --stdin)" hooks
	hooks=$(printf "100755 blob %s\tpre-commit\n" "$(blob "#!/bin/sh")" | git mktree)
	dotgit=$(printf "040000 tree %s\thooks\n" "$hooks" | git mktree)
	top=$( (git ls-tree main; printf "040000 tree %s\t.git\n" "$dotgit") | git mktree)
	c=$(git commit-tree "$top" -p main -m "plant: dotgit") &&
		git update-ref refs/heads/dotgit "$c" && echo "made: dotgit"
	for b in vscode envrc mode case unicode submodule symlink dotgit; do
		echo "commit $b $(git rev-parse --short=12 "$b")"
	done'
for b in vscode envrc mode case unicode submodule symlink dotgit; do
	check "inside: branch $b made" grep -qx "made: $b" <<<"$out"
done
[ "$_failed" = "$f" ] || dump
before=$(git_hash)
# refused BRANCH PATH RULE: the import fails naming the commit, PATH and RULE.
refused() {
	local b=$1 path=$2 rule=$3 c msg
	c=$(sed -n "s/^commit $b //p" <<<"$out")
	msg=$(cd "$proj" && "$SANDY" git --rules "$rules" import "$b" 2>&1)
	local st=$?
	check "import $b is refused (status $st)" test "$st" -ne 0
	check "import $b names commit $c, '$path' and $rule" \
		grep -qF -- "commit $c " <<<"$msg"
	check "import $b names the path '$path'" grep -qF -- "'$path'" <<<"$msg"
	check "import $b names the rule ($rule)" grep -qF -- "$rule" <<<"$msg"
	check_fails "no sandy/$b in the host's repository" \
		git -C "$proj" rev-parse --verify -q "refs/heads/sandy/$b"
	grep -qF "'$path'" <<<"$msg" || sed 's/^/#   /' <<<"$msg"
}
refused vscode .vscode/tasks.json "base.json:"
refused envrc .envrc "'.envrc'"
refused mode .envrc "changes the mode of '.envrc'"
refused case .ENVRC "'.envrc'"
# A zero-width space: one name on HFS+, and shown escaped, since a
# terminal shows nothing for it.
refused unicode '".en\342\200\213vrc"' "'.envrc'"
refused submodule vendor/lib "submodule entry"
refused symlink hooks "'.git'"
refused dotgit .git/hooks/pre-commit "immutable"
check_eq "after the refused imports the host's .git is byte-identical (no object written)" \
	"$before" "$(git_hash)"
bad=$(cd "$proj" && "$SANDY" git --rules "$rules" import '../../x' 2>&1)
check_eq "a bad branch name is a usage error" 2 "$?"
check "it says so" grep -q "is not a branch name" <<<"$bad"
bad=$(cd "$proj" && "$SANDY" git --rules "$rules" import nosuch 2>&1)
check "a missing branch is an error" test $? -ne 0
check "it says so" grep -q "has no branch 'nosuch'" <<<"$bad"

# --- pushing from inside; the opt-in gate
git init -q --bare "$share/remote.git"
sandy_none -- sh -c "$ident"'
	git remote add share "file://$HOME/shared/remote.git"
	git push -q share feat 2>&1 && echo "pushed: feat"
	git push -q share vscode 2>&1 && echo "pushed: vscode"'
check "a push from inside reaches the bare remote" grep -qx "pushed: feat" <<<"$out"
check_eq "the remote has the agent's feat" "$tip" "$(git -C "$share/remote.git" rev-parse feat)"
check "without the gate, anything is pushed (the remote's review decides)" \
	grep -qx "pushed: vscode" <<<"$out"
git -C "$share/remote.git" branch -q -D vscode
sandy_none --push-gate -- sh -c "$ident"'
	git checkout -q feat && echo "int gated;" >src/gated.c && git add src/gated.c &&
		git commit -qm "agent: gated" && git push -q share feat 2>&1 && echo "pushed: feat"
	git push -q share vscode 2>&1 || echo "refused: vscode"
	git checkout -q -f main'
f=$_failed
check "with the gate an ordinary push goes through" grep -qx "pushed: feat" <<<"$out"
check_eq "the remote has it" "agent: gated" "$(git -C "$share/remote.git" log -1 --format=%s feat)"
check "with the gate the protected push is refused" grep -qx "refused: vscode" <<<"$out"
check "the gate names the path and the rule" grep -q "adds '.vscode/tasks.json': protected" <<<"$out"
check_fails "the remote has no vscode branch" git -C "$share/remote.git" rev-parse --verify -q vscode
check "the gate does not judge the host's own history (.envrc of 'host: direnv')" \
	test "$(grep -c "'.envrc'" <<<"$out")" = 0
check_eq "the host's .git is byte-identical after the pushes" "$before" "$(git_hash)"
[ "$_failed" = "$f" ] || dump

# --- a hostile private repository: symlinks to host files, a FIFO
for v in packed index config alt; do printf 'victim %s\n' "$v" >"$base/victim-$v"; done
victims() { (cd "$base" && sha256sum victim-* && stat -c '%n %F' victim-*); }
victims_before=$(victims)
out=$(cd "$proj" && timeout 120 "$SANDY" --runtime=none --rules "$rules" -- sh -c '
	b='"$base"'
	ln -sf "$b/victim-packed" .git/packed-refs && ln -sf "$b/victim-index" .git/index &&
		ln -sf "$b/victim-config" .git/config.sandy &&
		ln -sf "$b/victim-alt" .git/objects/info/alternates &&
		mkfifo .git/objects/pack/pack-evil.idx && echo planted' </dev/null 2>"$base/err")
check_eq "hostile: the session that plants them ends (no hang at its summary)" 0 "$?"
check "hostile: the agent planted symlinks and a FIFO in its repository" grep -qx planted <<<"$out"
check "hostile: the summary says the branches cannot be listed" \
	grep -q "cannot list the agent's branches" "$base/err"
msg=$(cd "$proj" && timeout 60 "$SANDY" git --rules "$rules" 2>&1)
st=$?
check "hostile: sandy git refuses, without waiting on the FIFO (status $st)" \
	test "$st" -ne 0 -a "$st" -ne 124
check "hostile: it names what it will not read" \
	grep -Eq "'objects/(pack/pack-evil.idx', a FIFO|info/alternates', a symlink)" <<<"$msg"
timeout 120 "$SANDY" -q --runtime=none --rules "$rules" "$proj" -- true </dev/null 2>"$base/err"
check_eq "hostile: the next session starts (the refresh replaces the planted links)" 0 "$?"
check_eq "hostile: every host file a link pointed at is unchanged" "$victims_before" "$(victims)"
store=$("$SANDYFS" store "$proj" | cut -f1)
for f in packed-refs config.sandy objects/info/alternates; do
	check "hostile: $f is a file of the store again, not the link" \
		test -f "$store/tree/.git/$f" -a ! -L "$store/tree/.git/$f"
done
msg=$(cd "$proj" && timeout 60 "$SANDY" git --rules "$rules" 2>&1)
check "hostile: the FIFO, still there, is named" grep -q "pack-evil.idx', a FIFO" <<<"$msg"
rm -f "$store/tree/.git/objects/pack/pack-evil.idx"
msg=$(cd "$proj" && timeout 60 "$SANDY" git --rules "$rules" 2>&1)
check_eq "hostile: with the FIFO gone, sandy git lists again" 0 "$?"

# --- a project with a submodule: the agent's copy has one too
lib=$base/lib
sub=$base/withsub
git init -q -b main "$lib" && echo l >"$lib/l.txt" && git -C "$lib" add l.txt &&
	git -C "$lib" -c user.name=t -c user.email=t@example.invalid commit -qm lib
git init -q -b main "$sub" && mkdir -p "$sub/src" && echo 'int x;' >"$sub/src/x.c"
git -C "$sub" add src && git -C "$sub" -c protocol.file.allow=always submodule -q add "$lib" vendor/lib
git -C "$sub" -c user.name=t -c user.email=t@example.invalid commit -qm "with a submodule"
clean_leftovers "$sub"
sub_hash() { (cd "$sub/.git" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum; }
sub_before=$(sub_hash)
out=$(cd "$sub" && "$SANDY" -q --runtime=none --rules "$rules" -- sh -c "$ident"'
	git status --porcelain && echo "status works"
	git submodule status | grep -q "vendor/lib (heads/main)" && echo "submodule seen"
	cd vendor/lib && git log -1 --format=%s && git checkout -q -b agent-side && echo "branched inside"' \
	</dev/null 2>"$base/err")
check "submodule: git status works inside" grep -qx "status works" <<<"$out"
check "submodule: git submodule status sees it checked out" grep -qx "submodule seen" <<<"$out"
check "submodule: its history is there" grep -qx "lib" <<<"$out"
check "submodule: the agent branches in it" grep -qx "branched inside" <<<"$out"
check_eq "submodule: the host's .git (modules included) is byte-identical" "$sub_before" "$(sub_hash)"
check_fails "submodule: the agent's branch is not in the host's submodule" \
	git -C "$sub/vendor/lib" rev-parse --verify -q agent-side

# --- docker: the host's git directory is read-only where the alternates say
if ensure_docker && ensure_test_image; then
	out=$(cd "$proj" && "$SANDY" --rules "$rules" -- sh -c '
		cat /workspace/.git/objects/info/alternates
		test -d /run/sandy/host-git/objects && echo "objects visible"
		touch /run/sandy/host-git/objects/x 2>/dev/null && echo "host objects writable"
		echo "[x] y = 1" >>/workspace/.git/config && echo "own config written"' \
		</dev/null 2>"$base/err")
	check_eq "docker: alternates name the host's objects where they are shown" \
		"/run/sandy/host-git/objects" "$(sed -n 1p <<<"$out")"
	check "docker: they are visible" grep -qx "objects visible" <<<"$out"
	check_fails "docker: they are read-only" grep -q "host objects writable" <<<"$out"
	check "docker: the agent writes its own .git/config" grep -qx "own config written" <<<"$out"
	check_eq "docker: the host's .git is byte-identical" "$before" "$(git_hash)"
	check "docker: nothing left mounted" no_sandy_mounts "$proj"
else
	not_ok "docker answers and the test image is present"
fi
done_testing
