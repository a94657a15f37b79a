"""Rules: construction, matching, defaults and modes (core.policy.rules / defaults / modes)."""

from __future__ import annotations

from typing import Any

import pytest

import core.policy as policy
from core.errors import UserError
from core.policy import (
    DEFAULT_RULES,
    ApprovalMode,
    Rule,
    coerce_mode,
    command_rule,
    matches_command,
    matches_path,
    normalize_patch_path,
    patch_rule,
)


def test_public_names_exist():
    for name in policy.__all__:
        assert hasattr(policy, name), name


def test_modes_have_the_product_values():
    assert [m.value for m in ApprovalMode] == ["read-only", "ask", "auto", "full"]
    assert coerce_mode("Read_Only") is ApprovalMode.READ_ONLY
    assert coerce_mode(ApprovalMode.AUTO) is ApprovalMode.AUTO
    with pytest.raises(UserError):
        coerce_mode("sometimes")


def test_command_rule_shapes():
    star = command_rule("git diff *")
    assert star.tokens == ("git", "diff") and star.any_args
    assert star.description == "any `git diff …` command"
    exact = command_rule("git diff")
    assert exact.tokens == ("git", "diff") and not exact.any_args
    assert exact.description == "exactly `git diff` (no further arguments)"
    assert command_rule("find *", unless=["-delete"]).description.endswith("except with `-delete`")
    assert star.id.startswith("r-") and star.id != command_rule("git diff *").id
    assert star.label == "`git diff *` (user)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pattern": ""}, "empty pattern"),
        ({"pattern": "*"}, "names no program"),
        ({"pattern": "git * diff"}, "last word"),
        ({"pattern": "echo 'unbalanced"}, "cannot split"),
        ({"pattern": "ls", "action": "maybe"}, "unknown action"),
        ({"pattern": "ls", "source": "cloud"}, "unknown source"),
    ],
)
def test_invalid_command_rules_raise_at_construction(kwargs: dict, message: str):
    fields = {"id": "r-1", "action": "allow", "kind": "command", "pattern": "ls"} | kwargs
    with pytest.raises(UserError, match=message):
        Rule(**fields)


@pytest.mark.parametrize("glob", ["/etc/**", "../x", "a/../../b"])
def test_invalid_patch_rules_raise(glob: str):
    with pytest.raises(UserError, match="relative"):
        patch_rule(glob)


@pytest.mark.parametrize(
    ("pattern", "argv", "matches"),
    [
        ("git diff *", ("git", "diff"), True),
        ("git diff *", ("git", "diff", "--stat", "HEAD"), True),
        ("git diff *", ("git", "difftool"), False),
        ("git diff *", ("git",), False),
        ("git diff", ("git", "diff"), True),
        ("git diff", ("git", "diff", "HEAD"), False),
        ("grep *", ("grep", "-r", "x", "."), True),
        ("grep *", ("egrep", "x"), False),
        ("npm run test *", ("npm", "run", "test", "--", "-k", "x"), True),
        ("npm run test *", ("npm", "run", "test:e2e"), False),
        ("pwd *", ("pwdx",), False),
        ("ls *", ("./ls",), False),
    ],
)
def test_prefix_matching(pattern: str, argv: tuple[str, ...], matches: bool):
    assert matches_command(command_rule(pattern), argv) is matches


def test_loose_program_matching_is_for_deny_and_ask_rules():
    rule = command_rule("rm *", "deny")
    assert not matches_command(rule, ("/bin/rm", "-rf", "x"))
    assert matches_command(rule, ("/bin/rm", "-rf", "x"), loose_program=True)
    pinned = command_rule("/opt/tool *", "deny")
    assert not matches_command(pinned, ("/usr/tool",), loose_program=True)


def test_unless_forms():
    rule = command_rule("sort *", unless=["-o", "--output"])
    assert matches_command(rule, ("sort", "-n", "f"))
    assert not matches_command(rule, ("sort", "-o", "out", "f"))
    assert not matches_command(rule, ("sort", "-no", "out", "f"))
    assert not matches_command(rule, ("sort", "--output=out", "f"))
    find = command_rule("find *", unless=["-delete"])
    assert not matches_command(find, ("find", ".", "-delete"))
    assert matches_command(find, ("find", ".", "-name", "x"))


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("docs/**", "docs/a.md", True),
        ("docs/**", "docs/x/y/z.md", True),
        ("docs/**", "doc/a.md", False),
        ("docs/**", "src/docs/a.md", False),
        ("*.md", "README.md", True),
        ("*.md", "docs/README.md", False),
        ("**/*.md", "README.md", True),
        ("**/*.md", "a/b/README.md", True),
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "src/pkg/app.py", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/y/test_a.py", True),
        ("file?.txt", "file1.txt", True),
        ("file[0-9].txt", "file7.txt", True),
        ("file[!0-9].txt", "file7.txt", False),
        ("./docs/**", "docs/a", True),
        ("a+b.txt", "a+b.txt", True),
        ("a+b.txt", "aab.txt", False),
    ],
)
def test_patch_globs(glob: str, path: str, matches: bool):
    assert matches_path(patch_rule(glob), path) is matches


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("docs/a.md", "docs/a.md"),
        ("./docs//a.md", "docs/a.md"),
        ("docs/../src/x.py", "src/x.py"),
        ("docs\\a.md", "docs/a.md"),
        ("/abs/x", None),
        ("C:/x", None),
        ("../x", None),
        ("a/../..", None),
        (".", None),
        (".git/config", None),
        ("./.git/hooks/pre-commit", None),
        (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
    ],
)
def test_normalize_patch_path(raw: str, norm: str | None):
    assert normalize_patch_path(raw) == norm


def test_default_rules_are_read_only_allow_rules():
    ids = [r.id for r in DEFAULT_RULES]
    assert len(ids) == len(set(ids))
    assert all(r.source == "default" and r.action == "allow" for r in DEFAULT_RULES)
    patterns = {r.pattern for r in DEFAULT_RULES}
    for needed in ("ls *", "cat *", "grep *", "rg *", "git status *", "git diff *", "pwd *"):
        assert needed in patterns
    for forbidden in ("rm *", "sh *", "bash *", "python *", "env *", "xargs *"):
        assert forbidden not in patterns
    # sed is allowed only in its read-only form (tests/security/test_sed_read_only.py)
    sed = next(r for r in DEFAULT_RULES if r.pattern == "sed *")
    assert {"-i", "--in-place", "-f", "--file"} <= set(sed.unless)


def test_rule_to_dict_round_trips_through_the_constructor():
    rule = command_rule("find *", "ask", unless=["-delete"], created_at="2025-01-01T00:00:00Z")
    data: Any = rule.to_dict()
    back = Rule(
        id=data["id"],
        action=data["action"],
        kind=data["kind"],
        pattern=data["pattern"],
        description=data["description"],
        unless=tuple(data["unless"]),
        created_at=data["created_at"],
    )
    assert back == rule
