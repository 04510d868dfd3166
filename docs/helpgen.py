#!/usr/bin/env python3
"""helpgen.py - the --help texts and the man pages from one source.

Each program keeps what `PROG --help` prints in a plain text file beside
its code (launcher/sandy.help, fusefs/sandyfs.help), and what only the man
page says in a Markdown file beside it (launcher/sandy.1.md, ...). At build
time meson runs this script twice per program:

  helpgen.py header HELP NAME OUT.h [--include FILE.h]...
      OUT.h defines NAME (e.g. SANDY_HELP) as the C string literal of HELP,
      byte for byte, and NAME_<TITLE> for each options block ("rule
      options:" gives NAME_RULE_OPTIONS), for the subcommands whose own
      --help repeats one. @MACRO@ in HELP stands for the C macro MACRO (a
      string defined in one of the --include headers, which OUT.h
      includes).

  helpgen.py man PAGE.md OUT.N [--help-file HELP] [--defines FILE.h]...
                [--define MACRO=VALUE]... [--version V]
      OUT.N is the roff man page PAGE.md describes. PAGE.md is Markdown
      (the subset below) whose first line is "# NAME(N) -- summary"; a line
      {{help:PART}} places part of HELP there (synopsis, description,
      options, prose, exit), and every part HELP has must be placed, so the
      man page says everything --help does. {{include:PATH}} inserts another
      Markdown file (its "# " title dropped), e.g. rules/README.md. @MACRO@
      is replaced by the string value of `#define MACRO "..."` in a
      --defines header, or given as --define MACRO=VALUE.

The help text's shape, which the parser relies on (and says so when it is
not met): paragraphs separated by empty lines; the first is the usage
("usage: PROG ..." and one line per further form, each starting with PROG;
a deeper indented line continues the form above); an options block is a
paragraph whose first line is a title ending in ':' ("options:", "rule
options (passed to sandyfs):"), followed by entries: the option at
indentation 2 to 6, its description from column 26 or on the following
lines, indented further; a paragraph starting "Exit status:" is the exit
status; every other paragraph is prose, "description" before the first
options block, "prose" after.

Markdown subset: "## X" (section), "### X" (subsection), paragraphs, <!-- comments -->, "- "
lists (continuation lines indented), pipe tables (rendered as tagged
paragraphs), ``` fenced blocks, definition lists (a term line, then ": "
and the definition, continuation lines indented), `code` and **bold**
(bold), *emphasis* (italic), [text](url) (text).
"""

import argparse
import datetime
import os
import re
import sys


class SourceError(Exception):
    pass


# ---- the help text --------------------------------------------------------


class Help:
    def __init__(self, path):
        self.path = path
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        if not self.text.endswith("\n"):
            raise SourceError(f"{path}: does not end with a newline")
        self.usage = []  # [(first line number, [command words and args])]
        self.description = []  # paragraphs: [lines]
        self.options = []  # [(title, [(spec, [description lines])], block lines)]
        self.prose = []
        self.exit = []
        self.prog = None
        self._parse()

    def _paragraphs(self):
        para, start = [], 0
        for n, line in enumerate(self.text.split("\n")[:-1], 1):
            if line.strip() == "":
                if line:
                    raise SourceError(f"{self.path}:{n}: a blank line with spaces")
                if para:
                    yield start, para
                para = []
            else:
                if not para:
                    start = n
                para.append(line)
        if para:
            yield start, para

    def _parse(self):
        seen_options = False
        for start, para in self._paragraphs():
            if para[0].startswith("usage: "):
                if self.usage:
                    raise SourceError(f"{self.path}:{start}: a second usage paragraph")
                self._parse_usage(start, para)
            elif self._is_options(para):
                self.options.append(self._parse_options(start, para))
                seen_options = True
            elif para[0].startswith("Exit status:"):
                self.exit.append(para)
            elif not self.usage:
                raise SourceError(f"{self.path}:{start}: the usage must come first")
            else:
                (self.prose if seen_options else self.description).append(para)
        if not self.usage:
            raise SourceError(f"{self.path}: no 'usage: ' paragraph")

    def _parse_usage(self, start, para):
        first = para[0][len("usage: "):]
        self.prog = first.split()[0]
        forms = [first]
        for n, line in enumerate(para[1:], start + 1):
            s = line.strip()
            if s == self.prog or s.startswith(self.prog + " "):
                forms.append(s)
            elif line.startswith("        "):
                forms[-1] += " " + s
            else:
                raise SourceError(
                    f"{self.path}:{n}: a usage line must start with '{self.prog}' "
                    "or continue the one above, indented")
        self.usage = forms

    @staticmethod
    def _is_options(para):
        return (len(para) > 1 and not para[0].startswith(" ") and para[0].endswith(":")
                and re.match(r" {2,6}-", para[1]) is not None)

    def _parse_options(self, start, para):
        title = para[0][:-1]
        entries = []
        for n, line in enumerate(para[1:], start + 1):
            m = re.match(r"( {2,6})(-.*)$", line)
            if m:
                spec, desc = split_option(line)
                entries.append((spec, [desc] if desc else []))
            elif line.startswith(" " * 8) and entries:
                entries[-1][1].append(line.strip())
            else:
                raise SourceError(
                    f"{self.path}:{n}: in an options block, a line is an option "
                    "(indented 2 to 6) or continues one (indented further)")
        for spec, desc in entries:
            if not desc:
                raise SourceError(f"{self.path}: option '{spec}' has no description")
        return title, entries, para


