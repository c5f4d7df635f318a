#!/usr/bin/env python3
"""The README's ladder table from one `tilescope bench --session-out` file.

One row per kernel and tile (in the order the bench ran them), one column per shape: TFLOP/s, and in brackets %
of the cuBLAS of the same precision timed between the kernel's own samples (the interleaved reference: its
median against the kernel's). Bold: the best rung of each precision at each shape. `*`: NVML reported a power or
thermal limit during the point (the kernel's samples or its interleaved cuBLAS's). cuBLAS rows: cuBLAS's own
points. A point that failed verification reads FAIL, one that was verified but not timed reads "not timed", one
whose time cannot be right (faster than the device's compute roof or DRAM floor: the record's "impossible") reads
IMPOSSIBLE and is never the best.

Usage: scripts/ladder_table.py SESSION.json > table.md
"""
import json
import statistics
import sys


def shape_name(r):
    m, n, k = r["m"], r["n"], r["k"]
    return f"{m}^3" if m == n == k else f"{m} x {n} x {k}"


def is_reference(r):
    return r["kernel"].startswith("cublas")


def percent(r):
    """% of the interleaved cuBLAS: its median time over the kernel's, or None without one."""
    ref = r.get("interleaved_reference") or {}
    samples = ref.get("samples_ms") or []
    own = (r.get("stats_ms") or {}).get("median")
    if not samples or not own:
        return None
    return 100.0 * statistics.median(samples) / own


def throttled(r):
    ref = r.get("interleaved_reference") or {}
    return bool(r.get("clock", {}).get("throttled") or ref.get("clock", {}).get("throttled"))


def main(path):
    with open(path) as f:
        doc = json.load(f)
    records = doc["records"]
    shapes, rows, cells = [], [], {}
    for r in records:
        s = shape_name(r)
        if s not in shapes:
            shapes.append(s)
        key = (r["kernel"], "-" if is_reference(r) else str(r["tile"]))
        if key not in rows:
            rows.append(key)
        cells[(key, s)] = r
    # The best rung of each precision at each shape (cuBLAS aside): the highest TFLOP/s that passed.
    best = {}
    for (key, s), r in cells.items():
        if is_reference(r) or not r.get("passed") or not r.get("timed", True) or r.get("impossible"):
            continue
        group = (bool(r.get("tf32")), s)
        if group not in best or r["tflops"] > cells[best[group]]["tflops"]:
            best[group] = (key, s)
    out = ["| kernel | tile | " + " | ".join(shapes) + " |", "|---|---|" + "---|" * len(shapes)]
    for key in rows:
        line = []
        for s in shapes:
            r = cells.get((key, s))
            if r is None:
                line.append("-")
                continue
            if not r.get("passed"):
                line.append("FAIL")
                continue
            if not r.get("timed", True):
                line.append("not timed")
                continue
            if r.get("impossible"):
                line.append(f"IMPOSSIBLE ({r['tflops']:.1f})")
                continue
            text = f"{r['tflops']:.1f}"
            p = None if is_reference(r) else percent(r)
            if p is not None:
                text += f" ({p:.0f} %)"
            if best.get((bool(r.get("tf32")), s)) == (key, s):
                text = f"**{text}**"
            if throttled(r):
                text += " *"
            line.append(text)
        out.append(f"| {key[0]} | {key[1]} | " + " | ".join(line) + " |")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
