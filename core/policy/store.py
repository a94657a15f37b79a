"""Persist the user's rules in a small JSON file (atomic writes, mode 0600)."""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._util import write_private_file
from ..errors import UserError
from .rules import Rule

__all__ = ["FORMAT_VERSION", "RuleStore"]

FORMAT_VERSION = 1
"""The ``version`` field written to rule files."""

_Rules = list[Rule]  # the method RuleStore.list shadows the builtin inside the class


class RuleStore:
    """The user's persisted rules (source ``"user"``), in one JSON file.

    File shape::

        {"version": 1, "rules": [{"id": "r-3f9c0a12e4", "action": "allow", "kind": "command",
                                  "pattern": "git diff *", "description": "any `git diff …`
                                  command", "unless": [], "created_at": "2025-…Z"}]}

    Every call reads the file afresh (so edits from another window show up) and every change
    is written to a temporary file in the same folder, flushed, then moved over the old one
    with ``os.replace``, so a crash leaves either the old or the new file, never a torn one.
    The file is created with mode 0600. A file that cannot be read is never overwritten:
    changes raise instead. Calls are serialised within the process; two processes changing
    the file at the same moment may lose one change.

    Args:
        path: the JSON file; it and its folder are created on the first change.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"RuleStore({str(self.path)!r})"

    # -- reading ---------------------------------------------------------------------------
    def list(self) -> _Rules:
        """The stored rules, in the order they were added.

        Raises:
            UserError: the file exists but cannot be read, is not valid JSON, or holds a
                malformed rule; the message names the file and the problem.
        """
        with self._lock:
            return self._load()

    def get(self, rule_id: str) -> Rule | None:
        """The stored rule with ``rule_id``, or ``None``."""
        return next((r for r in self.list() if r.id == rule_id), None)

    def _load(self) -> _Rules:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read rules file {self.path}: {exc}") from exc
        if not text.strip():
            return []
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(
                f"rules file {self.path} is not valid JSON (line {exc.lineno}, column "
                f"{exc.colno}: {exc.msg}); fix or remove it"
            ) from exc
        if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
            raise UserError(f"rules file {self.path} must hold an object with a 'rules' list")
        version = data.get("version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise UserError(
                f"rules file {self.path} has version {version!r}; this Tandem reads version "
                f"{FORMAT_VERSION}"
            )
        rules: _Rules = []
        seen: set[str] = set()
        for index, entry in enumerate(data["rules"]):
            rule = self._rule(entry, index)
            if rule.id in seen:
                raise UserError(f"rules file {self.path}: rule #{index + 1} repeats id {rule.id!r}")
            seen.add(rule.id)
            rules.append(rule)
        return rules

    def _rule(self, entry: Any, index: int) -> Rule:
        where = f"rules file {self.path}: rule #{index + 1}"
        if not isinstance(entry, dict):
            raise UserError(f"{where} must be an object, not {type(entry).__name__}")
        missing = [k for k in ("id", "action", "kind", "pattern") if k not in entry]
        if missing:
            raise UserError(f"{where} lacks {', '.join(repr(m) for m in missing)}")
        for key in ("id", "action", "kind", "pattern", "description", "created_at"):
            if key in entry and entry[key] is not None and not isinstance(entry[key], str):
                raise UserError(f"{where}: {key!r} must be a string")
        unless = entry.get("unless", [])
        if not isinstance(unless, list) or not all(isinstance(u, str) for u in unless):
            raise UserError(f"{where}: 'unless' must be a list of strings")
        try:
            return Rule(
                id=entry["id"],
                action=entry["action"],
                kind=entry["kind"],
                pattern=entry["pattern"],
                source="user",
                description=entry.get("description") or "",
                unless=tuple(unless),
                created_at=entry.get("created_at"),
            )
        except UserError as exc:
            raise UserError(f"{where}: {exc.message}") from exc

    # -- changing --------------------------------------------------------------------------
    def add(self, rule: Rule) -> Rule:
        """Store ``rule`` and return the stored rule.

        A rule equal to a stored one (same kind, action, pattern and ``unless``) is not
        duplicated: the stored one is returned. ``created_at`` is stamped when missing.

        Raises:
            UserError: ``rule`` is not a ``"user"`` command/patch rule, its id is taken by a
                different rule, or the file cannot be read or written.
        """
        if rule.source != "user" or rule.kind == "guard":
            raise UserError(
                f"only user command/patch rules are stored; rule {rule.id} is a "
                f"{rule.source} {rule.kind} rule"
            )
        with self._lock:
            rules = self._load()
            for old in rules:
                if (old.kind, old.action, old.pattern, old.unless) == (
                    rule.kind,
                    rule.action,
                    rule.pattern,
                    rule.unless,
                ):
                    return old
                if old.id == rule.id:
                    raise UserError(f"rules file {self.path} already has a rule {rule.id!r}")
            if rule.created_at is None:
                stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                rule = Rule(
                    rule.id,
                    rule.action,
                    rule.kind,
                    rule.pattern,
                    rule.source,
                    rule.description,
                    rule.unless,
                    stamp,
                )
            rules.append(rule)
            self._save(rules)
            return rule

    def revoke(self, rule_id: str) -> Rule:
        """Remove the rule ``rule_id`` and return it.

        Raises:
            UserError: no stored rule has that id, or the file cannot be read or written.
        """
        with self._lock:
            rules = self._load()
            for index, rule in enumerate(rules):
                if rule.id == rule_id:
                    del rules[index]
                    self._save(rules)
                    return rule
        raise UserError(f"rules file {self.path} has no rule {rule_id!r}")

    def _save(self, rules: _Rules) -> None:
        payload = json.dumps(
            {"version": FORMAT_VERSION, "rules": [r.to_dict() for r in rules]},
            indent=2,
            ensure_ascii=False,
        )
        try:
            write_private_file(self.path, payload + "\n")
        except OSError as exc:
            raise UserError(f"cannot write rules file {self.path}: {exc}") from exc