DESC_COLUMN = 25  # where an option's description starts, 0-based


def split_option(line):
    """'  -f, --foreground       stay ...' -> ('-f, --foreground', 'stay ...')"""
    if len(line) > DESC_COLUMN and line[DESC_COLUMN - 1] == " " and line[DESC_COLUMN] != " ":
        return line[:DESC_COLUMN].strip(), line[DESC_COLUMN:].strip()
    m = re.match(r"\s*(\S.*?)(?: {2,}(\S.*))?$", line)
    return m.group(1), (m.group(2) or "")


def macro_suffix(title):
    """'rule options (passed to sandyfs)' -> 'RULE_OPTIONS'"""
    t = re.sub(r"\(.*?\)", "", title).strip()
    return re.sub(r"[^A-Za-z0-9]+", "_", t).strip("_").upper()


# ---- C header ---------------------------------------------------------------


def c_string_lines(text, indent="\t"):
    """TEXT as C string literal pieces, one per line of TEXT; @MACRO@
    becomes the macro, concatenated."""
    out = []
    for line in text.splitlines(keepends=True):
        parts = re.split(r"@([A-Z_][A-Z0-9_]*)@", line)
        pieces = []
        for i, p in enumerate(parts):
            if i % 2:
                pieces.append(p)
            elif p:
                pieces.append('"' + c_escape(p) + '"')
        out.append(indent + " ".join(pieces))
    return out


def c_escape(s):
    s = s.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    s = s.replace("??", "?\\?").replace("\n", "\\n")
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", s):
        raise SourceError("a control character in the help text")
    return s


def write_header(args):
    h = Help(args.help)
    guard = re.sub(r"[^A-Za-z0-9]", "_", os.path.basename(args.out)).upper()
    lines = [
        f"/* Generated by docs/helpgen.py from {os.path.basename(args.help)}: edit that, "
        "not this. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
    ]
    for inc in args.include or []:
        lines.append(f'#include "{inc}"')
    if args.include:
        lines.append("")
    lines.append(f"#define {args.name} \\")
    lines += [l + " \\" for l in c_string_lines(h.text)[:-1]]
    lines += c_string_lines(h.text)[-1:]
    for title, _, para in h.options:
        lines.append("")
        lines.append(f"#define {args.name}_{macro_suffix(title)} \\")
        body = c_string_lines("\n".join(para) + "\n")
        lines += [l + " \\" for l in body[:-1]] + body[-1:]
    lines += ["", "#endif", ""]
    write_if_changed(args.out, "\n".join(lines))


# ---- roff --------------------------------------------------------------------


