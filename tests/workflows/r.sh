#!/usr/bin/env bash
# R workflows through the mount with the shipped, detected rules: a package
# that needs nothing beyond base R, its code sourced and its base-R tests
# run with Rscript, at the root and in tests/; R CMD build (the tarball
# lands at the root, a name no write glob covers), R CMD INSTALL of it into
# a library in the project and into the user library under HOME, the
# installed package loaded from both; R CMD check (hello.Rcheck/,
# generated); a source edited with sed -i, an R Markdown report and data
# files written; then, in a later session, the tarball of the first
# removed, built and installed again, its data loaded. DESCRIPTION is only
# read, and the files R runs when it starts in the project (.Rprofile,
# .Renviron, renv/activate.R) cannot be made.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=r
wf_need R Rscript || done_testing

tpl=$(wf_template r)
mkdir -p "$tpl/R" "$tpl/man" "$tpl/tests" "$tpl/analysis"
cat >"$tpl/DESCRIPTION" <<'EOF_'
Package: hello
Title: Greet Someone
Version: 0.1.0
Authors@R: person("Sandy", "Test", email = "test@sandy.invalid", role = c("aut", "cre"))
Description: Greets whoever it is given, for the workflow tests.
License: GPL-3
Encoding: UTF-8
EOF_
printf 'export(greet)\n' >"$tpl/NAMESPACE"
printf 'greet <- function(name = "world") paste0("hello, ", name)\n' >"$tpl/R/greet.R"
cat >"$tpl/man/greet.Rd" <<'EOF_'
\name{greet}
\alias{greet}
\title{Greet Someone}
\usage{
greet(name = "world")
}
\arguments{
\item{name}{who to greet}
}
\value{A greeting.}
\description{
Greets \code{name}.
}
\examples{
greet("x")
}
EOF_
# From the source tree (the root or tests/) the test sources the code; under
# R CMD check, which runs it in hello.Rcheck/tests, it loads the installed
# package.
cat >"$tpl/tests/test-greet.R" <<'EOF_'
src <- Filter(file.exists, c("R/greet.R", "../R/greet.R"))
if (length(src)) source(src[1]) else library(hello)
stopifnot(grepl("^(hello|hi), x$", greet("x")))
cat("tests passed\n")
EOF_
printf '# hello\n' >"$tpl/README.md"
printf '^analysis$\n^lib$\n^README\\.md$\n' >"$tpl/.Rbuildignore"
printf '/lib/\n*.tar.gz\n*.Rcheck/\n' >"$tpl/.gitignore"

# What differs from one native run to the next: R CMD build stamps the
# packaged DESCRIPTION (in the tarball, with the files' mtimes, and in
# check's copy of the sources), R CMD INSTALL the installed one, and the
# installed package's metadata, with the time; the help database of a
# package installed from a tarball holds the paths of its Rd files in the
# random temporary directory it was unpacked in; the outputs of check's
# examples and tests the times they took, the examples' PDF its date.
WF_VOLATILE=('hello_*.tar.gz' '*/hello/DESCRIPTION' '*/hello/Meta/package.rds'
	'lib/hello/help/*' 'hello.Rcheck/hello-Ex.Rout' 'hello.Rcheck/hello-Ex.pdf'
	'hello.Rcheck/tests/*.Rout')

