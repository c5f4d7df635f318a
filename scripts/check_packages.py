#!/usr/bin/env python3
"""Checks TileScope's Debian packages against what cmake/Packaging.cmake says is in them, read with dpkg-deb
(-I for the control fields, -c for the files, --fsys-tarfile for their contents):

  both       /usr/bin/tilescope and the README; /usr/share/doc/<package>/copyright in Debian's machine-readable
             format (DEP-5: the header paragraph with its Format line, Files paragraphs each with Copyright and
             License, every licence named there given its text, in the paragraph or a stand-alone License
             paragraph, and no licence text given twice); `Files: *` is TileScope's own, MIT ("Expat"), "2026 The
             TileScope authors"; the parts every build compiles in (CLI11, nlohmann-json) and, where the package
             names cuBLAS (a build with CUDA), NVIDIA's CUDA runtime; changelog.Debian.gz, compressed without a
             time stamp, whose newest entry is this package at this version
  tilescope  the window's parts too (Dear ImGui, ImPlot, ImGuiColorTextEdit, Boost.Regex, portable-file-dialogs,
             stb, Roboto, Source Code Pro, the colour maps); the desktop entry
             /usr/share/applications/tilescope.desktop and the icon
             /usr/share/icons/hicolor/scalable/apps/tilescope.svg (an SVG document), each byte for byte the
             source's (assets/), and the entry runs /usr/bin/tilescope (Exec) with that icon (Icon)
  tilescope-engine  nothing of the window: no desktop entry, icon or window library among its Depends, and a
             copyright that names none of the window's parts (it links none)

Usage: scripts/check_packages.py [--source DIR] DEB...   exit 0: every check held; 1: one failed (each printed)
       scripts/check_packages.py --validate-desktop FILE  desktop-file-validate FILE (Debian's
                                                           desktop-file-utils); exit 77 (SKIP) without it
scripts/package.sh runs the first on the packages it makes; ctest package.contents
(tests/scripts/test_packages.py) makes both packages of the build and runs it, and package.desktop_entry the
second on assets/tilescope.desktop.
"""
import argparse
import gzip
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET

FORMAT = "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
# What a build compiles in, by the words its copyright paragraph must hold (and the window's: none of them may
# be in the engine's copyright).
EVERY_BUILD = ["CLI11", "nlohmann"]
WINDOW = ["Dear ImGui", "implot", "ImGuiColorTextEdit", "Boost.Regex", "portable-file-dialogs",
          "stb_image_write", "Roboto", "Source Code Pro", "viridis", "coolwarm", "RdBu_r"]
WINDOW_LICENCES = ["BSL-1.0", "WTFPL-2", "OFL-1.1", "Apache-2.0", "CC0-1.0", "Matplotlib", "public-domain"]
WINDOW_LIBRARIES = ["libglfw", "libepoxy", "libegl", "libgl1", "libvulkan", "libx11"]
DESKTOP = "usr/share/applications/tilescope.desktop"
ICON = "usr/share/icons/hicolor/scalable/apps/tilescope.svg"


def dpkg_deb(*args):
    return subprocess.run(["dpkg-deb", *args], check=True, capture_output=True).stdout


