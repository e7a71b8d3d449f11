#!/usr/bin/env python3
"""Find import cycles between the modules of fairsim's crates.

The project's rule is "no import cycles between modules". This script reads each named
crate's `src/` tree, builds the graph of which module refers to which, and prints the
strongly connected components of more than one module (Tarjan's algorithm), each with
the edges inside it and the file:line of the references that make each edge.

Usage: module_cycles.py [--depth N] [--no-tests] [--quiet] CRATE_DIR...

It exits 0 when no named crate has a cycle, 1 when one has (the cycles are printed), and
2 on bad arguments.

What a module is. The modules are found as rustc finds them: from `lib.rs` (or
`main.rs`) through every `mod NAME;` declaration (`NAME.rs` or `NAME/mod.rs`, or a
`#[path]` attribute's file), plus the inline `mod NAME { ... }` blocks of each file.

Granularity. A node of the graph is a module path cut to its first `--depth`
components (2 by default): the crate root, each top-level module, and each top-level
module's direct submodules, with deeper modules and inline modules folded into the
node of the file module above them. So `lb`, `lb::v3_9`, `lb::era`, `cpufreq` and `sched`
are nodes, and `lb::v3_9::balance` is part of `lb::v3_9`. Depth 1 would fold
`cmd::run` and `cmd::rtapp_log` into one node and hide their circle; depth 2 shows it,
as it shows `device <-> governor` in cpuidle and the circles of balance's `lb::*`.

What an edge is. Module A refers to module B when a `use` of A, or a path in A's code,
names an item that B defines: `use crate::x::Y`, `use super::Y`, `use self::child::Y`,
`use child::Y` (a child module in scope), and paths such as `crate::x::y::f(...)`,
`super::f()` or `child::f()` in expressions and types. A path is resolved to the module
that *defines* its item: through a parent's re-exports (`pub use env::LbEnv` in
`lb/mod.rs` makes `crate::lb::LbEnv` a reference to `lb::env`), through private
imports (visible to child modules) and through glob imports. Method calls name no
module and make no edge; neither do doc comments (intra-doc links) nor `mod`
declarations.

Re-exports are not cycles. A `pub use` (any visibility) by which a module re-exports an
item of one of its own descendants is a facade, not a dependency, and makes no edge: a
parent's `mod.rs` listing its children's items and a child using a sibling do not form
a circle through the parent. A parent's own code that calls into a child (a private
`use child::f`, or `child::f()`) is a dependency and does make an edge.

Tests. Code under `#[cfg(test)]` (a test module, inline or in its own file) counts,
since a test module is a module too; its edges are marked `[test]`, and `--no-tests`
leaves them out to show what the library alone does.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field

ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}
# Words that may follow an item keyword without being the item's name (`const fn`,
# `unsafe fn`, `static mut`), and words that are never a module alias.
NOT_NAMES = {"fn", "mut", "unsafe", "extern", "async", "const", "impl", "for", "where", "dyn"}


def strip(src: str) -> str:
    """Blank out comments and string and char literals, keeping every offset and line."""
    out = list(src)
    i, n = 0, len(src)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = src[i]
        if c == "/" and src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rb" and re.match(r"(?:br|r)#*\"", src[i:i + 40]) and (
            i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")
        ):
            m = re.match(r"(?:br|r)(#*)\"", src[i:])
            close = '"' + m.group(1)
            j = src.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            blank(i + 1, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F}'), or a lifetime ('a), which stays.
            if i + 1 < n and src[i + 1] == "\\":
                j = src.find("'", i + 2)
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and src[i + 2] == "'":
                blank(i + 1, i + 2)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|::|\S")


@dataclass
class Ref:
    """One reference: a path named in module `mod` at `file:line`."""

    mod: tuple
    path: tuple
    file: str
    line: int
    test: bool
    reexport: bool = False
    glob: bool = False


@dataclass
class Module:
    path: tuple
    file: str | None  # None for an inline module
    test: bool
    children: dict = field(default_factory=dict)  # name -> child path
    defs: set = field(default_factory=set)
    imports: dict = field(default_factory=dict)  # local name -> raw path (as written)
    globs: list = field(default_factory=list)  # raw paths of `use x::*`


class Crate:
    def __init__(self, root_dir: str):
        self.src = os.path.join(root_dir, "src")
        self.mods: dict[tuple, Module] = {}
        self.refs: list[Ref] = []
        root = None
        for name in ("lib.rs", "main.rs"):
            if os.path.exists(os.path.join(self.src, name)):
                root = os.path.join(self.src, name)
                break
        if root is None:
            raise SystemExit(f"module_cycles: {root_dir} has no src/lib.rs or src/main.rs")
        self.load((), root, False)

    # ---- phase 1: read the files -------------------------------------------------------

    def load(self, path: tuple, file: str, test: bool) -> None:
        self.mods[path] = Module(path, file, test)
        with open(file, encoding="utf-8") as f:
            original = f.read()
        code = strip(original)
        toks = [(m.group(), m.start()) for m in TOKEN.finditer(code)]
        line_of = _line_index(code)
        rel = os.path.relpath(file)
        base = os.path.basename(file)
        if base in ("lib.rs", "main.rs", "mod.rs"):
            child_dir = os.path.dirname(file)
        else:
            child_dir = os.path.join(os.path.dirname(file), base[:-3])

        # Each frame: (module path, is module scope, test).
        frames = [(path, True, test)]
        pending_test = False
        pending_path = None
        i, n = 0, len(toks)
        while i < n:
            t, off = toks[i]
            mod, at_mod_scope, in_test = frames[-1]
            nxt = toks[i + 1][0] if i + 1 < n else ""
            if t == "#":
                j = i + 1
                if j < n and toks[j][0] == "!":
                    j += 1
                if j < n and toks[j][0] == "[":
                    depth, k = 0, j
                    words = []
                    while k < n:
                        if toks[k][0] == "[":
                            depth += 1
                        elif toks[k][0] == "]":
                            depth -= 1
                            if depth == 0:
                                break
                        words.append(toks[k])
                        k += 1
                    names = [w for w, _ in words]
                    if len(names) > 1 and names[1] == "cfg" and "test" in names and "not" not in names:
                        pending_test = True
                    if len(names) > 1 and names[1] == "path":
                        m = re.search(r'"([^"]*)"', original[words[1][1]:toks[k][1] + 1])
                        pending_path = m.group(1) if m else None
                    i = k + 1
                    continue
            if t == "mod" and nxt and _is_ident(nxt) and i + 2 < n:
                name = nxt
                after = toks[i + 2][0]
                child = mod + (name,)
                self.mods[mod].children[name] = child
                if after == ";":
                    if pending_path:
                        cfile = os.path.join(os.path.dirname(file), pending_path)
                    else:
                        cfile = os.path.join(child_dir, name + ".rs")
                        if not os.path.exists(cfile):
                            cfile = os.path.join(child_dir, name, "mod.rs")
                    if os.path.exists(cfile):
                        self.load(child, cfile, in_test or pending_test)
                    i += 3
                elif after == "{":
                    self.mods[child] = Module(child, None, in_test or pending_test)
                    frames.append((child, True, in_test or pending_test))
                    i += 3
                else:
                    i += 2
                pending_test, pending_path = False, None
                continue
            if t == "use":
                reexport = i > 0 and (
                    toks[i - 1][0] == "pub" or (toks[i - 1][0] == ")" and _pub_before_paren(toks, i - 1))
                )
                j = i + 1
                end = j
                while end < n and toks[end][0] != ";":
                    end += 1
                for segs, alias, glob, tok_off in _use_tree([x for x, _ in toks[j:end]], [o for _, o in toks[j:end]]):
                    if glob:
                        self.mods[mod].globs.append(segs)
                    else:
                        local = alias if alias is not None else segs[-1]
                        if local != "_":
                            self.mods[mod].imports[local] = segs
                    self.refs.append(Ref(mod, segs, rel, line_of(tok_off), in_test or pending_test,
                                         reexport, glob))
                pending_test, pending_path = False, None
                i = end + 1
                continue
            if at_mod_scope and t in ITEM_KEYWORDS and nxt and _is_ident(nxt) and nxt not in NOT_NAMES:
                self.mods[mod].defs.add(nxt)
            if at_mod_scope and t == "macro_rules" and nxt == "!" and i + 2 < n:
                self.mods[mod].defs.add(toks[i + 2][0])
            if t == "{":
                frames.append((mod, False, in_test or pending_test))
                pending_test, pending_path = False, None
            elif t == "}":
                if len(frames) > 1:
                    frames.pop()
                pending_test, pending_path = False, None
            elif t == ";":
                pending_test, pending_path = False, None
            elif _is_ident(t) and nxt == "::" and (i == 0 or toks[i - 1][0] != "::"):
                segs = [t]
                k = i + 1
                while k + 1 < n and toks[k][0] == "::" and _is_ident(toks[k + 1][0]):
                    segs.append(toks[k + 1][0])
                    k += 2
                self.refs.append(Ref(mod, tuple(segs), rel, line_of(off), in_test))
                i = k
                continue
            i += 1

    # ---- phase 2: resolve --------------------------------------------------------------

    def absolute(self, mod: tuple, segs: tuple, seen=None) -> tuple | None:
        """The crate-absolute form of a path written in `mod`, or None if it leaves the crate."""
        if not segs:
            return None
        first, rest = segs[0], segs[1:]
        if first == "crate":
            return rest
        if first == "super":
            cur = mod
            while segs and segs[0] == "super":
                cur = cur[:-1]
                segs = segs[1:]
            if segs and segs[0] == "self":
                segs = segs[1:]
            return cur + tuple(segs)
        if first == "self":
            return mod + rest
        m = self.mods.get(mod)
        if m is None:
            return None
        if first in m.children or first in m.defs:
            return mod + segs
        seen = seen or set()
        if (mod, first) in seen:
            return None
        seen.add((mod, first))
        if first in m.imports:
            target = self.absolute(mod, tuple(m.imports[first]), seen)
            return None if target is None else target + rest
        for g in m.globs:
            gabs = self.absolute(mod, tuple(g), seen)
            if gabs is None:
                continue
            gmod = self.resolve(gabs)
            hit = self._lookup(gmod, first, seen)
            if hit is not None:
                return hit + rest
        return None

    def _lookup(self, mod: tuple, name: str, seen: set) -> tuple | None:
        m = self.mods.get(mod)
        if m is None:
            return None
        if name in m.children or name in m.defs:
            return mod + (name,)
        if (mod, name) in seen:
            return None
        seen.add((mod, name))
        if name in m.imports:
            return self.absolute(mod, tuple(m.imports[name]), seen)
        for g in m.globs:
            gabs = self.absolute(mod, tuple(g), seen)
            if gabs is not None:
                hit = self._lookup(self.resolve(gabs), name, seen)
                if hit is not None:
                    return hit
        return None

    def resolve(self, abs_segs: tuple, depth: int = 0) -> tuple:
        """The module that defines the item a crate-absolute path names."""
        mod = ()
        for idx, s in enumerate(abs_segs):
            m = self.mods.get(mod)
            if m is None:
                return mod
            if s in m.children:
                mod = m.children[s]
                continue
            if s in m.defs or depth > 20:
                return mod
            target = self._lookup(mod, s, set())
            if target is not None and target != mod + (s,):
                return self.resolve(tuple(target) + tuple(abs_segs[idx + 1:]), depth + 1)
            return mod
        return mod

    def file_module(self, mod: tuple) -> tuple:
        while mod and self.mods.get(mod) is not None and self.mods[mod].file is None:
            mod = mod[:-1]
        while mod and mod not in self.mods:
            mod = mod[:-1]
        return mod

    def edges(self, depth: int, tests: bool) -> dict:
        """unit -> unit -> list of (file, line, test) references."""
        out: dict = {}
        for r in self.refs:
            if r.test and not tests:
                continue
            target = self.absolute(r.mod, r.path)
            if target is None:
                continue
            dst_mod = self.resolve(target)
            src_file = self.file_module(r.mod)
            dst_file = self.file_module(dst_mod)
            if r.reexport and dst_file[: len(src_file)] == src_file:
                continue
            a, b = unit(src_file, depth), unit(dst_file, depth)
            if a != b:
                out.setdefault(a, {}).setdefault(b, []).append((r.file, r.line, r.test))
        return out

    def units(self, depth: int) -> set:
        return {unit(self.file_module(p), depth) for p in self.mods}


def _line_index(code: str):
    starts = [0] + [m.end() for m in re.finditer("\n", code)]
    import bisect

    return lambda off: bisect.bisect_right(starts, off)


def _is_ident(t: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", t))


def _pub_before_paren(toks, close_idx: int) -> bool:
    depth = 0
    k = close_idx
    while k >= 0:
        if toks[k][0] == ")":
            depth += 1
        elif toks[k][0] == "(":
            depth -= 1
            if depth == 0:
                return k > 0 and toks[k - 1][0] == "pub"
        k -= 1
    return False


def _use_tree(words: list, offs: list):
    """Expand a use tree into (segments, alias, is_glob, offset) leaves."""
    out = []
    pos = [0]

    def tree(prefix: tuple) -> None:
        segs = list(prefix)
        if pos[0] < len(words) and words[pos[0]] == "::":
            pos[0] += 1
        while pos[0] < len(words):
            w, off = words[pos[0]], offs[pos[0]]
            if w == "{":
                pos[0] += 1
                while pos[0] < len(words) and words[pos[0]] != "}":
                    tree(tuple(segs))
                    if pos[0] < len(words) and words[pos[0]] == ",":
                        pos[0] += 1
                pos[0] += 1
                return
            if w == "*":
                out.append((tuple(segs), None, True, off))
                pos[0] += 1
                return
            if not _is_ident(w):
                pos[0] += 1
                return
            pos[0] += 1
            nxt = words[pos[0]] if pos[0] < len(words) else ""
            alias = None
            if nxt == "as" and pos[0] + 1 < len(words):
                alias = words[pos[0] + 1]
                pos[0] += 2
                nxt = ""
            if w == "self" and prefix and len(segs) == len(prefix):
                # `a::b::{self, c}`: the module `a::b` itself.
                out.append((tuple(segs), alias or segs[-1], False, off))
                return
            segs.append(w)
            if nxt == "::":
                pos[0] += 1
                continue
            out.append((tuple(segs), alias, False, off))
            return

    if words:
        tree(())
    return out


def unit(mod: tuple, depth: int) -> str:
    return "::".join(mod[:depth]) if mod else "crate"


def tarjan(nodes, edges):
    """Strongly connected components of the graph, each as a sorted list of nodes."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return comps


