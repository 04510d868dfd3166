#!/usr/bin/env bash
# sandy-pr, the agent's pull-request helper (launcher/container/sandy-pr),
# against a pretend forge on 127.0.0.1 (tests/git/forge.py) that answers
# GitHub's and Gitea's pull-request endpoints and records every request:
# a pull request is created once and found again (no second POST), one
# for another base is another, Gitea is told from its /version and paged
# through to an open pull request on page 2, a bad or missing token and a
# missing remote stop with a clear message and create nothing, the remote
# URL's forms give the API URLs they should, hostile branch names, titles
# and bodies arrive verbatim and run nothing, and no token ever appears on
# a command line (curl and jq run through wrappers that log their argv).
# Every curl other than to 127.0.0.1 is refused by the wrapper: the test
# never reaches the network.
source "$SANDY_SRC/tests/lib.sh"

PR=$SANDY_SRC/launcher/container/sandy-pr
PYTHON=/usr/bin/python3
unset GH_TOKEN GITHUB_TOKEN GITEA_TOKEN SANDY_PR_API SANDY_PR_FORGE

tools_ok() { command -v git && command -v curl && command -v jq && test -x "$PYTHON"; } >/dev/null
check "git, curl, jq and $PYTHON are installed" tools_ok || done_testing
real_curl=$(command -v curl) real_jq=$(command -v jq)

base=$(scratch)
log=$base/requests.jsonl argv=$base/argv.log urls=$base/urls.log marker=$base/pwned
gh_token=ghp_TestSecret4f1d8a gitea_token=5e3aGiteaSecret90c2

# The forge, its tokens given in its environment.
FORGE_GITHUB_TOKEN=$gh_token FORGE_GITEA_TOKEN=$gitea_token \
	"$PYTHON" "$SANDY_SRC/tests/git/forge.py" --port-file "$base/port" --log "$log" \
	>"$base/forge.out" 2>&1 &
at_exit "kill $! 2>/dev/null"
if ! check "the test forge listens" wait_until 10 test -s "$base/port"; then
	sed 's/^/# /' "$base/forge.out"
	done_testing
fi
gh_api=http://127.0.0.1:$(<"$base/port")
gitea_api=$gh_api/api/v1

# curl and jq wrappers: each call's arguments, one "[ARG]" each, in
# $argv; curl's last argument (the URL) in $urls. curl to anywhere but
# the test forge fails as a name that does not resolve would.
mkdir "$base/bin"
cat >"$base/bin/curl" <<EOF
#!/bin/sh
{ printf curl; printf ' [%s]' "\$@"; echo; } >>'$argv'
for a; do last=\$a; done
printf '%s\n' "\$last" >>'$urls'
case \$last in
http://127.0.0.1:*) exec '$real_curl' "\$@" ;;
esac
echo "curl: (6) Could not resolve host: (the test's curl reaches 127.0.0.1 only)" >&2
exit 6
EOF
cat >"$base/bin/jq" <<EOF
#!/bin/sh
{ printf jq; printf ' [%s]' "\$@"; echo; } >>'$argv'
exec '$real_jq' "\$@"
EOF
chmod 755 "$base/bin/curl" "$base/bin/jq"

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$base/gitconfig
export GIT_AUTHOR_NAME=Test GIT_AUTHOR_EMAIL=test@example.com
export GIT_COMMITTER_NAME=Test GIT_COMMITTER_EMAIL=test@example.com
: >"$GIT_CONFIG_GLOBAL"

# new_repo DIR URL: a repository with main and a branch feature checked
# out, the remote origin at URL (none when URL is empty).
new_repo() {
	git init -q -b main "$1" &&
		git -C "$1" commit -q --allow-empty -m 'Initial commit' &&
		git -C "$1" checkout -q -b feature &&
		git -C "$1" commit -q --allow-empty -m "Add the widget's feature" || return 1
	[ -z "$2" ] || git -C "$1" remote add origin "$2"
}

