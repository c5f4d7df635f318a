#!/usr/bin/env python3
"""Hostile inputs for TileScope, as a person (or an attacker) could hand them over: kernel files, KernelBench
.py answers and sessions that crashed, hung, leaked or lost data in earlier rounds of abuse (issues 13 and 26),
and what each must give now.

Usage: make_hostile.py OUTDIR
Writes OUTDIR/kernels/*, OUTDIR/sessions/* and OUTDIR/cases.json: one case per file, with the command to run
(`list --kernel-file FILE` or `figure --session FILE`), the exit code it must end with and the words its output
must hold. run_hostile.py runs them against a tilescope binary. Nothing here is random: every file is the same
on every run."""
import json
import os
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "hostile"
CASES = []

KERNEL = "__global__ void mm(const float* A, const float* B, float* C, int N) {\n  C[threadIdx.x] = A[0] + B[0] + N;\n}\n"


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if mode == "wb" else {"newline": ""})) as f:
        f.write(data)


def kernel(name, text, exit_code, contains=(), args=(), nvrtc=False, not_contains=()):
    """A kernel file case: `tilescope list --kernel-file FILE ARGS`. nvrtc: what it must say needs NVRTC (a
    build without it gives other words)."""
    path = os.path.join(OUT, "kernels", name)
    write(path, text)
    CASES.append({"what": "kernel", "file": path, "args": list(args), "exit": exit_code,
                  "contains": list(contains), "not_contains": list(not_contains), "nvrtc": nvrtc})


def macro_bomb(levels):
    s = "#define X0(a) a\n"
    for i in range(1, levels + 1):
        s += f"#define X{i}(a) X{i-1}(a)+X{i-1}(a)\n"
    return s + f"__global__ void bomb(const float* A, const float* B, float* C, int N) {{ C[0] = X{levels}(A[0]); }}\n"


# [SECTION] Crashes (issue 26, items 1 and 2).
kernel("long_name.cu", "__global__ void " + "k" * 100000 + "(float*A,float*B,float*C,int N){}\n", 2,
       ["the kernel's name is 100000 characters long; TileScope takes names of at most 1024 characters"])
kernel("macro_bomb_17.cu", macro_bomb(17), 2,
       ["NVRTC did not finish within the compile limit of 2 s and was stopped", "not tried: the compiler did not finish"],
       args=["--compile-limit", "2"], nvrtc=True)

# 20,000 nested parentheses: past an 8 MiB stack in NVRTC's parser, well within the compiler's 1 GiB.
kernel("deep_parens.cu", "__global__ void deep(const float* A, const float* B, float* C, int N) { C[0] = " +
       "(" * 20000 + "A[0]" + ")" * 20000 + "; }\n", 0, ["regs"], nvrtc=True)

# [SECTION] Includes (issue 26, item 4): only regular files of the kernel's folder.
write(os.path.join(OUT, "kernels", "inc", "ok.h"), "#define SCALE 2.0f\n")
kernel("include_ok.cu", '#include "inc/ok.h"\n' + KERNEL.replace("A[0] +", "A[0] * SCALE +"), 0, ["yours:mm"])
for name, inc, words in [
    ("include_absolute.cu", "/etc/passwd", "include_absolute.cu:1: #include \"/etc/passwd\" is refused"),
    ("include_parent.cu", "../../etc/passwd", "include_parent.cu:1: #include \"../../etc/passwd\" is refused"),
    ("include_proc.cu", "/proc/self/environ", "include_proc.cu:1: #include \"/proc/self/environ\" is refused"),
    ("include_folder.cu", "inc", "include_folder.cu:1: #include \"inc\""),
    ("include_fifo.cu", "fifo.h", "include_fifo.cu:1: #include \"fifo.h\""),
]:
    kernel(name, f'#include "{inc}"\n' + KERNEL, 2, [words], not_contains=["root:"])
fifo = os.path.join(OUT, "kernels", "fifo.h")
if not os.path.exists(fifo):
    os.mkfifo(fifo)
kernel("include_computed.cu", '#define H "inc/ok.h"\n#include H\n' + KERNEL, 2,
       ["include_computed.cu:2: #include H is refused"])
kernel("include_missing_nvrtc.cu", '#include "nothere.h"\n' + KERNEL, 2,
       ['line 1: cannot open source file "nothere.h"'], nvrtc=True)
kernel("include_self_nvrtc.cu", '#include "include_self_nvrtc.cu"\n' + KERNEL, 2,
       ['line 1: #include file "include_self_nvrtc.cu" includes itself'], nvrtc=True)
