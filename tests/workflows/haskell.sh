#!/usr/bin/env bash
# Haskell workflows through the mount with the shipped, detected rules: a
# cabal package that needs nothing beyond base (a library, an executable
# and an exitcode-stdio test-suite), built, tested and run with cabal,
# offline, from a user config with no repository; then compiled a second
# way with plain ghc into build/ (a name no write glob of the type
# covers), and evaluated with ghc -e; a source edited with sed -i and
# rebuilt; in a later session, another edit built and run, cabal clean
# and a test from scratch, build/ removed and made again. dist-newstyle/ is private (in the store,
# never in SOURCE); hello.cabal is only read, and the files ghci, the
# language server and cabal read from the project (.ghci, hie.yaml,
# cabal.project.local) cannot be made.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=haskell
wf_need ghc cabal || done_testing

# dist-newstyle/ is private in every project (base.json).
WF_PRIVATE_NAMES+=(dist-newstyle)

tpl=$(wf_template haskell)
mkdir -p "$tpl/src" "$tpl/app" "$tpl/test"
cat >"$tpl/hello.cabal" <<'EOF_'
cabal-version: 2.4
name:          hello
version:       0.1.0.0
build-type:    Simple

library
  exposed-modules:  Greet
  hs-source-dirs:   src
  build-depends:    base
  default-language: Haskell2010

executable hello
  main-is:          Main.hs
  hs-source-dirs:   app
  build-depends:    base, hello
  default-language: Haskell2010

test-suite spec
  type:             exitcode-stdio-1.0
  main-is:          Spec.hs
  hs-source-dirs:   test
  build-depends:    base, hello
  default-language: Haskell2010
EOF_
printf 'module Greet (greet) where\n\ngreet :: String -> String\ngreet name = "hello, " ++ name\n' >"$tpl/src/Greet.hs"
printf 'module Main (main) where\n\nimport Greet (greet)\n\nmain :: IO ()\nmain = putStrLn (greet "world")\n' >"$tpl/app/Main.hs"
cat >"$tpl/test/Spec.hs" <<'EOF_'
module Main (main) where

import Greet (greet)
import System.Exit (exitFailure)

main :: IO ()
main
  | greet "x" == "hello, x" || greet "x" == "hi, x" = putStrLn "spec passed"
  | otherwise = putStrLn (greet "x") >> exitFailure
EOF_
printf '# hello\n' >"$tpl/README.md"
printf 'dist-newstyle/\n/build/\n' >"$tpl/.gitignore"

# cabal reads ~/.cabal/config, and writes one naming Hackage when there is
# none: a config with no repository section leaves it the GHC install's
# global package database only, and --offline keeps it from the network
# whatever it thinks it needs (cabal update never runs).
cabal=(cabal --offline)
recipe() {
	wf_step "write ~/.cabal/config with no repository" . \
		sh -c 'mkdir -p "$HOME/.cabal" && printf -- "-- no repository: base comes with GHC\njobs: 1\n" >"$HOME/.cabal/config"'
	wf_step "cabal build" . "${cabal[@]}" build
	wf_private dist-newstyle/cache/plan.json
	wf_step "cabal test" . "${cabal[@]}" test
	wf_step_same_output "cabal run hello" . "${cabal[@]}" run -v0 hello
	wf_step "mkdir build" . mkdir build
	wf_step "ghc -outputdir build/obj -o build/hello" . \
		ghc -outputdir build/obj -o build/hello app/Main.hs -isrc
	wf_step_same_output "build/hello" . build/hello
	wf_step_same_output "ghc -e" . ghc -e 'putStrLn (greet "ghci")' src/Greet.hs
	wf_step "sed -i Greet.hs" src sed -i 's/"hello, "/"hi, "/' Greet.hs
	wf_step "cabal build" . "${cabal[@]}" build
	wf_step_same_output "cabal run hello" . "${cabal[@]}" run -v0 hello
	wf_remount
	wf_step "sed -i Main.hs" app sed -i 's/"world"/"again"/' Main.hs
	wf_step "cabal build" . "${cabal[@]}" build
	wf_step_same_output "cabal run hello" . "${cabal[@]}" run -v0 hello
	# clean takes no --offline: it never fetches anything.
	wf_step "cabal clean" . cabal clean
	wf_step "cabal test" . "${cabal[@]}" test
	wf_private dist-newstyle/cache/plan.json
	wf_step "rm -r build" . rm -r build
	wf_step "mkdir build" . mkdir build
	wf_step "ghc -outputdir build/obj -o build/hello" . \
		ghc -outputdir build/obj -o build/hello app/Main.hs -isrc
	wf_step_same_output "build/hello" . build/hello
	wf_source_private_unchanged
}

after() {
	wf_denied "sed -i hello.cabal" . hello.cabal sed -i 's/0.1.0.0/0.2.0.0/' hello.cabal
	wf_denied "create .ghci" . .ghci sh -c 'printf ":! echo hi\n" >.ghci'
	wf_denied "create hie.yaml" . hie.yaml sh -c 'printf "cradle:\n  cabal:\n" >hie.yaml'
	wf_denied "create cabal.project.local" . cabal.project.local \
		sh -c 'printf "package hello\n  ghc-options: -O0\n" >cabal.project.local'
	# cabal configure saves its flags there: the way cabal itself writes it.
	wf_denied "cabal configure" . cabal.project.local "${cabal[@]}" configure -O0
}

wf_protect hello.cabal
wf_run haskell "$tpl" recipe after
done_testing