# pr [ARGS...]: sandy-pr in $repo (with the wrappers first in PATH);
# stdout in $out, stderr in $err, status in $rc.
pr() {
	(cd "$repo" && PATH=$base/bin:$PATH "$PR" "$@") >"$base/out" 2>"$base/err" </dev/null
	rc=$?
	out=$(<"$base/out") err=$(<"$base/err")
}
show_err() { [ "$rc" = 0 ] || sed 's/^/#   stderr: /' <<<"$err"; }

# The forge's records: nreq METHOD PATH_PREFIX counts the requests whose
# path (with the query) starts so, nexact METHOD PATH those with exactly
# that path; nlog all of them; nprs FORGE counts its pull requests,
# pr_field FORGE NUMBER FIELD is a field of one (of acme/widget).
nreq() {
	"$real_jq" -s --arg m "$1" --arg p "$2" \
		'[.[] | select(.method == $m and (.path | startswith($p)))] | length' "$log"
}
nexact() {
	"$real_jq" -s --arg m "$1" --arg p "$2" '[.[] | select(.method == $m and .path == $p)] | length' "$log"
}
nlog() { wc -l <"$log"; }
state() { "$real_curl" -s "$gh_api/_test/state"; }
nprs() { state | "$real_jq" --arg f "$1" '.[$f] | length'; }
pr_field() {
	state | "$real_jq" -j --arg f "$1" --argjson n "$2" --arg k "$3" \
		'first(.[$f][] | select(.number == $n and .repo == "acme/widget")) | getpath($k | split("."))'
}
seed() { "$real_curl" -s -X POST --data-binary @- "$gh_api/_test/seed" >/dev/null; }

# --- Usage ---------------------------------------------------------------
repo=$base/widget
check "a repository with a branch 'feature' and origin https://github.com/acme/widget.git" \
	new_repo "$repo" https://github.com/acme/widget.git
pr --help
check_eq "--help: exit status 0" 0 "$rc"
check "--help prints the usage" grep -q '^usage: sandy-pr ' <<<"$out"
check "--help says it does not push" grep -q 'does not push: push the branch first' <<<"$out"
check "--help says how SANDY_PR_API and detection go together" grep -q 'SANDY_PR_API/version' <<<"$out"
pr --frobnicate
check_eq "an unknown option: exit status 2" 2 "$rc"
check "... says which" grep -qxF "sandy-pr: unknown option '--frobnicate'" <<<"$err"
check "... and prints the usage on stderr" grep -q '^usage: sandy-pr ' <<<"$err"
pr --base
check_eq "--base without a value: exit status 2" 2 "$rc"
check "... says so" grep -qxF "sandy-pr: option '--base' needs a value" <<<"$err"
pr --body x --body-file /dev/null
check_eq "--body with --body-file: exit status 2" 2 "$rc"
pr extra
check_eq "an argument: exit status 2" 2 "$rc"
check_eq "bad usage sent no request" 0 "$(nlog)"

# --- GitHub: created once, found after ------------------------------------
export SANDY_PR_API=$gh_api GH_TOKEN=$gh_token
pr
check_eq "GitHub: exit status 0" 0 "$rc"
show_err
check_eq "GitHub: prints the new pull request's URL" https://github.com/acme/widget/pull/1 "$out"
check_eq "GitHub: says it created #1" "sandy-pr: created pull request #1" "$err"
check_eq "GitHub: the forge has one pull request" 1 "$(nprs github)"
check_eq "... from feature" feature "$(pr_field github 1 head.ref)"
check_eq "... into main (the repository's default branch, asked)" main "$(pr_field github 1 base.ref)"
check_eq "... titled with the last commit's subject" "Add the widget's feature" "$(pr_field github 1 title)"
check_eq "... with an empty body" "" "$(pr_field github 1 body)"
check_eq "GitHub: the default branch came from GET /repos/acme/widget" 1 "$(nexact GET /repos/acme/widget)"
check_eq "GitHub: it looked for an open one by owner:head and base" 1 \
	"$(nreq GET '/repos/acme/widget/pulls?state=open&head=acme%3Afeature&base=main')"
