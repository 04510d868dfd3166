# bash completion for sandyfs(1). Installed as
# DATADIR/bash-completion/completions/sandyfs, which bash-completion loads
# the first time sandyfs is completed; `source` it to try it from the
# tree. Self-contained: it uses bash's own compgen, not bash-completion's
# helpers. The project types of --type are asked from the sandyfs being
# completed (`sandyfs rules --types`).

# _sandyfs_words: sets words (COMP_WORDS up to the cursor, with "--opt",
# "=" and "value" joined again when bash split them at '='), cword, cur
# (the word being completed, joined likewise) and rawcur (the part of it
# bash replaces).
_sandyfs_words()
{
	local i w
	words=()
	for ((i = 0; i <= COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == = && ${#words[@]} -gt 0 && ${words[-1]} == -* && ${words[-1]} != *=* ]]; then
			words[-1]+==
			if ((i < COMP_CWORD)); then
				((i++))
				words[-1]+=${COMP_WORDS[i]}
			fi
		else
			words+=("$w")
		fi
	done
	cword=$((${#words[@]} - 1))
	cur=${words[cword]}
	rawcur=${COMP_WORDS[COMP_CWORD]}
	[[ $rawcur == = ]] && rawcur=
}

# _sandyfs_reply KIND [WORD...]: COMPREPLY for the value part of cur ("--x=v"
# or a separate word "v"): -W the WORDS, -f files, -d directories.
_sandyfs_reply()
{
	local kind=$1 val=$cur prefix=
	shift
	if [[ $cur == -*=* ]]; then
		val=${cur#*=}
		# bash did not split at '=': the reply replaces the whole word.
		[[ $rawcur == -*=* ]] && prefix=${cur%%=*}=
	fi
	local IFS=$'\n'
	if [[ $kind == -W ]]; then
		COMPREPLY=($(compgen -P "$prefix" -W "$*" -- "$val"))
	else
		COMPREPLY=($(compgen "$kind" -P "$prefix" -- "$val"))
		compopt -o filenames 2>/dev/null || :
	fi
}

# _sandyfs_mounts: the mountpoints of sandyfs mounts (/proc/self/mountinfo:
# field 5, octal escapes undone, of type fuse.sandyfs).
_sandyfs_mounts()
{
	local line mp
	local -a f
	while IFS= read -r line; do
		[[ $line == *" - fuse.sandyfs "* ]] || continue
		read -r -a f <<<"$line"
		mp=${f[4]}
		printf '%b\n' "$mp"
	done </proc/self/mountinfo
}

_sandyfs()
{
	local words cword cur rawcur
	_sandyfs_words
	COMPREPLY=()

	local rule_opts='--type -t --no-detect --rules -r'
	local takes_value=' -t --type -r --rules -o --pid-file --audit --stats --store
		--git-host-path --git-dir --host-git '
	takes_value=${takes_value//$'\n'/ }
	takes_value=${takes_value//$'\t'/ }

	if ((cword == 1)); then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--help --version' -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'mount explain rules store git umount' -- "$cur"))
		fi
		return
	fi
	local cmd=${words[1]} first=2
	if [[ $cmd == git ]]; then
		if ((cword == 2)); then
			COMPREPLY=($(compgen -W 'list import check' -- "$cur"))
			return
		fi
		cmd="git ${words[2]}"
		first=3
	fi

	# The positional arguments before the cursor.
	local i
	local -a args=()
	for ((i = first; i < cword; i++)); do
		if [[ $takes_value == *" ${words[i]} "* ]]; then
			((i++))
		elif [[ ${words[i]} != -* ]]; then
			args+=("${words[i]}")
		fi
	done

	# An option's value.
	local opt=
	if [[ $cur == -*=* ]]; then
		opt=${cur%%=*}
	elif ((cword > first)) && [[ $takes_value == *" ${words[cword - 1]} "* ]]; then
		opt=${words[cword - 1]}
	fi
	case $opt in
	-t | --type) _sandyfs_reply -W $("${COMP_WORDS[0]}" rules --types 2>/dev/null) ;;
	-r | --rules | --pid-file | --audit | --stats) _sandyfs_reply -f ;;
	--store | --git-host-path | --git-dir | --host-git) _sandyfs_reply -d ;;
	-o) ;;
	esac
	[[ -n $opt ]] && return

	local opts=
	case $cmd in
	mount)
		opts="-f --foreground --allow-other -o --pid-file --audit --lazy-open --stats --store
			--private-git --git-host-path --drop-mount-privilege --over-mount $rule_opts --help"
		;;
	explain) opts="$rule_opts --store --json --help" ;;
	rules) opts="$rule_opts --json --types --help" ;;
	store) opts='--store --clear --help' ;;
	'git list') opts="$rule_opts --store --json --help" ;;
	'git import') opts="$rule_opts --store --force --help" ;;
	'git check') opts="$rule_opts --git-dir --host-git --help" ;;
	umount | unmount) opts='--help' ;;
	*) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	case $cmd in
	mount) ((${#args[@]} < 2)) && _sandyfs_reply -d ;;
	explain) if ((${#args[@]} == 0)); then _sandyfs_reply -d; else _sandyfs_reply -f; fi ;;
	rules | store | 'git list' | 'git check' | 'git import')
		((${#args[@]} == 0)) && _sandyfs_reply -d
		;;
	umount | unmount)
		if ((${#args[@]} == 0)); then
			local m
			m=$(_sandyfs_mounts)
			if [[ -n $m ]]; then
				_sandyfs_reply -W "$m"
			else
				_sandyfs_reply -d
			fi
		fi
		;;
	esac
}
complete -F _sandyfs sandyfs
