#!/usr/bin/env bash
# Shell completion (completions/): bash's completion functions driven for
# real (the file sourced in a bash with programmable completion, COMP_WORDS,
# COMP_CWORD, COMP_LINE and COMP_POINT set, the function run, COMPREPLY
# read) offer every subcommand and every option that `sandy --help` and
# `sandyfs --help` print, the values of --runtime=, --fs= and --network=,
# directories and files, and the project types of --type as the rule files
# of this tree name them (asked from sandyfs: `sandyfs rules --types`). The
# zsh files parse, compinit finds them, and zsh's completion in a
# pseudo-terminal offers the subcommands, --runtime= values and the types.
source "$SANDY_SRC/tests/lib.sh"

SANDY=${SANDY:-$SANDY_BUILD/launcher/sandy}
COMPLETIONS=$SANDY_SRC/completions
base=$(scratch)
export SANDY_RULES_DIR=$SANDY_SRC/rules SANDY_OVERLAYS_DIR=$SANDY_SRC/ro-overlays

# The project types, from the rule files themselves: every NAME.json but
# base.json, which is always read.
types=$(cd "$SANDY_SRC/rules" && for f in *.json; do
	[ "$f" = base.json ] || echo "${f%.json}"
done | sort)
check "the tree has project types" test -n "$types"
check_eq "sandyfs rules --types prints them, one per line" "$types" \
	"$("$SANDYFS" rules --types | sort)"