# The user library under HOME, for R CMD INSTALL without --library: it must
# exist, or R installs into the system's site library.
r=(sh -c 'R_LIBS_USER=$HOME/R/library exec "$@"' r)
recipe() {
	wf_step_same_output "Rscript -e source(R/greet.R)" . \
		"${r[@]}" Rscript -e 'source("R/greet.R"); cat(greet("x"), "\n")'
	wf_step_same_output "Rscript tests/test-greet.R" . "${r[@]}" Rscript tests/test-greet.R
	wf_step_same_output "Rscript test-greet.R" tests "${r[@]}" Rscript test-greet.R
	wf_step "R CMD build ." . "${r[@]}" R CMD build .
	# A library beside the package, which R loads only when told to
	# (lib.loc, .libPaths): what is installed there holds a DESCRIPTION.
	wf_step "mkdir lib" . mkdir lib
	wf_step "R CMD INSTALL --library=lib" . "${r[@]}" R CMD INSTALL --library=lib hello_0.1.0.tar.gz
	wf_step_same_output "Rscript -e library(hello, lib.loc = lib)" . \
		"${r[@]}" Rscript -e 'library(hello, lib.loc = "lib"); cat(greet("lib"), "\n")'
	wf_step "mkdir the user library" . "${r[@]}" sh -c 'mkdir -p "$R_LIBS_USER"'
	wf_step "R CMD INSTALL (the user library)" . "${r[@]}" R CMD INSTALL hello_0.1.0.tar.gz
	wf_step_same_output "Rscript -e library(hello)" . \
		"${r[@]}" Rscript -e 'library(hello); cat(greet("user"), "\n")'
	wf_step "R CMD check" . "${r[@]}" R CMD check --no-manual --no-build-vignettes hello_0.1.0.tar.gz
	wf_step "sed -i greet.R" R sed -i 's/"hello, "/"hi, "/' greet.R
	wf_step_same_output "Rscript tests/test-greet.R" . "${r[@]}" Rscript tests/test-greet.R
	wf_step "write analysis/report.Rmd" . "${r[@]}" Rscript -e \
		'writeLines(c("---", "title: Greetings", "---", "", "```{r}", "source(\"../R/greet.R\")", "greet(\"report\")", "```"), "analysis/report.Rmd")'
	wf_step "write analysis/greetings.csv and .rds" . "${r[@]}" Rscript -e \
		'source("R/greet.R"); d <- data.frame(name = c("a", "b"), greeting = greet(c("a", "b"))); write.csv(d, "analysis/greetings.csv", row.names = FALSE); saveRDS(d, "analysis/greetings.rds")'
	wf_step "write data/greetings.rda" . "${r[@]}" Rscript -e \
		'dir.create("data"); greetings <- readRDS("analysis/greetings.rds"); save(greetings, file = "data/greetings.rda")'
	wf_remount
	wf_step "rm hello_0.1.0.tar.gz" . rm hello_0.1.0.tar.gz
	wf_step "R CMD build ." . "${r[@]}" R CMD build .
	wf_step "R CMD INSTALL --library=lib" . "${r[@]}" R CMD INSTALL --library=lib hello_0.1.0.tar.gz
	wf_step_same_output "Rscript -e library(hello, lib.loc = lib)" . \
		"${r[@]}" Rscript -e 'library(hello, lib.loc = "lib"); cat(greet("lib"), "\n")'
	wf_step "R CMD INSTALL (the user library)" . "${r[@]}" R CMD INSTALL hello_0.1.0.tar.gz
	wf_step_same_output "Rscript -e library(hello)" . \
		"${r[@]}" Rscript -e 'library(hello); data(greetings); cat(greet(greetings$name), "\n")'
	wf_step_same_output "Rscript test-greet.R" tests "${r[@]}" Rscript test-greet.R
}

after() {
	wf_denied "create .Rprofile" . .Rprofile sh -c 'printf "cat(\"hi\\\\n\")\n" >.Rprofile'
	wf_denied "create .Renviron" . .Renviron sh -c 'printf "R_LIBS=/tmp/x\n" >.Renviron'
	wf_denied "sed -i DESCRIPTION" . DESCRIPTION sed -i 's/0.1.0/0.2.0/' DESCRIPTION
	# The directory is the agent's own: it may remove it after the refusal.
	wf_denied "create renv/activate.R" . renv/activate.R \
		sh -c 'mkdir renv && printf "cat(1)\n" >renv/activate.R; rc=$?; rmdir renv; exit $rc'
}

wf_protect DESCRIPTION
wf_run r "$tpl" recipe after
done_testing