check_eq "GitHub: one POST /repos/acme/widget/pulls" 1 "$(nreq POST /repos/acme/widget/pulls)"
check_eq "GitHub: the POST's body is exactly {title, head, base, body}" \
	'{"base":"main","body":"","head":"feature","title":"Add the widget'"'"'s feature"}' \
	"$("$real_jq" -s -c 'map(select(.method == "POST"))[0].body | fromjson' -S "$log")"
check_eq "GitHub: every request carried 'Authorization: Bearer TOKEN'" "[]" \
	"$("$real_jq" -s -c 'map(select(.auth_ok | not))' "$log")"

pr
check_eq "GitHub, again: exit status 0" 0 "$rc"
check_eq "GitHub, again: prints the same URL" https://github.com/acme/widget/pull/1 "$out"
check_eq "GitHub, again: says #1 is already open" "sandy-pr: pull request #1 already open" "$err"
check_eq "GitHub, again: still one pull request" 1 "$(nprs github)"
check_eq "GitHub, again: no second POST" 1 "$(nreq POST /repos/acme/widget/pulls)"

pr --base develop
check_eq "GitHub --base develop: exit status 0" 0 "$rc"
check_eq "GitHub --base develop: a new pull request, #2" https://github.com/acme/widget/pull/2 "$out"
check_eq "... into develop" develop "$(pr_field github 2 base.ref)"
check_eq "... the forge has two" 2 "$(nprs github)"
pr --base=develop
check_eq "GitHub --base=develop, again: #2 again" "https://github.com/acme/widget/pull/2 sandy-pr: pull request #2 already open" "$out $err"
check_eq "... and no third POST" 2 "$(nreq POST /repos/acme/widget/pulls)"

# origin/HEAD known locally: the base without asking the forge.
git -C "$repo" symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/release
asked=$(nexact GET /repos/acme/widget)
pr
check_eq "GitHub with origin/HEAD -> origin/release: #3" https://github.com/acme/widget/pull/3 "$out"
check_eq "... into release" release "$(pr_field github 3 base.ref)"
check_eq "... without asking the forge for the default branch" "$asked" "$(nexact GET /repos/acme/widget)"
git -C "$repo" symbolic-ref --delete refs/remotes/origin/HEAD

# --title, --body-file, GITHUB_TOKEN.
git -C "$repo" branch docs
printf 'A body with "quotes", \\backslashes\\, $HOME, `tick`, tabs\tand ünïcode.\n\n\n' >"$base/body.md"
GH_TOKEN='' GITHUB_TOKEN=$gh_token pr --head docs --title 'Document it' --body-file "$base/body.md"
check_eq "--head docs --title --body-file with GITHUB_TOKEN: #4" \
	"https://github.com/acme/widget/pull/4 sandy-pr: created pull request #4" "$out $err"
check_eq "... titled as given" "Document it" "$(pr_field github 4 title)"
check_eq "... from docs" docs "$(pr_field github 4 head.ref)"
check "... the body is the file, byte for byte" cmp -s "$base/body.md" <(pr_field github 4 body)
(cd "$repo" && PATH=$base/bin:$PATH "$PR" --head docs --base develop --body-file - <"$base/body.md") \
	>"$base/out" 2>"$base/err"
check_eq "--body-file - reads standard input: #5" https://github.com/acme/widget/pull/5 "$(<"$base/out")"
check "... the body is standard input, byte for byte" cmp -s "$base/body.md" <(pr_field github 5 body)
check_eq "... titled with docs's last commit" "Add the widget's feature" "$(pr_field github 5 title)"

