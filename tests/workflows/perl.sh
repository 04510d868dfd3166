#!/usr/bin/env bash
# Perl workflows through the mount with the shipped, detected rules: a
# CPAN-style distribution built with ExtUtils::MakeMaker: perl Makefile.PL
# (which writes Makefile and MYMETA.* beside it, at the root), make (blib/,
# pm_to_blib, the man page of the module's POD), make test, prove -l and
# prove -lr, the module run with perl -Ilib and the script of bin/; a
# module edited in place with perl -pi -e, perltidy where it is installed;
# make clean (which keeps the Makefile as Makefile.old); in a later
# session perl Makefile.PL and make test again. Makefile.PL is only read,
# and the files prove and cpanm read from the project (.proverc,
# cpanfile) cannot be made.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=perl
wf_need perl make prove || done_testing
# Not a tool of the workflow, only one more way to edit: used if there.
have_perltidy=false
PATH=$WF_PATH command -v perltidy >/dev/null 2>&1 && have_perltidy=true

tpl=$(wf_template perl)
mkdir -p "$tpl/lib/App" "$tpl/t" "$tpl/bin"
cat >"$tpl/Makefile.PL" <<'EOF_'
use strict;
use warnings;
use ExtUtils::MakeMaker;

WriteMakefile(
    NAME          => 'App::Greet',
    VERSION_FROM  => 'lib/App/Greet.pm',
    ABSTRACT_FROM => 'lib/App/Greet.pm',
    AUTHOR        => 'Sandy Test <test@sandy.invalid>',
    LICENSE       => 'perl_5',
    EXE_FILES     => ['bin/greet'],
    PREREQ_PM     => { 'Test::More' => 0 },
);
EOF_
cat >"$tpl/lib/App/Greet.pm" <<'EOF_'
package App::Greet;

use strict;
use warnings;

our $VERSION = '0.01';

sub greet {
    my ($name) = @_;
    $name = 'world' unless defined $name;
    return "hello, $name";
}

1;

__END__

=head1 NAME

App::Greet - greets

=head1 SYNOPSIS

    use App::Greet;
    print App::Greet::greet('you'), "\n";

=cut
EOF_
cat >"$tpl/t/basic.t" <<'EOF_'
use strict;
use warnings;
use Test::More tests => 2;

use_ok('App::Greet');
is(App::Greet::greet('x'), 'hello, x', 'greet');
EOF_
mkdir -p "$tpl/t/more"
printf 'use strict;\nuse warnings;\nuse Test::More tests => 1;\nuse App::Greet;\n\nlike(App::Greet::greet(), qr/world/, "default");\n' >"$tpl/t/more/default.t"
printf '#!/usr/bin/perl\nuse strict;\nuse warnings;\nuse App::Greet;\n\nprint App::Greet::greet(@ARGV), "\\n";\n' >"$tpl/bin/greet"
chmod 755 "$tpl/bin/greet"
printf 'Changes\nMakefile.PL\nMANIFEST\nbin/greet\nlib/App/Greet.pm\nt/basic.t\nt/more/default.t\n' >"$tpl/MANIFEST"
printf '0.01  first release\n' >"$tpl/Changes"
printf '# App::Greet\n' >"$tpl/README.md"
printf '/Makefile\n/Makefile.old\n/MYMETA.*\n/blib/\n/pm_to_blib\n' >"$tpl/.gitignore"

recipe() {
	wf_step "perl Makefile.PL" . perl Makefile.PL
	wf_step "make" . make
	wf_step "make test" . make test
	wf_step "prove -l t" . prove -l t
	wf_step "prove -lr" . prove -lr
	wf_step "prove -l" t prove -I../lib basic.t
	wf_step_same_output "perl -Ilib -e" . perl -Ilib -MApp::Greet -e 'print App::Greet::greet("perl"), "\n"'
	wf_step_same_output "perl -Ilib bin/greet" . perl -Ilib bin/greet you
	wf_step_same_output "perl -Mblib blib/script/greet" . perl -Mblib blib/script/greet blib
	wf_step "perl -pi -e Greet.pm" lib/App perl -pi -e 's/hello, /hi, /' Greet.pm
	wf_step "perl -pi -e basic.t" t perl -pi -e "s/'hello, x'/'hi, x'/" basic.t
	if $have_perltidy; then
		wf_step "perltidy -b Greet.pm" lib/App perltidy -b -bext=/ Greet.pm
	fi
	wf_step_same_output "perl -Ilib -e" . perl -Ilib -MApp::Greet -e 'print App::Greet::greet("perl"), "\n"'
	wf_step "make test" . make test
	wf_step "make clean" . make clean
	wf_remount
	wf_step "perl Makefile.PL && make test" . sh -c 'perl Makefile.PL && make test'
	wf_step "make realclean" . make realclean
}

after() {
	wf_denied "sed -i Makefile.PL" . Makefile.PL sed -i 's/0\.01/0.02/' Makefile.PL
	wf_denied "create .proverc" . .proverc sh -c 'echo "-Ilib" > .proverc'
	wf_denied "write cpanfile" . cpanfile sh -c "echo \"requires 'Test::More';\" > cpanfile"
}

wf_protect Makefile.PL
wf_run perl "$tpl" recipe after
done_testing
