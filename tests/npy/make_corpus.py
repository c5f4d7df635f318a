#!/usr/bin/env python3
"""Writes the .npy test corpus: valid files and several hundred malformed ones, each with what reading it must
give. Generated at build time (tests/unit/CMakeLists.txt) instead of committing hundreds of blobs; also the
seed corpus of the fuzz target (tests/fuzz).

Usage: make_corpus.py OUTDIR
OUTDIR/manifest.tsv holds one line per file:  NAME <tab> ok ROWS COLS  |  NAME <tab> refuse <tab> TEXT
where TEXT must appear in the reader's message. A valid file holds element (r, c) = (r * cols + c) / 4 - 3.
Expectations follow numpy.lib.format (numpy 2.x): what numpy refuses, we refuse; what numpy reads but we do
not (another dtype, not 2-D, empty), we refuse with the reason. Python standard library only.
"""
import os
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
manifest = []
names = set()


def header_bytes(major, minor, text, length=None, align=64):
    """Preamble + header text padded with spaces and a newline to `align`, as numpy writes it."""
    raw = text.encode("latin1" if major < 3 else "utf8")
    pre = 10 if major == 1 else 12
    if align:
        pad = (align - (pre + len(raw) + 1) % align) % align
        raw = raw + b" " * pad + b"\n"
    n = len(raw) if length is None else length
    fmt = "<H" if major == 1 else "<I"
    return b"\x93NUMPY" + bytes([major, minor]) + struct.pack(fmt, n) + raw


def values(rows, cols, fortran=False, big=False):
    v = [(r * cols + c) / 4 - 3 for r in range(rows) for c in range(cols)]
    if fortran:
        v = [(r * cols + c) / 4 - 3 for c in range(cols) for r in range(rows)]
    return struct.pack((">" if big else "<") + "%df" % len(v), *v)


def add(name, data, expect):
    assert name not in names, name
    names.add(name)
    with open(os.path.join(out, name + ".npy"), "wb") as f:
        f.write(data)
    manifest.append(name + ".npy\t" + expect)


def dict_text(descr="'<f4'", fortran="False", shape="(2, 3)", order=("descr", "fortran_order", "shape"), tail=", "):
    vals = {"descr": descr, "fortran_order": fortran, "shape": shape}
    return "{" + ", ".join("'%s': %s" % (k, vals[k]) for k in order) + tail + "}"


VERSIONS = [1, 2, 3]
GOOD = values(2, 3)

# [1] Valid files, in every version.
for v in VERSIONS:
    add("v%d-ok-plain" % v, header_bytes(v, 0, dict_text()) + GOOD, "ok 2 3")
    add("v%d-ok-no-trailing-comma" % v, header_bytes(v, 0, dict_text(tail="")) + GOOD, "ok 2 3")
    add("v%d-ok-key-order" % v,
        header_bytes(v, 0, dict_text(order=("shape", "fortran_order", "descr"))) + GOOD, "ok 2 3")
    add("v%d-ok-double-quotes" % v,
        header_bytes(v, 0, '{"descr": "<f4", "fortran_order": False, "shape": (2, 3)}') + GOOD, "ok 2 3")
    add("v%d-ok-whitespace" % v,
        header_bytes(v, 0, "{\n\t'descr' :'<f4' ,\r\n 'fortran_order'\t: False,'shape':(  2 ,3 , ) ,\f}") + GOOD,
        "ok 2 3")
    add("v%d-ok-shape-trailing-comma" % v, header_bytes(v, 0, dict_text(shape="(2, 3,)")) + GOOD, "ok 2 3")
    add("v%d-ok-fortran" % v,
        header_bytes(v, 0, dict_text(fortran="True")) + values(2, 3, fortran=True), "ok 2 3")
    add("v%d-ok-big-endian" % v, header_bytes(v, 0, dict_text(descr="'>f4'")) + values(2, 3, big=True), "ok 2 3")
    add("v%d-ok-big-endian-fortran" % v,
        header_bytes(v, 0, dict_text(descr="'>f4'", fortran="True")) + values(2, 3, fortran=True, big=True),
        "ok 2 3")
    add("v%d-ok-native-order" % v, header_bytes(v, 0, dict_text(descr="'=f4'")) + GOOD, "ok 2 3")
    add("v%d-ok-align16" % v, header_bytes(v, 0, dict_text(), align=16) + GOOD, "ok 2 3")
    add("v%d-ok-no-padding" % v, header_bytes(v, 0, dict_text(), align=0) + GOOD, "ok 2 3")
    add("v%d-ok-one-by-one" % v, header_bytes(v, 0, dict_text(shape="(1, 1)")) + values(1, 1), "ok 1 1")
    add("v%d-ok-column" % v, header_bytes(v, 0, dict_text(shape="(7, 1)")) + values(7, 1), "ok 7 1")
    add("v%d-ok-plus-sign" % v, header_bytes(v, 0, dict_text(shape="(+2, 3)")) + GOOD, "ok 2 3")
    add("v%d-ok-long-spaces" % v, header_bytes(v, 0, dict_text(shape="(2," + " " * 9000 + "3)")) + GOOD, "ok 2 3")
