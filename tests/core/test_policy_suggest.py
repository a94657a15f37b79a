""" "Always allow" suggestions (core.policy.suggest)."""

from __future__ import annotations

import pytest

from core.errors import UserError
from core.policy import DEFAULT_RULES, decide_command, suggest_rule, suggest_rules


@pytest.mark.parametrize(
    ("command", "pattern"),
    [
        ("git diff --stat HEAD", "git diff *"),
        ("git -C sub log --oneline", "git log *"),
        ("git stash list", "git stash list *"),
        ("npm run test -- -k x", "npm run test *"),
        ("npm test", "npm test *"),
        ("uv run pytest -x", "uv run pytest *"),
        ("python -m pytest tests", "python -m pytest *"),
        ("python3 script.py", "python3 *"),
        ("grep -r foo .", "grep *"),
        ("curl https://example.com", "curl *"),
        ("make -j4 test", "make *"),
        ("docker compose up -d", "docker compose up *"),
        ("cargo test --release", "cargo test *"),
        ("CI=1 timeout 60 pytest -q", "pytest *"),
        ("sudo apt-get install x", "sudo apt-get install *"),
        ("cd web && npm run build", "cd *"),
        ("echo $(date)", "echo *"),
        (["bash", "-lc", "go test ./..."], "go test *"),
        ("'my tool' --flag", "'my tool' *"),
    ],
)
def test_suggest_rule_pattern(command, pattern: str):
    rule = suggest_rule(command)
    assert rule.pattern == pattern
    assert rule.action == "allow" and rule.source == "user" and rule.kind == "command"


def test_description_says_what_it_will_match():
    assert suggest_rule("git diff --stat HEAD").description == "any `git diff …` command"


def test_suggested_rule_matches_the_command_it_came_from():
    for command in ("npm run test -- -k x", "curl -s example.com", "sudo apt-get install x"):
        rule = suggest_rule(command)
        assert decide_command(command, "ask", [rule], sandbox_available=False).action == "allow"


def test_suggested_rule_does_not_match_other_subcommands():
    rule = suggest_rule("git diff --stat")
    assert decide_command("git push -f", "ask", [rule], sandbox_available=False).action == "ask"
    rule = suggest_rule("npm run test")
    assert decide_command("npm run deploy", "ask", [rule], sandbox_available=False).action == "ask"


def test_session_source_and_other_actions():
    rule = suggest_rule("curl x", action="deny", source="session")
    assert (rule.action, rule.source) == ("deny", "session")


@pytest.mark.parametrize("command", ["", "   ", "$CMD x", "echo 'unbalanced"])
def test_nothing_to_suggest_raises(command: str):
    with pytest.raises(UserError, match="cannot suggest"):
        suggest_rule(command)


def test_suggest_rules_covers_every_unallowed_command(tmp_path):
    rules = list(DEFAULT_RULES)
    line = "cd web && npm ci && npm run build | tee log"
    # judged in a workspace where `log` is a new file (an existing one would be overwritten)
    got = [r.pattern for r in suggest_rules(line, rules, workspace=tmp_path)]
    assert got == ["npm ci *", "npm run build *", "tee *"]
    assert suggest_rules("git status", rules) == []
    new = suggest_rules("make a; make a -j2; make b", rules)
    assert [r.pattern for r in new] == ["make a *", "make b *"]
