#!/usr/bin/env bash
# Elixir workflows through the mount with the shipped, detected rules: a
# mix project with no dependencies (a module in lib/, ExUnit tests in
# test/), compiled, tested (MIX_ENV=test, which mix test sets itself),
# formatted with mix format (which rewrites a deliberately unformatted
# file, and reads the project's .formatter.exs without writing it), and
# run with mix run -e; in a later session, tested again. _build/ is
# private (in the store, never in SOURCE); mix.exs and .formatter.exs are
# only read, and .iex.exs, which iex evaluates on start, cannot be made.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=elixir
wf_need elixir mix || done_testing

# _build/ and deps/ are private in an Elixir project (elixir.json).
WF_PRIVATE_NAMES+=(_build deps)

tpl=$(wf_template elixir)
mkdir -p "$tpl/lib/greeter" "$tpl/test"
cat >"$tpl/mix.exs" <<'EOF_'
defmodule Greeter.MixProject do
  use Mix.Project

  def project do
    [
      app: :greeter,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: Mix.env() == :prod,
      deps: []
    ]
  end

  def application do
    [
      extra_applications: [:logger]
    ]
  end
end
EOF_
# Its inputs name mix.exs and .formatter.exs too: both are formatted
# already, so mix format has nothing to write there.
cat >"$tpl/.formatter.exs" <<'EOF_'
# Used by "mix format"
[
  inputs: ["{mix,.formatter}.exs", "{config,lib,test}/**/*.{ex,exs}"]
]
EOF_
cat >"$tpl/lib/greeter.ex" <<'EOF_'
defmodule Greeter do
  @moduledoc """
  Greets.
  """

  @doc """
  Hello.

  ## Examples

      iex> Greeter.hello()
      "hello, world"

  """
  def hello, do: Greeter.Name.greet("world")
end
EOF_
# Unformatted on purpose, so that mix format rewrites it.
printf 'defmodule Greeter.Name do\n  def greet( name ),do:   "hello, " <>name\nend\n' >"$tpl/lib/greeter/name.ex"
printf 'ExUnit.start()\n' >"$tpl/test/test_helper.exs"
cat >"$tpl/test/greeter_test.exs" <<'EOF_'
defmodule GreeterTest do
  use ExUnit.Case
  doctest Greeter

  test "greets the world" do
    assert Greeter.hello() == "hello, world"
  end

  test "greets a name" do
    assert Greeter.Name.greet("x") == "hello, x"
  end
end
EOF_
printf '# greeter\n' >"$tpl/README.md"
printf '/_build/\n/deps/\n/cover/\n' >"$tpl/.gitignore"

recipe() {
	# Mix keeps its archives (and Hex its cache) under HOME: the world's
	# own, made afresh for each run. HEX_OFFLINE: never the network.
	local h=$WF_WORLD_DIR/home
	local mix=(env MIX_HOME="$h/.mix" HEX_HOME="$h/.hex" HEX_OFFLINE=1 mix)
	wf_step "mix compile" . "${mix[@]}" compile
	wf_private _build
	wf_step "mix test" . "${mix[@]}" test
	wf_step "mix format" . "${mix[@]}" format
	wf_step "mix format --check-formatted" . "${mix[@]}" format --check-formatted
	wf_step_same_output "mix run -e" . "${mix[@]}" run -e 'IO.puts Greeter.hello()'
	wf_remount
	wf_step "mix test" . "${mix[@]}" test
	wf_source_private_unchanged
}

after() {
	wf_denied "sed -i mix.exs" . mix.exs sed -i 's/0.1.0/0.2.0/' mix.exs
	wf_denied "create .iex.exs" . .iex.exs sh -c 'printf "IO.puts :hi\n" >.iex.exs'
	wf_denied "write .formatter.exs" . .formatter.exs sh -c 'printf "[]\n" >.formatter.exs'
}

wf_protect mix.exs .formatter.exs
wf_run elixir "$tpl" recipe after
done_testing
