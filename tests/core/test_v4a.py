"""The V4A diff engine against spec §5.4: worked examples, error texts, properties, reference."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.tools.v4a import apply_diff
from tests.support.v4a_diffgen import make_v4a_diff

try:  # the reference SDK, only to compare results (optional)
    from agents.apply_diff import apply_diff as reference_apply_diff
    from agents.version import __version__ as reference_version
except ImportError:  # pragma: no cover - depends on the environment
    reference_apply_diff = None
    reference_version = ""


def _lines(*lines: str) -> str:
    return "\n".join(lines)


# -- §5.4 worked examples ------------------------------------------------------------------------

WORKED_EXAMPLES = [
    (
        "line1\nline2\nline3\n",
        _lines("@@ line1", "-line2", "+updated", " line3"),
        "line1\nupdated\nline3\n",
    ),
    ("", _lines("@@", "+hello", "+world"), "hello\nworld\n"),
    # openai-agents 0.24: the EOF window ignores the final newline's empty "line"
    ("a\nb\nb\n", _lines("@@", "-b", "+B", "*** End of File"), "a\nb\nB\n"),
    ("a\n", _lines("@@", "+x", "*** End of File"), "a\nx\n"),
    ("  a\nb\n", _lines("@@", " a", "-b", "+B"), "  a\nB\n"),
    ("a\r\nb\r\n", _lines("@@", "-a", "+A"), "A\r\nb\r\n"),
]


@pytest.mark.parametrize(("text", "diff", "expected"), WORKED_EXAMPLES)
def test_worked_examples(text: str, diff: str, expected: str) -> None:
    assert apply_diff(text, diff) == expected


@pytest.mark.parametrize(
    ("text", "diff", "message"),
    [
        ("a\nb\nc\n", _lines("@@", "-c", "+C", "@@", "-a", "+A"), "Invalid Context 3:\na"),
        (
            "a\nb\n",
            _lines("*** Begin Patch", "*** Update File: a", "@@", "-a"),
            "Invalid Line: *** Begin Patch",
        ),
        ("a\n", "@@", "Nothing in this section - index=1 *** End Patch"),
    ],
)
def test_worked_example_errors(text: str, diff: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        apply_diff(text, diff)
    assert str(info.value) == message


@pytest.mark.parametrize("text", ["", "a", "a\nb\n", "a\r\nb\r\n", "x\n\n\ny"])
def test_empty_diff_leaves_input_unchanged(text: str) -> None:
    assert apply_diff(text, "") == text


def test_stacked_anchors_narrow_the_search() -> None:
    lines = [
        "class Other:",
        "    def second():",
        "        return 1",
        "class Target:",
        "    def first():",
        "        return 1",
        "    def second():",
        "        return 1",
        "",
    ]
    diff = _lines(
        "@@ class Target:", "@@     def second():", "-        return 1", "+        return 2"
    )
    expected = [*lines[:7], "        return 2", ""]
    assert apply_diff("\n".join(lines), diff) == "\n".join(expected)
    # without the anchors the first matching context wins
    first = apply_diff("\n".join(lines), _lines("@@", "-        return 1", "+        return 2"))
    assert first.split("\n")[2] == "        return 2"


# -- create mode ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("diff", "expected"),
    [
        ("+hello\n+world\n", "hello\nworld"),
        ("+hello\n+world\n+", "hello\nworld\n"),
        ("", ""),
        ("+a\r\n+b\r\n+", "a\r\nb\r\n"),
        ("+one\n*** End Patch\nignored", "one"),
        ("+one\n*** Add File: b\n+two", "one"),
    ],
)
def test_create_mode(diff: str, expected: str) -> None:
    assert apply_diff("ignored input\n", diff, mode="create") == expected


@pytest.mark.parametrize(
    ("diff", "message"),
    [
        ("+a\nb", "Invalid Add File Line: b"),
        ("+a\n*** End of File", "Invalid Add File Line: *** End of File"),
        ("+a\n\n+b", "Invalid Add File Line: "),
        ("@@\n+a", "Invalid Add File Line: @@"),
    ],
)
def test_create_mode_errors(diff: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        apply_diff("", diff, mode="create")
    assert str(info.value) == message


# -- default mode: newline style, anchors, EOF, fuzz, errors -----------------------------------


@pytest.mark.parametrize(
    ("text", "diff", "expected"),
    [
        # newline style: input with \n decides; without \n the diff decides
        ("a\r\nb\nc", "", "a\r\nb\r\nc"),
        ("abc", "-abc\r\n+x\r\n+y\r\n", "x\r\ny"),
        ("abc", "-abc\n+x\n+y\n", "x\ny"),
        ("a\nb\n", "@@\r\n-a\r\n+A\r\n", "A\nb\n"),
        # every \r before the line end is removed (0.24 uses rstrip("\r"))
        ("a\r\nb\n", "@@\n-a\r\r\n+A", "A\r\nb\r\n"),
        ("a\r\nb\n", "@@\n-a\r\r\r\n+A", "A\r\nb\r\n"),
        # first hunk without @@
        ("a\nb\n", "-a\n+A", "A\nb\n"),
        # a single non-matching anchor (unified-diff header) is ignored
        ("a\nb\n", "@@ -1,2 +1,2 @@\n-a\n+A", "A\nb\n"),
        # an anchor found before the cursor leaves the cursor alone
        ("a\nb\nc\na\nd\n", "@@\n-b\n+B\n@@ a\n-a\n+A", "a\nB\nc\nA\nd\n"),
        # an anchor after the cursor moves it past the anchor line
        ("x\ny\nx\ny\n", "@@ x\n-x\n+X", "x\ny\nX\ny\n"),
        # anchor with strip() fuzz
        (
            "  def f():\n    pass\n",
            "@@ def f():\n-    pass\n+    return 1",
            "  def f():\n    return 1\n",
        ),
        # blank anchors are headers only
        ("a\nb\n", "@@  \n-a\n+A", "A\nb\n"),
        # context with rstrip fuzz, then strip fuzz
        ("a  \nb\n", "@@\n a\n-b\n+B", "a  \nB\n"),
        ("\ta\nb\n", "@@\n  a \n-b\n+B", "\ta\nB\n"),
        # an empty diff line is an empty context line
        ("a\n\nb\n", "@@\n a\n\n-b\n+B", "a\n\nB\n"),
        # deleted lines are compared fuzzily but never re-compared when applied
        ("x  \ny\n", "@@\n-x\n+X", "X\ny\n"),
        # +/- switches do not flush; context does
        ("a\nb\nc\n", "@@\n-a\n+A\n-b\n+B\n c", "A\nB\nc\n"),
        # pure insertion at the top and at the cursor
        ("a\n", "+top", "top\na\n"),
        # EOF with an empty section appends after the last line (the trailing '' included)
        ("a\nb", "@@\n+c\n*** End of File", "a\nb\nc"),
        # EOF fallback then continue with another hunk
        ("a\nb\n", "@@ a\n-b\n+B\n*** End of File\n@@\n+x", "a\nB\nx\n"),
        # the loop stops at *** End Patch / file headers
        ("a\n", "@@\n-a\n+A\n*** End Patch\n@@\n-zzz", "A\n"),
        ("a\n", "@@\n-a\n+A\n*** Update File: other\n-zzz", "A\n"),
    ],
)
def test_default_mode_rules(text: str, diff: str, expected: str) -> None:
    assert apply_diff(text, diff) == expected


@pytest.mark.parametrize(
    ("text", "diff", "message"),
    [
        ("a\nb\n", "-a\n+A\n@@@\n-b", "Invalid Line:\n@@@"),
        ("a\nb\n", "-a\n+A\n***\n-b", "Invalid Line:\n***"),
        ("a\nb\n", "-a\n+A\n*** End of File\n-b\n+B", "Invalid Line:\n-b"),
        ("a\nb\n", "@@\n-a\n*** Something", "Invalid Line: *** Something"),
        ("a\nb\n", "@@\n-a\nxa", "Invalid Line: xa"),
        ("a\nb\n", "@@@\n-b", "Nothing in this section - index=0 @@@"),
        ("a\nb\n", "***", "Nothing in this section - index=0 ***"),
        ("a\nb\n", "@@ a\n@@", "Nothing in this section - index=2 *** End Patch"),
        ("a\nb\n", "@@  \n@@ zz\n-a\n+A", "Invalid Anchor 0:\nzz"),
        ("a\nb\n", "@@ a\n@@ zz\n-b\n+A", "Invalid Anchor 1:\nzz"),
        ("a\nb\nc\nd\n", "@@ c\n@@ a\n-b\n+B", "Invalid Anchor 3:\na"),
        ("a\nb\nc\nd\n", "@@ c\n-d\n+D\n@@ a\n-b", "Invalid Context 4:\nb"),
        ("a\nb\n", "\n-a", "Invalid Context 0:\n\na"),
        ("a\n b\n", "@@\n b \n-a", "Invalid Context 0:\nb \na"),
        ("x\nb\nb\nc\n", "@@\n-b\n+B\n c\n@@\n-b\n*** End of File", "Invalid EOF Context 4:\nb"),
        ("a\nb\n", "@@\n-zz\n-yy\n*** End of File", "Invalid EOF Context 0:\nzz\nyy"),
    ],
)
def test_default_mode_errors(text: str, diff: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        apply_diff(text, diff)
    assert str(info.value) == message


def test_eof_window_before_the_cursor_is_an_overlapping_chunk() -> None:
    # The EOF pass looks at the last window even when it lies before the cursor.
    with pytest.raises(ValueError) as info:
        apply_diff("a\nb\nc", "@@\n-a\n-b\n c\n@@\n-b\n c\n*** End of File")
    assert str(info.value) == "applyDiff: overlapping chunk at 1 (cursor 2)"


def test_eof_context_cannot_use_the_final_newline_as_a_line() -> None:
    # 0.24: an empty context line at EOF needs a real blank last line.
    with pytest.raises(ValueError) as info:
        apply_diff("a\nb\nb\n", "@@\n-b\n+B\n \n*** End of File")
    assert str(info.value) == "Invalid EOF Context 0:\nb\n"
    assert apply_diff("a\nb\n\n", "@@\n-b\n+B\n \n*** End of File") == "a\nB\n\n"


# -- properties ----------------------------------------------------------------------------------

_LINE = st.one_of(
    st.sampled_from(["", "a", "b", "  a"]),  # repeated lines make matching ambiguous
    st.sampled_from(["", "a", "b", "  a", "a  ", "\tb", "x = 1", "}", "@@ z", "***", "+p", "-m"]),
    st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=8),
)


@st.composite
def _edit_pairs(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    old = draw(st.lists(_LINE, max_size=30))
    if draw(st.booleans()):
        old = [*old, ""]  # a trailing newline
    if not old:
        old = [""]
    new = list(old)
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        position = draw(st.integers(0, len(new)))
        if kind == "insert":
            new[position:position] = draw(st.lists(_LINE, min_size=1, max_size=3))
        elif new and position < len(new):
            count = draw(st.integers(1, 3))
            replacement = draw(st.lists(_LINE, max_size=3)) if kind == "replace" else []
            new[position : position + count] = replacement
    if not new:
        new = [""]
    return old, new


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=_edit_pairs(), seed=st.integers(0, 2**32 - 1))
def test_generated_diffs_apply(pair: tuple[list[str], list[str]], seed: int) -> None:
    old, new = pair
    diff = make_v4a_diff(old, new, random.Random(seed))
    assert apply_diff("\n".join(old), diff) == "\n".join(new)


@settings(max_examples=100, deadline=None)
@given(pair=_edit_pairs(), seed=st.integers(0, 2**32 - 1))
def test_generated_diffs_keep_crlf(pair: tuple[list[str], list[str]], seed: int) -> None:
    old, new = pair
    assume(len(old) >= 2)  # the input must contain a line break to decide the style
    diff = make_v4a_diff(old, new, random.Random(seed))
    assert apply_diff("\r\n".join(old), diff) == "\r\n".join(new)


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(_LINE, max_size=20), final=st.booleans(), crlf=st.booleans())
def test_create_mode_roundtrip(lines: list[str], final: bool, crlf: bool) -> None:
    newline = "\r\n" if crlf else "\n"
    body = [*lines, ""] if final else lines
    diff = newline.join("+" + line for line in body)
    expected_newline = newline if crlf and diff else "\n"
    assert apply_diff("", diff, mode="create") == expected_newline.join(body)


# -- differential check against the reference SDK (when installed) -----------------------------

_DIFF_LINE = st.one_of(
    st.sampled_from(
        [
            "@@",
            "@@ a",
            "@@ b",
            "@@  ",
            "@@@",
            "***",
            "*** End Patch",
            "*** Add File: x",
            "-a",
            "-b",
            "+a",
            "+B",
            " a",
            " b",
            "",
            "-",
            "+",
            " ",
            "x",
            "  a",
            "-  a",
            "*** End of File",
        ]
    ),
    _LINE.map(lambda line: "-" + line),
    _LINE.map(lambda line: " " + line),
)
# The engine follows openai-agents 0.24, `*** End of File` included (issue 13, Build 1).
_COMPARE_EOF = True


def _outcome(function: object, *args: str) -> tuple[str, str]:
    try:
        return "ok", function(*args)  # type: ignore[operator]
    except ValueError as exc:
        return "error", str(exc)


@pytest.mark.skipif(reference_apply_diff is None, reason="openai-agents is not installed")
@settings(max_examples=400, deadline=None)
@given(
    text_lines=st.lists(st.sampled_from(["a", "b", " a", "a ", "", "c"]), max_size=6),
    newline=st.sampled_from(["\n", "\r\n"]),
    diff_lines=st.lists(_DIFF_LINE, max_size=7),
    diff_newline=st.sampled_from(["\n", "\r\n"]),
    mode=st.sampled_from(["default", "default", "create"]),
)
def test_same_results_as_reference(
    text_lines: list[str], newline: str, diff_lines: list[str], diff_newline: str, mode: str
) -> None:
    if not _COMPARE_EOF:
        assume("*** End of File" not in diff_lines)
    text = newline.join(text_lines)
    diff = diff_newline.join(diff_lines)
    assert _outcome(apply_diff, text, diff, mode) == _outcome(
        reference_apply_diff, text, diff, mode
    )


@pytest.mark.skipif(reference_apply_diff is None, reason="openai-agents is not installed")
@settings(max_examples=150, deadline=None)
@given(pair=_edit_pairs(), seed=st.integers(0, 2**32 - 1))
def test_generated_diffs_match_reference(pair: tuple[list[str], list[str]], seed: int) -> None:
    old, new = pair
    diff = make_v4a_diff(old, new, random.Random(seed), allow_eof=_COMPARE_EOF)
    text = "\n".join(old)
    assert apply_diff(text, diff) == reference_apply_diff(text, diff)
