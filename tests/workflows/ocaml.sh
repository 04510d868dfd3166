#!/usr/bin/env bash
# OCaml workflows through the mount with the shipped, detected rules: a
# dune project (a library in lib/, an executable in bin/, a test of plain
# asserts in test/), built, tested and run with dune; formatted with
# ocamlformat where it is installed; a source edited with sed -i and
# rebuilt; in a later session, built, tested and run again. _build/ is
# private (in the store, never in SOURCE); dune-project and the dune files
# are only read, and .ocamlinit, which the toplevel runs on start, cannot
# be made.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=ocaml
wf_need ocaml dune || done_testing

# _build/ is private in an OCaml project (ocaml.json).
WF_PRIVATE_NAMES+=(_build)

tpl=$(wf_template ocaml)
mkdir -p "$tpl/bin" "$tpl/lib" "$tpl/test"
# The dune language of Debian 12's dune (2.9.3).
printf '(lang dune 2.9)\n' >"$tpl/dune-project"
printf '(library\n (name greet))\n' >"$tpl/lib/dune"
printf 'let hello name = "hello, " ^ name\n' >"$tpl/lib/greet.ml"
printf '(executable\n (name main)\n (libraries greet))\n' >"$tpl/bin/dune"
printf 'let () = print_endline (Greet.hello "world")\n' >"$tpl/bin/main.ml"
printf '(test\n (name test_greet)\n (libraries greet))\n' >"$tpl/test/dune"
cat >"$tpl/test/test_greet.ml" <<'EOF_'
let () =
  let got = Greet.hello "x" in
  assert (got = "hello, x" || got = "hi, x");
  print_endline "test passed"
EOF_
printf '# greet\n' >"$tpl/README.md"
printf '/_build/\n' >"$tpl/.gitignore"

recipe() {
	wf_step "dune build" . dune build
	wf_private _build
	wf_step "dune test" . dune test
	wf_step_same_output "dune exec ./bin/main.exe" . dune exec ./bin/main.exe
	# Not part of Debian 12's OCaml: formatted where it is there. With no
	# .ocamlformat (a name the agent cannot make) it needs to be told to
	# format anyway.
	if PATH=$WF_PATH command -v ocamlformat >/dev/null 2>&1; then
		wf_step "ocamlformat -i" . ocamlformat --enable-outside-detected-project -i lib/greet.ml bin/main.ml
	fi
	wf_step "sed -i greet.ml" lib sed -i 's/"hello, "/"hi, "/' greet.ml
	wf_step "dune build" . dune build
	wf_step_same_output "dune exec ./bin/main.exe" . dune exec ./bin/main.exe
	wf_remount
	wf_step "sed -i main.ml" bin sed -i 's/"world"/"again"/' main.ml
	wf_step "dune build" . dune build
	wf_step "dune test" . dune test
	wf_step_same_output "dune exec ./bin/main.exe" . dune exec ./bin/main.exe
	wf_source_private_unchanged
}

after() {
	wf_denied "sed -i dune" lib lib/dune sed -i 's/greet/greet2/' dune
	wf_denied "sed -i dune-project" . dune-project sed -i 's/2.9/3.0/' dune-project
	wf_denied "create .ocamlinit" . .ocamlinit sh -c 'printf "print_endline \"hi\";;\n" >.ocamlinit'
}

wf_protect dune-project bin/dune lib/dune test/dune
wf_run ocaml "$tpl" recipe after
done_testing
