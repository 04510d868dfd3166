#!/usr/bin/env bash
# Branches the agent crafts with git's plumbing, each to plant on the host
# what the mount keeps from it: symlinks and a submodule at modes libgit2
# reads as files (120755, 160755), `.cargo -> docs/c` with a rustc-wrapper
# in docs/c/config.toml, a directory git takes for a repository (HEAD,
# objects/, refs/ and a config whose gpg.program `git log` runs), objects
# the host's git fsck refuses (a tree out of order, a file and a directory
# of one name, a zero-padded date) and a branch that is a tag. Each is made
# inside a bubblewrap session; each `sandy git import` refuses it, names
# what is wrong, and writes nothing: the host's refs, objects and `git fsck
# --strict` are as before. An ordinary branch still comes back, and after
# its checkout cargo and git run nothing planted. The same plumbing run in
# a scratch clone, outside any check, shows what git and cargo do with
# each crafted branch, so each attack is known to be real.
source "$SANDY_SRC/tests/launcher/helpers.bash"

# cargo as the caller has it (a rustup proxy finds its toolchains under
# the real HOME, which helpers.bash replaced).
cargo=$(PATH=$PATH:/root/.cargo/bin command -v cargo || echo cargo)
rustup_home=${RUSTUP_HOME:-/root/.rustup}
run_cargo() { (cd "$1" && RUSTUP_HOME=$rustup_home CARGO_HOME=$base/cargo-home "$cargo" build -q --offline); }

base=$(scratch)
proj=$base/proj
rules=$base/rules.json
share=$base/share
ctl=$base/control
write_test_rules "$rules" || exit 1
make_repo "$proj" || exit 1
printf '[package]\nname = "victim"\nversion = "0.1.0"\nedition = "2021"\n' >"$proj/Cargo.toml"
printf 'fn main() {}\n' >"$proj/src/main.rs"
printf 'target/\n' >"$proj/.gitignore"
mkdir -p "$proj/docs" && echo guide >"$proj/docs/guide.md"
git -C "$proj" add -A && git -C "$proj" -c user.name=t -c user.email=t@example.invalid \
	commit -qm "host: a crate"
mkdir -p "$share" "$base/marks" "$base/ctl-marks"
clean_leftovers "$proj"

# The agent's plumbing, run inside the session in the project and, as a
# control, in a clone on the host. MARK: where a planted program, run,
# leaves its mark.
cat >"$share/craft.sh" <<'CRAFT'
set -u
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.invalid \
	GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.invalid
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
blob() { printf '%s' "$1" | git hash-object -w --stdin; }
# rawtree: lines "MODE ID NAME" to a tree object, bytes as given (in that
# order, unless SORT=1: then in git's order, duplicates kept).
rawtree() {
	SORT=${SORT:-0} python3 -c '
import os, sys
ents = []
for line in sys.stdin.read().splitlines():
    mode, oid, name = line.split(" ", 2)
    ents.append((mode, oid, name))
if os.environ["SORT"] == "1":
    ents.sort(key=lambda e: e[2].encode() + (b"/" if e[0] == "40000" else b""))
sys.stdout.buffer.write(b"".join(m.encode() + b" " + n.encode() + b"\0" + bytes.fromhex(o)
                                 for m, o, n in ents))' | git hash-object --literally -t tree -w --stdin
}
main_entries() { git ls-tree main | sed 's/^\([0-7]*\) [a-z]* \([0-9a-f]*\)	/\1 \2 /;s/^040000/40000/'; }
branch() { # BRANCH TREE: a commit of TREE on main
	c=$(git commit-tree "$2" -p main -m "plant: $1") && git update-ref "refs/heads/$1" "$c" &&
		echo "made: $1 $c"
}

# Symlinks at 120755: git checks them out as symlinks; libgit2 calls them files.
branch mode120755 "$( (git ls-tree main
	printf '120755 blob %s\tlnkabs\n120755 blob %s\tlnkgit\n' "$(blob /etc)" "$(blob .git)") |
	git mktree)"
# A submodule at 160755.
vendor=$(printf '160755 commit %s\tlib\n' "$(git rev-parse main)" | git mktree)
branch mode160755 "$( (git ls-tree main; printf '040000 tree %s\tvendor\n' "$vendor") | git mktree)"
# .cargo -> docs/c, with a config there that names a wrapper for rustc.
export GIT_INDEX_FILE=$T/index.cargo
git read-tree main
git update-index --add --cacheinfo "120000,$(blob docs/c),.cargo"
git update-index --add --cacheinfo \
	"100644,$(blob '[build]