for v in (1, 2):  # numpy's Python 2 era: long integers, filtered out for versions 1.0 and 2.0 only
    add("v%d-ok-python2-long" % v, header_bytes(v, 0, dict_text(shape="(2L, 3L)")) + GOOD, "ok 2 3")
add("v3-python2-long", header_bytes(3, 0, dict_text(shape="(2L, 3L)")) + GOOD, "refuse\tnot a plain whole number")

# [2] The preamble.
add("empty", b"", "refuse\ttoo short")
add("five-bytes", b"\x93NUMP", "refuse\ttoo short")
plain = header_bytes(1, 0, dict_text()) + GOOD
for i in range(6):
    broken = bytearray(plain)
    broken[i] ^= 0x20
    add("bad-magic-%d" % i, bytes(broken), "refuse\tmagic")
add("text-file", b"hello, this is not numpy at all\n", "refuse\tmagic")
for major, minor in [(0, 0), (1, 1), (2, 1), (3, 1), (4, 0), (255, 0), (1, 255), (0, 1)]:
    data = header_bytes(major if major in (1, 2, 3) else 1, minor, dict_text()) + GOOD
    data = data[:6] + bytes([major, minor]) + data[8:]
    add("version-%d.%d" % (major, minor), data, "refuse\tunsupported .npy format version %d.%d" % (major, minor))
for v in VERSIONS:
    h = header_bytes(v, 0, dict_text())
    pre = 10 if v == 1 else 12
    add("v%d-cut-in-preamble" % v, h[: pre - 1], "refuse\t" + ("truncated" if v != 1 else "too short"))
    add("v%d-cut-in-header" % v, h[: pre + 20], "refuse\ttruncated .npy header")
    add("v%d-header-length-past-end" % v, header_bytes(v, 0, dict_text(), length=4000) + GOOD,
        "refuse\ttruncated .npy header")
    add("v%d-header-length-zero" % v, header_bytes(v, 0, dict_text(), length=0) + GOOD, "refuse\tbad .npy header")
    add("v%d-header-length-short" % v, header_bytes(v, 0, dict_text(), length=30) + GOOD, "refuse\tbad .npy header")
for v in (2, 3):
    add("v%d-header-10001" % v, header_bytes(v, 0, dict_text(shape="(2," + " " * 10100 + "3)")) + GOOD,
        "refuse\tnumpy refuses headers over 10000 bytes")
    add("v%d-header-30k-spaces" % v, header_bytes(v, 0, dict_text(shape="(2," + " " * 30000 + "3)")) + GOOD,
        "refuse\tnumpy refuses headers over 10000 bytes")
    add("v%d-header-30k-digits" % v, header_bytes(v, 0, dict_text(shape="(2, " + "9" * 30000 + ")")) + GOOD,
        "refuse\tnumpy refuses headers over 10000 bytes")
    add("v%d-header-length-4g" % v, header_bytes(v, 0, dict_text(), length=0xFFFFFFFF) + GOOD,
        "refuse\tnumpy refuses headers over 10000 bytes")