# Headers that include each other: under guards they compile; without, NVRTC says the nesting is too deep.
write(os.path.join(OUT, "kernels", "inc", "a.h"), '#pragma once\n#include "b.h"\n')
write(os.path.join(OUT, "kernels", "inc", "b.h"), '#pragma once\n#include "a.h"\n')
kernel("include_cycle_guarded.cu", '#include "inc/a.h"\n' + KERNEL, 0, ["regs"], nvrtc=True)
write(os.path.join(OUT, "kernels", "inc", "c.h"), '#include "d.h"\n')
write(os.path.join(OUT, "kernels", "inc", "d.h"), '#include "c.h"\n')
kernel("include_cycle.cu", '#include "inc/c.h"\n' + KERNEL, 2, ["does not compile"], nvrtc=True)

# [SECTION] The scanner (issue 26, items 6 and 14): linear, and kernels found however they are spelled.
kernel("defines_80k.cu", "#define D 1\n" * 80000, 2, ["has no __global__ function"])
kernel("braces_200k.cu", "float t[] = {" + "{0}," * 200000 + "};\n", 2, ["has no __global__ function"])
kernel("nested_braces.cu", "{" * 100000 + "}" * 100000 + "\n", 2, ["has no __global__ function"])
kernel("load_inline_40k.py", "load_inline(" * 40000 + "\n", 2, ["load_inline"])
kernel("utf8_name.cu", "__global__ void m\u00e4tmul(const float* A, const float* B, float* C, int N) {}\n", 2,
       ["has characters outside ASCII"])
kernel("macro_global.cu", "#define KERNEL __global__\nKERNEL void mm(const float* A, const float* B, float* C, int N) {\n"
       "  C[threadIdx.x] = A[0] + B[0] + N;\n}\n", 0, ["yours:mm"])
kernel("namespaces_65.cu", "".join(f"namespace n{i} {{\n" for i in range(65)) + KERNEL + "}\n" * 65, 0,
       ["mm (line 66)  ->  yours:mm"])
kernel("cr_only.cu", KERNEL.replace("\n", "\r"), 0, ["yours:mm"])
kernel("crlf.cu", KERNEL.replace("\n", "\r\n"), 0, ["yours:mm"])
kernel("bom.cu", "\ufeff" + KERNEL, 0, ["yours:mm"])
kernel("bom_compiles.cu", "\ufeff" + KERNEL, 0, ["regs"], nvrtc=True, not_contains=["unrecognized token"])

# [SECTION] Not a kernel file at all.
kernel("empty.cu", "", 2, ["has no __global__ function"])
kernel("binary.cu", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), 2, ["not text"])
kernel("invalid_utf8.cu", b"__global__ void mm(float* A) {}\n// \xff\xfe\n", 2, ["UTF-8"])
kernel("huge.cu", "// " + "x" * (5 * 1024 * 1024) + "\n" + KERNEL, 2, ["MiB"])
kernel("unterminated_comment.cu", KERNEL + "/* never closed\n", 2, ["does not compile"], nvrtc=True)
kernel("python_no_inline.py", "import torch\nprint('hello')\n", 2, ["load_inline"])

# [SECTION] Sessions (issue 26, items 7, 12, 13, 15, 16, 18).
DEVICE = {"backend": "cpu", "compute_capability": 0, "cuda_runtime": "", "datasheet_bandwidth_gbs": 0.0,
          "driver": "none (CPU backend)", "l2_bytes": 0, "label": "CPU (2 threads)",
          "limits": {"max_blocks_per_sm": 32, "max_regs_per_thread": 255, "max_threads_per_sm": 2048,
                     "reg_alloc_unit": 256, "regs_per_sm": 65536, "reserved_smem_per_block": 0,
                     "smem_alloc_unit": 128, "smem_per_sm": 0, "warp_size": 32},
          "max_sm_clock_mhz": 0.0, "memory_bytes": 0, "name": "CPU (2 threads)", "peak_fp32_tflops": 0.0,
          "peak_tf32_tflops": 0.0, "sm_count": 0}
CLOCK = {"available": False, "device_max_mhz": 0.0, "max_mhz": 0.0, "median_mhz": 0.0, "min_mhz": 0.0,
         "note": "CPU backend: no SM clock", "throttle_reasons": "", "throttled": False}