# --- GitHub: errors --------------------------------------------------------
git -C "$repo" branch fix
posts=$(nreq POST /) n=$(nprs github)
GH_TOKEN=ghp_WrongToken pr --head fix
check_eq "a bad token: exit status 1" 1 "$rc"
check_eq "... says what GitHub answered" "sandy-pr: GitHub answered 401: Bad credentials" "$err"
check_eq "... prints no URL" "" "$out"
check_eq "... sent no POST" "$posts" "$(nreq POST /)"
check_eq "... created nothing" "$n" "$(nprs github)"

git -C "$repo" branch unpushed
posts=$(nreq POST /)
pr --head unpushed
check_eq "a branch the forge does not know (422): exit status 1" 1 "$rc"
check_eq "... says what GitHub answered, and that sandy-pr does not push" \
	"sandy-pr: GitHub answered 422: Validation Failed: PullRequest head invalid
hint: is 'unpushed' pushed to 'origin'? sandy-pr does not push: git push -u origin unpushed" "$err"
check_eq "... one POST, refused; nothing created" "$((posts + 1)) $n" "$(nreq POST /) $(nprs github)"

lines=$(nlog)
GH_TOKEN='' pr --head fix
check_eq "no token: exit status 1" 1 "$rc"
check_eq "... says which variables" "sandy-pr: no token for GitHub: set GH_TOKEN or GITHUB_TOKEN" "$err"
GH_TOKEN=$'ghp_x\nX-Evil: 1' pr --head fix
check_eq "a token with a newline: exit status 1" 1 "$rc"
check_eq "... refused" "sandy-pr: GH_TOKEN holds characters no token has" "$err"
GH_TOKEN='ghp_x" -o /tmp/x' pr --head fix
check_eq "a token with a quote: refused" "1 sandy-pr: GH_TOKEN holds characters no token has" "$rc $err"
pr --remote upstream
check_eq "--remote upstream (missing): exit status 1" 1 "$rc"
check_eq "... says so" "sandy-pr: cannot find remote 'upstream'" "$err"
repo=$base/noremote
new_repo "$repo" ''
pr
check_eq "a repository without origin: exit status 1" 1 "$rc"
check_eq "... says so, git style" "sandy-pr: cannot find remote 'origin'" "$err"
repo=$base/plain
mkdir "$repo"
pr
check_eq "outside a repository: exit status 1, says so" "1 sandy-pr: not a git repository" "$rc $err"
repo=$base/widget
git -C "$repo" checkout -q --detach
pr
check_eq "a detached HEAD: exit status 1, says so" \
	"1 sandy-pr: HEAD is not on a branch; give --head BRANCH" "$rc $err"
git -C "$repo" checkout -q feature
pr --base feature
check_eq "head and base the same: refused" "1 sandy-pr: head and base are the same branch 'feature'" "$rc $err"
SANDY_PR_FORGE=bitbucket pr
check_eq "an unknown SANDY_PR_FORGE: refused" \
	"1 sandy-pr: unknown forge 'bitbucket' in SANDY_PR_FORGE (github, gitea)" "$rc $err"
SANDY_PR_API='ftp://127.0.0.1/' pr
check_eq "SANDY_PR_API not http(s): refused" "1 sandy-pr: SANDY_PR_API is not an http(s) URL: 'ftp://127.0.0.1'" "$rc $err"
check_eq "none of these errors sent a request" "$lines" "$(nlog)"
unset GH_TOKEN

# --- Gitea: detected, created once, found after, paged ----------------------
repo=$base/gitea-widget
new_repo "$repo" https://gitea.test/acme/widget.git
export SANDY_PR_API=$gitea_api GITEA_TOKEN=$gitea_token
pr
check_eq "Gitea: exit status 0" 0 "$rc"
show_err
check_eq "Gitea: prints the new pull request's URL" https://gitea.test/acme/widget/pulls/1 "$out"
check_eq "Gitea: says it created #1" "sandy-pr: created pull request #1" "$err"
check "Gitea: detected with GET SANDY_PR_API/version" test "$(nreq GET /api/v1/version)" -ge 1
check_eq "Gitea: the forge has one pull request" 1 "$(nprs gitea)"
check_eq "... from feature into main, titled with the subject" "feature main Add the widget's feature" \
	"$(pr_field gitea 1 head.ref) $(pr_field gitea 1 base.ref) $(pr_field gitea 1 title)"
