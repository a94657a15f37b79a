"""Approval modes and the small literal types shared by the policy engine."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from ..errors import UserError

__all__ = [
    "Action",
    "ApprovalMode",
    "MODE_DESCRIPTIONS",
    "RuleKind",
    "RuleSource",
    "SandboxKind",
    "coerce_mode",
    "strictest",
]

Action = Literal["allow", "ask", "deny"]
"""What the engine decides for a command or a patch (and what a rule asks for)."""

RuleSource = Literal["default", "user", "session"]
"""Where a rule comes from: built in, saved by the user (persisted), or this session only."""

RuleKind = Literal["command", "patch", "guard"]
"""A shell-command prefix rule, a patch path rule, or a built-in guard (never matched)."""

SandboxKind = Literal["read-only", "workspace-write", "none"]
"""The sandbox a command should run in (PRODUCT.md "Sandbox")."""

_ACTION_RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


class ApprovalMode(StrEnum):
    """The per-session approval mode (PRODUCT.md "Safety model").

    Values are the strings shown in settings and stored in sessions.
    """

    READ_ONLY = "read-only"
    ASK = "ask"
    AUTO = "auto"
    FULL = "full"


MODE_DESCRIPTIONS: dict[ApprovalMode, str] = {
    ApprovalMode.READ_ONLY: (
        "No writes: patches are refused and commands run in a read-only sandbox; commands "
        "outside the read-only list and your rules need approval."
    ),
    ApprovalMode.ASK: "Each command and each patch needs approval unless a rule allows it.",
    ApprovalMode.AUTO: (
        "Commands run sandboxed (workspace writable, no network) and patches land at once, "
        "checkpointed; destructive commands and your deny/ask rules still stop."
    ),
    ApprovalMode.FULL: "Everything runs without approval except what a deny rule forbids.",
}

_ALIASES = {
    "read-only": ApprovalMode.READ_ONLY,
    "readonly": ApprovalMode.READ_ONLY,
    "read_only": ApprovalMode.READ_ONLY,
    "ask": ApprovalMode.ASK,
    "auto": ApprovalMode.AUTO,
    "full": ApprovalMode.FULL,
    "full-access": ApprovalMode.FULL,
    "full_access": ApprovalMode.FULL,
    "full access": ApprovalMode.FULL,
}


def coerce_mode(mode: ApprovalMode | str) -> ApprovalMode:
    """Turn a mode or its string form into an :class:`ApprovalMode`.

    Args:
        mode: an ``ApprovalMode`` or one of ``"read-only"``, ``"ask"``, ``"auto"``, ``"full"``
            (also ``"full-access"``/``"read_only"`` spellings, case-insensitive).

    Returns:
        The mode.

    Raises:
        UserError: the string names no mode.
    """
    if isinstance(mode, ApprovalMode):
        return mode
    found = _ALIASES.get(str(mode).strip().lower())
    if found is None:
        choices = ", ".join(repr(m.value) for m in ApprovalMode)
        raise UserError(f"unknown approval mode {mode!r}; expected one of {choices}")
    return found


def strictest(actions: list[Action] | tuple[Action, ...]) -> Action:
    """The strictest of ``actions`` (deny > ask > allow); ``"allow"`` for an empty list."""
    best: Action = "allow"
    for action in actions:
        if _ACTION_RANK[action] > _ACTION_RANK[best]:
            best = action
    return best
