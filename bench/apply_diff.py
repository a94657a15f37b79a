"""Benchmark: ``core.tools.v4a.apply_diff`` throughput, and the ratio to the reference SDK's.

Run ``.venv/bin/python bench/apply_diff.py`` (``--quick`` for fewer repeats). Files of 1k, 10k
and 100k lines get diffs of 1, 10 and 100 hunks; two file shapes are measured: ``unique`` (every
line distinct) and ``code`` (many repeated lines such as ``}`` and blank lines, so context
search meets many false starts). When ``openai-agents`` is importable (``agents.apply_diff``),
each case is also run through it, results are checked to be identical, and the speed ratio is
printed (``ratio`` > 1 means Tandem is faster).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.tools.v4a import apply_diff

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
    print(header)
    print("-" * len(header))

    all_same = True
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
    if reference_apply_diff is not None:
        print()
        print(f"identical results on every case: {'yes' if all_same else 'NO'}")
        print(f"slowest ratio (reference time / Tandem time): {worst_ratio:.2f}")
        return 0 if all_same else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
