#!/usr/bin/env python3
"""Writes the colour tables in assets/colormaps/ from matplotlib's colormaps.

Run it only to add or refresh a map; the generated .csv files are committed and the build reads them (CMake
embeds them into the binary, see cmake/Colormaps.cmake), so building TileScope never needs Python:

    python3 -m venv /tmp/cmap-venv
    /tmp/cmap-venv/bin/pip install -r scripts/requirements-colormaps.txt
    /tmp/cmap-venv/bin/python scripts/gen_colormaps.py

Each file holds a header of '#' lines (name, kind, source, licence) and 256 lines 'r,g,b' of sRGB integers
0-255: entry i is matplotlib's colour at (i / 255) of the map, rounded to the nearest integer. Entry 0 colours the
lowest value of the range.
"""
import pathlib
import sys

import matplotlib
import numpy as np

# (name in matplotlib, kind, licence text). The first map is the default of sequential data.
MAPS = [
    ("viridis", "sequential",
     "viridis by Stefan van der Walt, Nathaniel Smith and Eric Firing, released by its authors under CC0 1.0 "
     "(https://github.com/BIDS/colormap); distributed in matplotlib under the Matplotlib License"),
    ("magma", "sequential",
     "magma by Stefan van der Walt and Nathaniel Smith, released by its authors under CC0 1.0 "
     "(https://github.com/BIDS/colormap); distributed in matplotlib under the Matplotlib License"),
    ("inferno", "sequential",
     "inferno by Stefan van der Walt and Nathaniel Smith, released by its authors under CC0 1.0 "
     "(https://github.com/BIDS/colormap); distributed in matplotlib under the Matplotlib License"),
    ("RdBu_r", "diverging",
     "ColorBrewer RdBu (reversed), Copyright (c) 2002 Cynthia Brewer, Mark Harrower, and The Pennsylvania "
     "State University; Apache License 2.0 (https://www.apache.org/licenses/LICENSE-2.0), as shipped in "
     "matplotlib's LICENSE_COLORBREWER"),
    ("coolwarm", "diverging",
     "coolwarm from 'Diverging Color Maps for Scientific Visualization' by Kenneth Moreland "
     "(http://www.kennethmoreland.com/color-maps/); distributed in matplotlib under the Matplotlib License"),
]


def table(name):
    cmap = matplotlib.colormaps[name].resampled(256)
    rgba = cmap(np.arange(256))  # integer arguments index the 256-entry lookup table directly
    return np.rint(rgba[:, :3] * 255.0).astype(int)


def main():
    out_dir = pathlib.Path(__file__).resolve().parent.parent / "assets" / "colormaps"
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, kind, licence in MAPS:
        rgb = table(name)
        assert rgb.shape == (256, 3) and rgb.min() >= 0 and rgb.max() <= 255
        lines = [
            f"# {name}: 256 sRGB colours, one 'r,g,b' line each (0-255); the first colours the lowest value.",
            f"# kind: {kind}",
            f"# source: matplotlib {matplotlib.__version__}, matplotlib.colormaps['{name}'] resampled to 256 "
            "entries, rounded to the nearest integer; written by scripts/gen_colormaps.py",
            f"# licence: {licence}",
        ]
        lines += [f"{r},{g},{b}" for r, g, b in rgb]
        (out_dir / f"{name}.csv").write_text("\n".join(lines) + "\n")
        print(f"{name}.csv ({kind})", file=sys.stderr)


if __name__ == "__main__":
    main()
