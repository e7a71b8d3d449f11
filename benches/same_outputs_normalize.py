#!/usr/bin/env python3
"""Normalizes a run's JSON for benches/same-outputs.sh before two builds are compared.

Two things in the JSON may differ between builds that make the same scheduling
decisions, and are dropped or reduced here:

- the count of events processed, which is the engine's, not the kernel's: it changes
  when the queue stops carrying events that were never going to do anything;
- the features string, which is the debugfs `features` file and so names every feature
  the build knows, `NO_`-prefixed when off. A new feature that is off by default adds a
  `NO_` word without changing any decision, so only the features that are on are kept:
  a feature switched on or off, or renamed while on, still shows.

Usage: same_outputs_normalize.py FILE.json ... (each file rewritten in place), or
--self-test to check the rules above on two made-up documents.
"""

import json
import sys


def normalize(data):
    """The document with the build-dependent parts dropped or reduced (see above)."""
    data.pop("events", None)
    data.get("scheduler", {}).pop("events", None)
    features = data.get("features")
    if isinstance(features, str):
        data["features"] = " ".join(
            w for w in features.split() if not w.startswith("NO_")
        )
    return data


def self_test():
    """Fails (exit 1) unless a new default-off feature is ignored and a flip is not."""
    old = {"features": "PLACE_LAG NO_NEXT_BUDDY", "scheduler": {"events": 5}}
    added = {"features": "PLACE_LAG NO_NEXT_BUDDY NO_NEW_IDEA", "scheduler": {"events": 6}}
    flipped = {"features": "PLACE_LAG NEXT_BUDDY", "scheduler": {"events": 5}}
    dropped = {"features": "NO_PLACE_LAG NO_NEXT_BUDDY", "scheduler": {"events": 5}}
    norm = lambda d: normalize(json.loads(json.dumps(d)))
    ok = (
        norm(old) == norm(added)
        and norm(old) != norm(flipped)
        and norm(old) != norm(dropped)
    )
    print("same_outputs_normalize: self-test " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def main(args):
    if args == ["--self-test"]:
        return self_test()
    for path in args:
        with open(path) as f:
            data = json.load(f)
        with open(path, "w") as f:
            json.dump(normalize(data), f, indent=0, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
