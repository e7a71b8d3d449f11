#!/usr/bin/env python3
"""Check that every dependency between fairsim's crates points down its layers.

The workspace is cut into layers (ARCHITECTURE.md, "Crates by layer"): a crate may use
crates of lower layers only, never one of its own layer or above. Cargo already refuses
a cycle between crates; this check keeps the intended order itself, so that a trace
writer does not start reading the engine or the scheduler port start calling into
fairsim's own cost model, even where no cycle would result.

Usage: layers.py [ROOT]

It reads the root Cargo.toml and every crates/*/Cargo.toml (dependencies,
dev-dependencies, build-dependencies and target-specific tables), prints the crates by
layer with what each uses, and exits 1 when an arrow points sideways or up, or when a
crate directory is missing from LAYERS below (a new crate must be placed deliberately).
"""

from __future__ import annotations

import os
import sys
import tomllib

# Layer of each crate, by package name; lower layers are used by higher ones. The
# ported kernel sits low because it must read nothing of fairsim's engine.
LAYERS: dict[str, int] = {
    # Leaves: no fairsim crate below them.
    "fairsim-des": 0,
    "fairsim-pelt": 0,
    "fairsim-cpuidle": 0,
    "fairsim-plot": 0,
    # The machine and its domains (which take the capacity scale from pelt); the trace
    # records and writers over virtual time.
    "fairsim-topology": 1,
    "fairsim-trace": 1,
    # The fair class port over the machine and its signals.
    "fairsim-balance": 2,
    # The virtual-time engine, and race mode's real threads over the same port.
    "fairsim-engine": 3,
    "fairsim-race": 3,
    # The tools compiled to the engine's IR, their models behind its hook, and runs from a
    # scenario.
    "fairsim-workloads": 4,
    # The result writers over a finished run.
    "fairsim-output": 5,
    # The command line.
    "fairsim-cli": 6,
    # The Python package's extension module, over the command line's library entry point
    # (a Python call is the command line's code path, its checks and its outputs).
    "fairsim-python": 7,
    # The facade package that re-exports the libraries, owns the benches and the system
    # tests.
    "fairsim": 7,
}

DEP_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")


def fairsim_deps(manifest: dict) -> list[tuple[str, str]]:
    """(dependency, table) for every fairsim crate a manifest names."""
    out = []
    tables = [(t, manifest.get(t, {})) for t in DEP_TABLES]
    for target, spec in manifest.get("target", {}).items():
        tables += [(f"target.{target}.{t}", spec.get(t, {})) for t in DEP_TABLES]
    for table, deps in tables:
        for name, dep in deps.items():
            package = dep.get("package", name) if isinstance(dep, dict) else name
            if package.startswith("fairsim"):
                out.append((package, table))
    return out


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    manifests = [os.path.join(root, "Cargo.toml")]
    crates_dir = os.path.join(root, "crates")
    for d in sorted(os.listdir(crates_dir)):
        path = os.path.join(crates_dir, d, "Cargo.toml")
        if os.path.isfile(path):
            manifests.append(path)
    errors = []
    rows = []
    for path in manifests:
        with open(path, "rb") as f:
            manifest = tomllib.load(f)
        name = manifest.get("package", {}).get("name")
        if name is None:
            continue
        rel = os.path.relpath(path, root)
        if name not in LAYERS:
            errors.append(f"{rel}: crate {name} has no layer; add it to LAYERS in .ci/layers.py")
            continue
        deps = fairsim_deps(manifest)
        for dep, table in deps:
            if dep not in LAYERS:
                errors.append(f"{rel}: [{table}] {dep} has no layer in .ci/layers.py")
            elif LAYERS[dep] >= LAYERS[name]:
                errors.append(
                    f"{rel}: [{table}] {name} (layer {LAYERS[name]}) uses {dep} "
                    f"(layer {LAYERS[dep]}); a crate may use lower layers only"
                )
        uses = sorted({d for d, _ in deps})
        rows.append((LAYERS[name], name, uses))
    for layer, name, uses in sorted(rows):
        print(f"layer {layer}: {name:18} uses {', '.join(uses) if uses else '(nothing of fairsim)'}")
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"layers: {len(errors)} arrow(s) out of order", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