def report(crate_dir: str, depth: int, tests: bool, quiet: bool) -> int:
    crate = Crate(crate_dir)
    edges = crate.edges(depth, tests)
    nodes = crate.units(depth) | set(edges) | {b for d in edges.values() for b in d}
    cycles = [c for c in tarjan(nodes, edges) if len(c) > 1]
    cycles.sort(key=lambda c: (-len(c), c))
    label = os.path.relpath(crate_dir)
    print(f"{label}: {len(nodes)} modules at depth {depth}, {len(cycles)} cycle(s)")
    for k, comp in enumerate(cycles, 1):
        members = set(comp)
        print(f"  cycle {k}: {len(comp)} modules: {', '.join(comp)}")
        if quiet:
            continue
        for a in comp:
            for b in sorted(edges.get(a, {})):
                if b not in members:
                    continue
                refs = sorted(set(edges[a][b]), key=lambda r: (r[0], r[1]))
                first = ", ".join(f"{f}:{ln}" for f, ln, _ in refs[:2])
                more = f" (+{len(refs) - 2} more)" if len(refs) > 2 else ""
                tag = " [test]" if all(t for _, _, t in refs) else ""
                print(f"    {a} -> {b}{tag}: {first}{more}")
    return len(cycles)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", type=int, default=2, help="module path components per node (default 2)")
    ap.add_argument("--no-tests", action="store_true", help="leave out #[cfg(test)] code")
    ap.add_argument("--quiet", action="store_true", help="list each cycle's modules, not its edges")
    ap.add_argument("crates", nargs="+", help="crate directories (each with a src/)")
    args = ap.parse_args()
    total = 0
    for c in args.crates:
        total += report(c, args.depth, not args.no_tests, args.quiet)
    if total:
        print(f"module_cycles: {total} import cycle(s) between modules; the project's rule is none "
              "(ARCHITECTURE.md, Invariants)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
