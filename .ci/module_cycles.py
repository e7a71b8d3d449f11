#!/usr/bin/env python3
"""Find import cycles between the file modules of fairsim's crates.

The project's rule is "no import cycles between modules". This script reads each named
crate's `src/` tree, builds the graph of which file module refers to which, and prints the
strongly connected components of more than one module (Tarjan's algorithm), each with
the edges inside it and the file:line of the references that make each edge. A crate
whose cycles are listed in the baseline file (`cycles-baseline.txt` beside this script)
passes; any other cycle fails.

Usage: module_cycles.py [--depth N] [--no-tests] [--no-methods] [--quiet] [--all]
                        [--baseline FILE | --no-baseline] [--write-baseline] CRATE_DIR...
       module_cycles.py --edges FROM TO CRATE_DIR...

It exits 0 when every cycle of the named crates is in the baseline as it stands, 1 when
one is not (printed with its edges), and 2 on bad arguments. `--edges FROM TO` prints,
instead, every edge from a module FROM matches to one TO matches (regexes on module
paths such as `lb::v3_9::balance`, matched whole) with the file:line of each reference,
and counts them: what ARCHITECTURE.md's counts of who names whom come from.

What a module is. The modules are found as rustc finds them: from `lib.rs` (or
`main.rs`) through every `mod NAME;` declaration (`NAME.rs` or `NAME/mod.rs`, or a
`#[path]` attribute's file), plus the inline `mod NAME { ... }` blocks of each file.

Granularity. A node of the graph is a file module: every `.rs` file the crate declares
is a node (`lb::v3_9` for `lb/v3_9/mod.rs`, `lb::v3_9::balance` for its `balance.rs`),
and inline modules (`mod tests { ... }`) are folded into the file that holds them.
`--depth N` cuts module paths to N components instead (the older, coarser view: depth 2
folds `lb::v3_9::balance` into `lb::v3_9`); only the full view is held against the
baseline.

What an edge is. Module A refers to module B when
- a `use` of A, or a path in A's code, names an item that B defines: `use crate::x::Y`,
  `use super::Y`, `use self::child::Y`, `use child::Y` (a child module in scope), and
  paths such as `crate::x::y::f(...)`, `super::f()` or `child::f()` in expressions and
  types. A path is resolved to the module that *defines* its item: through a parent's
  re-exports (`pub use env::LbEnv` in `lb/mod.rs` makes `crate::lb::LbEnv` a reference
  to `lb::env`), through private imports (visible to child modules) and through glob
  imports;
- a path inside an attribute of A names an item of B, as a reader sees it: the
  arguments of `#[error("...", n = crate::world::MIN_EVENTS)]`, `#[cfg_attr(..., derive(
  a::B))]` or any other attribute, and the path strings of serde's `with`,
  `serialize_with`, `deserialize_with`, `default`, `skip_serializing_if`, `from`, `into`,
  `try_from`, `getter` and `remote` keys;
- A calls a method that an inherent `impl` in B defines: `self.foo(..)`,
  `sched.foo(..)`, `x.y.foo::<T>(..)`, or `Type::foo(..)`/`Self::foo(..)` (a path whose
  next-to-last segment is capitalised). A script does not know most receivers' types,
  so the call is tied to a file statically only where this codebase's style allows
  (`impl Sched` blocks spread over many files, each method defined once):
  * where the call names the type: `self.foo()` inside an `impl T` (or `impl Trait for
    T`) block, `Self::foo()` there, and `T::foo()`. When the crate has inherent impls of
    a type named `T`, the call goes to the one file whose `impl T` defines `foo`, and to
    none if no file or two do (a trait's method: the trait's `use` is already an edge);
  * otherwise by the method's name alone: the name is defined by `fn` in the body of an
    `impl` or `trait` in exactly one file of the crate, every such definition is in an
    inherent impl (`impl T { .. }`, not `impl Trait for T`, not a trait's declaration),
    the name is not in `STD_METHODS` (the standard library's types' methods that the
    crate's impls also define: `len`, `get`, `push`, `find`, `set`, ...; `v.len()` is
    far more often a `Vec`'s), and no fairsim crate the crate depends on (directly or
    not, by its `Cargo.toml`) defines a method so named (the balance crate's
    `machine.nr_cpus()` is topology's `Machine::nr_cpus`, not `Sched::nr_cpus`).
  Limits: a call by name alone to a method defined in two files (a `new` per type,
  `step` on two types) or also in a dependency makes no edge, so a cycle through it is
  missed; a call on a value of another crate's type, or of a standard type by a name
  missing from `STD_METHODS`, that happens to share the name of a method defined once in
  this crate makes a false edge (each method edge prints the method's name, `(method
  foo)`, to tell them apart); types are matched by their last name, so two types of one
  name in two modules share their methods; calls written inside a macro's arguments
  count, method calls a macro generates do not; a method reached only through a closure,
  a function pointer or `Deref` makes no edge.
Neither doc comments (intra-doc links) nor `mod` declarations make an edge.

Re-exports are not cycles. A `pub use` (any visibility) by which a module re-exports an
item of one of its own descendants is a facade, not a dependency, and makes no edge: a
parent's `mod.rs` listing its children's items and a child using a sibling do not form
a circle through the parent. A parent's own code that calls into a child (a private
`use child::f`, or `child::f()`) is a dependency and does make an edge.

Tests. Code under `#[cfg(test)]` (a test module, inline or in its own file) counts,
since a test module is a module too; its edges are marked `[test]`, and `--no-tests`
leaves them out to show what the library alone does.

The baseline. Each line of the baseline file is one cycle (one strongly connected
component) of one crate that cannot be cut without a refactor, with a one-line reason:
`CRATE: MODULE, MODULE, ... | reason`. A cycle that equals a line passes, and is printed
with its line but without its edges (`--all` prints them). The check fails on a cycle
that is not inside any line (new), on one that gained modules past its line (grew), and,
so that the list only shrinks, on a line whose cycle lost modules or is gone:
`--write-baseline` rewrites the file with today's cycles, each keeping the reason of the
line it lies inside. The last line printed counts the cycles and the modules in them per
crate.
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
# Tokens after which `impl` or `trait` starts an item (not `-> impl Trait`).
ITEM_START = {"}", ";", "{", "]", ")", "unsafe", "pub"}
# Method names that the standard library's types (and serde_json's `Value`) also have: a
# call `x.len()` is far more often a `Vec`'s than the one impl in the crate that defines
# `len`, so a call by one of these names makes no edge.
STD_METHODS = set("""
abs abs_diff add all and and_then any append as_array as_bool as_bytes as_deref as_f64
as_i64 as_millis as_mut as_mut_slice as_nanos as_object as_ref as_secs as_secs_f64
as_slice as_str as_u64 binary_search binary_search_by binary_search_by_key borrow
borrow_mut build by_ref bytes capacity ceil chain char_indices chars checked_add
checked_div checked_mul checked_sub chunks clamp clear clone clone_from cloned cmp
collect compare_exchange concat contains contains_key copied copy_from_slice count
count_ones cycle dedup dedup_by_key default deref deref_mut difference display div
div_ceil drain drop duration_since elapsed ends_with entry enumerate eq err exists exp
expect extend extend_from_slice extension fetch_add fetch_sub file_name fill filter
filter_map find find_map finish first first_key_value first_mut flat_map flatten floor
flush fmt fold for_each from from_bits fuse ge get get_key_value get_mut get_or_insert_with
gt hash index index_mut insert inspect intersection into into_inner into_iter is_dir
is_empty is_err is_file is_finite is_nan is_none is_ok is_some is_some_and is_subset
is_superset iter iter_mut join keys kind last last_key_value last_mut le leading_zeros
len lines ln load lock log10 log2 lt map map_err map_or map_or_else max max_by max_by_key
metadata min min_by min_by_key mul ne neg new next next_power_of_two not now nth ok ok_or
ok_or_else or or_default or_else or_insert or_insert_with parent parse partial_cmp
partition partition_point peek peekable pointer pop pop_first pop_last position pow powf
powi product push push_str range read read_line read_to_string recv reduce rem_euclid
remove repeat replace reserve resize retain rev reverse rfind rotate_left rotate_right
round rposition rsplit rsplit_once rsplitn saturating_add saturating_mul saturating_sub
scan send set signum skip skip_while sort sort_by sort_by_key sort_unstable
sort_unstable_by sort_unstable_by_key source spawn split split_at split_first split_last
split_off split_once split_whitespace splitn sqrt starts_with step_by store strip_prefix
strip_suffix sub subsec_nanos sum swap swap_remove take take_while to_ascii_lowercase
to_be_bytes to_le_bytes to_lowercase to_owned to_path_buf to_str to_string
to_string_lossy to_uppercase to_vec total_cmp trailing_zeros transpose trim trim_end
trim_end_matches trim_matches trim_start trim_start_matches truncate try_fold try_from
try_into union unwrap unwrap_or unwrap_or_default unwrap_or_else unzip values values_mut
windows with_capacity with_extension wrapping_add wrapping_mul wrapping_sub write
write_all write_fmt write_str xor zip
""".split())
# The keys of serde's field and container attributes whose string value is a path.
SERDE_PATH_KEYS = ("with", "serialize_with", "deserialize_with", "default", "skip_serializing_if",
                   "from", "into", "try_from", "getter", "remote")


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
class Call:
    """A method call `recv.name(...)`, or `Type::name(...)`, in module `mod` at `file:line`."""

    mod: tuple
    name: str
    file: str
    line: int
    test: bool
    ty: str | None = None  # the receiver's type where the code says it (`self`, `Self::`, `T::`)


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
    def __init__(self, root_dir: str, root_file: str | None = None, test: bool = False):
        """The crate whose `src/lib.rs` (or `main.rs`) is under `root_dir`, or, with
        `root_file`, the one rooted at that file (a test or bench target; `test` marks all
        of its code as test code)."""
        self.src = os.path.join(root_dir, "src")
        self.mods: dict[tuple, Module] = {}
        self.refs: list[Ref] = []
        self.calls: list[Call] = []
        self.methods: dict[str, set] = {}  # method name -> {(module, block kind)}
        self.foreign: set = set()  # method names the crate's fairsim dependencies define
        self.typed: dict[tuple, set] = {}  # (type, method) -> {module} of inherent impls
        if root_file is not None:
            self.load((), root_file, test)
            return
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

        # Each frame: (module path, is module scope, test, block kind, self type), the kind
        # being "mod", "impl" (an inherent impl), "trait_impl", "trait" or "block", and the
        # self type the name of the type an enclosing impl is for.
        frames = [(path, True, test, "mod", None)]
        pending_test = False
        pending_path = None
        block_kind: dict[int, tuple] = {}  # index of an impl's or trait's `{` -> (kind, type)
        i, n = 0, len(toks)
        while i < n:
            t, off = toks[i]
            mod, at_mod_scope, in_test, kind, self_ty = frames[-1]
            nxt = toks[i + 1][0] if i + 1 < n else ""
            prev = toks[i - 1][0] if i > 0 else ""
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
                    self._attribute_refs(mod, words, original[words[0][1]:toks[k][1] + 1], words[0][1],
                                         rel, line_of, in_test or pending_test)
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
                    frames.append((child, True, in_test or pending_test, "mod", None))
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
            if t in ("impl", "trait") and (i == 0 or prev in ITEM_START):
                # An impl or trait item (not `-> impl Trait` or `x: impl Trait`): its body's
                # `{` is the first one after the header; an impl with a `for` (other than
                # a `for<'a>` bound) is a trait's.
                k = i + 1
                while k < n and toks[k][0] not in ("{", ";"):
                    k += 1
                if k < n and toks[k][0] == "{":
                    if t == "trait":
                        block_kind[k] = ("trait", None)
                    else:
                        is_trait, ty = _impl_header([x for x, _ in toks[i + 1:k]])
                        block_kind[k] = ("trait_impl" if is_trait else "impl", ty)
            if t == "fn" and kind in ("impl", "trait_impl", "trait") and _is_ident(nxt):
                self.methods.setdefault(nxt, set()).add((mod, kind))
                if kind == "impl" and self_ty:
                    self.typed.setdefault((self_ty, nxt), set()).add(mod)
            if t == "." and prev != "." and _is_ident(nxt) and i + 2 < n and (
                toks[i + 2][0] == "(" or (toks[i + 2][0] == "::" and i + 3 < n and toks[i + 3][0] == "<")
            ):
                ty = self_ty if prev == "self" else None
                self.calls.append(Call(mod, nxt, rel, line_of(toks[i + 1][1]), in_test, ty))
            if t == "{":
                bk, bty = block_kind.pop(i, ("block", self_ty))
                frames.append((mod, False, in_test or pending_test, bk, bty))
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
                if len(segs) >= 2 and segs[-2][:1].isupper() and k < n and toks[k][0] in ("(", "::"):
                    # `Type::method(...)`, `Self::method(...)`, `Type::method::<T>(...)`.
                    ty = self_ty if segs[-2] == "Self" else segs[-2]
                    self.calls.append(Call(mod, segs[-1], rel, line_of(toks[k - 1][1]), in_test, ty))
                i = k
                continue
            i += 1

    def _attribute_refs(self, mod, words, text, base, rel, line_of, test) -> None:
        """The paths an attribute names: `#[error("..", x = crate::a::B)]`, `#[cfg_attr(..,
        derive(a::B))]`, and serde's path strings (`#[serde(with = "crate::a")]`)."""
        names = [w for w, _ in words]
        for k, w in enumerate(names):
            if _is_ident(w) and k + 1 < len(names) and names[k + 1] == "::" and (k == 0 or names[k - 1] != "::"):
                segs = [w]
                j = k + 1
                while j + 1 < len(names) and names[j] == "::" and _is_ident(names[j + 1]):
                    segs.append(names[j + 1])
                    j += 2
                self.refs.append(Ref(mod, tuple(segs), rel, line_of(words[k][1]), test))
        if len(names) > 1 and names[1] == "serde":
            keys = "|".join(SERDE_PATH_KEYS)
            for m in re.finditer(r'\b(?:' + keys + r')\s*=\s*"([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)"', text):
                self.refs.append(Ref(mod, tuple(m.group(1).split("::")), rel, line_of(base + m.start(1)), test))

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

    def method_file(self, name: str, ty: str | None = None) -> tuple | None:
        """The file module whose inherent impl defines method `name`: of type `ty` when the
        call says the type and the crate has inherent impls of a type so named (one file
        must define it); otherwise when exactly one file of the crate defines a method of
        that name (in any impl or trait) and it is not a name the standard library's types
        or the crate's fairsim dependencies also have."""
        if ty is not None and ty in self.inherent_types():
            files = {self.file_module(m) for m in self.typed.get((ty, name), ())}
            return files.pop() if len(files) == 1 else None
        defs = self.methods.get(name)
        if not defs or name in STD_METHODS or name in self.foreign:
            return None
        files = {self.file_module(m) for m, _ in defs}
        if len(files) != 1 or any(k != "impl" for _, k in defs):
            return None
        return files.pop()

    def inherent_types(self) -> set:
        if not hasattr(self, "_inherent"):
            self._inherent = {ty for ty, _ in self.typed}
        return self._inherent

    def edges(self, depth: int, tests: bool, methods: bool = True) -> dict:
        """unit -> unit -> list of (file, line, test, via) references; `via` names the
        method of a method-call edge, or is empty."""
        out: dict = {}
        for c in self.calls if methods else ():
            if c.test and not tests:
                continue
            dst_file = self.method_file(c.name, c.ty)
            if dst_file is None:
                continue
            a, b = unit(self.file_module(c.mod), depth), unit(dst_file, depth)
            if a != b:
                out.setdefault(a, {}).setdefault(b, []).append((c.file, c.line, c.test, c.name))
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
                out.setdefault(a, {}).setdefault(b, []).append((r.file, r.line, r.test, ""))
        return out

    def units(self, depth: int) -> set:
        return {unit(self.file_module(p), depth) for p in self.mods}