# [3] The dict itself.
structure = [
    ("not-a-dict", "['descr', '<f4']", "does not start with '{'"),
    ("set", "{'descr', 'fortran_order', 'shape'}", "no ':' after the key"),
    ("no-closing-brace", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", "expected a quoted key"),
    ("text-after", dict_text() + " extra", "more text follows"),
    ("two-dicts", dict_text() + dict_text(), "more text follows"),
    ("empty-dict", "{}", "has no 'descr' entry"),
    ("no-descr", "{'fortran_order': False, 'shape': (2, 3), }", "has no 'descr' entry"),
    ("no-fortran", "{'descr': '<f4', 'shape': (2, 3), }", "has no 'fortran_order' entry"),
    ("no-shape", "{'descr': '<f4', 'fortran_order': False, }", "has no 'shape' entry"),
    ("dup-descr", "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
     "'descr' appears twice"),
    ("dup-fortran", "{'descr': '<f4', 'fortran_order': False, 'fortran_order': True, 'shape': (2, 3), }",
     "'fortran_order' appears twice"),
    ("dup-shape", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'shape': (2, 3), }",
     "'shape' appears twice"),
    ("unknown-key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1, }", "unknown key 'extra'"),
    ("unknown-key-nested", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': {'y': [1, {2: 3}]}}",
     "unknown key 'x'"),
    ("key-case", "{'Descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "unknown key 'Descr'"),
    ("unquoted-key", "{descr: '<f4', 'fortran_order': False, 'shape': (2, 3), }", "expected a quoted key"),
    ("int-key", "{1: '<f4', 'fortran_order': False, 'shape': (2, 3), }", "expected a quoted key"),
    ("key-escape", "{'desc\\x72': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "escape sequence"),
    ("unterminated-key", "{'descr: '<f4', 'fortran_order': False, 'shape': (2, 3), }", "no ':' after the key"),
    ("unterminated-string", "{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3), }", "expected ','"),
    ("string-to-end", "{'descr': '<f4", "unterminated string"),
    ("newline-in-string", "{'descr': '<f4\n', 'fortran_order': False, 'shape': (2, 3), }", "unterminated string"),
    ("comment", "{'descr': '<f4', # a comment\n 'fortran_order': False, 'shape': (2, 3), }", "expected a quoted key"),
    ("missing-colon", "{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3), }", "no ':' after the key"),
    ("double-colon", "{'descr':: '<f4', 'fortran_order': False, 'shape': (2, 3), }", "expected a quoted dtype"),
    ("missing-comma", "{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3), }", "expected ','"),
    ("double-comma", "{'descr': '<f4',, 'fortran_order': False, 'shape': (2, 3), }", "expected a quoted key"),
    ("leading-comma", "{, 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "expected a quoted key"),
    ("nul-byte", "{'descr': '<f4',\0 'fortran_order': False, 'shape': (2, 3), }", "expected a quoted key"),
    ("high-bytes", "{'descr': '<f4', \xe9\xff 'fortran_order': False, 'shape': (2, 3), }", "expected a quoted key"),
    ("backslash-newline", "{'descr': '<f4', \\\n'fortran_order': False, 'shape': (2, 3), }",
     "expected a quoted key"),
    ("only-spaces", " " * 50, "does not start with '{'"),
    ("deep-braces", "{" * 4000 + "}" * 4000, "expected a quoted key"),
    ("deep-parens-shape", dict_text(shape="(" * 3000 + "2, 3" + ")" * 3000), "not a whole number"),
    ("deep-list-descr", dict_text(descr="[" * 3000 + "]" * 3000), "expected a quoted dtype"),
    ("python-call", "dict(descr='<f4', fortran_order=False, shape=(2, 3))", "does not start with '{'"),
]
for v in VERSIONS:
    for name, text, why in structure:
        add("v%d-dict-%s" % (v, name), header_bytes(v, 0, text) + GOOD, "refuse\t" + why)

# [4] descr.
descrs = [
    ("unquoted", "<f4", "expected a quoted dtype"),
    ("f8", "'<f8'", "dtype '<f8' is not float32"),
    ("i4", "'<i4'", "dtype '<i4' is not float32"),
    ("u1", "'|u1'", "dtype '|u1' is not float32"),
    ("f2", "'<f2'", "dtype '<f2' is not float32"),
    ("c8", "'<c8'", "dtype '<c8' is not float32"),
    ("object", "'|O'", "dtype '|O' is not float32"),
    ("empty", "''", "dtype '' is not float32"),
    ("space", "'<f4 '", "dtype '<f4 ' is not float32"),
    ("name", "'float32'", "dtype 'float32' is not float32 ('<f4')"),
    ("structured", "[('a', '<f4')]", "expected a quoted dtype"),
    ("number", "4", "expected a quoted dtype"),
    ("none", "None", "expected a quoted dtype"),
    ("bytes-prefix", "b'<f4'", "expected a quoted dtype"),
    ("unicode-prefix", "u'<f4'", "expected a quoted dtype"),
    ("long-string", "'" + "f" * 2000 + "'", "is not float32"),
]
for v in VERSIONS:
    for name, descr, why in descrs:
        add("v%d-descr-%s" % (v, name), header_bytes(v, 0, dict_text(descr=descr)) + GOOD, "refuse\t" + why)

# [5] fortran_order.
fortrans = [
    ("TrueFalse", "TrueFalse", "'TrueFalse', which is neither True nor False"),
    ("lower-true", "true", "'true', which is neither"),
    ("lower-false", "false", "'false', which is neither"),
    ("zero", "0", "'0', which is neither"),
    ("one", "1", "'1', which is neither"),
    ("string", "'True'", "which is neither True nor False"),
    ("none", "None", "'None', which is neither"),
    ("prefix", "Tru", "'Tru', which is neither"),
    ("empty", "", "which is neither True nor False"),
    ("twice", "True True", "expected ','"),
    ("not", "not True", "'not', which is neither"),
    ("parens", "(True)", "which is neither True nor False"),
]
for v in VERSIONS:
    for name, val, why in fortrans:
        add("v%d-fortran-%s" % (v, name), header_bytes(v, 0, dict_text(fortran=val)) + GOOD, "refuse\t" + why)

# [6] shape.
shapes = [
    ("space-separated", "(2 3)", "expected ',' or ')'"),
    ("double-comma", "(2,,3)", "an empty element"),
    ("only-comma", "(,)", "an empty element"),
    ("leading-comma", "(,2, 3)", "an empty element"),
    ("two-trailing-commas", "(2, 3,,)", "an empty element"),
    ("empty-tuple", "()", "the array is 0-D"),
    ("paren-number", "(6)", "a number in parentheses"),
    ("one-d", "(6,)", "the array is 1-D"),
    ("three-d", "(1, 2, 3)", "the array is 3-D"),
    ("list", "[2, 3]", "'shape' is a list"),
    ("bare-number", "6", "'shape' is not a tuple"),
    ("string", "'(2, 3)'", "'shape' is not a tuple"),
    ("none", "None", "'shape' is not a tuple"),
    ("negative-rows", "(-2, 3)", "the negative dimension -2"),
    ("negative-cols", "(2, -3)", "the negative dimension -3"),
    ("negative-both", "(-2, -3)", "the negative dimension -2"),
    ("zero-rows", "(0, 3)", "empty matrix"),
    ("zero-cols", "(2, 0)", "empty matrix"),
    ("minus-zero", "(-0, 3)", "empty matrix"),
    ("float", "(2.0, 3)", "not a plain whole number"),
    ("exponent", "(2e0, 3)", "not a plain whole number"),
    ("hex", "(0x2, 3)", "not a plain whole number"),
    ("underscore", "(1_0, 3)", "not a plain whole number"),
    ("leading-zero", "(02, 3)", "leading zeros"),
    ("double-sign", "(--2, 3)", "not a whole number"),
    ("sign-space", "(- 2, 3)", "not a whole number"),
    ("nested", "((2, 3))", "not a whole number"),
    ("nested-inner", "(2, (3))", "not a whole number"),
    ("string-dim", "('2', 3)", "not a whole number"),
    ("bool-dim", "(True, 3)", "not a whole number"),
    ("none-dim", "(None, 3)", "not a whole number"),
    ("semicolon", "(2; 3)", "expected ',' or ')'"),
    ("unterminated", "(2, 3", "bad .npy header"),
    ("above-limit-rows", "(131073, 1)", "dimension 131073 is above the limit of 131072"),
    ("above-limit-cols", "(1, 999999)", "dimension 999999 is above the limit"),
    ("twenty-digits", "(99999999999999999999, 1)", "dimension 99999999999999999999 is above the limit"),
    ("9000-digits", "(" + "9" * 9000 + ", 1)", "is above the limit"),
    ("int64-wrap", "(18446744073709551617, 1)", "is above the limit"),
    ("many-dims", "(" + "1, " * 3000 + ")", "the array is 3000-D"),
]
for v in VERSIONS:
    for name, shape, why in shapes:
        add("v%d-shape-%s" % (v, name), header_bytes(v, 0, dict_text(shape=shape)) + GOOD, "refuse\t" + why)

# [7] The data after the header.
for v in VERSIONS:
    h = header_bytes(v, 0, dict_text())
    add("v%d-data-missing" % v, h, "refuse\ttruncated: shape (2, 3) needs 24 data bytes, the file has 0")
    add("v%d-data-short-1" % v, h + GOOD[:-1], "refuse\ttruncated: shape (2, 3) needs 24 data bytes, the file has 23")
    add("v%d-data-short-4" % v, h + GOOD[:-4], "refuse\ttruncated")
    add("v%d-data-extra-1" % v, h + GOOD + b"\0", "refuse\tcorrupt: 1 bytes follow the data")
    add("v%d-data-extra-4" % v, h + GOOD + GOOD[:4], "refuse\tcorrupt: 4 bytes follow the data")
    add("v%d-data-huge-shape" % v, header_bytes(v, 0, dict_text(shape="(131072, 131072)")) + GOOD,
        "refuse\tneeds 68719476736 data bytes, the file has 24")
    add("v%d-data-fortran-short" % v, header_bytes(v, 0, dict_text(fortran="True")) + GOOD[:20], "refuse\ttruncated")

with open(os.path.join(out, "manifest.tsv"), "w") as f:
    f.write("\n".join(manifest) + "\n")
print("make_corpus: %d files (%d valid) in %s" % (len(manifest), sum("\tok " in m for m in manifest), out))