def stats(samples):
    s = sorted(samples)
    n = len(s)
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return {"count": n, "max": s[-1], "mean": sum(s) / n, "median": med, "min": s[0], "p25": s[0], "p75": s[-1],
            "stddev": 0.0}


def record(kernel_name="tiled", n=256, samples=(11.0, 7.5, 16.0)):
    return {"backend": "cpu", "blocks_per_sm": 0, "blocks_per_tile": 1, "clock": CLOCK, "commit": "hostile",
            "date": "2026-11-26T19:01:33Z", "device": "CPU (2 threads)", "frames_drawn": 0, "input": "random",
            "k": n, "kernel": kernel_name, "m": n, "max_abs_err": 1.7e-05, "n": n, "noise": 0.37, "passed": True,
            "policy": "quick: 1 warm-up, 3 timed launches (cap 2 s)", "reference_ms": 0.0,
            "samples_ms": list(samples), "seed": 1, "stats_ms": stats(samples), "stop": "samples taken",
            "tf32": False, "tflops": 0.003, "tile": 16, "tile_m": 16, "tile_n": 16, "tilescope": "0.1.0",
            "timed": True, "tolerance": 0.0009, "waves": 0.0}


def session(records):
    return {"commit": "hostile", "created": "2026-11-26T19:01:33Z", "device": DEVICE, "dram_gbs": 0.0,
            "format": "tilescope-session", "label": "hostile", "tilescope": "0.1.0", "version": 1,
            "records": records}


def sess(name, data, exit_code, contains=(), csv_cells=()):
    """A session case: `tilescope figure --session FILE --plot timings --out-dir DIR`. csv_cells: texts the
    figure's CSV must hold."""
    path = os.path.join(OUT, "sessions", name)
    if isinstance(data, dict):
        data = json.dumps(data, separators=(",", ":"))
    write(path, data)
    CASES.append({"what": "session", "file": path, "args": [], "exit": exit_code, "contains": list(contains),
                  "not_contains": ["json.exception", "bad_alloc", "terminate"], "csv_cells": list(csv_cells),
                  "nvrtc": False})


good = session([record("tiled", 256), record("tiled", 512, (40.0, 41.0, 42.0))])
sess("good.json", good, 0)
text = json.dumps(good, separators=(",", ":"))
sess("number_overflow.json", text.replace('"median":11.0', '"median":1e309', 1), 2,
     ["number_overflow.json", "1e309"])
for name, field, value in [("time_null.json", "11.0,", "null,"), ("time_negative.json", "11.0,", "-11.0,"),
                           ("time_huge.json", "11.0,", "1e308,")]:
    sess(name, text.replace(field, value, 1), 2, [name])
bad_quartiles = json.loads(text)
bad_quartiles["records"][0]["stats_ms"]["p25"] = 20.0
sess("quartiles_out_of_order.json", bad_quartiles, 2, ["quartiles_out_of_order.json"])
zero_median = json.loads(text)
zero_median["records"][0]["stats_ms"]["median"] = 0.0
sess("median_zero.json", zero_median, 2, ["median_zero.json"])
sess("deep_nesting.json", '{"records": ' + "[" * 200000 + "]" * 200000 + "}", 2, ["nested"])
sess("not_json.json", "{ this is not json", 2, ["not_json.json"])
sess("empty.json", "", 2, ["empty.json"])
sess("other_format.json", {"format": "something-else", "version": 1}, 2, ["other_format.json"])
sess("future_version.json", dict(session([record()]), version=99), 2, ["version"])
formula = session([record("=HYPERLINK(\"http://x\",\"y\")"), record("+cmd|' /C calc'!A0", 512)])
sess("formula_names.json", formula, 0, [], csv_cells=["'=HYPERLINK", "'+cmd"])

sessions = os.path.join(OUT, "sessions")
loop = os.path.join(sessions, "loop.json")
if not os.path.lexists(loop):
    os.symlink("loop.json", loop)
CASES.append({"what": "session", "file": loop, "args": [], "exit": 2, "contains": ["loop"],
              "not_contains": ["no such file"], "csv_cells": [], "nvrtc": False})
session_fifo = os.path.join(sessions, "fifo.json")
if not os.path.exists(session_fifo):
    os.mkfifo(session_fifo)
CASES.append({"what": "session", "file": session_fifo, "args": [], "exit": 2, "contains": ["fifo.json"],
              "not_contains": [], "csv_cells": [], "nvrtc": False})

write(os.path.join(OUT, "cases.json"), json.dumps(CASES, indent=1))
print(f"{len(CASES)} cases in {OUT}")