# complete FILE WORD...: the COMPREPLY of FILE's function for the command
# line WORD... (the last word is the one completed, "" for a new word), one
# per line, sorted. The words are given as bash splits them: "--opt=v" is
# "--opt" "=" "v".
complete_words() {
	local file=$1
	shift
	(cd "$base" && bash --norc --noprofile -c '
		source "$0" || exit 1
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="${COMP_WORDS[*]}"
		COMP_POINT=${#COMP_LINE}
		spec=$(complete -p "${COMP_WORDS[0]##*/}") || exit 1
		fn=${spec#*-F }
		fn=${fn%% *}
		"$fn" "${COMP_WORDS[0]##*/}" "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD - 1]}" || exit 1
		printf "%s\n" "${COMPREPLY[@]}"' "$file" "$@") | sort -u
}
sandy_c() { complete_words "$COMPLETIONS/sandy.bash" "$SANDY" "$@"; }
sandyfs_c() { complete_words "$COMPLETIONS/sandyfs.bash" "$SANDYFS" "$@"; }

# offers DESCRIPTION EXPECTED ACTUAL: every line of EXPECTED is in ACTUAL.
offers() {
	local missing
	missing=$(comm -23 <(sort -u <<<"$2") <(sort -u <<<"$3"))
	check_eq "$1" "" "$missing"
}

check "bash: completions/sandy.bash parses" bash -n "$COMPLETIONS/sandy.bash"
check "bash: completions/sandyfs.bash parses" bash -n "$COMPLETIONS/sandyfs.bash"

# Subcommands, as the usage lines of --help name them.
sandy_help=$("$SANDY" --help)
sandyfs_help=$("$SANDYFS" --help)
sandy_cmds=$(sed -nE 's/^(usage: |       )sandy ([a-z][a-z-]*).*/\2/p' <<<"$sandy_help" | sort -u)
sandyfs_cmds=$(sed -nE 's/^(usage: |       )sandyfs ([a-z][a-z-]*).*/\2/p' <<<"$sandyfs_help" |
	sort -u)
sandyfs_git_cmds=$(sed -nE 's/^(usage: |       )sandyfs git ([a-z][a-z-]*).*/\2/p' \
	<<<"$sandyfs_help" | sort -u)
check "sandy --help names subcommands ($(echo $sandy_cmds))" test -n "$sandy_cmds"
check "sandyfs --help names subcommands ($(echo $sandyfs_cmds))" test -n "$sandyfs_cmds"
offers "bash: 'sandy <TAB>' offers every subcommand" "$sandy_cmds" "$(sandy_c '')"
offers "bash: 'sandyfs <TAB>' offers every subcommand" "$sandyfs_cmds" "$(sandyfs_c '')"
offers "bash: 'sandyfs git <TAB>' offers list, import, check" "$sandyfs_git_cmds" \
	"$(sandyfs_c git '')"
check_eq "bash: 'sandy doc<TAB>' completes doctor" doctor "$(sandy_c doc)"

# Options, and their values.
check_eq "bash: 'sandy --ru<TAB>' offers --runtime= (and --rules)" \
	"$(printf '%s\n' --rules --runtime=)" "$(sandy_c --ru)"
check_eq "bash: 'sandy --runtime=<TAB>' offers the runtimes" \
	"$(printf '%s\n' docker none podman)" "$(sandy_c --runtime =)"
check_eq "bash: 'sandy --runtime=p<TAB>' offers podman" podman "$(sandy_c --runtime = p)"
check_eq "bash: 'sandy --runtime=<TAB>' without bash splitting at '='" \
	"$(printf '%s\n' --runtime=docker --runtime=none --runtime=podman)" "$(sandy_c --runtime=)"
check_eq "bash: 'sandy --runtime <TAB>' offers the runtimes" \
	"$(printf '%s\n' docker none podman)" "$(sandy_c --runtime '')"
check_eq "bash: 'sandy build-image --runtime=<TAB>' offers docker and podman" \
	"$(printf '%s\n' docker podman)" "$(sandy_c build-image --runtime =)"
check_eq "bash: 'sandy --fs=<TAB>' offers fuse and bind" "$(printf '%s\n' bind fuse)" \
	"$(sandy_c --fs =)"
check_eq "bash: 'sandy --network=<TAB>' offers filtered, open, none" \
	"$(printf '%s\n' filtered none open)" "$(sandy_c --network =)"
check_eq "bash: 'sandy doctor --network=<TAB>' likewise" \
	"$(printf '%s\n' filtered none open)" "$(sandy_c doctor --network =)"
check_eq "bash: 'sandy --agent <TAB>' offers the agents" "$(printf '%s\n' claude codex gemini)" \
	"$(sandy_c --agent '')"
check_eq "bash: 'sandy kube --network=<TAB>' offers filtered, open, none" \
	"$(printf '%s\n' filtered none open)" "$(sandy_c kube --network =)"
check_eq "bash: 'sandy kube --repo <TAB>' offers nothing of its own" "" \
	"$(sandy_c kube --repo '' | grep -- '^-')"
check_eq "bash: 'sandy kube --no-<TAB>' offers --no-native-sidecars and --no-detect" \
	"$(printf '%s\n' --no-detect --no-native-sidecars)" "$(sandy_c kube --no-)"

# --type: the types of the rule files, from sandyfs, wherever it is taken.
check_eq "bash: 'sandy --type <TAB>' offers every project type" "$types" \
	"$(sandy_c --type '')"
check_eq "bash: 'sandy -t <TAB>' likewise" "$types" "$(sandy_c -t '')"
check_eq "bash: 'sandy --type=<TAB>' likewise" "$types" "$(sandy_c --type =)"
check_eq "bash: 'sandy explain -t <TAB>' likewise" "$types" "$(sandy_c explain -t '')"
check_eq "bash: 'sandy doctor --type <TAB>' likewise" "$types" "$(sandy_c doctor --type '')"
check_eq "bash: 'sandyfs mount -t <TAB>' likewise" "$types" "$(sandyfs_c mount -t '')"
check_eq "bash: 'sandyfs explain --type=<TAB>' likewise" "$types" \
	"$(sandyfs_c explain --type =)"
check_eq "bash: 'sandyfs git import -t <TAB>' likewise" "$types" \
	"$(sandyfs_c git import -t '')"
check_eq "bash: 'sandy -t p<TAB>' offers the types starting with p" \
	"$(grep '^p' <<<"$types")" "$(sandy_c -t p)"
check_eq "bash: sandy asks the sandyfs that \$SANDYFS names" "" \
	"$(SANDYFS=/nonexistent/sandyfs sandy_c --type '')"

# Every option --help prints is offered where it applies.
help_options() {
	grep -oE '(^|[^A-Za-z0-9_-])(--[a-z][a-z0-9-]*|-[A-Za-z])' | sed -E 's/^[^-]//' | sort -u
}
sandy_offered=$(for ctx in '' explain clean allow git 'git import' build-image kube doctor; do
	# shellcheck disable=SC2086
	sandy_c $ctx -
done | sed 's/=$//' | sort -u)
sandyfs_offered=$(for ctx in '' mount explain rules store 'git list' 'git import' 'git check' \
	umount; do
	# shellcheck disable=SC2086
	sandyfs_c $ctx -
done | sed 's/=$//' | sort -u)
offers "bash: every option of 'sandy --help' is offered ($(help_options <<<"$sandy_help" |
	wc -l))" "$(help_options <<<"$sandy_help")" "$sandy_offered"
offers "bash: every option of 'sandyfs --help' is offered ($(help_options <<<"$sandyfs_help" |
	wc -l))" "$(help_options <<<"$sandyfs_help")" "$sandyfs_offered"
