"""Patches as real models write them (issue 13, Build 1-2): EOF anchoring, look-alike
punctuation, no-break spaces, BOM, mixed line endings, padded envelope headers, blank lines
between chunks; fallbacks are reported and untouched lines stay byte-identical."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.tools.patch_envelope import apply_patch_to_files, parse_patch
from core.tools.v4a import apply_diff
from core.tools.v4a_apply import apply_v4a
from tests.support.v4a_diffgen import make_v4a_diff

reference = pytest.importorskip("agents.apply_diff").apply_diff


def _ref_outcome(text: str, diff: str) -> tuple[str, str]:
    try:
        return "ok", reference(text, diff)
    except ValueError as exc:
        return "error", str(exc)


def _keep_ends(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


# -- EOF anchoring (openai-agents 0.24) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "diff", "expected"),
    [
        ("a\n", "@@\n+x\n*** End of File\n", "a\nx\n"),  # the example
        ("a", "@@\n+x\n*** End of File\n", "a\nx"),
        ("a\nb\nb\n", "@@\n-b\n+B\n*** End of File\n", "a\nb\nB\n"),
        ("a\nb\n", "@@ a\n-b\n+B\n*** End of File\n@@\n+x\n", "a\nB\nx\n"),
        ("", "@@\n+x\n*** End of File\n", "x\n"),  # "" is one empty line, read as the newline
    ],
)
def test_eof_anchoring_follows_0_24(text: str, diff: str, expected: str) -> None:
    assert apply_diff(text, diff) == expected == reference(text, diff)
    assert apply_v4a(text, diff).text == expected


# -- look-alike punctuation and spaces: the reference refuses, the editor matches and says so ---

LOOKALIKE_FILE = (
    "def greet(name):\n"
    "    # Say hello \u2013 politely\n"
    "    print(\u201cHello, \u2018friend\u2019\u201d)\n"
    "    return name\n"
)
ASCII_DIFF = (
    "@@\n"
    "     # Say hello - politely\n"
    "-    print(\"Hello, 'friend'\")\n"
    "+    print(\"Hi, 'friend'\")\n"
    "     return name\n"
)


def test_lookalike_punctuation_matches_after_normalising() -> None:
    with pytest.raises(ValueError) as info:
        apply_diff(LOOKALIKE_FILE, ASCII_DIFF)
    assert ("error", str(info.value)) == _ref_outcome(LOOKALIKE_FILE, ASCII_DIFF)
    assert str(info.value).startswith("Invalid Context 0:")

    result = apply_v4a(LOOKALIKE_FILE, ASCII_DIFF)
    lines = _keep_ends(result.text)
    original = _keep_ends(LOOKALIKE_FILE)
    # the context line with the en dash is kept as it is in the file, not as the model wrote it
    assert lines[0:2] == original[0:2] and lines[3] == original[3]
    assert lines[2] == "    print(\"Hi, 'friend'\")\n"
    assert result.notes() == ["matched after normalising dashes and quotes on 2 lines (line 2)"]
    (fallback,) = result.fallbacks
    assert (fallback.level, fallback.target, fallback.reference) == ("unicode", "context", False)
    assert fallback.normalised == ("dashes", "quotes")


def test_no_break_space_inside_a_line() -> None:
    text = "x\u00a0=\u00a01\ny = 2\n"
    diff = "@@\n-x = 1\n+x = 10\n"
    assert _ref_outcome(text, diff)[0] == "error"
    result = apply_v4a(text, diff)
    assert result.text == "x = 10\ny = 2\n"
    assert result.notes() == ["matched after normalising spaces on 1 line (line 1)"]


def test_whitespace_levels_are_reported_in_order() -> None:
    # the reference's own rstrip pass: same text as the reference, reported
    text = "a  \nb\n"
    diff = "@@\n a\n-b\n+B\n"
    result = apply_v4a(text, diff)
    assert result.text == reference(text, diff)
    assert result.notes() == ["matched after ignoring trailing whitespace on 1 line (line 1)"]
    assert result.fallbacks[0].reference
    # inner runs of blanks: beyond the reference
    text = "if  x ==\t1:\n    pass\n"
    diff = "@@\n-if x == 1:\n+if x == 2:\n"
    assert _ref_outcome(text, diff)[0] == "error"
    result = apply_v4a(text, diff)
    assert result.text == "if x == 2:\n    pass\n"
    assert result.notes() == ["matched after ignoring whitespace differences on 1 line (line 1)"]


def test_stacked_anchor_with_lookalikes() -> None:
    text = "class A:\n    def f(self) \u2192 str:  # \u201cf\u201d\n        return 1\n"
    diff = (
        '@@ class A:\n@@     def f(self) \u2192 str:  # "f"\n-        return 1\n+        return 2\n'
    )
    assert _ref_outcome(text, diff) == (
        "error",
        'Invalid Anchor 1:\n    def f(self) \u2192 str:  # "f"',
    )
    result = apply_v4a(text, diff)
    assert result.text.endswith("        return 2\n")
    assert result.notes() == ["@@ line matched after normalising quotes (line 2)"]


def test_unmatched_even_after_fallbacks_keeps_the_reference_message() -> None:
    text = "alpha\nbeta\n"
    diff = "@@\n-gamma\n+delta\n"
    with pytest.raises(ValueError) as info:
        apply_v4a(text, diff)
    assert str(info.value) == _ref_outcome(text, diff)[1] == "Invalid Context 0:\ngamma"


# -- BOM -----------------------------------------------------------------------------------------


def test_bom_file_patched_at_line_one_keeps_the_bom() -> None:
    text = "\ufeffimport os\nprint(1)\n"
    diff = "@@\n-import os\n+import sys\n"
    assert _ref_outcome(text, diff)[0] == "error"  # the reference cannot match line 1
    result = apply_v4a(text, diff)
    assert result.text == "\ufeffimport sys\nprint(1)\n"
    assert result.bom and result.notes() == []


def test_bom_file_patched_elsewhere_is_the_reference_result() -> None:
    text = "\ufeffa\nb\nc\n"
    diff = "@@\n b\n-c\n+C\n"
    assert apply_v4a(text, diff).text == reference(text, diff) == "\ufeffa\nb\nC\n"


# -- mixed line endings ----------------------------------------------------------------------------


def test_mixed_line_endings_are_kept_per_line() -> None:
    text = "one\r\ntwo\nthree\r\nfour\n"
    diff = "@@\n-two\n+TWO\n+two and a half\n three\n"
    # the reference rewrites every line as CRLF
    assert reference(text, diff) == "one\r\nTWO\r\ntwo and a half\r\nthree\r\nfour\r\n"
    result = apply_v4a(text, diff)
    assert result.text == "one\r\nTWO\ntwo and a half\nthree\r\nfour\n"


def test_insertion_takes_the_ending_of_the_line_it_follows() -> None:
    text = "a\r\nb\nc\n"
    assert apply_v4a(text, "@@\n a\n+x\n").text == "a\r\nx\r\nb\nc\n"
    # appending after a last line without a newline gives that line the local ending
    assert apply_v4a("a\r\nb\nc", "@@\n+d\n*** End of File\n").text == "a\r\nb\nc\r\nd"


_PIECE = st.sampled_from(["x", "  y", "z = 1", "", "}", "\u2013", "\u201cq\u201d", "a\u00a0b"])


@st.composite
def _file_with_endings(draw: st.DrawFn) -> tuple[list[str], list[str], bool]:
    pieces = draw(st.lists(_PIECE, min_size=1, max_size=15))
    contents = [f"{i}:{piece}" for i, piece in enumerate(pieces)]  # unique lines
    endings = [draw(st.sampled_from(["\n", "\r\n"])) for _ in contents]
    if draw(st.booleans()):
        endings[-1] = ""  # no final newline
    return contents, endings, draw(st.booleans())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_file_with_endings(), data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_untouched_lines_stay_byte_identical(case, data, seed: int) -> None:
    contents, endings, bom = case
    pieces = [c + e for c, e in zip(contents, endings, strict=True)]
    text = ("\ufeff" if bom else "") + "".join(pieces)
    old = [*contents, ""] if endings[-1] else list(contents)
    new = list(old)
    for step in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(new) - 1))
        if data.draw(st.booleans()) and new[position]:
            new[position] += " # edited"
        elif data.draw(st.booleans()) and new[position] and len(new) > 2:
            del new[position]
        else:
            new.insert(position, f"new {step}")
    assume(new != old)
    diff = make_v4a_diff(old, new, random.Random(seed))
    out = apply_v4a(text, diff).text
    if bom:
        assert out.startswith("\ufeff")
        out = out[1:]
    assert re.split(r"\r?\n", out) == new
    # a line the diff did not touch keeps its bytes, its own line ending included
    original = {piece.rstrip("\r\n"): piece for piece in pieces if piece.endswith("\n")}
    for piece in _keep_ends(out):
        content = piece.rstrip("\r\n")
        if content in original and piece.endswith("\n"):
            assert piece == original[content]


@settings(max_examples=200, deadline=None)
@given(
    text_lines=st.lists(
        st.sampled_from(["a", "b", " a", "a ", "", "c", "\u2013", "d\u00a0"]), max_size=6
    ),
    newline=st.sampled_from(["\n", "\r\n"]),
    diff_lines=st.lists(
        st.sampled_from(
            [
                "@@",
                "@@ a",
                "@@ -",
                "-a",
                "+x",
                " a",
                " -",
                "",
                " c",
                "-c",
                "*** End of File",
                "-b",
                " ",
            ]
        ),
        max_size=7,
    ),
)
def test_editor_equals_the_reference_wherever_the_reference_succeeds(
    text_lines: list[str], newline: str, diff_lines: list[str]
) -> None:
    text = newline.join(text_lines)
    diff = "\n".join(diff_lines)
    outcome = _ref_outcome(text, diff)
    if outcome[0] == "ok":
        result = apply_v4a(text, diff)
        assert result.text == outcome[1]
        assert all(fallback.reference for fallback in result.fallbacks)


# -- the envelope: padded headers, blank lines between chunks, Codex CLI semantics ----------------

FILES = {"f.txt": "a\nb\nc\n", "g.txt": "x\ny"}


def _apply(patch: str, files: dict[str, str] | None = None) -> dict[str, str | None]:
    return apply_patch_to_files(patch, (files or FILES).get)


def test_padded_headers_are_accepted() -> None:
    patch = " *** Begin Patch \n  *** Update File: f.txt  \n@@\n-a\n+A\n *** End Patch \n"
    assert _apply(patch) == {"f.txt": "A\nb\nc\n"}


def test_blank_lines_between_chunks_and_sections() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n\n@@\n-c\n+C\n\n"
        "*** Update File: g.txt\n@@\n-x\n+X\n*** End Patch\n"
    )
    assert _apply(patch) == {"f.txt": "A\nb\nC\n", "g.txt": "X\ny"}
    # inside a chunk an empty line is still an empty context line
    files = {"f.txt": "a\n\nb\n"}
    patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n a\n\n-b\n+B\n*** End Patch\n"
    assert _apply(patch, files) == {"f.txt": "a\n\nB\n"}


def test_envelope_follows_the_codex_cli() -> None:
    begin, end = "*** Begin Patch\n", "*** End Patch\n"
    # an added file ends with a newline
    assert _apply(begin + "*** Add File: n.txt\n+one\n+two\n" + end) == {"n.txt": "one\ntwo\n"}
    # an updated file keeps its final-newline state (Codex adds one: openai/codex#7640)
    assert _apply(begin + "*** Update File: g.txt\n@@\n-x\n+X\n" + end) == {"g.txt": "X\ny"}
    # a pure-addition chunk goes to the end of the file (Codex CLI 0.171), the cursor stays
    patch = begin + "*** Update File: f.txt\n@@ a\n+x\n@@\n-c\n+C\n" + end
    assert _apply(patch) == {"f.txt": "a\nb\nC\nx\n"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "*** Update File: f.txt\n@@ nowhere\n-b\n+B\n",
            "Update File 'f.txt': Invalid Anchor 0:\nnowhere",
        ),
        (
            "*** Update File: f.txt\n@@\n*** End of File\n",
            "Update File 'f.txt': Invalid hunk: it has '*** End of File' but no lines to match or change",
        ),
        ("", "Invalid patch: no file operations between '*** Begin Patch' and '*** End Patch'"),
    ],
)
def test_envelope_refusals(body: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        _apply("*** Begin Patch\n" + body + "*** End Patch\n")
    assert str(info.value).startswith(message)
    # a single unmatched anchor is only a hint for an apply_patch_call (reference SDK)
    assert apply_diff("a\nb\nc\n", "@@ nowhere\n-b\n+B\n") == "a\nB\nc\n"


def test_envelope_lookalikes_bom_and_endings() -> None:
    files = {"q.py": "\ufeffs = \u201cx\u201d\r\nt = 1\n"}
    patch = (
        '*** Begin Patch\n*** Update File: q.py\n@@\n-s = "x"\n+s = "y"\n t = 1\n*** End Patch\n'
    )
    assert _apply(patch, files) == {"q.py": '\ufeffs = "y"\r\nt = 1\n'}


def test_parsed_operations_carry_codex_semantics() -> None:
    (action,) = parse_patch("*** Begin Patch\n*** Add File: n.txt\n+one\n*** End Patch")
    assert action.semantics == "codex"
    operation = action.to_operation()
    assert operation.semantics == "codex"
    # the create diff alone already gives the Codex result through any V4A editor
    assert apply_diff("", operation.diff or "", mode="create") == "one\n"