def roff_escape(s):
    return s.replace("\\", "\\e").replace("-", "\\-")


def roff_lines(text):
    """Text lines made safe at the start of a line (no control character)."""
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        if line[0] in ".'":
            line = "\\&" + line
        out.append(line)
    return out


def fmt_syntax(s, literal_words=True):
    """A usage form or an option spec: options bold, METAVARS italic,
    literal words (subcommands) bold, values after '=' or around '|' roman."""
    out = []
    tok = re.compile(r"(?P<opt>--?[A-Za-z0-9][A-Za-z0-9-]*)"
                     r"|(?P<meta>[A-Z][A-Z0-9_]*(?:\.\.\.)?)"
                     r"|(?P<word>[a-z][a-z0-9-]*)"
                     r"|(?P<other>.)", re.S)
    for m in tok.finditer(s):
        t = m.group(0)
        prev = s[m.start() - 1] if m.start() > 0 else " "
        nxt = s[m.end()] if m.end() < len(s) else " "
        if m.group("opt") and prev in " [(|,":
            out.append("\\fB" + roff_escape(t) + "\\fR")
        elif m.group("meta") and not (prev.isalnum() or nxt.isalnum()):
            out.append("\\fI" + roff_escape(t) + "\\fR")
        elif m.group("word") and literal_words and prev not in "=|" and nxt != "|" \
                and not prev.isalnum():
            out.append("\\fB" + roff_escape(t) + "\\fR")
        else:
            out.append(roff_escape(t))
    return "".join(out)


def fmt_help_text(s):
    """Help prose: escaped, `quoted` spans bold."""
    parts = re.split(r"`([^`]+)`", s)
    return "".join("\\fB" + roff_escape(p) + "\\fR" if i % 2 else roff_escape(p)
                   for i, p in enumerate(parts))


def fmt_md_inline(s):
    """Markdown inline markup to roff."""
    parts = re.split(r"`([^`]*)`", s)
    out = []
    for i, p in enumerate(parts):
        if i % 2:
            out.append("\\fB" + roff_escape(p) + "\\fR")
            continue
        p = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", p)
        p = roff_escape(p)
        p = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", p, flags=re.S)
        p = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\\fI\1\\fR", p, flags=re.S)
        out.append(p)
    return "".join(out)


class Roff:
    def __init__(self):
        self.lines = []
        self.after_heading = True

    def request(self, line):
        self.lines.append(line)

    def heading(self, name, sub=False):
        self.lines.append((".SS " if sub else ".SH ") + quote_arg(name))
        self.after_heading = True

    def para(self, text_lines):
        if not self.after_heading:
            self.lines.append(".PP")
        self.lines += text_lines
        self.after_heading = False

    def tagged(self, tag, body_lines):
        self.lines.append(".TP")
        self.lines.append(tag)
        self.lines += body_lines
        self.after_heading = False

    def bullet(self, body_lines):
        self.lines.append(".IP \\(bu 2")
        self.lines += body_lines
        self.after_heading = False

    def literal(self, raw_lines):
        if not self.after_heading:
            self.lines.append(".PP")
        self.lines.append(".RS 4")
        self.lines.append(".nf")
        for l in raw_lines:
            l = roff_escape(l)
            self.lines.append("\\&" + l if l[:1] in ".'" or l == "" else l)
        self.lines.append(".fi")
        self.lines.append(".RE")
        self.after_heading = False


def quote_arg(s):
    s = roff_escape(s)
    return '"' + s.replace('"', '\\(dq') + '"' if " " in s or '"' in s else s


# ---- the man page ------------------------------------------------------------


