"""*Always allow* on a command line makes that same line run unasked next time (new-user trial).

The prompt for ``cd app && python -m pytest -q 2>&1 | tee log | tail -n 40`` offered "any
`cd …` command": the rule was for the line's first simple command, which was not what asked,
so the same line asked again. The rules now cover every command of the line that no rule
allows, the preview lists them all, and a destructive command still only gets its exact text.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from desktop.controller import _rule_preview
from desktop.run_cli.setup import always_allow_rules, describe_rules
from harnesses.workspace import Workspace

LINE = "cd app && python -m pytest -q tests 2>&1 | grep -v warning | tail -n 40"
TEED = "cd app && python -m pytest -q tests 2>&1 | tee pytest.log | tail -n 40"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return Workspace(root, mode="ask")


def test_the_same_line_runs_unasked_after_always_allow(workspace: Workspace) -> None:
    assert workspace.decide_commands([LINE]).action == "ask"
    rules = always_allow_rules(LINE, workspace)
    patterns = [rule.pattern for rule in rules]
    assert patterns == ["python -m pytest *"]  # not `cd *`; grep and tail are read-only
    workspace.rules.extend(rules)
    assert workspace.decide_commands([LINE]).action == "allow"
    # ... and nothing broader: another program on the same line still asks
    other = LINE.replace("tail -n 40", "python -c 'print(1)'")
    assert workspace.decide_commands([other]).action == "ask"


def test_every_command_that_asked_gets_its_rule(workspace: Workspace) -> None:
    assert [rule.pattern for rule in always_allow_rules(TEED, workspace)] == [
        "python -m pytest *",
        "tee *",
    ]
    workspace.rules.extend(always_allow_rules(TEED, workspace))
    # A rule never vouches for a write in ask mode: the tee into the workspace still asks.
    decision = workspace.decide_commands([TEED])
    assert decision.action == "ask" and "writes to `pytest.log`" in decision.reason


def test_the_preview_names_every_rule(workspace: Workspace) -> None:
    preview = _rule_preview(TEED, workspace)
    assert preview == describe_rules(always_allow_rules(TEED, workspace))
    assert preview == "any `python -m pytest …` command; any `tee …` command"


def test_a_destructive_command_gets_only_its_exact_text(workspace: Workspace) -> None:
    line = "cd app && git reset --hard HEAD~1"
    assert [rule.pattern for rule in always_allow_rules(line, workspace)] == [
        "git reset --hard 'HEAD~1'"  # exactly as written (quoted: `~` is a pattern character)
    ]


def test_a_line_no_rule_can_help_offers_none(workspace: Workspace) -> None:
    assert always_allow_rules("ls -la && git status", workspace) == []  # already allowed
    assert _rule_preview("ls -la && git status", workspace) is None
