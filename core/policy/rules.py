"""Allow / ask / deny rules on shell-command prefixes and patch paths, and how they match."""

from __future__ import annotations

import posixpath
import re
import shlex
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import get_args

from ..errors import UserError
from .modes import Action, RuleKind, RuleSource

__all__ = [
    "DESTRUCTIVE_GUARD",
    "PRIVILEGE_GUARD",
    "CONFINEMENT_GUARD",
    "Rule",
    "command_rule",
    "describe_pattern",
    "matches_command",
    "matches_path",
    "new_rule_id",
    "normalize_patch_path",
    "patch_rule",
]

_ANY = "*"


@lru_cache(maxsize=1024)
def _split_pattern(pattern: str) -> tuple[str, ...]:
    return tuple(shlex.split(pattern))


@dataclass(frozen=True, slots=True)
class Rule:
    """One allow / ask / deny rule.

    A ``command`` rule's ``pattern`` is a command prefix in shell words: ``"git diff"`` matches
    exactly ``git diff`` with no further arguments, ``"git diff *"`` matches ``git diff``
    followed by any arguments. Words compare exactly (no globbing inside a word). A ``patch``
    rule's ``pattern`` is a path glob relative to the workspace root (``docs/**``,
    ``**/*.md``; ``*`` stays inside one directory, ``**`` crosses directories). ``guard``
    rules are the engine's built-in guards (destructive commands, sudo, confinement): they are
    reported in decisions but never matched.

    Attributes:
        id: stable identifier, used to revoke (``"r-3f9c0a12"``; defaults are ``"default:…"``).
        action: ``"allow"``, ``"ask"`` or ``"deny"``; precedence is deny > ask > allow.
        kind: ``"command"``, ``"patch"`` or ``"guard"``.
        pattern: the pattern text as the user wrote it (see above).
        source: ``"default"`` (built in), ``"user"`` (persisted) or ``"session"``.
        description: human text saying what the rule matches.
        unless: for command rules, arguments that stop a match when present after the prefix
            (``"-delete"`` exact; ``"--output"`` also matches ``--output=x``; a two-character
            ``"-o"`` also matches a short-option cluster such as ``-no``).
        created_at: ISO-8601 UTC timestamp for persisted rules, else ``None``.

    Raises:
        UserError: at construction, for an unknown action/kind/source, an empty or unparsable
            pattern, a ``*`` anywhere but as the last word, or a patch glob that is absolute
            or climbs out with ``..``.
    """

    id: str
    action: Action
    kind: RuleKind
    pattern: str
    source: RuleSource = "user"
    description: str = ""
    unless: tuple[str, ...] = field(default=())
    created_at: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise UserError("rule id must be a non-empty string")
        if self.action not in get_args(Action):
            raise UserError(f"rule {self.id}: unknown action {self.action!r}")
        if self.kind not in get_args(RuleKind):
            raise UserError(f"rule {self.id}: unknown kind {self.kind!r}")
        if self.source not in get_args(RuleSource):
            raise UserError(f"rule {self.id}: unknown source {self.source!r}")
        if not isinstance(self.pattern, str) or not self.pattern.strip():
            raise UserError(f"rule {self.id}: empty pattern")
        if not isinstance(self.unless, tuple) or not all(
            isinstance(u, str) and u for u in self.unless
        ):
            raise UserError(f"rule {self.id}: 'unless' must be a tuple of non-empty strings")
        if self.kind == "command":
            try:
                words = _split_pattern(self.pattern)
            except ValueError as exc:
                raise UserError(f"rule {self.id}: cannot split {self.pattern!r}: {exc}") from exc
            if not words or words[0] == _ANY:
                raise UserError(f"rule {self.id}: pattern {self.pattern!r} names no program")
            if _ANY in words[:-1]:
                raise UserError(
                    f"rule {self.id}: '*' may only be the last word of {self.pattern!r}"
                )
        elif self.kind == "patch":
            glob = self.pattern.strip()
            if glob.startswith("/") or ".." in glob.split("/"):
                raise UserError(
                    f"rule {self.id}: patch pattern {self.pattern!r} must be relative to the "
                    "workspace and must not contain '..'"
                )
        if not self.description:
            object.__setattr__(
                self, "description", describe_pattern(self.kind, self.pattern, self.unless)
            )

    @property
    def tokens(self) -> tuple[str, ...]:
        """The command prefix words, without a trailing ``*`` (empty for non-command rules)."""
        if self.kind != "command":
            return ()
        words = _split_pattern(self.pattern)
        return words[:-1] if words[-1] == _ANY else words

    @property
    def any_args(self) -> bool:
        """Whether a command rule accepts further arguments (its pattern ends with ``*``)."""
        return self.kind == "command" and _split_pattern(self.pattern)[-1] == _ANY

    @property
    def label(self) -> str:
        """Short text for prompts: ``"`git diff *` (user)"``."""
        return f"`{self.pattern}` ({self.source})"

    def to_dict(self) -> dict[str, object]:
        """The JSON form stored by :class:`~core.policy.store.RuleStore`."""
        data: dict[str, object] = {
            "id": self.id,
            "action": self.action,
            "kind": self.kind,
            "pattern": self.pattern,
            "description": self.description,
        }
        if self.unless:
            data["unless"] = list(self.unless)
        if self.created_at:
            data["created_at"] = self.created_at
        return data


def new_rule_id() -> str:
    """A fresh rule id such as ``"r-3f9c0a12e4"``."""
    return "r-" + uuid.uuid4().hex[:10]


