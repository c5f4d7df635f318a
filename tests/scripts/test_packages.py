#!/usr/bin/env python3
"""ctest package.contents: the Debian packages of this build, made by CPack from the install rules
scripts/package.sh packages, hold what cmake/Packaging.cmake says (scripts/check_packages.py), and that check
fails on packages that lack what it looks for.

  1. tilescope (a build with the window): CPack of this build, into WORK_DIR/app. With Ninja CPack builds
     nothing: it installs what the build made.
  2. tilescope-engine: a configure without the window (-DTILESCOPE_GUI=OFF, no tests, CUDA as this build) in
     WORK_DIR/engine, whose tilescope is ENGINE_BINARY (the engine without the window that this build links
     from the same objects, tests/engine/tilescope, which ctest engine.without_window checks), then CPack
     there. That tree skips RPATHs (CMAKE_SKIP_RPATH): the binary keeps its build RUNPATH, which has no room
     for the installed one. In a build without the window, the build's own package is the engine's, and there
     is no tilescope package to make.
  3. scripts/check_packages.py on both: it must pass.
  4. The check on copies of them with one fault each (dpkg-deb -R, changed, dpkg-deb --build; the program
     replaced by a small file): each must fail, saying what is wrong; the copy without a fault must pass.

Usage: test_packages.py SOURCE_DIR BUILD_DIR WORK_DIR ENGINE_BINARY CMAKE CPACK GUI(ON|OFF) [CMAKE_ARGS...]
Exit 0: all of it held; 1: something failed; 77 (SKIP): no dpkg-deb (not a Debian system).
"""
import gzip
import os
import re
import shutil
import subprocess
import sys

src, build, work, engine_bin, cmake, cpack, gui = sys.argv[1:8]
cmake_args = sys.argv[8:]
check = [sys.executable, os.path.join(src, "scripts", "check_packages.py"), "--source", src]
failures = []


def fail(what):
    failures.append(what)
    print(f"test_packages: FAILED: {what}")


def run(cmd, log, cwd=None):
    with open(log, "w") as f:
        r = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        with open(log) as f:
            print(f.read()[-4000:])
        raise SystemExit(f"test_packages: FAILED: {' '.join(cmd)} (exit {r.returncode}; {log})")


def make_package(tree, out):
    """CPack's DEB of the configured tree `tree`, into `out`; the .deb's path."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    run([cpack, "-G", "DEB", "--config", os.path.join(tree, "CPackConfig.cmake"), "-B", out],
        os.path.join(out, "cpack.log"))
    debs = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".deb")]
    if len(debs) != 1:
        raise SystemExit(f"test_packages: FAILED: CPack made {debs} in {out}, not one package")
    return debs[0]


if not shutil.which("dpkg-deb"):
    print("test_packages: SKIP: no dpkg-deb (the packages are Debian's)")
    sys.exit(77)
os.makedirs(work, exist_ok=True)

# [SECTION] The packages.
debs = {}
if gui == "ON":
    debs["tilescope"] = make_package(build, os.path.join(work, "app"))
    tree = os.path.join(work, "engine")
    if os.path.exists(os.path.join(tree, "CMakeCache.txt")):
        os.remove(os.path.join(tree, "CMakeCache.txt"))  # a fresh configure of the current sources
    run([cmake, "-S", src, "-B", tree, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DTILESCOPE_GUI=OFF",
         "-DTILESCOPE_BUILD_TESTS=OFF", "-DCMAKE_SKIP_RPATH=ON", *cmake_args], os.path.join(work, "engine.log"))
    # The file the tree's install rule takes: the tilescope target's.
    target = os.path.join(tree, "app", "tilescope")
    with open(os.path.join(tree, "app", "cmake_install.cmake")) as f:
        if f'FILES "{target}"' not in f.read():
            raise SystemExit(f"test_packages: FAILED: {tree}/app/cmake_install.cmake does not install {target}")
    shutil.copy2(engine_bin, target)
    debs["tilescope-engine"] = make_package(tree, os.path.join(work, "engine-package"))
else:
    debs["tilescope-engine"] = make_package(build, os.path.join(work, "engine-package"))

r = subprocess.run(check + list(debs.values()), capture_output=True, text=True)
print(r.stdout + r.stderr, end="")
if r.returncode != 0:
    fail("scripts/check_packages.py refused the packages of this build (above)")

# [SECTION] The check, on copies with one fault each.
faults = os.path.join(work, "faults")
shutil.rmtree(faults, ignore_errors=True)
os.makedirs(faults)
pristine = {}
for name, deb in debs.items():
    tree = os.path.join(faults, name)
    subprocess.run(["dpkg-deb", "-R", deb, tree], check=True)
    with open(os.path.join(tree, "usr", "bin", "tilescope"), "w") as f:
        f.write("#!/bin/sh\n")  # the program itself is not what is checked, and a small copy packs fast
    pristine[name] = tree


def edit(path, old, new):
    """Replaces the first `old` (a string or a compiled pattern) in the file by `new`."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    pattern = old if isinstance(old, re.Pattern) else re.compile(re.escape(old))
    if not pattern.search(text):
        raise SystemExit(f"test_packages: FAILED: the fault cannot be made: {old!r} is not in {path}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(pattern.sub(lambda m: new, text, 1))


def regzip(path, with_time):
    """The gzip file again, with a time stamp in its header or without."""
    with gzip.open(path) as f:
        text = f.read()
    with open(path, "wb") as f:
        f.write(gzip.compress(text, 9, mtime=1700000000 if with_time else 0))


def faulty(name, why, change, expected):
    """A copy of package `name` changed by change(tree) must fail the check with `expected` in its words."""
    tree = os.path.join(faults, name + "-" + re.sub(r"\W+", "-", why))
    shutil.copytree(pristine[name], tree, symlinks=True)
    if change:
        change(tree)
    deb = tree + ".deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z1", "--build", tree, deb], check=True,
                   stdout=subprocess.DEVNULL)
    r = subprocess.run(check + [deb], capture_output=True, text=True)
    said = r.stdout + r.stderr
    if expected is None:
        if r.returncode != 0:
            fail(f"the copy of {name} without a fault was refused: {said}")
    elif r.returncode != 1 or expected not in said:
        fail(f"{name} {why}: the check exited with {r.returncode}, saying {said!r}; expected exit 1 and "
             f"{expected!r}")
    else:
        print(f"test_packages: {name} {why}: refused ({expected})")