def _line_index(code: str):
    starts = [0] + [m.end() for m in re.finditer("\n", code)]
    import bisect

    return lambda off: bisect.bisect_right(starts, off)


def _is_ident(t: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", t))


def _impl_header(header: list) -> tuple:
    """(is a trait impl, the self type's name or None) of the tokens between `impl` and
    its body's `{`: `<T: A> Trait<T> for crate::x::Type<T> where ...` gives (True, "Type")."""
    h, j = list(header), 0
    if h and h[0] == "<":
        depth = 0
        while j < len(h):
            if h[j] == "<":
                depth += 1
            elif h[j] == ">" and not (j > 0 and h[j - 1] == "-"):
                depth -= 1
            j += 1
            if depth == 0:
                break
    h = h[j:]
    depth, start, is_trait = 0, 0, False
    for idx, w in enumerate(h):
        if w == "<":
            depth += 1
        elif w == ">" and not (idx > 0 and h[idx - 1] == "-"):
            depth -= 1
        elif depth == 0 and w == "where":
            h = h[:idx]
            break
        elif depth == 0 and w == "for" and (idx + 1 == len(h) or h[idx + 1] != "<"):
            start, is_trait = idx + 1, True
    name = None
    for w in h[start:]:
        if w == "<":
            break
        if _is_ident(w) and w not in ("dyn", "mut", "const", "unsafe"):
            name = w
    return is_trait, name


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
    """A node's name: the module path, cut to `depth` components when depth is not 0."""
    return "::".join(mod[:depth] if depth else mod) if mod else "crate"


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


_CRATES: dict = {}


def load_crate(crate_dir: str) -> Crate:
    """The crate at `crate_dir`, with `foreign` set to the method names that the fairsim
    crates it depends on (directly or not, found beside it by package name) define."""
    import tomllib

    def manifest(d):
        path = os.path.join(d, "Cargo.toml")
        if not os.path.isfile(path):
            return {}
        with open(path, "rb") as f:
            return tomllib.load(f)

    def parsed(d):
        key = os.path.abspath(d)
        if key not in _CRATES:
            _CRATES[key] = Crate(d)
        return _CRATES[key]

    parent = os.path.dirname(os.path.abspath(crate_dir))
    by_name = {}
    for d in sorted(os.listdir(parent)):
        name = manifest(os.path.join(parent, d)).get("package", {}).get("name")
        if name and os.path.isdir(os.path.join(parent, d, "src")):
            by_name[name] = os.path.join(parent, d)
    crate = parsed(crate_dir)
    todo, seen = [crate_dir], set()
    while todo:
        m = manifest(todo.pop())
        for table in ("dependencies", "dev-dependencies"):
            for dep in m.get(table, {}):
                if dep in by_name and dep not in seen:
                    seen.add(dep)
                    todo.append(by_name[dep])
                    crate.foreign |= set(parsed(by_name[dep]).methods)
    return crate


def crate_cycles(crate_dir: str, depth: int, tests: bool, methods: bool):
    """(crate, nodes, edges, cycles): the strongly connected components of more than one
    module, largest first."""
    crate = load_crate(crate_dir)
    edges = crate.edges(depth, tests, methods)
    nodes = crate.units(depth) | set(edges) | {b for d in edges.values() for b in d}
    cycles = [c for c in tarjan(nodes, edges) if len(c) > 1]
    cycles.sort(key=lambda c: (-len(c), c))
    return crate, nodes, edges, cycles


def print_edges(comp: list, edges: dict) -> None:
    members = set(comp)
    for a in comp:
        for b in sorted(edges.get(a, {})):
            if b not in members:
                continue
            refs = sorted(set(edges[a][b]), key=lambda r: (r[0], r[1], r[3]))
            first = ", ".join(f"{f}:{ln}" + (f" (method {via})" if via else "") for f, ln, _, via in refs[:2])
            more = f" (+{len(refs) - 2} more)" if len(refs) > 2 else ""
            tag = " [test]" if all(t for _, _, t, _ in refs) else ""
            print(f"    {a} -> {b}{tag}: {first}{more}")


def print_matching_edges(args) -> int:
    """`--edges FROM TO`: each edge between the modules the two patterns match, with the
    file:line of every reference (method calls named), and a count per crate."""
    src_re, dst_re = re.compile(args.edges[0]), re.compile(args.edges[1])
    for c in args.crates:
        crate = load_crate(c)
        edges = crate.edges(args.depth, not args.no_tests, not args.no_methods)
        n_edges = n_refs = 0
        for a in sorted(edges):
            if not src_re.fullmatch(a):
                continue
            for b in sorted(edges[a]):
                if not dst_re.fullmatch(b):
                    continue
                refs = sorted(set(edges[a][b]), key=lambda r: (r[0], r[1], r[3]))
                n_edges += 1
                n_refs += len(refs)
                print(f"  {a} -> {b}: {len(refs)} reference(s)")
                if not args.quiet:
                    for f, ln, t, via in refs:
                        print(f"    {f}:{ln}" + (f" (method {via})" if via else "") + (" [test]" if t else ""))
        print(f"{os.path.relpath(c)}: {n_edges} edge(s), {n_refs} reference(s) from {args.edges[0]} to {args.edges[1]}")
    return 0


def read_baseline(path: str) -> list:
    """[(crate, frozenset of modules, reason, line number)] of a baseline file."""
    out = []
    if not path or not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            head, _, reason = line.partition("|")
            crate, sep, mods = head.partition(":")
            if not sep or not reason.strip():
                raise SystemExit(f"module_cycles: {path}:{ln}: expected 'CRATE: MOD, MOD, ... | reason'")
            members = frozenset(m.strip() for m in mods.split(",") if m.strip())
            out.append((crate.strip(), members, reason.strip(), ln))
    return out


def write_baseline(path: str, found: dict, old: list) -> None:
    """Rewrites the baseline with today's cycles; a cycle keeps the reason of the entry it
    equals or lies inside, and a new one gets a reason to write."""
    with open(path, encoding="utf-8") as f:
        header = [ln for ln in f.read().splitlines() if ln.startswith("#")] if os.path.exists(path) else []
    lines = header or ["# module_cycles.py's baseline: one file-level cycle a line, 'CRATE: MODULES | reason'."]
    for crate in sorted(found):
        for comp in found[crate]:
            reason = next((r for c, m, r, _ in old if c == crate and set(comp) <= m), "TODO: why it stays")
            lines.append(f"{crate}: {', '.join(comp)} | {reason}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


SELF_TEST_CRATE = {
    "lib.rs": """
mod a;
mod b;
mod c;
mod d;
mod e;
pub struct Sched;
pub struct Other;
""",
    "a/mod.rs": """
mod inner;
#[derive(thiserror::Error, Debug)]
pub enum E {
    #[error("at most {n}", n = crate::b::LIMIT)]
    X,
}
""",
    "a/inner.rs": """
use crate::Sched;
impl Sched {
    pub fn only_in_inner(&self) -> usize { 0 }
    pub fn len(&self) -> usize { 0 }
}
""",
    "b.rs": """
pub const LIMIT: u32 = 3;
pub fn f() -> crate::a::E { crate::a::E::X }
pub fn h(o: &crate::Other) { o.run(); o.twice(); o.nested_in_g(); }
""",
    "c.rs": """
use crate::Sched;
impl Sched {
    pub fn in_c(&self) {
        let v: Vec<u8> = vec![];
        let _ = v.len();
        let _ = 0..v.len();
        self.in_d();
    }
}
fn g() -> impl Iterator<Item = u8> { fn nested_in_g() {} std::iter::empty() }
#[derive(serde::Serialize)]
struct S { #[serde(serialize_with = "crate::e::ser")] x: u32 }
#[cfg(test)]
mod tests { fn t(s: &crate::Sched) { s.only_in_inner(); } }
""",
    "d.rs": """
use crate::{Other, Sched};
impl Sched { pub fn in_d(&self) { Sched::in_c(self); } }
impl Other { pub fn twice(&self) {} pub fn run(&self) {} }
""",
    "e.rs": """
use crate::Other;
impl Other { pub fn twice(&self) {} }
pub fn ser() {}
""",
}
# (from, to, method or "" for a path) of every edge the crate above must have, and none other.
SELF_TEST_EDGES = {
    ("a", "b", ""),  # a path inside #[error(..)]
    ("b", "a", ""),
    ("c", "d", "in_d"),  # self.in_d() inside impl Sched
    ("d", "c", "in_c"),  # Sched::in_c(self)
    ("c", "e", ""),  # serde's serialize_with string
    ("c", "a::inner", "only_in_inner"),  # by name, from the test module folded into c
    # By name: o.run(); o.twice(), defined in d and e, makes none, and o.nested_in_g() none
    # (a function in a `-> impl Trait` function's body is no method).
    ("b", "d", "run"),
    ("a::inner", "crate", ""),  # the `use crate::Sched`s and `crate::Other`s
    ("b", "crate", ""),
    ("c", "crate", ""),
    ("d", "crate", ""),
    ("e", "crate", ""),
}


def self_test() -> int:
    """Builds SELF_TEST_CRATE in a temporary directory and checks its edges and cycles:
    an attribute's path, a serde path string, method calls by type and by name, `v.len()`
    making no edge, `-> impl Trait` read as no impl block, a test module's edges counted."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in SELF_TEST_CRATE.items():
            path = os.path.join(tmp, "selftest", "src", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        crate = Crate(os.path.join(tmp, "selftest"))
        edges = crate.edges(0, True)
        got = {(a, b, via) for a, d in edges.items() for b, refs in d.items() for _, _, _, via in refs}
        cycles = [c for c in tarjan(crate.units(0) | set(edges), edges) if len(c) > 1]
    ok = True
    if got != SELF_TEST_EDGES:
        print(f"module_cycles self-test: edges {sorted(got)}, expected {sorted(SELF_TEST_EDGES)}",
              file=sys.stderr)
        ok = False
    if sorted(cycles) != [["a", "b"], ["c", "d"]]:
        print(f"module_cycles self-test: cycles {sorted(cycles)}, expected [a, b] and [c, d]", file=sys.stderr)
        ok = False
    print("module_cycles self-test: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", type=int, default=0,
                    help="module path components per node (default 0: every file module is a node)")
    ap.add_argument("--no-tests", action="store_true", help="leave out #[cfg(test)] code")
    ap.add_argument("--no-methods", action="store_true", help="make no edge for method calls")
    ap.add_argument("--quiet", action="store_true", help="list each cycle's modules, not its edges")
    ap.add_argument("--all", action="store_true", help="print the edges of the baseline's cycles too")
    ap.add_argument("--baseline", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "cycles-baseline.txt"),
                    help="the known cycles (default: cycles-baseline.txt beside this script)")
    ap.add_argument("--no-baseline", action="store_true", help="report every cycle as new")
    ap.add_argument("--write-baseline", action="store_true",
                    help="rewrite the baseline file with today's cycles, keeping the reasons")
    ap.add_argument("--edges", nargs=2, metavar=("FROM", "TO"),
                    help="print the edges from the modules FROM matches to those TO matches "
                         "(Python regexes on module paths, matched whole) and exit 0")
    ap.add_argument("--self-test", action="store_true",
                    help="check the reader on a small crate built in a temporary directory")
    ap.add_argument("crates", nargs="*", help="crate directories (each with a src/)")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.crates:
        ap.error("name at least one crate directory")
    if args.edges:
        return print_matching_edges(args)
    full = args.depth == 0 and not args.no_tests and not args.no_methods
    baseline = [] if args.no_baseline or not full else read_baseline(args.baseline)
    found: dict = {}
    bad = 0
    known_total = 0
    per_crate = []
    for c in args.crates:
        crate_name = os.path.basename(os.path.normpath(c))
        _, nodes, edges, cycles = crate_cycles(c, args.depth, not args.no_tests, not args.no_methods)
        found[crate_name] = cycles
        entries = [(m, r, ln) for cr, m, r, ln in baseline if cr == crate_name]
        label = os.path.relpath(c)
        known = sum(1 for comp in cycles if any(set(comp) == m for m, _, _ in entries))
        known_total += known
        per_crate.append(f"{crate_name} {len(cycles)}" + (f" of {sum(map(len, cycles))} modules" if cycles else ""))
        depth = f"depth {args.depth}" if args.depth else "file level"
        print(f"{label}: {len(nodes)} modules ({depth}), {len(cycles)} cycle(s), "
              f"{known} of them in the baseline")
        for k, comp in enumerate(cycles, 1):
            entry = next(((m, r, ln) for m, r, ln in entries if set(comp) <= m), None)
            if entry is not None and set(comp) == entry[0]:
                status = f"baseline line {entry[2]}: {entry[1]}"
                show = args.all
            elif entry is not None:
                status = (f"SHRANK from baseline line {entry[2]} ({len(entry[0])} modules): "
                          "rewrite the baseline (--write-baseline) so it cannot grow back")
                show = args.all
                bad += 1
            else:
                grown = [ln for m, _, ln in entries if m & set(comp)]
                status = (f"GREW past baseline line(s) {', '.join(map(str, grown))}" if grown
                          else "NEW") + ": move the shared items into a module both sides can import"
                show = True
                bad += 1
            print(f"  cycle {k}: {len(comp)} modules: {', '.join(comp)}")
            print(f"    {status}")
            if show and not args.quiet:
                print_edges(comp, edges)
        for m, r, ln in entries:
            if not any(set(comp) & m for comp in cycles):
                print(f"  baseline line {ln} is gone ({len(m)} modules: {', '.join(sorted(m))}): "
                      "remove it (--write-baseline)")
                bad += 1
    if args.write_baseline:
        write_baseline(args.baseline, found, read_baseline(args.baseline))
        print(f"module_cycles: wrote {args.baseline}")
        return 0
    total = sum(len(v) for v in found.values())
    print(f"module_cycles: {total} file-level cycle(s) ({', '.join(per_crate)}), "
          f"{known_total} known in the baseline, {bad} new, grown, shrunk or gone")
    if bad:
        print(f"module_cycles: {bad} cycle(s) differ from the baseline; the project's rule is none "
              "(ARCHITECTURE.md, Invariants), and the baseline only shrinks", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