check_eq "Gitea: one POST /api/v1/repos/acme/widget/pulls" 1 "$(nreq POST /api/v1/repos/acme/widget/pulls)"
check_eq "Gitea: every request but /version carried 'Authorization: token TOKEN'" "[]" \
	"$("$real_jq" -s -c 'map(select(.forge == "gitea" and .path != "/api/v1/version" and (.auth_ok | not)))' "$log")"
pr
check_eq "Gitea, again: the same URL, already open" \
	"https://gitea.test/acme/widget/pulls/1 sandy-pr: pull request #1 already open" "$out $err"
check_eq "Gitea, again: no second POST" 1 "$(nreq POST /api/v1/repos/acme/widget/pulls)"
pr --base develop
check_eq "Gitea --base develop: another, #2" "https://gitea.test/acme/widget/pulls/2 sandy-pr: created pull request #2" "$out $err"

# 45 others, then one from 'paged' (#48): the forge gives at most 30 a page
# whatever limit is asked, so it is on page 2.
{
	printf '{"forge": "gitea", "owner": "acme", "repo": "widget", "prs": ['
	for i in $(seq 1 45); do printf '{"head": "other-%d", "base": "main", "title": "Other %d"},' "$i" "$i"; done
	printf '{"head": "paged", "base": "main", "title": "Paged"}]}'
} | seed
check_eq "Gitea: 48 pull requests seeded" 48 "$(nprs gitea)"
posts=$(nreq POST /api/v1/repos/acme/widget/pulls)
pages_before=$(nreq GET '/api/v1/repos/acme/widget/pulls?state=open&page=2&')
pr --head paged --title 'Paged, again'
check_eq "Gitea: an open pull request on page 2 is found" \
	"https://gitea.test/acme/widget/pulls/48 sandy-pr: pull request #48 already open" "$out $err"
check_eq "... by reading page 2" $((pages_before + 1)) "$(nreq GET '/api/v1/repos/acme/widget/pulls?state=open&page=2&')"
check_eq "... and not POSTing" "$posts" "$(nreq POST /api/v1/repos/acme/widget/pulls)"
git -C "$repo" branch fresh
p3=$(nreq GET '/api/v1/repos/acme/widget/pulls?state=open&page=3&')
pr --head fresh
check_eq "Gitea: a branch with none open: created after the last page, #49" \
	"https://gitea.test/acme/widget/pulls/49 sandy-pr: created pull request #49" "$out $err"
check_eq "... having read up to the empty page 3" $((p3 + 1)) "$(nreq GET '/api/v1/repos/acme/widget/pulls?state=open&page=3&')"

posts=$(nreq POST /) n=$(nprs gitea)
GITEA_TOKEN=WrongToken0 pr
check_eq "Gitea, a bad token: exit status 1, says what Gitea answered" \
	"1 sandy-pr: Gitea answered 401: user does not exist" "$rc $err"
check_eq "... sent no POST and created nothing" "$posts $n" "$(nreq POST /) $(nprs gitea)"
GITEA_TOKEN='' pr
check_eq "Gitea, no token: says so" "1 sandy-pr: no token for Gitea: set GITEA_TOKEN" "$rc $err"

# Not Gitea: SANDY_PR_API at the GitHub side, whose /version is not found.
git -C "$repo" remote set-url origin https://forge.test/acme/widget.git
SANDY_PR_API=$gh_api pr
check_eq "a host that is not github.com and whose API is not Gitea's: exit status 1" 1 "$rc"
check_eq "... says so and what to set" \
	"sandy-pr: cannot tell which forge 'forge.test' is ($gh_api/version answered 404, not as Gitea does); set SANDY_PR_FORGE=github or gitea" "$err"
