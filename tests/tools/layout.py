#!/usr/bin/env python3
"""The layout's rules (docs/DESIGN.md, "Layers"), checked on a source tree.

usage: layout.py ROOT

Prints one TAP line per rule ("ok - ..." or "not ok - ..." followed by the
offending includes or functions as "# ..." lines) and exits 1 when any
rule is broken. An include is resolved as the compiler resolves it: beside
the including file, then from its program's root (fusefs/ or launcher/),
then from ROOT; an include that names no file of the tree (config.h, the
generated help headers, system headers) is not an arrow.
"""

import os
import re
import sys

# Each program's folders, top to bottom: a folder may include its own
# files and those of the folders after it, never those before it.
LAYERS = {
    'fusefs': ['cli', '', 'git', 'host', 'policy'],
    'launcher': ['cli', 'session', 'runtime', 'world', 'sys'],
}
CLI_FUNCTION_MAX = 120
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)


def sources(root):
    for top in ('common', 'fusefs', 'launcher'):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if x not in ('portable-include', 'container'))
            for f in sorted(files):
                if f.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(d, f), root)


def includes(root, path):
    with open(os.path.join(root, path), encoding='utf-8') as f:
        text = f.read()
    for m in INCLUDE.finditer(text):
        yield m.group(1), m.group(2)


def resolve(root, path, name):
    program = path.split('/')[0]
    for base in (os.path.dirname(path), program, ''):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def folder(path):
    """('fusefs', 'git') for fusefs/git/x.c, ('fusefs', '') for fusefs/x.c,
    ('common', '') for common/..."""
    parts = path.split('/')
    if parts[0] == 'common':
        return 'common', ''
    return parts[0], parts[1] if len(parts) > 2 else ''


def module(path):
    return os.path.splitext(path)[0]


def layer_rule(root, files):
    bad = []
    for p in files:
        prog, sub = folder(p)
        for kind, name in includes(root, p):
            if kind != '"':
                continue
            t = resolve(root, p, name)
            if not t or module(t) == module(p):
                continue
            tprog, tsub = folder(t)
            if tprog == 'common':
                continue
            if prog == 'common':
                bad.append(f'{p}: common/ includes {t}')
            elif tprog != prog:
                bad.append(f'{p}: {prog}/ includes the other program\'s {t}')
            elif LAYERS[prog].index(tsub) < LAYERS[prog].index(sub):
                bad.append(f'{p}: {prog}/{sub or "(top)"} includes {t}, a layer above it')
    return bad


def cycle_rule(root, files):
    """A module is NAME.c with NAME.h. A header without a .c of its own
    (fs.h, loader.h: what a module's files share) is part of each module
    that includes it, so what it includes counts as theirs."""
    have_c = {module(p) for p in files if p.endswith('.c')}

    def reach(p, seen):
        for kind, name in includes(root, p):
            t = resolve(root, p, name) if kind == '"' else None
            if not t or t in seen:
                continue
            seen.add(t)
            if module(t) in have_c:
                yield module(t)
            else:
                yield from reach(t, seen)

    graph = {}
    for p in files:
        m = module(p)
        if m not in have_c:
            continue
        graph.setdefault(m, set()).update(n for n in reach(p, set()) if n != m)
    bad, state = [], {}

    def visit(m, stack):
        state[m] = 1
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                bad.append(' -> '.join(stack[stack.index(n):] + [n]))
            elif not state.get(n):
                visit(n, stack + [n])
        state[m] = 2

    for m in sorted(graph):
        if not state.get(m):
            visit(m, [m])
    return bad


def policy_pure_rule(root, files):
    bad = []
    for p in files:
        if not p.startswith('fusefs/policy/'):
            continue
        for kind, name in includes(root, p):
            if name.startswith('git2') or name.startswith('fuse'):
                bad.append(f'{p}: includes <{name}>')
    mb = os.path.join(root, 'fusefs/policy/meson.build')
    with open(mb, encoding='utf-8') as f:
        for i, line in enumerate(f, 1):
            code = line.split('#', 1)[0]
            if 'git2_dep' in code or 'fuse_dep' in code:
                bad.append(f'fusefs/policy/meson.build:{i}: {line.strip()}')
    return bad


def cli_private_rule(root, files):
    bad = []
    for p in files:
        for kind, name in includes(root, p):
            t = resolve(root, p, name) if kind == '"' else None
            if t and folder(t)[1] == 'cli' and folder(p) != folder(t):
                bad.append(f'{p}: includes {t}')
    return bad


def engine_rule(root, files):
    bad = []
    for p in ('launcher/runtime/engine.c', 'launcher/runtime/engine.h'):
        if p not in files:
            continue
        for kind, name in includes(root, p):
            t = resolve(root, p, name) if kind == '"' else None
            if t and module(t) in ('launcher/runtime/fsbox', 'launcher/runtime/sandyfs',
                                   'launcher/runtime/fsquery'):
                bad.append(f'{p}: includes {t}')
    return bad


def functions(text):
    """(name, first line, line count) of each function defined at the top
    level: a line at column 0 that opens a parameter list, up to the '}' at
    column 0 that closes its body."""
    lines = text.split('\n')
    i = 0
    while i < len(lines):
        m = re.match(r'^[A-Za-z_].*?\b([A-Za-z_]\w*)\s*\(', lines[i])
        if m and not lines[i].rstrip().endswith(';') and not lines[i].startswith(('typedef', 'struct', 'enum', 'static const', 'const')):
            j = i
            while j < len(lines) and not lines[j].startswith('{') and not lines[j].rstrip().endswith(';'):
                j += 1
            if j < len(lines) and lines[j].startswith('{'):
                k = j
                while k < len(lines) and not lines[k].startswith('}'):
                    k += 1
                yield m.group(1), i + 1, k - i + 1
                i = k
        i += 1


def cli_length_rule(root, files):
    bad = []
    for p in files:
        if folder(p)[1] != 'cli' or not p.endswith('.c'):
            continue
        with open(os.path.join(root, p), encoding='utf-8') as f:
            text = f.read()
        for name, line, n in functions(text):
            if n > CLI_FUNCTION_MAX:
                bad.append(f'{p}:{line}: {name}() is {n} lines')
    return bad


RULES = [
    ('each folder includes only its own layer and the layers below it, '
     'common/ nothing of the programs', layer_rule),
    ('no module includes itself back through others (no include cycle)', cycle_rule),
    ('fusefs/policy/ neither includes libgit2 or libfuse nor names their dependencies',
     policy_pure_rule),
    ('nothing outside a cli/ folder includes a cli/ header', cli_private_rule),
    ('the container engine module includes neither sandyfs\'s box nor its daemon module',
     engine_rule),
    (f'no function in a cli/ file is longer than {CLI_FUNCTION_MAX} lines', cli_length_rule),
]


def main():
    root = sys.argv[1]
    files = list(sources(root))
    failed = False
    for desc, rule in RULES:
        bad = rule(root, files)
        print(('not ok - ' if bad else 'ok - ') + desc)
        for b in bad:
            print('#   ' + b)
        failed = failed or bool(bad)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
