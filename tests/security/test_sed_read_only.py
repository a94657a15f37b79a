"""Attack class: sed as a read-only command (issue 16: Codex-style models read files with ``sed -n 'N,Mp'``).

``sed`` is allowed without a prompt only in its provably read-only form: ``-n``, no
``-i``/``--in-place`` in any spelling, scripts from the first operand or ``-e`` (never
``-f``) made only of print commands on line, range or ``/regex/`` addresses, and file
operands that pass the same reach checks as ``cat``. Each attack is first run unjudged, to
prove it really writes, runs or reads what it should not (a marker file appears, or the
outside marker is printed); the promise is that through the policy gate in *ask* and
*read-only* mode it does not happen. The read-only forms must run without a prompt.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.security._policy_box import ASKING_MODES, MARKER, SECRET, Box, make_box

PWNED = "pwned.txt"  # the file a writing or executing spelling creates in the workspace


@pytest.fixture
def box(tmp_path: Path) -> Box:
    made = make_box(tmp_path)
    (made.root / "script.sed").write_text(f"1w {PWNED}\n")
    return made


# (line, what proves the unjudged run did harm): "file" = PWNED appears; "marker" = the outside
# marker is printed; "secret" = a home secret is printed; "edit" = README.md changed.
ATTACKS = [
    pytest.param(f"sed -n '1w {PWNED}' README.md", "file", id="sed-w"),
    pytest.param(f"sed -n '1W {PWNED}' README.md", "file", id="sed-W"),
    pytest.param(f"sed -n 's/hello/bye/w {PWNED}' README.md", "file", id="sed-s-w-flag"),
    pytest.param(f"sed -n 's/hello/bye/gpw {PWNED}' README.md", "file", id="sed-s-flags-then-w"),
    pytest.param(f"sed -n '1e touch {PWNED}' README.md", "file", id="sed-e-command"),
    pytest.param(f"sed -n 's/.*/touch {PWNED}/ep' README.md", "file", id="sed-s-e-flag"),
    pytest.param(f"sed -n -e 1p -e '1w {PWNED}' README.md", "file", id="sed-second-expression"),
    pytest.param(f"sed -n --expression='1w {PWNED}' README.md", "file", id="sed-long-expression"),
    pytest.param(f"sed -n '1p;1w {PWNED}' README.md", "file", id="sed-w-after-print"),
    pytest.param(f"sed -n '1p\n1w {PWNED}' README.md", "file", id="sed-w-after-newline"),
    pytest.param(f"sed -n '1{{w {PWNED}\n}}' README.md", "file", id="sed-w-in-block"),
    pytest.param(f"sed -n '/[/p;//]/w {PWNED}' README.md", "file", id="sed-bracket-hides-w"),
    pytest.param("sed -n -f script.sed README.md", "file", id="sed-f-script"),
    pytest.param("sed -n --file=script.sed README.md", "file", id="sed-file-long"),
    pytest.param("sed -n --fi script.sed README.md", "file", id="sed-file-abbreviated"),
    pytest.param("sed -ni 's/hello/bye/' README.md", "edit", id="sed-in-place-combined"),
    pytest.param("sed -n -i.bak 's/hello/bye/' README.md", "edit", id="sed-in-place-suffix"),
    pytest.param("sed -n --in-place 's/hello/bye/' README.md", "edit", id="sed-in-place-long"),
    pytest.param(
        "sed -n --in-place=.orig 's/hello/bye/' README.md", "edit", id="sed-in-place-long-suffix"
    ),
    pytest.param("sed -n --in 's/hello/bye/' README.md", "edit", id="sed-in-place-abbreviated"),
    pytest.param("sed -n -s -i 's/hello/bye/' README.md", "edit", id="sed-in-place-later"),
    pytest.param("sed -n 's/hello/bye/' -i README.md", "edit", id="sed-in-place-permuted"),
    pytest.param("sed -n 1p {outside}/target.txt", "marker", id="sed-outside-workspace"),
    pytest.param("sed -n 1p ../outside/target.txt", "marker", id="sed-outside-dotdot"),
    pytest.param("cd .. && sed -n 1p outside/target.txt", "marker", id="sed-after-cd"),
    pytest.param("sed -n '1r {outside}/target.txt' README.md", "marker", id="sed-r-reads-outside"),
    pytest.param("sed -n '1R {outside}/target.txt' README.md", "marker", id="sed-R-reads-outside"),
    pytest.param("sed -n 2p ~/.ssh/id_rsa", "secret", id="sed-home-secret"),
    pytest.param("sed -n p < ~/.netrc", "secret", id="sed-redirect-secret"),
]


@pytest.mark.parametrize(("template", "harm"), ATTACKS)
def test_sed_that_writes_runs_or_reaches_asks(box: Box, template: str, harm: str) -> None:
    line = box.fill(template)
    readme = (box.root / "README.md").read_text()
    out = box.run(line)
    assert _harmed(box, harm, out, readme), f"the unjudged run must do harm: {out!r}"
    _undo(box, readme)
    for mode in ASKING_MODES:
        decision = box.decide(line, mode)
        assert decision.action != "allow", (mode, decision.reason)
        out = box.gate(line, mode)
        assert not _harmed(box, harm, out, readme), (mode, out)


UNJUDGEABLE = [
    # No harm of its own here, but not the read-only form: it keeps asking (fails closed).
    pytest.param("sed '1,2p' README.md", id="sed-without-n"),
    pytest.param("sed -n 's/hello/bye/p' README.md", id="sed-substitute"),
    pytest.param("sed -n 'y/abc/xyz/;p' README.md", id="sed-transliterate"),
    pytest.param("sed -n '1a text' README.md", id="sed-append-text"),
    pytest.param("sed -n '\\%foo%p' README.md", id="sed-custom-delimiter"),
    pytest.param("sed -n '# comment' README.md", id="sed-comment"),
    pytest.param("sed -n ':a;p;ba' README.md", id="sed-label-loop"),
    pytest.param("sed -n", id="sed-no-script"),
    pytest.param("sed -n 1p $UNKNOWN", id="sed-unknown-variable"),
]


@pytest.mark.parametrize("line", UNJUDGEABLE)
def test_sed_outside_the_read_only_form_asks(box: Box, line: str) -> None:
    for mode in ASKING_MODES:
        assert box.decide(line, mode).action != "allow", mode


ALLOWED = [
    pytest.param("sed -n '1,2p' README.md", "hello foo", id="range"),
    pytest.param("sed -n 1p src/main.py", "print('foo')", id="one-line"),
    pytest.param("sed -n '$p' README.md", "hello foo", id="last-line"),
    pytest.param("sed -n '1,$p' README.md", "hello foo", id="to-the-end"),
    pytest.param("sed -n -e 1p -e '2,$p' README.md", "hello foo", id="two-expressions"),
    pytest.param("sed -n --expression=1p README.md", "hello foo", id="long-expression"),
    pytest.param("sed --quiet 1p README.md", "hello foo", id="quiet-long"),
    pytest.param("sed -n '1,3p;3q' README.md", "hello foo", id="print-then-quit"),
    pytest.param("sed -n '1,+2p' README.md", "hello foo", id="relative-range"),
    pytest.param("sed -n '0~1p' README.md", "hello foo", id="step"),
    pytest.param("sed -n '/hello/p' README.md", "hello foo", id="regex-address"),
    pytest.param("sed -n '/he\\/llo/p;/hello/,$p' README.md", "hello foo", id="regex-escaped"),
    pytest.param("sed -n '1!p;1p' README.md", "hello foo", id="negated"),
    pytest.param("sed -n -s 1p README.md src/main.py", "print('foo')", id="two-files"),
    pytest.param("sed -n 1p README.md | head -n 1", "hello foo", id="in-a-pipeline"),
    pytest.param("cd src && sed -n 1p main.py", "print('foo')", id="after-cd-inside"),
]


@pytest.mark.parametrize(("line", "expected"), ALLOWED)
def test_read_only_sed_runs_without_a_prompt(box: Box, line: str, expected: str) -> None:
    for mode in ASKING_MODES:
        decision = box.decide(line, mode)
        assert decision.action == "allow", (mode, decision.reason)
        assert expected in box.gate(line, mode)


def _harmed(box: Box, harm: str, out: str, readme: str) -> bool:
    if harm == "file":
        return (box.root / PWNED).exists()
    if harm == "marker":
        return MARKER in out
    if harm == "secret":
        return SECRET in out
    return (box.root / "README.md").read_text() != readme


def _undo(box: Box, readme: str) -> None:
    (box.root / PWNED).unlink(missing_ok=True)
    (box.root / "README.md").write_text(readme)
    for leftover in box.root.glob("README.md?*"):
        leftover.unlink()