def describe_pattern(kind: RuleKind, pattern: str, unless: Iterable[str] = ()) -> str:
    """Human text for what a pattern matches, as shown by "always allow".

    Returns:
        e.g. ``"any `git diff …` command"``, ``"exactly `pwd` (no further arguments)"``,
        ``"edits to files matching `docs/**`"``.
    """
    if kind == "patch":
        return f"edits to files matching `{pattern}`"
    if kind == "guard":
        return pattern
    words = _split_pattern(pattern)
    if words and words[-1] == _ANY:
        text = f"any `{shlex.join(words[:-1])} …` command"
    else:
        text = f"exactly `{shlex.join(words)}` (no further arguments)"
    excluded = list(unless)
    if excluded:
        text += " except with " + ", ".join(f"`{u}`" for u in excluded)
    return text


def command_rule(
    pattern: str,
    action: Action = "allow",
    *,
    source: RuleSource = "user",
    description: str = "",
    unless: Iterable[str] = (),
    rule_id: str | None = None,
    created_at: str | None = None,
) -> Rule:
    """Build a command-prefix rule (see :class:`Rule`); raises ``UserError`` when invalid."""
    return Rule(
        id=rule_id or new_rule_id(),
        action=action,
        kind="command",
        pattern=pattern.strip(),
        source=source,
        description=description,
        unless=tuple(unless),
        created_at=created_at,
    )


def patch_rule(
    glob: str,
    action: Action = "allow",
    *,
    source: RuleSource = "user",
    description: str = "",
    rule_id: str | None = None,
    created_at: str | None = None,
) -> Rule:
    """Build a patch-path rule; ``glob`` ending in ``/`` means everything below that folder."""
    glob = glob.strip()
    if glob.endswith("/"):
        glob += "**"
    return Rule(
        id=rule_id or new_rule_id(),
        action=action,
        kind="patch",
        pattern=glob,
        source=source,
        description=description,
        created_at=created_at,
    )


DESTRUCTIVE_GUARD = Rule(
    id="destructive-guard",
    action="ask",
    kind="guard",
    pattern="destructive commands ask first and take a checkpoint",
    source="default",
)
PRIVILEGE_GUARD = Rule(
    id="privilege-guard",
    action="ask",
    kind="guard",
    pattern="commands run with sudo/doas ask unless a rule names the wrapper",
    source="default",
)
CONFINEMENT_GUARD = Rule(
    id="confinement",
    action="deny",
    kind="guard",
    pattern="patches may not write outside the workspace or into .git",
    source="default",
)


def _unless_hit(unless: tuple[str, ...], args: tuple[str, ...]) -> bool:
    for arg in args:
        for u in unless:
            if arg == u:
                return True
            if u.startswith("--") and arg.startswith(u + "="):
                return True
            if (
                len(u) == 2
                and u[0] == "-"
                and arg.startswith("-")
                and not arg.startswith("--")
                and u[1] in arg[1:]
            ):
                return True
    return False


def matches_command(rule: Rule, argv: tuple[str, ...], *, loose_program: bool = False) -> bool:
    """Whether a command rule matches one simple command.

    Args:
        rule: a ``command`` rule (other kinds never match).
        argv: the command's words, program first.
        loose_program: also match when only the program's basename equals the rule's program
            (``/bin/rm`` for ``rm``). Used for deny/ask rules so a path cannot dodge them;
            allow rules match the program word exactly, so ``./ls`` is not ``ls``.

    Returns:
        True when ``argv`` starts with the rule's words, has no further words unless the
        pattern ends with ``*``, and contains none of the rule's ``unless`` arguments.
    """
    if rule.kind != "command" or not argv:
        return False
    tokens = rule.tokens
    if len(argv) < len(tokens) or (not rule.any_args and len(argv) != len(tokens)):
        return False
    program = argv[0]
    if program != tokens[0]:
        if not (
            loose_program and "/" not in tokens[0] and posixpath.basename(program) == tokens[0]
        ):
            return False
    if argv[1 : len(tokens)] != tokens[1:]:
        return False
    return not (rule.unless and _unless_hit(rule.unless, argv[len(tokens) :]))


def normalize_patch_path(path: str) -> str | None:
    """A workspace-relative POSIX path, or ``None`` when it escapes the workspace.

    ``./a//b`` becomes ``a/b``; absolute paths, paths that climb above the root with ``..``,
    the root itself and anything under ``.git/`` give ``None``.
    """
    text = path.replace("\\", "/").strip()
    if not text or text.startswith("/") or re.match(r"^[A-Za-z]:/", text):
        return None
    norm = posixpath.normpath(text)
    if norm in (".", "") or norm == ".." or norm.startswith("../"):
        return None
    if norm.split("/")[0] == ".git":
        return None
    return norm


@lru_cache(maxsize=512)
def _glob_regex(glob: str) -> re.Pattern[str]:
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 2 :]:
            end = glob.index("]", i + 2)
            body = glob[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


def matches_path(rule: Rule, path: str) -> bool:
    """Whether a patch rule's glob matches a normalized workspace-relative path.

    The glob is anchored at the workspace root: ``docs/**`` matches ``docs/a/b.md``;
    ``*.md`` matches ``README.md`` but not ``docs/x.md`` (use ``**/*.md``).
    """
    if rule.kind != "patch":
        return False
    glob = rule.pattern.strip()
    if glob.startswith("./"):
        glob = glob[2:]
    return _glob_regex(glob).fullmatch(path) is not None