check "bash: 'sandyfs rules --<TAB>' offers --types" grep -qx -- --types <<<"$(sandyfs_c rules --)"

# Directories, files, commands.
mkdir -p "$base/projdir" "$base/projfile-dir"
echo '{}' >"$base/rulesfile.json"
offers "bash: 'sandy proj<TAB>' offers the project directory" projdir "$(sandy_c proj)"
offers "bash: 'sandy doctor proj<TAB>' likewise" projdir "$(sandy_c doctor proj)"
offers "bash: 'sandyfs mount proj<TAB>' likewise" projdir "$(sandyfs_c mount proj)"
check_eq "bash: 'sandy --rules rulesf<TAB>' offers the file" rulesfile.json \
	"$(sandy_c --rules rulesf)"
check_eq "bash: 'sandyfs mount -r rulesf<TAB>' offers the file" rulesfile.json \
	"$(sandyfs_c mount -r rulesf)"
check_eq "bash: 'sandy projdir -- bas<TAB>' offers commands" bash \
	"$(sandy_c projdir -- bas | grep -x bash)"
check_eq "bash: after '--' no option of sandy's" "" "$(sandy_c projdir -- --ru)"

# zsh.
if ! command -v zsh >/dev/null; then
	not_ok "zsh is installed (scripts/deps.sh installs it)"
	done_testing
fi
check "zsh: completions/_sandy parses" zsh -n "$COMPLETIONS/_sandy"
check "zsh: completions/_sandyfs parses" zsh -n "$COMPLETIONS/_sandyfs"
check_eq "zsh: compinit finds both" "_sandy _sandyfs" "$(zsh -f -c "
	fpath=('$COMPLETIONS' \$fpath); autoload -Uz compinit; compinit -u -D
	print -r -- \${_comps[sandy]} \${_comps[sandyfs]}")"

# zsh_complete DIR NAME LINE [NAME LINE]...: for each LINE, the candidates
# zsh's completion system offers for it completed at its end (TAB in one
# interactive zsh in a pseudo-terminal; a compadd wrapper records every
# candidate), one per line in DIR/NAME.
zsh_complete() {
	(cd "$base" && timeout 60 zsh -f -c '
		zmodload zsh/zpty || exit 1
		comps=$1 t=$2
		shift 2
		wait_for() {
			local i
			for i in {1..400}; do [[ -e $1 ]] && return 0; sleep 0.05; done
			return 1
		}
		zpty z zsh -f -i
		zpty -w z "PS1=\"> \"; fpath=(${(q)comps} \$fpath); autoload -Uz compinit"
		zpty -w z "compinit -u -D -d $t/zcompdump"
		zpty -w z "compadd() { local -a a; local i; builtin compadd -O a \"\$@\";" \
			"for i in \$a; do print -r -- \"\$i\" >>\$out; done; builtin compadd \"\$@\"; }"
		zpty -w z "print ready >$t/ready"
		wait_for $t/ready || exit 1
		sleep 0.2
		while (( $# >= 2 )); do
			: >$t/$1
			zpty -w z "out=$t/$1"
			zpty -n -w z "$2"$'\''\t'\''
			zpty -w z $'\''\C-u'\''"print done >$t/$1.done"
			wait_for $t/$1.done || exit 1
			shift 2
		done
		zpty -d z' zsh "$COMPLETIONS" "$@")
}
zsh_out=$(scratch)
check "zsh: completion runs in a pseudo-terminal" zsh_complete "$zsh_out" \
	sandy 'sandy ' sandyfs 'sandyfs ' runtime "$SANDY --runtime=" \
	types "$SANDY -t " fstypes "$SANDYFS mount --type "
zsh_got() { sort -u "$zsh_out/$1" 2>/dev/null; }
offers "zsh: 'sandy <TAB>' offers every subcommand" "$sandy_cmds" "$(zsh_got sandy)"
offers "zsh: 'sandyfs <TAB>' offers every subcommand" "$sandyfs_cmds" "$(zsh_got sandyfs)"
check_eq "zsh: 'sandy --runtime=<TAB>' offers the runtimes" \
	"$(printf '%s\n' docker none podman)" "$(zsh_got runtime)"
check_eq "zsh: 'sandy -t <TAB>' offers every project type" "$types" "$(zsh_got types)"
check_eq "zsh: 'sandyfs mount --type <TAB>' likewise" "$types" "$(zsh_got fstypes)"
done_testing
