"""A journaled session as an export file: a scripted session with its manifest.

The file is JSON (``format`` :data:`EXPORT_FORMAT`)::

    {"format": "tandem-session/1",
     "manifest": {"tandem_version", "model", "mode", "repo", "git", "head", "branch",
                  "patch", "patch_bytes", "patch_truncated", "session_id", "title",
                  "status", "exported_at", "turns_from"},
     "turns": [{"output": [<output items>], "usage": {...}}, ...],
     "runs": [{"task": str, "turns": [0, 1, ...]}, ...],
     "tool_results": [{"turn": 1, "call_id": str, "item": <tool output item>}, ...],
     "decisions": {"approvals": {call_id: {"decision", "message"}},
                   "reviews": [{"call_id", "path", "hunks": {hunk: {...}}, "closed"}]}}

``turns`` is what :class:`core.models.scripted.ScriptedModel` replays (so ``tandem run
--model scripted:FILE`` runs an export); ``runs`` splits the turns by the user's messages;
``tool_results`` is what the tools returned (turn numbers count from 1); ``decisions`` are
the user's answers, which a replay gives again. Turns come from the journal's
``model_response`` events (:mod:`.record`); a session journaled before they existed is
rebuilt from its run items (``turns_from: "run_items"``, usage unknown). Everything passes
through :func:`core.redaction.redact` (registered secrets and secret shapes).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from core.redaction import redact

from .manifest import RecordingError
from .record import MODEL_RESPONSE, RECORDING_BASE

__all__ = [
    "EXPORT_FORMAT",
    "ExportError",
    "build_export",
    "export_session",
    "load_export",
    "write_export",
]

EXPORT_FORMAT = "tandem-session/1"
"""The ``format`` field of an export file."""

ExportError = RecordingError
"""An export cannot be built or read (alias of :class:`~.manifest.RecordingError`)."""

#: run-item events whose item is part of the model's output (RunItemStreamEvent names)
_MODEL_ITEMS = frozenset(
    {
        "message_output_created",
        "reasoning_item_created",
        "tool_called",
        "tool_search_called",
        "mcp_approval_requested",
        "mcp_list_tools",
    }
)
_TOOL_OUTPUTS = frozenset({"tool_output", "tool_search_output_created"})


def build_export(
    events: Iterable[tuple[str, Mapping[str, Any]]],
    *,
    session: Mapping[str, Any] | None = None,
    extra_secrets: Iterable[str] = (),
) -> dict[str, Any]:
    """The export of a session from its journal events.

    Args:
        events: ``(kind, payload)`` in journal order (``SessionJournal.events``).
        session: the session's ``id``, ``title``, ``status`` for the manifest.
        extra_secrets: literal secrets to remove besides the registered ones.

    Returns:
        The export as a JSON-ready dict (see the module docstring), redacted.

    Raises:
        ExportError: the session has no model response to export.
    """
    base: dict[str, Any] = {}
    runs: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    approvals: dict[str, dict[str, Any]] = {}
    reviews: dict[str, dict[str, Any]] = {}
    from_items: list[list[dict[str, Any]]] = []  # fallback turns, from run items
    item_turn_open = False
    responses = False
    for kind, payload in events:
        nested = bool(payload.get("parent"))
        if kind == RECORDING_BASE and not base:
            base = dict(payload)
        elif kind == "user_message":
            runs.append({"task": str(payload.get("text", "")), "turns": []})
            item_turn_open = False
        elif kind == MODEL_RESPONSE and not nested:
            responses = True
            turn = {"output": list(payload.get("items") or [])}
            if isinstance(payload.get("usage"), dict):
                turn["usage"] = payload["usage"]
            turns.append(turn)
            if not runs:
                runs.append({"task": "", "turns": []})
            runs[-1]["turns"].append(len(turns) - 1)
        elif kind in _MODEL_ITEMS and not nested and isinstance(payload.get("item"), dict):
            if not item_turn_open:
                from_items.append([])
                item_turn_open = True
            from_items[-1].append(dict(payload["item"]))
        elif kind in _TOOL_OUTPUTS and not nested and isinstance(payload.get("item"), dict):
            item_turn_open = False
            item = dict(payload["item"])
            results.append({"call_id": str(item.get("call_id", "")), "item": item})
        elif kind == "approval":
            approvals[str(payload.get("call_id", ""))] = {
                "decision": payload.get("decision"),
                "message": payload.get("message") or "",
            }
        elif kind == "proposal":
            reviews[str(payload.get("id"))] = {
                "call_id": str(payload.get("call_id") or ""),
                "path": payload.get("path"),
                "hunks": {},
                "closed": None,
            }
        elif kind == "proposal_call" and str(payload.get("id")) in reviews:
            reviews[str(payload.get("id"))]["call_id"] = str(payload.get("call_id") or "")
        elif kind in ("review_decision", "review_decisions") and str(payload.get("id")) in reviews:
            # one hunk, or a file's Accept all / Reject all: ids by verdict, then the hunks
            # with a comment or an edit in full
            listed = payload.get("hunks") if kind == "review_decisions" else [payload]
            listed = list(listed) if isinstance(listed, list) else []
            if kind == "review_decisions":
                listed[:0] = [
                    {"hunk": i, "accepted": v == "accepted", "rejected": v == "rejected"}
                    for v in ("accepted", "rejected")
                    for i in (payload.get(v) if isinstance(payload.get(v), list) else [])
                ]
            for one in listed:
                if not isinstance(one, Mapping):
                    continue
                try:
                    hunk = str(int(one.get("hunk", 0)))
                except (TypeError, ValueError):
                    continue
                reviews[str(payload.get("id"))]["hunks"][hunk] = {
                    k: one.get(k) for k in ("accepted", "rejected", "edited_text", "comment")
                }
        elif kind == "proposal_closed" and str(payload.get("id")) in reviews:
            reviews[str(payload.get("id"))]["closed"] = payload.get("how")
    if not responses:
        turns = [{"output": output} for output in from_items]
        runs = [{"task": runs[0]["task"] if runs else "", "turns": list(range(len(turns)))}]
    if not turns:
        raise ExportError("the session has no model response to export")
    calls = _call_turns(turns)
    for result in results:
        result["turn"] = calls.get(result["call_id"], 0)
    manifest = {
        **base,
        "session_id": (session or {}).get("id"),
        "title": (session or {}).get("title"),
        "status": (session or {}).get("status"),
        "exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "turns_from": "model_responses" if responses else "run_items",
    }
    export = {
        "format": EXPORT_FORMAT,
        "manifest": manifest,
        "turns": turns,
        "runs": [run for run in runs if run["turns"]],
        "tool_results": [
            {"turn": r["turn"], "call_id": r["call_id"], "item": r["item"]} for r in results
        ],
        "decisions": {"approvals": approvals, "reviews": list(reviews.values())},
    }
    redacted: dict[str, Any] = redact(export, tuple(extra_secrets))
    return redacted


def export_session(
    journal: Any, session_id: str, *, extra_secrets: Iterable[str] = ()
) -> dict[str, Any]:
    """The export of one journaled session (read with ``journal.events(session_id)``).

    Raises:
        ExportError: unknown session, or nothing to export.
    """
    try:
        record = journal.session(session_id)
        events = journal.events(session_id)
    except Exception as exc:  # JournalError: unknown session, unreadable file
        raise ExportError(str(exc)) from exc
    session = {"id": record.id, "title": record.title, "status": record.status}
    return build_export(
        ((e.kind, e.payload) for e in events), session=session, extra_secrets=extra_secrets
    )


def write_export(
    journal: Any,
    session_id: str,
    path: str | os.PathLike[str],
    *,
    extra_secrets: Iterable[str] = (),
) -> Path:
    """Export a session to ``path`` (JSON, UTF-8, mode 0600) and return the path.

    The file is written next to its final name and renamed, so a failure leaves no partial
    file.

    Raises:
        ExportError: nothing to export, or the file cannot be written.
    """
    export = export_session(journal, session_id, extra_secrets=extra_secrets)
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_text(json.dumps(export, ensure_ascii=False, indent=1), encoding="utf-8")
        os.chmod(partial, 0o600)
        os.replace(partial, target)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise ExportError(f"cannot write {target}: {exc}") from exc
    return target


def load_export(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read an export file, checking its shape (untrusted input: it may come from anyone).

    Raises:
        ExportError: unreadable, not JSON, not an export (format), or malformed fields.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExportError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise ExportError(f"{path} is not a Tandem session export (format {EXPORT_FORMAT})")
    turns = data.get("turns")
    if not isinstance(turns, list) or not all(
        isinstance(t, dict) and isinstance(t.get("output", []), list) for t in turns
    ):
        raise ExportError(f"{path}: 'turns' must be a list of objects with an 'output' list")
    if not isinstance(data.get("manifest"), dict):
        raise ExportError(f"{path}: 'manifest' must be an object")
    runs = data.get("runs") or [{"task": "", "turns": list(range(len(turns)))}]
    for run in runs:
        if (
            not isinstance(run, dict)
            or not isinstance(run.get("task", ""), str)
            or not isinstance(run.get("turns"), list)
            or not all(isinstance(i, int) and 0 <= i < len(turns) for i in run["turns"])
        ):
            raise ExportError(f"{path}: 'runs' must list tasks with turn indexes")
    data["runs"] = runs
    results = data.get("tool_results") or []
    if not isinstance(results, list) or not all(
        isinstance(r, dict) and isinstance(r.get("item"), dict) for r in results
    ):
        raise ExportError(f"{path}: 'tool_results' must be a list of objects with an 'item'")
    data["tool_results"] = results
    decisions = data.get("decisions") or {}
    if not isinstance(decisions, dict):
        raise ExportError(f"{path}: 'decisions' must be an object")
    data["decisions"] = {
        "approvals": decisions.get("approvals")
        if isinstance(decisions.get("approvals"), dict)
        else {},
        "reviews": decisions.get("reviews") if isinstance(decisions.get("reviews"), list) else [],
    }
    return data


def _call_turns(turns: list[dict[str, Any]]) -> dict[str, int]:
    """call id → the turn (from 1) whose output made the call."""
    found: dict[str, int] = {}
    for number, turn in enumerate(turns, start=1):
        for item in turn.get("output", []):
            if isinstance(item, dict) and item.get("call_id"):
                found.setdefault(str(item["call_id"]), number)
    return found
