"""The rule an "always allow" answer adds, showing exactly what it will match."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Sequence

from ..errors import UserError
from .command_parser import Segment, parse_command
from .destructive import judge_line
from .modes import Action, RuleSource
from .rules import Rule, command_rule, matches_command
from .wrappers import program_name

__all__ = ["suggest_rule", "suggest_rules"]

_SUBCOMMAND = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+-]*$")
# Programs whose first argument is a subcommand worth keeping in the rule.
# fmt: off
_ONE_LEVEL = frozenset(
    {
        "git", "npm", "pnpm", "yarn", "bun", "uv", "poetry", "pipenv", "pdm", "hatch",
        "rye", "cargo", "go", "docker", "podman", "kubectl", "helm", "terraform", "make",
        "just", "gh", "dotnet", "mvn", "gradle", "gradlew", "pip", "pip3", "conda",
        "brew", "apt", "apt-get", "dnf", "yum", "pacman", "systemctl", "rustup", "deno",
        "composer", "bundle", "rake", "npx", "bunx", "pnpx", "uvx", "nox", "tox",
        "pre-commit", "ruff", "mypy", "codex",
    }
)
# fmt: on
# Subcommands followed by one more meaningful word (``npm run test``, ``docker compose up``).
_TWO_LEVEL: dict[str, frozenset[str]] = {
    "git": frozenset({"stash", "remote", "worktree", "submodule", "notes", "bisect", "lfs"}),
    "npm": frozenset({"run", "run-script", "exec"}),
    "pnpm": frozenset({"run", "exec", "dlx"}),
    "yarn": frozenset({"run", "dlx"}),
    "bun": frozenset({"run", "x"}),
    "uv": frozenset({"run", "pip", "tool"}),
    "poetry": frozenset({"run"}),
    "pipenv": frozenset({"run"}),
    "pdm": frozenset({"run"}),
    "hatch": frozenset({"run"}),
    "rye": frozenset({"run"}),
    "docker": frozenset({"compose"}),
    "gh": frozenset({"pr", "issue", "repo", "run", "workflow", "release"}),
    "cargo": frozenset({"run"}),
}
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


def _prefix(argv: tuple[str, ...]) -> tuple[str, ...]:
    """Program + subcommand words of ``argv`` (``git diff --stat`` → ``("git", "diff")``)."""
    name = program_name(argv[0])
    if _PYTHON.match(name) and len(argv) > 2 and argv[1] == "-m" and _SUBCOMMAND.match(argv[2]):
        return argv[:3]
    words = [argv[0]]
    if name in _ONE_LEVEL and len(argv) > 1 and _SUBCOMMAND.match(argv[1]):
        words.append(argv[1])
        if argv[1] in _TWO_LEVEL.get(name, ()) and len(argv) > 2 and _SUBCOMMAND.match(argv[2]):
            words.append(argv[2])
    return tuple(words)


def _pattern(seg: Segment) -> str:
    prefix = _prefix(seg.argv)
    if seg.privileged and seg.argv[0] in seg.full_argv:
        # Privileged commands only match rules that name the wrapper (see the engine).
        head = seg.full_argv[: seg.full_argv.index(seg.argv[0])]
        prefix = (*head, *prefix)
    return shlex.join(prefix) + " *"


def _exact_pattern(seg: Segment) -> str | None:
    """The pattern naming exactly this command as written (wrappers kept), or ``None``
    when no exact rule can hold it (arguments that arrive at run time, a ``*`` word)."""
    words = seg.full_argv or seg.argv
    if seg.hidden_args or not words or "*" in words:
        return None
    return shlex.join(words)


def _usable(seg: Segment) -> bool:
    return bool(seg.argv) and seg.opaque is None and seg.context != "unparsed"


def _in_order(
    command: str | Sequence[str], workspace: str | os.PathLike[str] | None
) -> list[tuple[Segment, bool]]:
    """``(segment, destructive)`` pairs, the line's own commands before those nested in
    substitutions; ``destructive`` when the guard says it may lose work."""
    parsed = parse_command(command)
    pairs = [
        (seg, harm is not None)
        for seg, harm in zip(parsed.segments, judge_line(parsed, workspace), strict=True)
    ]
    return sorted(pairs, key=lambda p: p[0].context.endswith("substitution"))


def _rule_for(seg: Segment, destructive: bool, action: Action, source: RuleSource) -> Rule | None:
    if not destructive:
        return command_rule(_pattern(seg), action, source=source)
    exact = _exact_pattern(seg)
    return command_rule(exact, action, source=source) if exact is not None else None


def suggest_rules(
    command: str | Sequence[str],
    rules: Iterable[Rule] = (),
    *,
    action: Action = "allow",
    source: RuleSource = "user",
    workspace: str | os.PathLike[str] | None = None,
) -> list[Rule]:
    """One "always allow" rule per distinct command of the line that ``rules`` do not allow.

    A destructive or possibly destructive command (the guard's verdict, judged in
    ``workspace``) only ever gets a rule naming it exactly as written, never a broad
    pattern (issue 12): ``git reset --hard`` gives ``git reset --hard``, not
    ``git reset *``. One whose arguments arrive at run time (``xargs rm``,
    ``find -exec rm {} +``) or hold a ``*`` word gets none.

    Args:
        command: the command line (or argv) the prompt is about.
        rules: rules already in force (user, session and defaults); commands one of their
            allow rules matches get no suggestion (for a destructive command, only an
            exact user or session rule counts).
        action: the new rules' action (``"allow"`` for "always allow").
        source: ``"user"`` (persisted) or ``"session"``.
        workspace: the workspace root, so the guard can tell a path from a branch and a
            new file from an existing one; ``None`` judges conservatively.

    Returns:
        Rules with fresh ids, e.g. ``git diff *`` for ``git diff --stat HEAD`` and
        ``npm run test *`` for ``npm run test -- -k x``; empty when nothing can be
        suggested (unparsable line, computed program names).
    """
    existing = [r for r in rules if r.kind == "command" and r.action == "allow"]
    seen: dict[str, Rule] = {}
    for seg, destructive in _in_order(command, workspace):
        if not _usable(seg):
            continue
        vouching = (
            [r for r in existing if not r.any_args and r.source != "default"]
            if destructive
            else existing
        )
        words = seg.full_argv if destructive else seg.argv
        if any(matches_command(r, words) for r in vouching) and not seg.privileged:
            continue
        rule = _rule_for(seg, destructive, action, source)
        if rule is not None and rule.pattern not in seen:
            seen[rule.pattern] = rule
    return list(seen.values())


def suggest_rule(
    command: str | Sequence[str],
    *,
    action: Action = "allow",
    source: RuleSource = "user",
    workspace: str | os.PathLike[str] | None = None,
) -> Rule:
    """The rule "always allow" would add for ``command``: its first simple command's program
    and subcommand, followed by any arguments; for a destructive (or possibly destructive)
    command, exactly that command as written and nothing broader.

    Args:
        command: the command line (or argv) the prompt is about.
        action: the rule's action (default ``"allow"``).
        source: ``"user"`` (persisted) or ``"session"``.
        workspace: the workspace root the guard judges in (see :func:`suggest_rules`).

    Returns:
        A new :class:`Rule` whose ``description`` says what it will match, e.g. pattern
        ``git diff *`` with description ``"any `git diff …` command"``. A command run with
        ``sudo`` gets a rule that names it (``sudo apt-get install *``); ``rm .env``
        gets ``rm .env`` (described "exactly `rm .env` (no further arguments)").

    Raises:
        UserError: the command has no simple command a rule could match (empty,
            unparsable, a program name computed at run time, or a destructive command
            whose arguments arrive at run time).
    """
    for seg, destructive in _in_order(command, workspace):
        if _usable(seg):
            rule = _rule_for(seg, destructive, action, source)
            if rule is not None:
                return rule
    shown = command if isinstance(command, str) else shlex.join(command)
    raise UserError(f"cannot suggest a rule for {shown!r}: no command a rule could match")