class Page:
    def __init__(self, args):
        self.args = args
        self.defines = {}
        for d in args.defines or []:
            with open(d, encoding="utf-8") as f:
                for m in re.finditer(r'^#define\s+([A-Z_][A-Z0-9_]*)\s+"((?:[^"\\]|\\.)*)"\s*$',
                                     f.read(), re.M):
                    self.defines[m.group(1)] = m.group(2).encode().decode("unicode_escape")
        for d in args.define or []:
            name, eq, value = d.partition("=")
            if not eq:
                raise SourceError(f"--define {d}: not NAME=VALUE")
            self.defines[name] = value
        self.help = Help(args.help) if args.help else None
        self.read = [args.page] + ([args.help] if args.help else [])
        self.placed = set()
        self.roff = Roff()

    def subst(self, text, where):
        def repl(m):
            if m.group(1) not in self.defines:
                raise SourceError(f"{where}: @{m.group(1)}@ is not a string #define of "
                                  f"{', '.join(self.args.defines or []) or 'any --defines header'}")
            return self.defines[m.group(1)]
        return re.sub(r"@([A-Z_][A-Z0-9_]*)@", repl, text)

    def render(self):
        with open(self.args.page, encoding="utf-8") as f:
            lines = f.read().split("\n")
        m = re.match(r"# (\S+)\((\d)\) -- (.+)$", lines[0])
        if not m:
            raise SourceError(f"{self.args.page}:1: must be '# NAME(N) -- summary'")
        name, section, summary = m.groups()
        r = self.roff
        # No hyphenation: the text is full of paths and option names.
        r.request(".nr HY 0")
        r.request(f'.TH {roff_escape(name.upper())} {section} @DATE@ '
                  f'"sandy {self.args.version}" "sandy manual"')
        r.heading("NAME")
        r.para([f"{roff_escape(name)} \\- {roff_escape(summary)}"])
        self.markdown(lines[1:], self.args.page, 2)
        if self.help:
            parts = {"synopsis": self.help.usage, "description": self.help.description,
                     "options": self.help.options, "prose": self.help.prose,
                     "exit": self.help.exit}
            for part, content in parts.items():
                if content and part not in self.placed:
                    raise SourceError(f"{self.args.page}: {{{{help:{part}}}}} is not placed, so "
                                      f"the man page would not say what {self.args.help} "
                                      "says there")
        r.lines[1] = r.lines[1].replace("@DATE@", page_date(self.read))
        return "\n".join(r.lines) + "\n"

    def place(self, part, where):
        if not self.help:
            raise SourceError(f"{where}: {{{{help:{part}}}}} without --help")
        if part in self.placed:
            raise SourceError(f"{where}: {{{{help:{part}}}}} placed twice")
        self.placed.add(part)
        h, r = self.help, self.roff
        if part == "synopsis":
            for form in h.usage:
                prog, _, rest = self.subst(form, where).partition(" ")
                r.request(".SY " + roff_escape(prog))
                r.lines += roff_lines(fmt_syntax(rest))
                r.request(".YS")
            r.after_heading = False
        elif part in ("description", "prose"):
            for para in getattr(h, part):
                r.para(roff_lines(fmt_help_text(self.subst("\n".join(para), where))))
        elif part == "exit":
            for para in h.exit:
                text = "\n".join(para)[len("Exit status:"):]
                r.para(roff_lines(fmt_help_text(self.subst(text, where))))
        elif part == "options":
            for title, entries, _ in h.options:
                if title != "options":
                    r.heading(title[0].upper() + title[1:], sub=True)
                for spec, desc in entries:
                    r.tagged(fmt_syntax(self.subst(spec, where), literal_words=False),
                             roff_lines(fmt_help_text(self.subst("\n".join(desc), where))))
        else:
            raise SourceError(f"{where}: unknown part {{{{help:{part}}}}}")

    def markdown(self, lines, path, first_line):
        r = self.roff
        i = 0
        while i < len(lines):
            line = lines[i]
            where = f"{path}:{first_line + i}"
            if line.strip() == "":
                i += 1
                continue
            if line.startswith("<!--"):
                while i < len(lines) and "-->" not in lines[i]:
                    i += 1
                i += 1
                continue
            m = re.match(r"\{\{(help|include):(.+)\}\}$", line.strip())
            if m and m.group(1) == "help":
                self.place(m.group(2), where)
                i += 1
                continue
            if m:
                inc = os.path.join(os.path.dirname(path), m.group(2))
                self.read.append(inc)
                with open(inc, encoding="utf-8") as f:
                    inc_lines = f.read().split("\n")
                skip = 1 if inc_lines and inc_lines[0].startswith("# ") else 0
                self.markdown(inc_lines[skip:], inc, 1 + skip)
                i += 1
                continue
            if line.startswith("### "):
                r.heading(self.subst(line[4:].strip(), where), sub=True)
                i += 1
                continue
            if line.startswith("## "):
                r.heading(self.subst(line[3:].strip(), where).upper())
                i += 1
                continue
            if line.startswith("# "):
                raise SourceError(f"{where}: only the first line is a '# ' title")
            if line.startswith("```"):
                j = i + 1
                while j < len(lines) and not lines[j].startswith("```"):
                    j += 1
                if j == len(lines):
                    raise SourceError(f"{where}: unterminated ``` block")
                r.literal([self.subst(l, where) for l in lines[i + 1:j]])
                i = j + 1
                continue
            # the block: up to the next blank line
            j = i
            while j < len(lines) and lines[j].strip() != "":
                j += 1
            block = [self.subst(l, where) for l in lines[i:j]]
            if block[0].startswith("|"):
                self.table(block, where)
            elif block[0].startswith("- "):
                self.bullets(block)
            elif len(block) > 1 and block[1].startswith(": "):
                self.deflist(block, where)
            else:
                r.para(roff_lines(fmt_md_inline("\n".join(block))))
            i = j

    def bullets(self, block):
        items = []
        for l in block:
            if l.startswith("- "):
                items.append([l[2:]])
            else:
                items[-1].append(l.strip())
        for it in items:
            self.roff.bullet(roff_lines(fmt_md_inline("\n".join(it))))

    def deflist(self, block, where):
        items = []
        k = 0
        while k < len(block):
            if k + 1 >= len(block) or not block[k + 1].startswith(": ") or block[k][:1] in " :":
                raise SourceError(f"{where}: a definition list is TERM lines each followed by "
                                  "': definition'")
            term, body = block[k], [block[k + 1][2:]]
            k += 2
            while k < len(block) and block[k].startswith(" "):
                body.append(block[k].strip())
                k += 1
            items.append((term, body))
        for term, body in items:
            self.roff.tagged(fmt_md_inline(term.strip()), roff_lines(fmt_md_inline("\n".join(body))))

    def table(self, block, where):
        def cells(row):
            row = row.strip()
            if not (row.startswith("|") and row.endswith("|")):
                raise SourceError(f"{where}: a table row starts and ends with '|'")
            return [c.strip() for c in re.split(r"(?<!\\)\|", row[1:-1])]
        head = cells(block[0])
        if len(block) < 2 or not re.match(r"^\|[\s:|-]+\|$", block[1].strip()):
            raise SourceError(f"{where}: a table needs a '|---|' line under its header")
        for row in block[2:]:
            c = cells(row)
            if len(c) != len(head):
                raise SourceError(f"{where}: a table row with {len(c)} cells, not {len(head)}")
            if len(c) == 2:
                body = roff_lines(fmt_md_inline(c[1]))
            else:
                body = []
                for k in range(1, len(c)):
                    if body:
                        body.append(".br")
                    body += roff_lines("\\fI" + roff_escape(head[k]) + ":\\fR "
                                       + fmt_md_inline(c[k]))
            self.roff.tagged(fmt_md_inline(c[0]), body)


def page_date(paths):
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    t = int(epoch) if epoch else max(int(os.stat(p).st_mtime) for p in paths)
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d")


def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("header")
    h.add_argument("help")
    h.add_argument("name")
    h.add_argument("out")
    h.add_argument("--include", action="append")
    m = sub.add_parser("man")
    m.add_argument("page")
    m.add_argument("out")
    m.add_argument("--help-file", dest="help")
    m.add_argument("--defines", action="append")
    m.add_argument("--define", action="append")
    m.add_argument("--version", default="")
    args = ap.parse_args()
    try:
        if args.cmd == "header":
            write_header(args)
        else:
            write_if_changed(args.out, Page(args).render())
    except (SourceError, OSError) as e:
        print(f"helpgen: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
