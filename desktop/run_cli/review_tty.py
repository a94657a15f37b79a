"""Per-hunk review of a proposed patch on a terminal (issue 16, Build item 2).

The window's Diff tab in text: each hunk is shown as a unified diff and answered with
``a`` accept, ``r`` reject, ``e`` edit (type the hunk's new side, its context lines
included, as the window's hunk editor; end with a line holding one ``.``) or ``c`` comment (a note for the model, then the hunk is asked again). The answers
become :meth:`harnesses.editor.ReviewOutcome.per_hunk`, with the comments joined as the
window's *Apply reviewed* does (``"hunk N: text"``); rejecting every hunk rejects the
proposal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from harnesses.editor import HunkDecision, ReviewOutcome

from ..views.ansi import strip_ansi

__all__ = ["review_per_hunk"]

_PROMPT = "  hunk {n}/{total}: accept [a], reject [r], edit [e], comment [c]: "


def review_per_hunk(proposal: Any, out: TextIO, prompt: Callable[[str], str]) -> ReviewOutcome:
    """Ask about each hunk of ``proposal`` (a :class:`harnesses.editor.Proposal`).

    Args:
        out: where the hunks are printed (escape sequences stripped).
        prompt: reads one answer line (``input`` on a terminal); an end of input
            (``EOFError``) rejects the hunks not answered yet.

    Returns:
        The outcome for :meth:`harnesses.editor.ReviewQueue.resolve`.
    """
    decisions: dict[int, HunkDecision] = {}
    notes: list[str] = []
    total = len(proposal.hunks)
    try:
        for hunk in proposal.hunks:
            print(hunk.header, file=out)
            for line in hunk.lines:
                print(strip_ansi(line), file=out)
            while True:
                answer = prompt(_PROMPT.format(n=hunk.id, total=total)).strip().lower()
                if answer in ("a", "accept", "y"):
                    decisions[hunk.id] = HunkDecision(True)
                elif answer in ("r", "reject", "n"):
                    decisions[hunk.id] = HunkDecision(False)
                elif answer in ("e", "edit"):
                    print("  the hunk's new side (context included) is now:", file=out)
                    for line in hunk.new_text.splitlines():
                        print(f"  | {strip_ansi(line)}", file=out)
                    decisions[hunk.id] = HunkDecision(True, _edited(prompt, hunk.new_text))
                elif answer in ("c", "comment"):
                    text = prompt("  comment for the model: ").strip()
                    if text:
                        notes.append(f"hunk {hunk.id}: {text}")
                    continue
                else:
                    print("  answer a, r, e or c", file=out)
                    continue
                break
    except EOFError:
        print("  (end of input: the hunks not answered are rejected)", file=out)
    comment = "; ".join(notes) or None
    if not any(d.accepted for d in decisions.values()):
        return ReviewOutcome.reject_all(comment or "The user rejected every hunk.")
    return ReviewOutcome.per_hunk(decisions, comment=comment)


def _edited(prompt: Callable[[str], str], proposed: str) -> str:
    """The replacement lines typed by the user, ending with a ``.`` line."""
    lines: list[str] = []
    first = "  type the new lines, end with a line '.': "
    while True:
        line = prompt(first if not lines else "")
        first = ""
        if line.rstrip("\r\n") == ".":
            break
        lines.append(line.rstrip("\r\n"))
    ending = "\r\n" if proposed.endswith("\r\n") else "\n"
    return "".join(line + ending for line in lines)