cases = 0
for name in debs:
    doc = f"usr/share/doc/{name}"
    cr = lambda t: os.path.join(t, doc, "copyright")  # noqa: E731
    faulty(name, "as made", None, None)
    faulty(name, "without a copyright", lambda t: os.remove(cr(t)), f"/{doc}/copyright is missing")
    faulty(name, "whose copyright is not DEP-5", lambda t: edit(cr(t), "Format: ", "Format-Spec: "),
           "has no 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'")
    faulty(name, "whose own files are not MIT", lambda t: edit(cr(t), "Files: *\nCopyright: 2026 The TileScope "
           "authors\nLicense: Expat", "Files: *\nCopyright: 2026 The TileScope authors\nLicense: GPL-3+\n "
           "See /usr/share/common-licenses/GPL-3."), "are not under the MIT licence")
    faulty(name, "naming a licence without its text",
           lambda t: edit(cr(t), re.compile(r"\nLicense: BSD-3-clause\n( .*\n)+"), "\n"),
           "'License: BSD-3-clause' is named but its text is nowhere")
    faulty(name, "without a changelog", lambda t: os.remove(os.path.join(t, doc, "changelog.Debian.gz")),
           f"/{doc}/changelog.Debian.gz is missing")
    faulty(name, "whose changelog has a time stamp",
           lambda t: regzip(os.path.join(t, doc, "changelog.Debian.gz"), True), "time stamp")
    cases += 6
if "tilescope" in debs:
    name = "tilescope"
    cr = lambda t: os.path.join(t, "usr/share/doc/tilescope/copyright")  # noqa: E731
    desktop = lambda t: os.path.join(t, "usr/share/applications/tilescope.desktop")  # noqa: E731
    faulty(name, "without the licence of a font it embeds",
           lambda t: edit(cr(t), re.compile(r"Files: \S*Roboto-Regular.ttf\n(\S.*\n)+\n"), ""),
           "Roboto, which the window compiles in, is not named")
    faulty(name, "without its desktop entry", lambda t: os.remove(desktop(t)),
           "/usr/share/applications/tilescope.desktop is missing")
    faulty(name, "whose desktop entry is not the source's", lambda t: edit(desktop(t), "Exec=tilescope",
           "Exec=tilescope-old"), "differs from assets/tilescope.desktop")
    faulty(name, "without its icon",
           lambda t: os.remove(os.path.join(t, "usr/share/icons/hicolor/scalable/apps/tilescope.svg")),
           "/usr/share/icons/hicolor/scalable/apps/tilescope.svg is missing")
    cases += 4
    # The engine's package with the window's parts: a desktop entry, and a copyright naming what it lacks.
    def windowish(t):
        os.makedirs(os.path.join(t, "usr/share/applications"))
        shutil.copy(os.path.join(src, "assets/tilescope.desktop"), os.path.join(t, "usr/share/applications"))
    faulty("tilescope-engine", "with the window's desktop entry", windowish,
           "/usr/share/applications/tilescope.desktop is in the engine's package")
    faulty("tilescope-engine", "whose copyright names the window's ImGui",
           lambda t: edit(os.path.join(t, "usr/share/doc/tilescope-engine/copyright"), "Files: *\n",
                          "Files: third_party/imgui/*\nCopyright: 2014-2025 Omar Cornut\nLicense: Expat\n"
                          "Comment: Dear ImGui\n\nFiles: *\n"),
           "the engine's names Dear ImGui, a part of the window it does not link")
    cases += 2

print(f"test_packages: {', '.join(debs)} checked; {cases} faulty copies, each refused for its fault"
      if not failures else f"test_packages: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
