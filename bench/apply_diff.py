"""Benchmark: ``core.tools.v4a.apply_diff`` throughput, and the ratio to the reference SDK's.

Run ``.venv/bin/python bench/apply_diff.py`` (``--quick`` for fewer repeats). Files of 1k, 10k
and 100k lines get diffs of 1, 10 and 100 hunks; two file shapes are measured: ``unique`` (every
line distinct) and ``code`` (many repeated lines such as ``}`` and blank lines, so context
search meets many false starts). When ``openai-agents`` is importable (``agents.apply_diff``),
each case is also run through it, results are checked to be identical, and the speed ratio is
printed (``ratio`` > 1 means Tandem is faster).

Before timing, a comparison corpus is run through both engines and every outcome (result text,
or ``ValueError`` text) must be identical: hand-written cases for ``*** End of File``
(0.24 semantics), pure additions and ``@@`` anchors (stacked, fuzzy, missing), generated diffs
with EOF markers and anchors (``tests/support/v4a_diffgen.py``), and random line soups that
mostly fail, so error texts are compared too. Also timed: an EOF append to each file size.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.tools.v4a import apply_diff
from tests.support.v4a_diffgen import make_v4a_diff

try:
    from agents.apply_diff import apply_diff as reference_apply_diff
    from agents.version import __version__ as reference_version
except ImportError:  # the comparison is optional
    reference_apply_diff = None
    reference_version = None

SIZES = (1_000, 10_000, 100_000)
HUNKS = (1, 10, 100)
CONTEXT = 3


def make_file(lines: int, shape: str) -> list[str]:
    """A synthetic source file of ``lines`` lines (no trailing newline entry)."""
    if shape == "unique":
        return [f"    value_{i} = compute({i}, factor={i % 7})" for i in range(lines)]
    out: list[str] = []
    i = 0
    while len(out) < lines:
        out.extend(
            [
                f"def function_{i}(x):",
                "    if x:",
                f"        y = x * {i % 13}",
                "        return y",
                "    }",
                "",
            ]
        )
        i += 1
    return out[:lines]


def make_diff(original: list[str], hunks: int) -> tuple[str, list[str]]:
    """A V4A diff changing one line in each of ``hunks`` evenly spaced places; returns it and
    the expected new lines."""
    new = list(original)
    out: list[str] = []
    step = len(original) // (hunks + 1)
    for h in range(1, hunks + 1):
        target = h * step
        if original[target].startswith("def "):
            target += 2  # keep the anchor line itself unchanged
        # an anchor must lie before the leading context (it moves the cursor past itself)
        anchor = next(
            (
                original[k]
                for k in range(target - CONTEXT - 1, max(-1, target - CONTEXT - 8), -1)
                if original[k].startswith("def ")
            ),
            None,
        )
        out.append(f"@@ {anchor}" if anchor else "@@")
        out.extend(" " + line for line in original[target - CONTEXT : target])
        out.append("-" + original[target])
        replacement = original[target] + "  # changed"
        out.append("+" + replacement)
        out.extend(" " + line for line in original[target + 1 : target + 1 + CONTEXT])
        new[target] = replacement
    return "\n".join(out) + "\n", new


_HAND_CASES: list[tuple[str, str, str]] = [
    # (tag, input, diff)
    ("eof", "a\n", "@@\n+x\n*** End of File\n"),
    ("eof", "a", "@@\n+x\n*** End of File\n"),
    ("eof", "", "@@\n+x\n*** End of File\n"),
    ("eof", "a\nb\nb\n", "@@\n-b\n+B\n*** End of File\n"),
    ("eof", "a\nb\nb\n", "@@\n-b\n+B\n \n*** End of File\n"),
    ("eof", "a\nb\n\n", "@@\n-b\n+B\n \n*** End of File\n"),
    ("eof", "a\nb\n", "@@ a\n-b\n+B\n*** End of File\n@@\n+x\n"),
    ("eof", "a\r\nb\r\n", "@@\n b\n+c\n*** End of File\n"),
    ("eof", "x\nb\nb\nc\n", "@@\n-b\n+B\n c\n@@\n-b\n*** End of File"),
    ("eof", "a\nb\nc", "@@\n-a\n-b\n c\n@@\n-b\n c\n*** End of File"),
    ("eof", "a\nb\n", "@@\n-zz\n*** End of File\n"),
    ("eof", "a\nb\n", "@@\n*** End of File\n"),
    ("add", "a\nb\n", "+top\n"),
    ("add", "a\nb\n", "@@\n+x\n"),
    ("add", "a\nb\nc\n", "@@ b\n+x\n"),
    ("add", "a\nb\nc\n", "@@\n a\n+x\n@@\n+y\n"),
    ("add", "a\nb\nc\n", "@@\n-a\n+A\n@@\n+y\n"),
    ("add", "", "@@\n+hello\n+world\n"),
    ("anchor", "x\ny\nx\ny\n", "@@ x\n-x\n+X\n"),
    ("anchor", "a\nb\nc\na\nd\n", "@@\n-b\n+B\n@@ a\n-a\n+A\n"),
    ("anchor", "  def f():\n    pass\n", "@@ def f():\n-    pass\n+    return 1\n"),
    ("anchor", "a\nb\n", "@@ -1,2 +1,2 @@\n-a\n+A\n"),
    ("anchor", "a\nb\n", "@@  \n@@ zz\n-a\n+A\n"),
    ("anchor", "a\nb\nc\nd\n", "@@ c\n@@ a\n-b\n+B\n"),
    (
        "anchor",
        "class A:\n def f():\n  r\nclass B:\n def f():\n  r\n",
        "@@ class B:\n@@  def f():\n-  r\n+  q\n",
    ),
    ("anchor", "a\nb\n", "@@ a\n@@\n"),
    ("anchor", "a\r\nb\n", "@@\n-a\r\r\r\n+A\n"),
]
_SOUP = [
    "@@",
    "@@ a",
    "@@ b",
    "@@  ",
    "-a",
    "-b",
    "+x",
    " a",
    " b",
    "",
    " ",
    "-",
    "+",
    "*** End of File",
    "***",
    "  a",
    "-  a",
    "x",
]


def corpus() -> list[tuple[str, str, str]]:
    """The comparison corpus: ``(tag, input, diff)`` triples, deterministic."""
    rng = random.Random(13)
    cases = list(_HAND_CASES)
    lines = ["", "a", "b", "  a", "a  ", "}", "x = 1", "def f():"]
    for _ in range(3000):
        old = [rng.choice(lines) for _ in range(rng.randint(0, 12))]
        old = [*old, ""] if rng.random() < 0.6 else (old or [""])
        new = list(old)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(new))
            if rng.random() < 0.5 or at == len(new):
                new[at:at] = [rng.choice(lines) + " new"]
            else:
                del new[at]
        new = new or [""]
        diff = make_v4a_diff(old, new, rng)
        tag = "gen-eof" if "*** End of File" in diff else "gen"
        newline = "\r\n" if rng.random() < 0.2 else "\n"
        cases.append((tag, newline.join(old), diff))
    for _ in range(3000):
        text = "\n".join(
            rng.choice(["a", "b", " a", "a ", "", "c"]) for _ in range(rng.randint(0, 6))
        )
        diff = "\n".join(rng.choice(_SOUP) for _ in range(rng.randint(0, 7)))
        cases.append(("soup", text, diff))
    return cases


def _outcome(function: Callable[[str, str], str], text: str, diff: str) -> tuple[str, str]:
    try:
        return "ok", function(text, diff)
    except ValueError as exc:
        return "error", str(exc)


def compare_corpus() -> bool:
    """Run the corpus through both engines; print counts per tag; ``True`` if all identical."""
    assert reference_apply_diff is not None
    totals: dict[str, list[int]] = {}
    mismatches: list[tuple[str, str, str]] = []
    for tag, text, diff in corpus():
        ours = _outcome(apply_diff, text, diff)
        theirs = _outcome(reference_apply_diff, text, diff)
        entry = totals.setdefault(tag, [0, 0, 0])
        entry[0] += 1
        entry[1] += ours == theirs
        entry[2] += theirs[0] == "error"
        if ours != theirs:
            mismatches.append((tag, text, diff))
    print(f"{'corpus':<9}{'cases':>7}{'same':>7}{'errors':>8}")
    for tag, (count, same, errors) in totals.items():
        print(f"{tag:<9}{count:>7}{same:>7}{errors:>8}")
    for tag, text, diff in mismatches[:5]:
        print(f"!! differs ({tag}): input={text!r} diff={diff!r}")
    all_same = not mismatches
    total = sum(entry[0] for entry in totals.values())
    print(
        f"identical outcomes (results and error texts) on the corpus: "
        f"{total - len(mismatches)}/{total}"
    )
    print()
    return all_same


def time_per_call(
    function: Callable[[str, str], str], text: str, diff: str, budget: float
) -> float:
    """Median seconds per call over repeats filling about ``budget`` seconds (at least 3)."""
    samples: list[float] = []
    started = time.perf_counter()
    while len(samples) < 3 or (time.perf_counter() - started < budget and len(samples) < 200):
        t0 = time.perf_counter()
        function(text, diff)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing budget per case")
    args = parser.parse_args()
    budget = 0.1 if args.quick else 0.4

    if reference_apply_diff is None:
        print("openai-agents not importable: printing Tandem figures only")
    else:
        print(f"reference: openai-agents {reference_version} (agents.apply_diff.apply_diff)")
    header = f"{'shape':<7}{'lines':>8}{'hunks':>7}{'ms/apply':>11}{'Mlines/s':>10}"
    if reference_apply_diff is not None:
        header += f"{'ref ms':>10}{'ratio':>8}  same"

    corpus_same = compare_corpus() if reference_apply_diff is not None else True
    print(header)
    print("-" * len(header))
    all_same = corpus_same
    worst_ratio = None
    for shape in ("unique", "code"):
        for size in SIZES:
            original = make_file(size, shape)
            text = "\n".join(original) + "\n"
            for hunks in HUNKS:
                diff, new = make_diff(original, hunks)
                expected = "\n".join(new) + "\n"
                result = apply_diff(text, diff)
                if result != expected:
                    print(f"!! wrong result for {shape}/{size}/{hunks}")
                    return 1
                ours = time_per_call(apply_diff, text, diff, budget)
                row = f"{shape:<7}{size:>8}{hunks:>7}{ours * 1000:>11.3f}{size / ours / 1e6:>10.2f}"
                if reference_apply_diff is not None:
                    same = reference_apply_diff(text, diff) == result
                    all_same = all_same and same
                    theirs = time_per_call(reference_apply_diff, text, diff, budget)
                    ratio = theirs / ours
                    worst_ratio = ratio if worst_ratio is None else min(worst_ratio, ratio)
                    row += f"{theirs * 1000:>10.3f}{ratio:>8.2f}  {'yes' if same else 'NO'}"
                print(row)
    for size in SIZES:  # an EOF append: the 0.24 end-of-file window
        original = make_file(size, "code")
        text = "\n".join(original) + "\n"
        diff = "@@\n " + original[-1] + "\n+appended\n*** End of File\n"
        result = apply_diff(text, diff)
        ours = time_per_call(apply_diff, text, diff, budget)
        row = f"{'eof':<7}{size:>8}{1:>7}{ours * 1000:>11.3f}{size / ours / 1e6:>10.2f}"
        if reference_apply_diff is not None:
            same = reference_apply_diff(text, diff) == result
            all_same = all_same and same
            theirs = time_per_call(reference_apply_diff, text, diff, budget)
            ratio = theirs / ours
            worst_ratio = ratio if worst_ratio is None else min(worst_ratio, ratio)
            row += f"{theirs * 1000:>10.3f}{ratio:>8.2f}  {'yes' if same else 'NO'}"
        print(row)
    if reference_apply_diff is not None:
        print()
        print(f"identical results on every case: {'yes' if all_same else 'NO'}")
        print(f"slowest ratio (reference time / Tandem time): {worst_ratio:.2f}")
        return 0 if all_same else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
