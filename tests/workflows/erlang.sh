#!/usr/bin/env bash
# Erlang workflows through the mount with the shipped, detected rules: a
# rebar3 application with no dependencies (a module in src/, eunit tests
# in test/), compiled and tested with rebar3 (which writes rebar.lock at
# the root), compiled a second way with plain erlc into ebin/ (a name no
# write glob of the type covers), run with erl -eval from both; in a
# later session, a source edited with sed -i and the tests again. _build/
# is private (in the store, never in SOURCE); rebar.config is only read,
# and the files rebar3 and erl evaluate from the project
# (rebar.config.script, .erlang) cannot be made.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=erlang
wf_need erl erlc rebar3 || done_testing

# _build/ is private in an Erlang project (erlang.json).
WF_PRIVATE_NAMES+=(_build)

tpl=$(wf_template erlang)
mkdir -p "$tpl/src" "$tpl/test"
printf '{erl_opts, [debug_info]}.\n{deps, []}.\n' >"$tpl/rebar.config"
cat >"$tpl/src/greet.app.src" <<'EOF_'
{application, greet,
 [{description, "greets"},
  {vsn, "0.1.0"},
  {registered, []},
  {applications, [kernel, stdlib]},
  {env, []},
  {modules, []}
 ]}.
EOF_
cat >"$tpl/src/greet.erl" <<'EOF_'
-module(greet).
-export([hello/1]).

hello(Name) -> "hello, " ++ Name.
EOF_
cat >"$tpl/test/greet_tests.erl" <<'EOF_'
-module(greet_tests).
-include_lib("eunit/include/eunit.hrl").

hello_test() ->
    ?assert(lists:member(greet:hello("x"), ["hello, x", "hi, x"])).

prefix_test() ->
    ?assertMatch("h" ++ _, greet:hello("")).
EOF_
printf '# greet\n' >"$tpl/README.md"
printf '/_build/\n/ebin/\n' >"$tpl/.gitignore"

recipe() {
	# rebar3 keeps its cache (hex index, plugins) under HOME: the
	# world's own, made afresh for each run.
	local rebar3=(env REBAR_CACHE_DIR="$WF_WORLD_DIR/home/.cache/rebar3" rebar3)
	local hello='io:format("~s~n", [greet:hello("world")])'
	wf_step "rebar3 compile" . "${rebar3[@]}" compile
	wf_private _build
	wf_step "rebar3 eunit" . "${rebar3[@]}" eunit
	wf_step_same_output "erl -pa _build/default/lib/greet/ebin" . \
		erl -noshell -pa _build/default/lib/greet/ebin -eval "$hello" -s init stop
	wf_step "mkdir ebin" . mkdir ebin
	wf_step "erlc -o ebin src/greet.erl" . erlc -o ebin src/greet.erl
	wf_step_same_output "erl -pa ebin" . erl -noshell -pa ebin -eval "$hello" -s init stop
	wf_remount
	wf_step "sed -i greet.erl" src sed -i 's/"hello, "/"hi, "/' greet.erl
	wf_step "rebar3 eunit" . "${rebar3[@]}" eunit
	wf_step "rebar3 compile" . "${rebar3[@]}" compile
	wf_step_same_output "erl -pa _build/default/lib/greet/ebin" . \
		erl -noshell -pa _build/default/lib/greet/ebin -eval "$hello" -s init stop
	wf_step "erlc -o ebin src/greet.erl" . erlc -o ebin src/greet.erl
	wf_step_same_output "erl -pa ebin" . erl -noshell -pa ebin -eval "$hello" -s init stop
	wf_source_private_unchanged
}

after() {
	wf_denied "sed -i rebar.config" . rebar.config sed -i 's/debug_info/warnings_as_errors/' rebar.config
	wf_denied "create rebar.config.script" . rebar.config.script \
		sh -c 'printf "CONFIG.\n" >rebar.config.script'
	wf_denied "create .erlang" . .erlang sh -c 'printf "io:format(\"hi~n\").\n" >.erlang'
}

wf_protect rebar.config
wf_run erlang "$tpl" recipe after
done_testing
