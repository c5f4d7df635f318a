#!/usr/bin/env python3
"""Runs the hostile cases of make_hostile.py against a tilescope binary and checks each: the exit code (a
crash or a signal is never one of them), the words the output must and must not hold, and for a figure the
cells its CSV must hold. Kernel cases that need NVRTC are left out, and said so, where the binary has none;
so are the session cases (figure) where it was built without the window.
No case is timed: a command gets 10 minutes, only so a hang ends the run with a failure instead of never.

Usage: run_hostile.py TILESCOPE [WORKDIR]   (exit 0: every case as it must be; 1: a list of the ones that were not)"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
binary = sys.argv[1]
work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="tilescope-hostile-")
if os.path.isdir(work):
    shutil.rmtree(work)  # the figures of a previous run would be taken for this run's
corpus = os.path.join(work, "corpus")
subprocess.run([sys.executable, os.path.join(here, "make_hostile.py"), corpus], check=True)
cases = json.load(open(os.path.join(corpus, "cases.json")))
env = dict(os.environ, TILESCOPE_CACHE_DIR="off", XDG_CONFIG_HOME=os.path.join(work, "config"),
           XDG_DATA_HOME=os.path.join(work, "data"))

probe = subprocess.run([binary, "list", "--kernel-file", os.path.join(corpus, "kernels", "crlf.cu"), "--json"],
                       capture_output=True, text=True, env=env)
try:
    has_nvrtc = json.loads(probe.stdout).get("nvrtc", "none") != "none"
except ValueError:
    has_nvrtc = False

# A build without the window (-DTILESCOPE_GUI=OFF) has no `figure`: the session cases are left out there.
probe = subprocess.run([binary, "figure"], capture_output=True, text=True, env=env)
has_figure = "this build has no window" not in probe.stderr

failures, ran, left_out, no_figure = [], 0, 0, 0
for i, c in enumerate(cases):
    name = os.path.relpath(c["file"], corpus)
    if c["nvrtc"] and not has_nvrtc:
        left_out += 1
        continue
    if c["what"] != "kernel" and not has_figure:
        no_figure += 1
        continue
    if c["what"] == "kernel":
        cmd = [binary, "list", "--kernel-file", c["file"]] + c["args"]
    else:
        out_dir = os.path.join(work, "figures", str(i))
        cmd = [binary, "figure", "--session", c["file"], "--plot", "timings", "--out-dir", out_dir]
    try:
        p = subprocess.run(cmd, capture_output=True, env=env, timeout=600)
    except subprocess.TimeoutExpired:
        failures.append(f"{name}: still running after 10 minutes")
        continue
    ran += 1
    out = (p.stdout + p.stderr).decode("utf-8", "replace")
    problems = []
    if p.returncode != c["exit"]:
        problems.append(f"exit {p.returncode}, expected {c['exit']}" +
                        (" (killed by a signal: a crash)" if p.returncode < 0 else ""))
    problems += [f"does not say {w!r}" for w in c["contains"] if w not in out]
    problems += [f"says {w!r}" for w in c.get("not_contains", []) if w.lower() in out.lower()]
    if c.get("csv_cells") and p.returncode == 0:
        csvs = glob.glob(os.path.join(work, "figures", str(i), "*.csv"))
        text = open(csvs[0]).read() if csvs else ""
        problems += [f"its CSV does not hold {w!r}" for w in c["csv_cells"] if w not in text]
    if problems:
        failures.append(f"{name}: " + "; ".join(problems) + "\n    " + out[-600:].replace("\n", "\n    "))

print(f"{ran} hostile cases run" +
      (f", {left_out} left out (they need NVRTC, which this build has not)" if left_out else "") +
      (f", {no_figure} left out (they need figure, which a build without the window has not)" if no_figure else ""))
for f in failures:
    print("FAILED " + f)
sys.exit(1 if failures else 0)