n=$(nprs github)
SANDY_PR_API=$gh_api SANDY_PR_FORGE=github GH_TOKEN=$gh_token pr
check_eq "... with SANDY_PR_FORGE=github: GitHub's endpoints (#1 from feature into main)" \
	"0 https://github.com/acme/widget/pull/1 sandy-pr: pull request #1 already open" "$rc $out $err"
check_eq "... and nothing created" "$n" "$(nprs github)"
git -C "$repo" remote set-url origin https://gitea.test/acme/widget.git

# --- Hostile strings -------------------------------------------------------
evil="evil'\"\`touch\${IFS}$marker\`\$(touch\${IFS}$marker);&x=1#%41+"
title=$'A "title" \'with\' $(touch '"$marker"$') `touch '"$marker"$'`; touch '"$marker"$'\nand a second line\\n'
body=$'"}, "base": "hacked", "x": {"\n$(touch '"$marker"') \\ end'
git -C "$base/widget" checkout -q -b "$evil" main
git -C "$base/widget" commit -q --allow-empty -m "Subject \$(touch $marker) \"q\" 'q' \`touch $marker\`"
check "a branch named $evil" test "$(git -C "$base/widget" symbolic-ref --short HEAD)" == "$evil"
repo=$base/widget
export SANDY_PR_API=$gh_api GH_TOKEN=$gh_token
n=$(nprs github)
pr --body "$body"
check_eq "GitHub, hostile branch: created" "0 sandy-pr: created pull request #$((n + 1))" "$rc $err"
num=$((n + 1))
check_eq "... the head arrives verbatim" "$evil" "$(pr_field github $num head.ref)"
check_eq "... the title (the commit's subject) verbatim" \
	"Subject \$(touch $marker) \"q\" 'q' \`touch $marker\`" "$(pr_field github $num title)"
check_eq "... the body verbatim" "$body" "$(pr_field github $num body)"
check_eq "... into main" main "$(pr_field github $num base.ref)"
posts=$(nreq POST /repos/acme/widget/pulls)
pr --body "$body"
check_eq "GitHub, hostile branch again: found by its encoded name" \
	"0 sandy-pr: pull request #$num already open" "$rc $err"
check_eq "... no second POST" "$posts" "$(nreq POST /repos/acme/widget/pulls)"
pr --title "$title" --base develop
check_eq "GitHub, hostile title with a newline: created" 0 "$rc"
check_eq "... the title arrives verbatim" "$title" "$(pr_field github $((num + 1)) title)"
unset GH_TOKEN
git -C "$base/gitea-widget" checkout -q -b "$evil" main
repo=$base/gitea-widget
export SANDY_PR_API=$gitea_api
n=$(nprs gitea)
pr --title "$title" --body "$body"
check_eq "Gitea, hostile branch and title: created" "0 sandy-pr: created pull request #$((n + 1))" "$rc $err"
check_eq "... head, title and body verbatim" "$evil|$title|$body" \
	"$(pr_field gitea $((n + 1)) head.ref)|$(pr_field gitea $((n + 1)) title)|$(pr_field gitea $((n + 1)) body)"
pr
check_eq "Gitea, hostile branch again: already open" "0 sandy-pr: pull request #$((n + 1)) already open" "$rc $err"
check_fails "nothing in the hostile strings ran ($marker does not exist)" test -e "$marker"
unset GITEA_TOKEN SANDY_PR_API

# --- The remote URL's forms -> the API's URL --------------------------------
# (SANDY_PR_API unset: the wrapper refuses every URL but 127.0.0.1's, so
# each run stops at its first request, which is what is checked.)
repo=$base/forms
new_repo "$repo" https://github.com/acme/widget.git
# first_url REMOTE_URL [ENV...]: the first URL sandy-pr asked for.
first_url() {
	local url=$1
	shift
	git -C "$repo" remote set-url origin "$url"
	: >"$urls"
	env "$@" GH_TOKEN=$gh_token GITEA_TOKEN=$gitea_token bash -c 'cd "$1" && PATH=$2:$PATH "$3" --base main' _ \
		"$repo" "$base/bin" "$PR" >/dev/null 2>"$base/err" </dev/null
	head -n 1 "$urls"
}
q='pulls?state=open&head=acme%3Afeature&base=main&per_page=100'
check_eq "git@github.com:acme/widget.git -> api.github.com" \
	"https://api.github.com/repos/acme/widget/$q" "$(first_url git@github.com:acme/widget.git)"
