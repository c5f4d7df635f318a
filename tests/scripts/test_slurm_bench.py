#!/usr/bin/env python3
"""scripts/slurm-bench.sh under a stand-in for sbatch that runs each job at once, on the CPU backend: the job
array runs `tilescope bench --shard I/N` once per task id (1..N), the job after it merges the parts into the
table one run prints; a missing part is named by merge (--partial keeps the points there are); bad arguments
and a folder that already holds results are refused before anything is submitted.
Usage: test_slurm_bench.py TILESCOPE_BINARY"""
import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "slurm-bench.sh")
TILESCOPE = None

# Runs the batch script of each submission at once: an array once per task id, with Slurm's variables.
FAKE_SBATCH = r'''#!/usr/bin/env python3
import os, subprocess, sys
args = sys.argv[1:]
opts, i = {}, 0
while i < len(args) and args[i].startswith("--"):
    key, _, value = args[i][2:].partition("=")
    opts[key] = value
    i += 1
script, rest = args[i], args[i + 1:]
with open(os.environ["SBATCH_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
ids = [None]
if "array" in opts:
    lo, hi = opts["array"].split("-")
    ids = list(range(int(lo), int(hi) + 1))
for task in ids:
    env = dict(os.environ)
    out = opts.get("output", "slurm.out")
    if task is not None:
        env["SLURM_ARRAY_TASK_ID"] = str(task)
        env["SLURM_ARRAY_TASK_COUNT"] = str(len(ids))
        out = out.replace("%a", str(task))
    with open(out, "w") as f:
        subprocess.run(["bash", script] + rest, env=env, stdout=f, stderr=subprocess.STDOUT)
print("4242" if "array" in opts else "4243")
'''

SWEEP = ["--backend", "cpu", "--kernels", "tiled", "--tiles", "8,16", "--sizes", "16:48:16",
         "--min-samples", "3", "--max-samples", "3", "--format", "md"]


class SlurmBench(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        bindir = os.path.join(self.dir, "bin")
        os.mkdir(bindir)
        sbatch = os.path.join(bindir, "sbatch")
        with open(sbatch, "w") as f:
            f.write(FAKE_SBATCH)
        os.chmod(sbatch, os.stat(sbatch).st_mode | stat.S_IEXEC)
        self.env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"], TILESCOPE=TILESCOPE,
                        SBATCH_LOG=os.path.join(self.dir, "sbatch.log"), SBATCH_OPTIONS="--partition=gpu")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run(["bash", SCRIPT] + list(args), env=self.env, cwd=self.dir, capture_output=True,
                              text=True)

    def test_the_array_measures_the_shards_and_the_job_after_it_merges_them(self):
        r = self.run_script("3", "out", *SWEEP)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("job array 4242 (shards 1-3 of the sweep), then job 4243 merges them", r.stdout)
        with open(os.path.join(self.dir, "sbatch.log")) as f:
            submitted = f.read().splitlines()
        self.assertEqual(len(submitted), 2)
        self.assertIn("--partition=gpu", submitted[0])
        self.assertIn("--array=1-3 --gres=gpu:1", submitted[0])
        self.assertIn("--dependency=afterany:4242", submitted[1])
        out = os.path.join(self.dir, "out")
        for i in (1, 2, 3):
            with open(os.path.join(out, "part-%d.log" % i)) as f:
                self.assertIn("shard %d/3: 2 of the 6 points" % i, f.read())
            self.assertTrue(os.path.exists(os.path.join(out, "part-%d.md" % i)))
        with open(os.path.join(out, "merge.log")) as f:
            log = f.read()
        self.assertIn("3 parts of sweep", log)
        with open(os.path.join(out, "bench.json")) as f:
            table = json.load(f)
        self.assertEqual(table["meta"]["merged_parts"], 3)
        rows = [(p["tile"], p["n"]) for p in table["points"]]
        self.assertEqual(rows, [(8, 16), (16, 16), (8, 32), (16, 32), (8, 48), (16, 48)])
        with open(os.path.join(out, "bench.md")) as f:
            self.assertIn("Merged from 3 parts of sweep", f.read())
        with open(os.path.join(out, "bench.csv")) as f:
            self.assertIn("# merged_parts,3", f.read())
        with open(os.path.join(out, "session.json")) as f:
            self.assertEqual(len(json.load(f)["records"]), 6)

        # A shard lost: merge names it; --partial keeps the points there are.
        os.remove(os.path.join(out, "part-2.json"))
        for f in ("bench.md", "bench.csv", "bench.json", "session.json"):
            os.remove(os.path.join(out, f))
        again = self.run_script("--merge", "out", "3")
        self.assertEqual(again.returncode, 2, again.stdout + again.stderr)
        self.assertIn("shard 2 of 3 is missing", again.stderr)
        partial = self.run_script("--merge", "out", "3", "--partial")
        self.assertEqual(partial.returncode, 0, partial.stdout + partial.stderr)
        with open(os.path.join(out, "bench.json")) as f:
            self.assertEqual(json.load(f)["meta"]["missing_shards"], [2])

        # The folder holds results now: refused before anything is submitted.
        refused = self.run_script("3", "out", *SWEEP)
        self.assertEqual(refused.returncode, 2)
        self.assertIn("already holds results", refused.stderr)

    def test_bad_arguments_are_refused_before_anything_is_submitted(self):
        for n in ("0", "x", "4097", "-1"):
            r = self.run_script(n, "out", *SWEEP)
            self.assertEqual(r.returncode, 2, n)
            self.assertIn("is not a number of shards from 1 to 4096", r.stderr)
        self.assertEqual(self.run_script("3").returncode, 2)
        r = self.run_script("--task", "out")
        self.assertEqual(r.returncode, 2)
        self.assertIn("runs inside a Slurm job array", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "sbatch.log")))


if __name__ == "__main__":
    TILESCOPE = os.path.abspath(sys.argv.pop(1))
    unittest.main()