rustc-wrapper = "docs/c/wrap.sh"
'),docs/c/config.toml"
git update-index --add --cacheinfo "100755,$(blob "#!/bin/sh
touch $MARK/cargo-ran
exec \"\$@\"
"),docs/c/wrap.sh"
branch cargo "$(git write-tree)"
# src/fixture, a bare repository to git: `git log` in it verifies the
# signature its config asks for with the gpg.program it names.
b=$T/bare
git init -q --bare "$b" && echo 'ref: refs/heads/main' >"$b/HEAD"
fake=$(printf 'tree %s\nauthor a <a@x> 1 +0000\ncommitter a <a@x> 1 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n x\n -----END PGP SIGNATURE-----\n\nsigned\n' \
	"$(git --git-dir="$b" mktree </dev/null)" |
	git --git-dir="$b" hash-object --literally -t commit -w --stdin)
git --git-dir="$b" update-ref refs/heads/main "$fake"
printf '[core]\n\tbare = true\n[log]\n\tshowSignature = true\n[gpg]\n\tprogram = ./planted.sh\n' >"$b/config"
printf '#!/bin/sh\ntouch %s/bare-ran\n' "$MARK" >"$b/planted.sh" && chmod +x "$b/planted.sh"
export GIT_INDEX_FILE=$T/index.bare
git read-tree main
(cd "$b" && find HEAD config planted.sh objects refs -type f) | while read -r f; do
	mode=100644
	[ -x "$b/$f" ] && mode=100755
	git update-index --add --cacheinfo "$mode,$(git hash-object -w "$b/$f"),src/fixture/$f"
done
branch bare "$(git write-tree)"
unset GIT_INDEX_FILE
# Objects git fsck refuses.
x=$(blob x)
sub=$(printf '100644 %s b\n100644 %s a\n' "$x" "$x" | rawtree)
branch unsorted "$( (main_entries; printf '40000 %s zz\n' "$sub") | SORT=1 rawtree)"
branch dfdup "$( (main_entries; printf '100644 %s a\n100644 %s a.c\n40000 %s a\n' "$x" "$x" "$sub") |
	SORT=1 rawtree)"
c=$(printf 'tree %s\nparent %s\nauthor agent <agent@example.invalid> 0123 +0000\ncommitter agent <agent@example.invalid> 1700000000 +0000\n\nplant: badident\n' \
	"$(git rev-parse main^{tree})" "$(git rev-parse main)" | git hash-object --literally -t commit -w --stdin)
git update-ref refs/heads/badident "$c" && echo "made: badident $c"
# A branch that is an annotated tag of an ordinary commit.
c=$(git commit-tree "$(git rev-parse main^{tree})" -p main -m "tagged")
# (git update-ref refuses a tag in refs/heads/: the file is written.)
git tag -a -m "a tag" tagged-tag "$c" &&
	git rev-parse tagged-tag >"$(git rev-parse --git-dir)/refs/heads/tagged" &&
	echo "made: tagged $(git rev-parse tagged)"
# And an ordinary branch.
export GIT_INDEX_FILE=$T/index.ok
git read-tree main && git update-index --add --cacheinfo "100644,$(blob 'int ok;
'),src/ok.c" && branch ok "$(git write-tree)"
unset GIT_INDEX_FILE
CRAFT

branches="mode120755 mode160755 cargo bare unsorted dfdup badident tagged"

# --- the control: the same plumbing in a clone, and what git and cargo do
git clone -q "$proj" "$ctl"
(cd "$ctl" && MARK=$base/ctl-marks sh "$share/craft.sh" >"$base/ctl.out" 2>&1)
for b in $branches ok; do
	check "control: branch $b made" grep -q "^made: $b " "$base/ctl.out"
done
(cd "$ctl" && git checkout -q mode120755 2>/dev/null)
# git 2.39: 120755 is checked out as a symlink.
check_eq "control: git checks out lnkabs at mode 120755 as a symlink to /etc" "/etc" \
	"$(readlink "$ctl/lnkabs")"
check_eq "control: and lnkgit as a symlink to .git" ".git" "$(readlink "$ctl/lnkgit")"
(cd "$ctl" && git checkout -q -f mode160755 2>/dev/null)
# git 2.39: 160755 is a gitlink, an empty directory in the checkout.
check_eq "control: git reads vendor/lib at mode 160755 as a submodule" "160000" \
	"$(git -C "$ctl" ls-files -s vendor/lib | cut -d' ' -f1)"
(cd "$ctl" && git checkout -q -f cargo 2>/dev/null)
run_cargo "$ctl" >"$base/ctl-cargo.log" 2>&1
check "control: cargo build, through .cargo -> docs/c, runs the planted rustc-wrapper" \
	test -e "$base/ctl-marks/cargo-ran"
(cd "$ctl" && git checkout -q -f bare 2>/dev/null)
git -C "$ctl/src/fixture" log -1 --format=%s >/dev/null 2>&1
check "control: git log in src/fixture runs the gpg.program its config names" \
	test -e "$base/ctl-marks/bare-ran"
ctl_fsck=$(git -C "$ctl" fsck --strict 2>&1)
check "control: git fsck --strict fails on the crafted objects" \
	test -n "$(grep -E '^error' <<<"$ctl_fsck")"
