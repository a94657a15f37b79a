"""``tail -f`` and its spellings never end: no built-in read-only rule vouches for them.

Decision (red-team report, hole 10, minor): they *ask* in the modes that judge reach (ask,
read-only, auto without a sandbox) rather than being refused, since a user may want one run
(``timeout 5 tail -f log`` is a fine command too); an approved one, or one in *auto* with
a sandbox, still ends at the command timeout.
"""

from __future__ import annotations

import pytest

from core.policy import decide_command


@pytest.mark.parametrize(
    "line",
    [
        "tail -f a.txt",
        "tail -F a.txt",
        "tail -n 5 -f a.txt",
        "tail -fn5 a.txt",
        "tail --follow a.txt",
        "tail --follow=name a.txt",
        "tail --fol a.txt",
        "tail a.txt --follow",
    ],
)
@pytest.mark.parametrize("mode", ["ask", "read-only"])
def test_following_tail_asks(tmp_path, line: str, mode: str) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    decision = decide_command(line, mode, sandbox_available=False, workspace=tmp_path)
    assert decision.action == "ask", decision.reason
    assert "never ends" in decision.reason


@pytest.mark.parametrize("line", ["tail a.txt", "tail -n 5 a.txt", "tail -c 10 a.txt"])
def test_plain_tail_is_still_allowed(tmp_path, line: str) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    decision = decide_command(line, "ask", sandbox_available=False, workspace=tmp_path)
    assert decision.action == "allow", decision.reason
