#!/usr/bin/env python3
"""scripts/ladder_table.py on a small session whose table is known: rows in bench order, one column per shape,
% of the interleaved cuBLAS (its median over the kernel's), the best rung of each precision in bold (a failed
or untimed point never), `*` for a throttled kernel or reference, FAIL for a point that failed verification,
"not timed" for one that was verified only, IMPOSSIBLE for one faster than the device can go (never the best)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "ladder_table.py")


def point(kernel, tile, shape, ms, tflops, ref_ms=None, tf32=False, passed=True, throttled=False,
          ref_throttled=False, timed=True, impossible=""):
    m, n, k = shape
    r = {"kernel": kernel, "tile": tile, "m": m, "n": n, "k": k, "tflops": tflops, "tf32": tf32,
         "passed": passed, "timed": timed, "stats_ms": {"median": ms},
         "clock": {"throttled": throttled}}
    if impossible:
        r["impossible"] = impossible
    if ref_ms is not None:
        r["interleaved_reference"] = {"samples_ms": [ref_ms * 0.9, ref_ms, ref_ms * 1.5],
                                      "clock": {"throttled": ref_throttled}}
    return r


class LadderTable(unittest.TestCase):
    def table(self, records):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"records": records}, f)
        try:
            out = subprocess.run([sys.executable, SCRIPT, f.name], check=True, capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        return out.stdout.strip().splitlines()

    def test_known_table(self):
        sq, rect = (1024, 1024, 1024), (2048, 4096, 8192)
        lines = self.table([
            point("pipelined", 128, sq, 2.0, 10.0, ref_ms=1.0),
            point("pipelined", 256, sq, 1.0, 20.0, ref_ms=1.0, throttled=True),
            point("cublas", 0, sq, 1.0, 20.5),
            point("wgmma_tf32", 256, sq, 0.5, 40.0, ref_ms=0.6, tf32=True, ref_throttled=True),
            point("mma_tf32", 128, sq, 0.1, 90.0, ref_ms=0.6, tf32=True, timed=False),
            point("pipelined", 128, rect, 4.0, 30.0, ref_ms=3.0),
            point("pipelined", 256, rect, 1.0, 99.0, ref_ms=3.0, passed=False),
        ])
        self.assertEqual(lines[0], "| kernel | tile | 1024^3 | 2048 x 4096 x 8192 |")
        self.assertEqual(lines[1], "|---|---|---|---|")
        self.assertEqual(lines[2], "| pipelined | 128 | 10.0 (50 %) | **30.0 (75 %)** |")
        self.assertEqual(lines[3], "| pipelined | 256 | **20.0 (100 %)** * | FAIL |")
        self.assertEqual(lines[4], "| cublas | - | 20.5 | - |")
        self.assertEqual(lines[5], "| wgmma_tf32 | 256 | **40.0 (120 %)** * | - |")
        self.assertEqual(lines[6], "| mma_tf32 | 128 | not timed | - |")
        self.assertEqual(len(lines), 7)

    def test_an_impossible_point_is_never_the_best(self):
        sq = (1024, 1024, 1024)
        lines = self.table([
            point("pipelined", 128, sq, 2.0, 10.0),
            point("pipelined", 256, sq, 0.01, 2000.0, impossible="2000 TFLOP/s is above the FP32 peak"),
        ])
        self.assertEqual(lines[2], "| pipelined | 128 | **10.0** |")
        self.assertEqual(lines[3], "| pipelined | 256 | IMPOSSIBLE (2000.0) |")


if __name__ == "__main__":
    unittest.main()