def paragraphs(text):
    """deb822 paragraphs: lists of (field, value) with continuation lines joined by newlines."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        fields = []
        for line in block.split("\n"):
            if line.startswith((" ", "\t")):
                if not fields:
                    raise ValueError("a continuation line before any field: " + line)
                fields[-1] = (fields[-1][0], fields[-1][1] + "\n" + line)
            else:
                m = re.match(r"([!-9;-~][!-9;-~]*):(.*)$", line)
                if not m:
                    raise ValueError("not a field: " + line)
                fields.append((m.group(1), m.group(2).strip()))
        out.append(fields)
    return out


def check_dep5(text, fail):
    """Debian's machine-readable copyright format 1.0, as much as a binary package's file can be checked."""
    try:
        paras = paragraphs(text)
    except ValueError as e:
        fail(f"copyright: {e}")
        return {}
    if not paras or dict(paras[0]).get("Format") != FORMAT:
        fail(f"copyright: the first paragraph has no 'Format: {FORMAT}'")
        return {}
    named, texts, files = set(), {}, {}
    for p in paras[1:]:
        d = dict(p)
        if len(d) != len(p):
            fail(f"copyright: a field given twice in {p[0]}")
        if "Files" in d:
            for need in ("Copyright", "License"):
                if not d.get(need, "").strip():
                    fail(f"copyright: 'Files: {d['Files']}' has no {need}")
            first, _, body = d.get("License", "").partition("\n")
            files[d["Files"].split()[0]] = d
            names = {n.strip() for n in re.split(r"\bor\b|\band\b|,", first) if n.strip()}
            if body.strip():
                texts.setdefault(first.strip(), body)
            else:
                named |= names
        elif "License" in d:
            first, _, body = d["License"].partition("\n")
            if not body.strip():
                fail(f"copyright: the stand-alone 'License: {first}' has no text")
            if first.strip() in texts:
                fail(f"copyright: the text of 'License: {first}' is given twice")
            texts[first.strip()] = body
        else:
            fail(f"copyright: a paragraph with neither Files nor License: {p[0]}")
    for n in sorted(named - set(texts)):
        fail(f"copyright: 'License: {n}' is named but its text is nowhere")
    return {"files": files, "texts": texts}


def check_package(deb, source, fail):
    try:
        control = dpkg_deb("-f", deb).decode()
    except subprocess.CalledProcessError as e:
        fail(f"not a Debian package: {e.stderr.decode().strip()}")
        return None
    fields = {m.group(1): m.group(2) for m in re.finditer(r"^(\S+): (.*)$", control, re.M)}
    name, version = fields.get("Package"), fields.get("Version")
    if name not in ("tilescope", "tilescope-engine"):
        fail(f"Package is {name!r}, not tilescope or tilescope-engine")
        return None
    window = name == "tilescope"
    listing = dpkg_deb("-c", deb).decode()
    paths = {line.split()[5].lstrip("./").rstrip("/") for line in listing.splitlines() if len(line.split()) >= 6}
    tar = tarfile.open(fileobj=io.BytesIO(dpkg_deb("--fsys-tarfile", deb)))

    def content(path):
        for member in ("./" + path, path):
            try:
                return tar.extractfile(member).read()
            except KeyError:
                pass
        return None

    doc = f"usr/share/doc/{name}"
    for path in ["usr/bin/tilescope", f"{doc}/README.md", f"{doc}/copyright", f"{doc}/changelog.Debian.gz"]:
        if path not in paths:
            fail(f"/{path} is missing")

    # [SECTION] The copyright.
    copyright = content(f"{doc}/copyright")
    if copyright is not None:
        text = copyright.decode("utf-8", errors="replace")
        dep5 = check_dep5(text, fail)
        own = dep5.get("files", {}).get("*")
        if not own:
            fail("copyright: no 'Files: *' paragraph (TileScope's own)")
        else:
            if own.get("License") != "Expat" or "Expat" not in dep5["texts"]:
                fail(f"copyright: TileScope's own are not under the MIT licence ('Expat'): {own.get('License')!r}")
            if "2026 The TileScope authors" not in own.get("Copyright", ""):
                fail("copyright: 'Files: *' does not name '2026 The TileScope authors'")
        for part in EVERY_BUILD:
            if part not in text:
                fail(f"copyright: {part} (compiled into every build) is not named")
        cuda = "libcublas-" in fields.get("Depends", "") + fields.get("Recommends", "")
        if cuda != ("NVIDIA-CUDA-EULA" in text):
            fail("copyright: NVIDIA's CUDA runtime is " + ("not named, though the package depends on cuBLAS"
                                                           if cuda else "named in a package without CUDA"))
        for part in WINDOW + WINDOW_LICENCES:
            if window and part not in text:
                fail(f"copyright: {part}, which the window compiles in, is not named")
            if not window and re.search(r"\b" + re.escape(part) + r"\b", text):
                fail(f"copyright: the engine's names {part}, a part of the window it does not link")
        licence = open(os.path.join(source, "LICENSE"), encoding="utf-8").read()
        if "Copyright (c) 2026 The TileScope authors" not in licence or "MIT License" not in licence:
            fail("LICENSE of the source is not the MIT licence of the TileScope authors")

    # [SECTION] The changelog: gzip -9n (no name, no time), the newest entry this package at this version.
    changelog = content(f"{doc}/changelog.Debian.gz")
    if changelog is not None:
        if changelog[4:8] != b"\0\0\0\0" or changelog[3] & 0x08:
            fail("changelog.Debian.gz carries a time stamp or a file name (gzip -n)")
        first = gzip.decompress(changelog).decode().split("\n", 1)[0]
        if not first.startswith(f"{name} ({version}) "):
            fail(f"changelog.Debian.gz: the newest entry is '{first}', not {name} ({version})")

    # [SECTION] The desktop entry and the icon: the window's only.
    for path, src in [(DESKTOP, "assets/tilescope.desktop"), (ICON, "assets/icons/tilescope.svg")]:
        if not window:
            if path in paths:
                fail(f"/{path} is in the engine's package")
            continue
        data = content(path)
        if data is None:
            fail(f"/{path} is missing")
            continue
        with open(os.path.join(source, src), "rb") as f:
            if f.read() != data:
                fail(f"/{path} differs from {src}")
        if path == DESKTOP:
            entry = dict(re.findall(r"^([A-Za-z]+)=(.*)$", data.decode(), re.M))
            exec_ = entry.get("Exec", "").split()
            if not exec_ or exec_[0] != "tilescope" or "usr/bin/tilescope" not in paths:
                fail(f"{path}: Exec={entry.get('Exec')} is not the package's /usr/bin/tilescope")
            if entry.get("Icon") != "tilescope" or entry.get("Type") != "Application":
                fail(f"{path}: Icon={entry.get('Icon')}, Type={entry.get('Type')}")
        else:
            try:
                root = ET.fromstring(data)
                if root.tag != "{http://www.w3.org/2000/svg}svg" or not root.get("viewBox"):
                    fail(f"{path}: not an SVG document with a viewBox")
            except ET.ParseError as e:
                fail(f"{path}: not well-formed XML: {e}")
    if not window:
        depends = fields.get("Depends", "").lower()
        for lib in WINDOW_LIBRARIES:
            if lib in depends:
                fail(f"the engine depends on {lib}, a library of the window: {fields.get('Depends')}")
    return name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--validate-desktop", metavar="FILE")
    ap.add_argument("debs", nargs="*")
    a = ap.parse_args()
    if a.validate_desktop:
        tool = shutil.which("desktop-file-validate")
        if not tool:
            print("check_packages: SKIP: desktop-file-validate is not installed (Debian's desktop-file-utils)")
            return 77
        r = subprocess.run([tool, a.validate_desktop], capture_output=True, text=True)
        print((r.stdout + r.stderr).strip() or f"{a.validate_desktop}: valid")
        return 0 if r.returncode == 0 else 1
    if not a.debs:
        ap.error("no package given")
    failed = 0
    for deb in a.debs:
        problems = []
        name = check_package(deb, a.source, problems.append)
        for p in problems:
            print(f"check_packages: {deb}: FAILED: {p}")
        if not problems:
            print(f"check_packages: {deb}: {name}: ok")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