for id in treeNotSorted duplicateEntries zeroPaddedDate; do
	check "control: git fsck reports $id" grep -q "$id" <<<"$ctl_fsck"
done
check "control: git reads branch tagged as a tag" test "$(git -C "$ctl" cat-file -t tagged)" = tag

# --- the session: the agent crafts them in its own repository
out=$(cd "$proj" && SANDY_SHARE_DIR=$share "$SANDY" --runtime=none --rules "$rules" -- \
	sh -c "MARK=$base/marks sh \$HOME/shared/craft.sh" </dev/null 2>"$base/err")
for b in $branches ok; do
	check "inside: branch $b made" grep -q "^made: $b " <<<"$out"
done
grep -q "^made: ok " <<<"$out" || sed 's/^/#   /' <<<"$out$(cat "$base/err")"

list=$(cd "$proj" && "$SANDY" git --rules "$rules" 2>&1)
check_eq "sandy git lists the agent's branches, and says one cannot be read" 1 "$?"
check "it lists ok as ready" grep -q '^ok: 1 commit, .*ready to import as sandy/ok$' <<<"$list"
check "it lists bare as refused" grep -q '^bare: 1 commit, .*cannot be imported$' <<<"$list"
check "it says tagged is a tag, not a commit" \
	grep -q "branch 'tagged' points at a tag (.*), not a commit" <<<"$list"

# --- the imports
refs() { git -C "$proj" for-each-ref --format='%(refname) %(objectname)'; }
objects() { find "$proj/.git/objects" -type f | sort | sha256sum; }
refs_before=$(refs)
objects_before=$(objects)
# refused BRANCH TEXT...: the import fails, says each TEXT, writes no ref.
refused() {
	local b=$1 msg st t c
	shift
	c=$(sed -n "s/^made: $b //p" <<<"$out")
	msg=$(cd "$proj" && "$SANDY" git --rules "$rules" import "$b" 2>&1)
	st=$?
	check "import $b is refused (status $st)" test "$st" -ne 0
	for t in "$@"; do
		check "import $b says '$t'" grep -qF -- "$t" <<<"$msg"
	done
	check_fails "no sandy/$b in the host's repository" \
		git -C "$proj" rev-parse --verify -q "refs/heads/sandy/$b"
	check_fails "the host's repository lacks $b's commit" git -C "$proj" cat-file -e "$c"
	[ "$_failed" = 0 ] || sed 's/^/#   /' <<<"$msg"
}
refused mode120755 "adds 'lnkabs'" "'/*'" "adds 'lnkgit'" "'.git'" "badFilemode"
refused mode160755 "adds 'vendor/lib'" "submodule entry" "badFilemode"
refused cargo "adds '.cargo'" "'symlink name'"
refused bare "adds 'src/fixture/HEAD'" "adds 'src/fixture/objects'" "adds 'src/fixture/refs'" \
	"'HEAD + objects/ + refs/'" "adds 'src/fixture/config'"
refused unsorted "adds 'zz/a'" "treeNotSorted"
refused dfdup "adds 'a'" "duplicateEntries"
refused badident "adds '.'" "'commit $(sed -n 's/^made: badident //p' <<<"$out")'" \
	"zeroPaddedDate"
refused tagged "'tagged' points at a tag"
check_eq "after the refused imports the host's refs are as they were" "$refs_before" "$(refs)"
check_eq "and its objects are as they were (nothing written)" "$objects_before" "$(objects)"
check "and git fsck --strict is clean" git -C "$proj" fsck --strict --no-progress

# --- an ordinary branch still comes back, and runs nothing planted
imp=$(cd "$proj" && "$SANDY" git --rules "$rules" import ok 2>&1)
check_eq "sandy git import ok succeeds" 0 "$?"
check_eq "sandy/ok is the agent's commit" "$(sed -n 's/^made: ok //p' <<<"$out")" \
	"$(git -C "$proj" rev-parse --verify -q refs/heads/sandy/ok)"
check "git fsck --strict is clean after it" git -C "$proj" fsck --strict --no-progress
git -C "$proj" checkout -q sandy/ok 2>/dev/null
check_eq "its checkout brings src/ok.c" "int ok;" "$(cat "$proj/src/ok.c" 2>&1)"
check "no .cargo, lnkabs or src/fixture in the checkout" \
	test ! -e "$proj/.cargo" -a ! -L "$proj/lnkabs" -a ! -e "$proj/src/fixture"
run_cargo "$proj" >"$base/cargo.log" 2>&1
check "cargo build on the host succeeds" test -e "$proj/target/debug/victim"
git -C "$proj/src" log -1 --format=%s >/dev/null 2>&1
check "no planted program ran on the host (cargo, git log)" \
	test -z "$(ls -A "$base/marks")"
done_testing