check_eq "https://github.com/acme/widget -> api.github.com" \
	"https://api.github.com/repos/acme/widget/$q" "$(first_url https://github.com/acme/widget)"
check_eq "ssh://git@github.com/acme/widget.git -> api.github.com" \
	"https://api.github.com/repos/acme/widget/$q" "$(first_url ssh://git@github.com/acme/widget.git)"
check "... and the error says the API could not be reached" \
	grep -qxF "sandy-pr: cannot reach https://api.github.com/repos/acme/widget/pulls: Could not resolve host: (the test's curl reaches 127.0.0.1 only)" "$base/err"
check_eq "git@ghe.invalid:acme/widget.git, SANDY_PR_FORGE=github -> https://HOST/api/v3" \
	"https://ghe.invalid/api/v3/repos/acme/widget/$q" "$(first_url git@ghe.invalid:acme/widget.git SANDY_PR_FORGE=github)"
check_eq "ssh://git@ghe.invalid:2222/acme/widget.git -> https://HOST/api/v3 (no ssh port)" \
	"https://ghe.invalid/api/v3/repos/acme/widget/$q" "$(first_url ssh://git@ghe.invalid:2222/acme/widget.git SANDY_PR_FORGE=github)"
check_eq "https://me@ghe.invalid:8443/acme/widget/ -> https://HOST:8443/api/v3 (no user)" \
	"https://ghe.invalid:8443/api/v3/repos/acme/widget/$q" "$(first_url https://me@ghe.invalid:8443/acme/widget/ SANDY_PR_FORGE=github)"
check_eq "git@gitea.invalid:acme/widget.git, SANDY_PR_FORGE=gitea -> https://HOST/api/v1, page 1" \
	"https://gitea.invalid/api/v1/repos/acme/widget/pulls?state=open&page=1&limit=50" \
	"$(first_url git@gitea.invalid:acme/widget.git SANDY_PR_FORGE=gitea)"
check_eq "http://gitea.invalid:3000/git/acme/widget.git -> its /git/api/v1, over http" \
	"http://gitea.invalid:3000/git/api/v1/repos/acme/widget/pulls?state=open&page=1&limit=50" \
	"$(first_url http://gitea.invalid:3000/git/acme/widget.git SANDY_PR_FORGE=gitea)"
check_eq "https://gitea.invalid/acme/widget.git, no SANDY_PR_FORGE -> asks /api/v1/version first" \
	"https://gitea.invalid/api/v1/version" "$(first_url https://gitea.invalid/acme/widget.git)"
for u in /srv/git/widget.git https://github.com/widget 'https://gh.invalid/acme/wid get' \
	'git@gh.invalid:acme/$(id).git' 'https://gh.invalid;id/acme/widget'; do
	check_eq "remote '$u': refused before any request" \
		"|sandy-pr: cannot tell the forge's repository from remote 'origin' ('$u')" \
		"$(first_url "$u")|$(<"$base/err")"
done

# --- The token on command lines ---------------------------------------------
check "curl ran through the wrapper that logs its command lines" grep -q '^curl ' "$argv"
check "jq ran through the wrapper that logs its command lines" grep -q '^jq ' "$argv"
check_fails "the GitHub token never appears on a command line" grep -qF "$gh_token" "$argv"
check_fails "the Gitea token never appears on a command line" grep -qF "$gitea_token" "$argv"
check_fails "nor the wrong token" grep -qF ghp_WrongToken "$argv"
check_fails "no 'Authorization' header on a command line" grep -qi authorization "$argv"

done_testing
