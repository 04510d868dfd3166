# bash completion for sandy(1). Installed as
# DATADIR/bash-completion/completions/sandy, which bash-completion loads
# the first time sandy is completed; `source` it to try it from the tree.
# Self-contained: it uses bash's own compgen, not bash-completion's
# helpers. The project types of --type are asked from sandyfs (`sandyfs
# rules --types`), the one sandy itself would run.

# _sandy_sandyfs SANDY: the sandyfs that SANDY runs: $SANDYFS, else the
# build tree's (SANDY in BUILD/launcher, sandyfs in BUILD/fusefs) or the one
# beside it, else sandyfs in PATH.
_sandy_sandyfs()
{
	local sandy=$1 dir f
	if [[ -n ${SANDYFS-} ]]; then
		printf '%s\n' "$SANDYFS"
		return
	fi
	[[ $sandy == */* ]] || sandy=$(type -P -- "$sandy")
	dir=${sandy%/*}
	for f in "$dir/../fusefs/sandyfs" "$dir/sandyfs"; do
		if [[ -n $dir && -x $f ]]; then
			printf '%s\n' "$f"
			return
		fi
	done
	type -P sandyfs
}

# _sandy_session_ids: the sessions running for this user, as sandy names
# them (its runtime directory's entries).
_sandy_session_ids()
{
	local run d
	if [[ ${XDG_RUNTIME_DIR-} == /* ]]; then
		run=$XDG_RUNTIME_DIR/sandy
	elif [[ $EUID -eq 0 ]]; then
		run=/run/sandy
	elif [[ -d /run/user/$EUID ]]; then
		run=/run/user/$EUID/sandy
	else
		run=/tmp/sandy-$EUID
	fi
	for d in "$run"/*/; do
		[[ -d $d ]] && d=${d%/} && printf '%s\n' "${d##*/}"
	done
}

# _sandy_words: sets words (COMP_WORDS up to the cursor, with "--opt", "="
# and "value" joined again when bash split them at '='), cword, cur (the
# word being completed, joined likewise) and rawcur (the part of it bash
# replaces).
_sandy_words()
{
	local i w
	words=()
	cword=-1
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

# _sandy_values WORD...: COMPREPLY for an option's value among WORDS: the
# value part of cur ("--runtime=do" or a separate word "do").
_sandy_values()
{
	local val=$cur prefix=
	if [[ $cur == -*=* ]]; then
		val=${cur#*=}
		# bash did not split at '=': the reply replaces the whole word.
		[[ $rawcur == -*=* ]] && prefix=${cur%%=*}=
	fi
	local IFS=$'\n'
	COMPREPLY=($(compgen -P "$prefix" -W "$*" -- "$val"))
}

# _sandy_files KIND: COMPREPLY of files (-f) or directories (-d) for the
# value part of cur.
_sandy_files()
{
	local val=$cur prefix=
	if [[ $cur == -*=* ]]; then
		val=${cur#*=}
		[[ $rawcur == -*=* ]] && prefix=${cur%%=*}=
	fi
	local IFS=$'\n'
	COMPREPLY=($(compgen "$1" -P "$prefix" -- "$val"))
	compopt -o filenames 2>/dev/null || :
}

# _sandy_options OPTION...: COMPREPLY of the OPTIONS that match cur; those
# ending in '=' take their value in the same word (no space after).
_sandy_options()
{
	local IFS=$'\n'
	COMPREPLY=($(compgen -W "$*" -- "$cur"))
	if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
		compopt -o nospace 2>/dev/null || :
	fi
}

_sandy()
{
	local words cword cur rawcur
	_sandy_words
	COMPREPLY=()

	local -a subcommands=(explain clean allow git build-image kube doctor)
	local rule_opts='--type -t --no-detect --rules -r'
	local session_opts="--fs= --fs-mode= --runtime= --image --agent --env -e --network= --allow
		--push-gate --quiet -q $rule_opts --help --version"
	# The options whose value is the next word, as sandy's find_command.
	local takes_value=' --fs --fs-mode --runtime --image -t --type -r --rules -C --agent -e --env
		--from --network --allow --session --gateway-image --repo --branch --name --volume-claim
		--memory --cpus '
	takes_value=${takes_value//$'\n'/ }
	takes_value=${takes_value//$'\t'/ }

	local cmd=
	local i
	for i in "${subcommands[@]}"; do
		[[ $cword -gt 1 && ${words[1]} == "$i" ]] && cmd=$i
	done

	# After "--" (not an option's value): COMMAND and its arguments for a
	# session and for kube, build arguments for build-image.
	local first=1 dashdash=0
	[[ -n $cmd ]] && first=2
	local -a args=()
	for ((i = first; i < cword; i++)); do
		if [[ ${words[i]} == -- ]]; then
			dashdash=$i
			break
		fi
		if [[ $takes_value == *" ${words[i]} "* ]]; then
			((i++))
		elif [[ ${words[i]} != -* ]]; then
			args+=("${words[i]}")
		fi
	done
	if ((dashdash)); then
		[[ $cmd == build-image ]] && return
		if ((cword == dashdash + 1)); then
			local IFS=$'\n'
			COMPREPLY=($(compgen -c -- "$cur" | sort -u))
		else
			_sandy_files -f
		fi
		return
	fi

	# An option's value.
	local opt=
	if [[ $cur == -*=* ]]; then
		opt=${cur%%=*}
	elif ((cword > first)) && [[ $takes_value == *" ${words[cword - 1]} "* ]]; then
		opt=${words[cword - 1]}
	fi
	case $opt in
	--fs) _sandy_values fuse bind ;;
	--fs-mode) _sandy_values auto host container ;;
	--runtime)
		if [[ $cmd == build-image ]]; then
			_sandy_values docker podman
		else
			_sandy_values docker podman none
		fi
		;;
	--network) _sandy_values filtered open none ;;
	--agent) _sandy_values claude codex gemini ;;
	-t | --type)
		local sandyfs
		sandyfs=$(_sandy_sandyfs "${COMP_WORDS[0]}")
		[[ -n $sandyfs ]] && _sandy_values $("$sandyfs" rules --types 2>/dev/null)
		;;
	-r | --rules) _sandy_files -f ;;
	-C) _sandy_files -d ;;
	-e | --env) _sandy_values $(compgen -e) ;;
	--session) _sandy_values $(_sandy_session_ids) ;;
	--image | --from | --gateway-image | --allow | --repo | --branch | --name | --volume-claim | \
		--memory | --cpus) ;;
	esac
	[[ -n $opt ]] && return

	if ((cword == 1)); then
		if [[ $cur == -* ]]; then
			_sandy_options $session_opts
		else
			local IFS=$'\n'
			COMPREPLY=($(compgen -W "${subcommands[*]}" -- "$cur") $(compgen -d -- "$cur"))
			compopt -o filenames 2>/dev/null || :
		fi
		return
	fi

	case $cmd in
	explain)
		if [[ $cur == -* ]]; then
			_sandy_options $rule_opts --json -C --help
		else
			_sandy_files -f
		fi
		;;
	clean)
		[[ $cur == -* ]] && _sandy_options --help && return
		((${#args[@]} == 0)) && _sandy_files -d
		;;
	allow)
		[[ $cur == -* ]] && _sandy_options --session --help
		;;
	git)
		if [[ $cur == -* ]]; then
			if [[ ${args[0]-} == import ]]; then
				_sandy_options $rule_opts --force --help
			else
				_sandy_options $rule_opts --help
			fi
		elif ((${#args[@]} == 0)); then
			local IFS=$'\n'
			COMPREPLY=($(compgen -W 'list import' -- "$cur") $(compgen -d -- "$cur"))
			compopt -o filenames 2>/dev/null || :
		elif [[ ${args[0]} == list && ${#args[@]} == 1 ]] ||
			[[ ${args[0]} == import && ${#args[@]} == 2 ]]; then
			_sandy_files -d
		fi
		;;
	build-image)
		[[ $cur == -* ]] && _sandy_options --image --gateway-image --gateway-only --fs-only \
			--fs-from-source --from --runtime= --help
		;;
	kube)
		[[ $cur == -* ]] && _sandy_options --repo --branch --name --volume-claim --memory \
			--cpus --no-native-sidecars --apply --image --agent --network= --allow \
			$rule_opts --help
		;;
	doctor | '')
		if [[ $cur == -* ]]; then
			_sandy_options $session_opts
		elif ((${#args[@]} == 0)); then
			_sandy_files -d
		fi
		;;
	esac
}
complete -F _sandy sandy
