#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Counts the operations of dbench 4.0's load file (client.txt) the way tbench reads it
and prints fairsim's table of them (crates/workloads/src/tbench_mix.rs).

The load file is /usr/share/dbench/client.txt of Debian's dbench 4.0-2.1 package
(`apt-get download dbench`; 458,344 lines, 26,214,401 bytes). Each line is parsed as
dbench 4.0's child.c does: backslashes become slashes, " /" becomes " ", tokens are
split on spaces with double quotes grouping, a leading number is a timestamp (this file
has none), the last token must be a status. A name starting with '/' becomes
"." + name, whose "client1" tbench replaces by the client's name. The table keeps, per
distinct (operation, name length, second name length, size parameter), the number of
lines; sockio.c's size formulas are applied in Rust from these.

usage: tbench_mix.py /usr/share/dbench/client.txt > rows.txt
"""
import collections
import sys

OPS = {
    "NTCreateX": "NtCreateX", "Close": "Close", "Rename": "Rename", "Unlink": "Unlink",
    "Deltree": "Deltree", "Rmdir": "Rmdir", "Mkdir": "Mkdir",
    "QUERY_PATH_INFORMATION": "Qpathinfo", "QUERY_FILE_INFORMATION": "Qfileinfo",
    "QUERY_FS_INFORMATION": "Qfsinfo", "SET_FILE_INFORMATION": "Sfileinfo",
    "FIND_FIRST": "Find", "WriteX": "WriteX", "ReadX": "ReadX", "LockX": "LockX",
    "UnlockX": "UnlockX", "Flush": "Flush",
}
# The size parameter sockio.c reads: WriteX's size, ReadX's ret_size, FIND_FIRST's count.
PARAM = {"WriteX": 3, "ReadX": 4, "FIND_FIRST": 4}
NAMED = {"NTCreateX", "Rename", "Unlink", "Rmdir", "Mkdir", "QUERY_PATH_INFORMATION",
         "FIND_FIRST"}


def tokens(line):
    out, cur, quoted, have = [], "", False, False
    for ch in line:
        if ch == '"':
            quoted, have = not quoted, True
        elif ch == " " and not quoted:
            if have or cur:
                out.append(cur)
            cur, have = "", False
        else:
            cur, have = cur + ch, True
    if have or cur:
        out.append(cur)
    return out[:19]


def main(path):
    rows = collections.Counter()
    lines = 0
    with open(path, encoding="latin-1") as f:
        for raw in f:
            lines += 1
            p = tokens(raw.rstrip("\n").replace("\\", "/").replace(" /", " "))
            if len(p) < 2 or p[0].startswith("#"):
                continue
            if p[0][0].isdigit():
                p = p[1:]
            if not (p[-1].startswith("NT_STATUS_") or p[-1].startswith("0x")):
                continue
            op = p[0]
            name = lambda k: "." + p[k] if len(p) > k and p[k].startswith("/") else ""
            n1 = len(name(1)) if op in NAMED else 0
            n2 = len(name(2)) if op == "Rename" else 0
            # tbench renames "client1" in each name; a name without it keeps its length.
            c1 = name(1).count("client1") if op in NAMED else 0
            c2 = name(2).count("client1") if op == "Rename" else 0
            par = int(p[PARAM[op]], 0) if op in PARAM else 0
            rows[(OPS[op], n1, c1, n2, c2, par)] += 1
    print(f"// {lines} lines, {sum(rows.values())} operations, {len(rows)} rows")
    for (op, n1, c1, n2, c2, par), count in sorted(rows.items()):
        print(f"    r({op}, {n1}, {c1}, {n2}, {c2}, {par}, {count}),")


if __name__ == "__main__":
    main(sys.argv[1])
