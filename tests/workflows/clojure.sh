#!/usr/bin/env bash
# Clojure workflows through the mount with the shipped, detected rules
# (deps.edn is the marker): a namespace in src/ and clojure.test tests in
# test/, run with Debian's clojure wrapper on a classpath given with -cp
# (Debian's wrapper is plain clojure.main: no -M, no deps resolution, no
# network), the exit status the tests' own; the main function run with
# -m; a source edited with sed -i; the namespace AOT-compiled into
# classes/ (a generated tree) and run from there with plain java; in a
# later session, the tests again, classes/ removed and compiled again.
# deps.edn is only read, and the files Leiningen, clj-kondo and
# clojure-lsp read from the project (project.clj, .clj-kondo/config.edn,
# .lsp/config.edn) cannot be made.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=clojure
wf_need clojure java || done_testing

tpl=$(wf_template clojure)
mkdir -p "$tpl/src/app" "$tpl/test/app"
printf '{:paths ["src" "test"]}\n' >"$tpl/deps.edn"
cat >"$tpl/src/app/core.clj" <<'EOF_'
(ns app.core
  (:gen-class))

(defn greet [name]
  (str "hello, " name))

(defn -main [& args]
  (println (greet (or (first args) "world"))))
EOF_
cat >"$tpl/test/app/core_test.clj" <<'EOF_'
(ns app.core-test
  (:require [clojure.test :refer [deftest is]]
            [app.core :refer [greet]]))

(deftest greet-test
  (is (contains? #{"hello, x" "hi, x"} (greet "x"))))
EOF_
printf '# app\n' >"$tpl/README.md"
printf '/classes/\n/.cpcache/\n' >"$tpl/.gitignore"

recipe() {
	# run-tests only reports: the exit status says whether they passed.
	local run_tests="(require 'app.core-test)
(System/exit (if (clojure.test/successful? (clojure.test/run-tests 'app.core-test)) 0 1))"
	# compile wants *compile-path* on the classpath, and there already.
	local aot="(binding [*compile-path* \"classes\"] (compile 'app.core))"
	local jar=/usr/share/java/clojure.jar
	wf_step_same_output "clojure -e run-tests" . clojure -cp src:test -e "$run_tests"
	wf_step_same_output "clojure -m app.core" . clojure -cp src -m app.core
	wf_step "sed -i core.clj" src/app sed -i 's/"hello, "/"hi, "/' core.clj
	wf_step_same_output "clojure -e run-tests" . clojure -cp src:test -e "$run_tests"
	wf_step "mkdir classes" . mkdir classes
	wf_step "clojure -e compile" . clojure -cp src:classes -e "$aot"
	wf_step_same_output "java -cp classes app.core" . java -cp "$jar:classes" app.core aot
	wf_remount
	wf_step_same_output "clojure -e run-tests" . clojure -cp src:test -e "$run_tests"
	wf_step "sed -i core.clj" src/app sed -i 's/"world"/"again"/' core.clj
	wf_step "rm -r classes" . rm -r classes
	wf_step "mkdir classes" . mkdir classes
	wf_step "clojure -e compile" . clojure -cp src:classes -e "$aot"
	wf_step_same_output "java -cp classes app.core" . java -cp "$jar:classes" app.core
	wf_step_same_output "clojure -e run-tests" . clojure -cp src:test -e "$run_tests"
}

after() {
	wf_denied "sed -i deps.edn" . deps.edn sed -i 's/"test"/"dev"/' deps.edn
	wf_denied "create project.clj" . project.clj \
		sh -c 'printf "(defproject app \"0.1.0\")\n" >project.clj'
	wf_denied "create .clj-kondo/config.edn" . .clj-kondo/config.edn \
		sh -c 'mkdir -p .clj-kondo && printf "{}\n" >.clj-kondo/config.edn'
	wf_denied "create .lsp/config.edn" . .lsp/config.edn \
		sh -c 'mkdir -p .lsp && printf "{}\n" >.lsp/config.edn'
}

wf_protect deps.edn
wf_run clojure "$tpl" recipe after
done_testing
