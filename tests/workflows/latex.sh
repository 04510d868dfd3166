#!/usr/bin/env bash
# LaTeX workflows through the mount with the shipped, detected rules: a
# one-page article with a BibTeX bibliography, built with latexmk -pdf
# (pdflatex and bibtex write the .aux, .log, .fls, .bbl, .blg,
# .fdb_latexmk and .pdf beside it at the root), edited with sed -i and
# built again, a section written in sections/ and \input, cleaned with
# latexmk -c; then pdflatex and bibtex with -output-directory build; in a
# later session, built again at the root over the first session's files,
# latexmk -C, and latexmk -outdir=build. No latexmkrc is in the project
# (nothing detects the type): what the build writes is writable by its
# extension everywhere, and latexmk's configuration (.latexmkrc,
# latexmkrc: Perl it runs) cannot be made. Then a project with a
# latexmkrc (which detects the type) that sends the output to build/: the
# latexmkrc is only read, and sed -i on it is refused.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=latex
wf_need latexmk pdflatex bibtex || done_testing

tpl=$(wf_template latex)
cat >"$tpl/paper.tex" <<'EOF_'
\documentclass{article}
\title{A Tiny Paper}
\author{Sandy Test}
\date{1 January 2000}
\begin{document}
\maketitle
\section{Introduction}\label{sec:intro}
Hello, world. Section~\ref{sec:intro} cites~\cite{knuth}.
%INPUT
\bibliographystyle{plain}
\bibliography{refs}
\end{document}
EOF_
cat >"$tpl/refs.bib" <<'EOF_'
@book{knuth,
  author = {Donald E. Knuth},
  title = {The {\TeX}book},
  publisher = {Addison-Wesley},
  year = {1984}
}
EOF_
printf '# paper\n' >"$tpl/README.md"
printf '*.aux\n*.log\n*.fls\n*.fdb_latexmk\n*.bbl\n*.blg\n/build/\n' >"$tpl/.gitignore"

# pdfTeX stamps the log, and the PDF's dates and ID, with the time, unless
# SOURCE_DATE_EPOCH and FORCE_SOURCE_DATE say which: with them, every
# output is the same from run to run but latexmk's database, which records
# the files' mtimes.
WF_VOLATILE=('*.fdb_latexmk')
tex=(env SOURCE_DATE_EPOCH=0 FORCE_SOURCE_DATE=1)
pdflatex=("${tex[@]}" pdflatex -interaction=nonstopmode -halt-on-error)

# latexmk takes a file whose mtime (in whole seconds) and size are what it
# recorded for unchanged, without reading it: the edits change the size, so
# that an edit in the second of the build is seen, in every run.
recipe() {
	wf_step "latexmk -pdf" . "${tex[@]}" latexmk -pdf paper.tex
	wf_step "sed -i paper.tex" . sed -i 's/Hello, world\./Hello again, world./' paper.tex
	wf_step "latexmk -pdf" . "${tex[@]}" latexmk -pdf paper.tex
	wf_step "write sections/method.tex" . \
		sh -c 'mkdir sections && printf "\\\\section{Method}\nBy hand.\n" >sections/method.tex'
	wf_step "sed -i paper.tex (\\input)" . sed -i 's|^%INPUT$|\\input{sections/method}|' paper.tex
	wf_step "latexmk -pdf" . "${tex[@]}" latexmk -pdf paper.tex
	wf_step "latexmk -c" . "${tex[@]}" latexmk -c paper.tex
	wf_step "mkdir build" . mkdir build
	wf_step "pdflatex -output-directory build" . "${pdflatex[@]}" -output-directory build paper.tex
	wf_step "bibtex build/paper" . "${tex[@]}" bibtex build/paper
	wf_step "pdflatex -output-directory build" . "${pdflatex[@]}" -output-directory build paper.tex
	wf_remount
	wf_step "latexmk -pdf" . "${tex[@]}" latexmk -pdf paper.tex
	wf_step "latexmk -C" . "${tex[@]}" latexmk -C paper.tex
	wf_step "latexmk -pdf -outdir=build" . "${tex[@]}" latexmk -pdf -outdir=build paper.tex
}

after() {
	wf_denied "create .latexmkrc" . .latexmkrc sh -c 'printf "\$pdflatex = \"pdflatex %%O %%S\";\n" >.latexmkrc'
	wf_denied "create latexmkrc" . latexmkrc sh -c 'printf "\$pdf_mode = 1;\n" >latexmkrc'
}

wf_run latex "$tpl" recipe after

# --- a latexmkrc in the project --------------------------------------------
# latexmkrc detects the type (build/ generated) and is only read: latexmk
# puts everything in the build/ it names, and the agent cannot change it.
wf_reset
WF_VOLATILE=('*.fdb_latexmk')
tpl=$(wf_template latex-latexmkrc)
cp "$wf_base/templates/latex/paper.tex" "$wf_base/templates/latex/refs.bib" "$tpl/" || done_testing
printf '$pdf_mode = 1;\n$out_dir = "build";\n' >"$tpl/latexmkrc"

rc_recipe() {
	wf_step "latexmk" . "${tex[@]}" latexmk paper.tex
	wf_step "sed -i paper.tex" . sed -i 's/Hello, world\./Hello again, world./' paper.tex
	wf_step "latexmk" . "${tex[@]}" latexmk paper.tex
	wf_remount
	wf_step "latexmk -c" . "${tex[@]}" latexmk -c paper.tex
	wf_step "latexmk" . "${tex[@]}" latexmk paper.tex
}

rc_after() {
	wf_denied "sed -i latexmkrc" . latexmkrc sed -i 's/build/out/' latexmkrc
	wf_denied "create .latexmkrc" . .latexmkrc sh -c 'printf "\$pdf_mode = 4;\n" >.latexmkrc'
}

WF_WORLD=latex-latexmkrc
wf_protect latexmkrc
wf_run latex-latexmkrc "$tpl" rc_recipe rc_after
done_testing
