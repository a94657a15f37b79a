"""The approval policy engine: modes, allow/ask/deny rules, the shell parser and the guards.

Pure Python (no Qt, no subprocess): the runner and the GUI call :func:`decide_command` and
:func:`decide_patch`, offer :func:`suggest_rule` for "always allow", and keep user rules in a
:class:`RuleStore` (PRODUCT.md "Safety model").
"""

from __future__ import annotations

from .command_parser import ParsedCommand, Segment, parse_command
from .defaults import DEFAULT_RULES, default_rules
from .destructive import BUILD_DIRS, destructive_harm, destructive_reason, inside_build_dir
from .engine import Decision, SegmentDecision, decide_command, decide_patch
from .harm import Harm
from .modes import (
    MODE_DESCRIPTIONS,
    Action,
    ApprovalMode,
    RuleKind,
    RuleSource,
    SandboxKind,
    coerce_mode,
)
from .rules import (
    CONFINEMENT_GUARD,
    DESTRUCTIVE_GUARD,
    PRIVILEGE_GUARD,
    Rule,
    command_rule,
    describe_pattern,
    matches_command,
    matches_path,
    normalize_patch_path,
    patch_rule,
)
from .store import RuleStore
from .suggest import suggest_rule, suggest_rules

__all__ = [
    "Action",
    "ApprovalMode",
    "BUILD_DIRS",
    "CONFINEMENT_GUARD",
    "DEFAULT_RULES",
    "DESTRUCTIVE_GUARD",
    "Decision",
    "Harm",
    "MODE_DESCRIPTIONS",
    "PRIVILEGE_GUARD",
    "ParsedCommand",
    "Rule",
    "RuleKind",
    "RuleSource",
    "RuleStore",
    "SandboxKind",
    "Segment",
    "SegmentDecision",
    "coerce_mode",
    "command_rule",
    "decide_command",
    "decide_patch",
    "default_rules",
    "describe_pattern",
    "destructive_harm",
    "destructive_reason",
    "inside_build_dir",
    "matches_command",
    "matches_path",
    "normalize_patch_path",
    "parse_command",
    "patch_rule",
    "suggest_rule",
    "suggest_rules",
]
