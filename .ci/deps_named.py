#!/usr/bin/env python3
"""Check that every fairsim crate a crate's sources name is a dependency in its manifest.

Cargo refuses a crate that names `fairsim_x` without depending on it, but not one that
reaches `fairsim_x` through another crate's re-export: with `pub use fairsim_balance as
balance;` in the engine, the CLI could write `fairsim_engine::balance::Kernel` and use
the balancer while its manifest, and `.ci/layers.py`, said it did not. A reader of that
line sees the balance crate; so does this check.

Usage: deps_named.py [ROOT]

For each package of the workspace (the root package and every `crates/*/`), it reads
every `.rs` file cargo builds (`src/`, `tests/`, `benches/`, `examples/` and `build.rs`,
following `mod` declarations and `#[path]` attributes) and collects each path that
starts with a `fairsim_*` crate: `use` trees (`use fairsim_engine::{time::Time, World}`)
and paths in code, types and attributes. A path names its first crate and every fairsim
crate it passes through by a re-export, followed module by module through the named
crate's own `pub use`s (`fairsim_engine::balance::Kernel` names `fairsim_engine` and
`fairsim_balance`; `fairsim_workloads::scenario::TunableValue`, re-exported from the
engine, names `fairsim_engine` too). Each crate named must be in the package's
`[dependencies]`, or for tests, benches, examples and `#[cfg(test)]` code in its
`[dev-dependencies]` (`[build-dependencies]` for `build.rs`); a package naming itself is
fine. Paths through the facade (`fairsim::engine::...`, in the root package's own tests and
benches) are followed the same way. The converse holds too: a fairsim crate in
`[dependencies]` that no source of the package names (a `[dev-dependencies]` one that no
test names) is an arrow of `.ci/layers.py` that no reader sees, and fails.

It prints each package with the fairsim crates it names, and for each one missing from
its manifest (or named nowhere) the file:line of the references; it exits 1 when one is.

Limits: the source reader is `module_cycles.py`'s (comments and strings blanked, no
macro expansion), so a path a macro builds from pieces is not seen; a glob re-export
(`pub use fairsim_x::*`) is not followed.
"""

from __future__ import annotations

import os
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import module_cycles as mc  # noqa: E402

DEP_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def load_tree(root_file: str, test: bool) -> mc.Crate:
    """The modules and references of the crate whose root file is `root_file`."""
    return mc.Crate(os.path.dirname(root_file), root_file, test)


def manifest_deps(manifest: dict) -> dict:
    """table -> set of the extern crate names (`fairsim_x`) a manifest's table holds."""
    out = {t: set() for t in DEP_TABLES}
    tables = [(t, manifest.get(t, {})) for t in DEP_TABLES]
    for spec in manifest.get("target", {}).values():
        tables += [(t, spec.get(t, {})) for t in DEP_TABLES]
    for table, deps in tables:
        for name in deps:
            out[table].add(name.replace("-", "_"))
    return out


def targets(pkg_dir: str) -> list:
    """(root file, kind) of each target cargo builds: kind is lib, test or build."""
    out = []
    for name in ("src/lib.rs", "src/main.rs"):
        if os.path.isfile(os.path.join(pkg_dir, name)):
            out.append((os.path.join(pkg_dir, name), "lib"))
    for extra in ("src/bin",):
        d = os.path.join(pkg_dir, extra)
        if os.path.isdir(d):
            out += [(os.path.join(d, f), "lib") for f in sorted(os.listdir(d)) if f.endswith(".rs")]
    for sub in ("tests", "benches", "examples"):
        d = os.path.join(pkg_dir, sub)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            p = os.path.join(d, f)
            if f.endswith(".rs") and os.path.isfile(p):
                out.append((p, "test"))
            elif os.path.isfile(os.path.join(p, "main.rs")):
                out.append((os.path.join(p, "main.rs"), "test"))
    if os.path.isfile(os.path.join(pkg_dir, "build.rs")):
        out.append((os.path.join(pkg_dir, "build.rs"), "build"))
    return out


class Workspace:
    def __init__(self, root: str):
        self.root = root
        self.packages = []  # (dir, package name, extern name, deps by table)
        dirs = [root] + [os.path.join(root, "crates", d) for d in sorted(os.listdir(os.path.join(root, "crates")))]
        for d in dirs:
            path = os.path.join(d, "Cargo.toml")
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                manifest = tomllib.load(f)
            name = manifest.get("package", {}).get("name")
            if name is None:
                continue
            self.packages.append((d, name, name.replace("-", "_"), manifest_deps(manifest)))
        # Each fairsim library, read once, to follow re-exports through it.
        self.libs: dict[str, mc.Crate] = {}
        for d, _, extern, _ in self.packages:
            lib = os.path.join(d, "src", "lib.rs")
            if os.path.isfile(lib):
                self.libs[extern] = load_tree(lib, False)

    def named(self, path: tuple, depth: int = 0) -> set:
        """The fairsim crates a path starting with `fairsim_*` names, re-exports followed."""
        first = path[0]
        out = {first}
        lib = self.libs.get(first)
        if lib is None or depth > 20:
            return out
        mod = ()
        segs = path[1:]
        for i, s in enumerate(segs):
            m = lib.mods.get(mod)
            if m is None:
                break
            if s in m.children:
                mod = m.children[s]
                continue
            if s in m.defs or s not in m.imports:
                break
            raw = tuple(m.imports[s])
            rest = tuple(segs[i + 1:])
            if raw and (raw[0] == "fairsim" or raw[0].startswith("fairsim_")):
                return out | self.named(raw + rest, depth + 1)
            target = lib.absolute(mod, raw)
            if target is None:
                break
            return out | self.named((first,) + tuple(target) + rest, depth + 1)
        return out


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    ws = Workspace(root)
    missing_total = 0
    for d, name, extern, deps in ws.packages:
        # crate named -> table it must be in -> [(file, line)]
        need: dict = {}
        for root_file, kind in targets(d):
            tree = ws.libs[extern] if kind == "lib" and root_file.endswith("lib.rs") and extern in ws.libs \
                else load_tree(root_file, kind == "test")
            for r in tree.refs:
                if not r.path or not (r.path[0] == "fairsim" or r.path[0].startswith("fairsim_")):
                    continue
                if kind == "build":
                    table = "build-dependencies"
                elif kind == "test" or r.test:
                    table = "dev-dependencies"
                else:
                    table = "dependencies"
                for crate in ws.named(r.path):
                    if crate != extern:
                        need.setdefault(crate, {}).setdefault(table, []).append((r.file, r.line, r.path))
        missing = []
        for crate, by_table in sorted(need.items()):
            for table, refs in sorted(by_table.items()):
                allowed = deps[table] | (deps["dependencies"] if table == "dev-dependencies" else set())
                if crate not in allowed:
                    missing.append((crate, table, refs))
        rel = os.path.relpath(os.path.join(d, "Cargo.toml"), root)
        names = sorted(need)
        print(f"{name:18} names {', '.join(n.replace('_', '-') for n in names) if names else '(nothing of fairsim)'}")
        for crate, table, refs in missing:
            refs = sorted(set(refs))
            where = ", ".join(f"{f}:{ln} ({'::'.join(p)})" for f, ln, p in refs[:3])
            more = f" (+{len(refs) - 3} more)" if len(refs) > 3 else ""
            print(f"  {rel}: [{table}] lacks {crate.replace('_', '-')}, named at {where}{more}", file=sys.stderr)
        missing_total += len(missing)
        # A fairsim dependency nothing names: the layers print an arrow no reader sees.
        for table in DEP_TABLES:
            for dep in sorted(deps[table]):
                if not dep.startswith("fairsim") or dep == extern:
                    continue
                if table == "dependencies":
                    used = dep in need
                else:
                    used = table in need.get(dep, {})
                if not used:
                    print(f"  {rel}: [{table}] {dep.replace('_', '-')} is named nowhere in the "
                          f"package's {'build script' if table == 'build-dependencies' else 'sources'}; "
                          "remove it", file=sys.stderr)
                    missing_total += 1
    if missing_total:
        print(f"deps_named: {missing_total} fairsim crate(s) named but not depended on, or depended "
              "on but named nowhere; add the dependency (which .ci/layers.py then checks) and name "
              "the crate itself, not a re-export of it, or remove the dependency", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
