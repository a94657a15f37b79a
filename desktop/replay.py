"""``tandem replay FILE [--repo PATH]``: a recorded session, replayed (issue 16, Build item 3).

The model side comes from the recording (each run's turns through ``ScriptedModel``); the
tools run for real, through ``tandem run``'s own code path (:func:`desktop.headless.
run_headless`), in a checkout of the recorded state: the recorded ``HEAD`` with the dirty
files' patch applied, in a new temporary folder (kept, and printed, so its files can be
looked at), or in ``--repo PATH``. Approvals and reviews are answered with the user's
recorded decisions (:class:`RecordedAnswers`). Then every tool result is compared with the
recording, and each difference is printed with its turn, call id and a short diff.

Exit codes: 0 the replay matches the recording (results that differ only in timings,
timestamps, PIDs or temporary paths are reported as "equal apart from timings" and match), 1
a tool result differs, 2 the file or the checkout is unusable. See docs/record-replay.md.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from core.redaction import redact_text
from harnesses.editor import ReviewOutcome
from harnesses.recording import (
    Mismatch,
    RecordingError,
    apply_in_place,
    compare_results,
    load_export,
    prepare_checkout,
)
from harnesses.sessions import SessionJournal

from .headless import HeadlessOptions, run_headless

__all__ = ["RecordedAnswers", "ReplayReport", "export_command", "replay", "run_replay"]

_DEFAULT_TASK = "Replay of a recorded Tandem session"


@dataclass(slots=True)
class ReplayReport:
    """What a replay did.

    Attributes:
        root: the folder the tools ran in (the checkout, or ``--repo``).
        exit_codes: ``tandem run``'s exit code of each replayed run.
        replayed: the replay's tool output items, in order.
        mismatches: where they really differ from the recording (empty: identical).
        volatile: calls whose results differ only in timings, timestamps, PIDs or temporary
            paths (:func:`harnesses.recording.mask_volatile`): reported, not a failure.
        warnings: what the checkout could not reproduce.
    """

    root: Path
    exit_codes: list[int] = field(default_factory=list)
    replayed: list[dict[str, Any]] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    volatile: list[Mismatch] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 identical, 1 a tool result differs (``tandem replay``'s exit code)."""
        return 1 if self.mismatches else 0


_UNCONFINED = (
    "Not approved: this replay runs without the sandbox, and a recording's approvals are "
    "only used for calls the sandbox confines."
)


class RecordedAnswers:
    """Answers a replay's approvals and reviews with the recorded decisions.

    - An approval gets the decision journaled for its call id (the window's ``allow_once``
      / ``always_allow`` and ``tandem run``'s ``approve`` approve; ``reject`` rejects with the
      recorded message). A call with no recorded decision is approved when the user chose
      "always" earlier in the recording for what a live "always" covers (the same MCP tool;
      the same shell command, standing for the rule it added), and rejected otherwise, with
      a message saying so.
    - Without the sandbox (``confined`` false) every approval but a patch's is rejected.
    - A review gets the recorded hunk decisions of the proposal for the same call id (else
      the next one for the same path): accepted, rejected, edited hunks. A review recorded
      without hunk decisions (``tandem run``'s review) is answered from the recorded result
      of its call: applied in full when the patch was applied, rejected otherwise.

    Args:
        export: a loaded export (:func:`harnesses.recording.load_export`).
    """

    def __init__(self, export: Mapping[str, Any], *, confined: bool = True) -> None:
        self._confined = confined
        decisions = export.get("decisions") or {}
        self._approvals: dict[str, Any] = dict(decisions.get("approvals") or {})
        self._reviews: list[dict[str, Any]] = [
            dict(r) for r in decisions.get("reviews") or [] if isinstance(r, dict)
        ]
        self._results = {
            str(r.get("call_id")): r.get("item") or {} for r in export.get("tool_results") or []
        }
        self._always: set[str] = set()

    def approval(self, item: Any) -> tuple[str, str, str]:
        """``(decision, message, decided_by)`` for a ``ToolApprovalItem`` (as
        ``tandem run``'s approvals: ``approve`` or ``reject``)."""
        call_id = str(getattr(item, "call_id", ""))
        tool = str(getattr(item, "tool_name", ""))
        raw = getattr(item, "raw_item", None)
        kind = raw.get("type") if isinstance(raw, Mapping) else None
        if not self._confined and kind != "apply_patch_call":
            # red team: without the sandbox a recorded "allow" ran `touch <outside>` on the
            # host; the file never stands in for the user where nothing confines the call
            return "reject", _UNCONFINED, "replay (no sandbox)"
        # what "always" covers, as live: an MCP tool for the run; a shell command by a rule
        # for it (approximated by its exact text); nothing else (red team: a tool-wide
        # "always" let any later command of the shell tool run without a decision)
        if kind == "mcp_approval_request":
            always_key = f"mcp:{tool}"
        elif kind == "shell_call":
            action = raw.get("action") if isinstance(raw, Mapping) else None
            commands = action.get("commands") if isinstance(action, Mapping) else None
            always_key = "shell:" + json.dumps(commands, sort_keys=True, default=str)
        else:
            always_key = ""
        record = self._approvals.get(call_id)
        if not isinstance(record, Mapping):
            if always_key and always_key in self._always:
                return "approve", "", "replay (always allowed)"
            return "reject", "Not approved: the recording has no decision for this call.", "replay"
        decision = str(record.get("decision", ""))
        if decision == "always_allow" and always_key:
            self._always.add(always_key)
        if decision == "reject":
            return "reject", str(record.get("message") or ""), "replay"
        return "approve", "", "replay"

    def review(self, proposal: Any, call_id: str) -> ReviewOutcome:
        """The outcome for a submitted ``Proposal`` of call ``call_id``."""
        record = self._take_review(call_id, str(getattr(proposal, "path", "")))
        hunks = (record or {}).get("hunks") or {}
        if hunks:
            chosen: dict[int, bool | str] = {}
            for key, decision in hunks.items():
                if not isinstance(decision, Mapping):
                    continue
                edited = decision.get("edited_text")
                chosen[int(key)] = (
                    edited if isinstance(edited, str) else bool(decision.get("accepted"))
                )
            comments = [
                str(d.get("comment"))
                for d in hunks.values()
                if isinstance(d, Mapping) and d.get("comment")
            ]
            if chosen and not any(chosen.values()):
                return ReviewOutcome.reject_all("; ".join(comments) or None)
            return ReviewOutcome.per_hunk(chosen, comment="; ".join(comments) or None)
        result = self._results.get(call_id) or {}
        if result and result.get("status") != "failed":
            return ReviewOutcome.accept_all(proposal)
        return ReviewOutcome.reject_all(str(result.get("output") or "") or None)

    def _take_review(self, call_id: str, path: str) -> dict[str, Any] | None:
        for matches in (
            lambda r: call_id and r.get("call_id") == call_id,
            lambda r: r.get("path") == path,
        ):
            for index, review in enumerate(self._reviews):
                if matches(review):
                    return self._reviews.pop(index)
        return None


async def replay(
    path: Path,
    *,
    repo: Path | None = None,
    out: TextIO = sys.stdout,
    workdir: Path | None = None,
    mode: str | None = None,
) -> ReplayReport:
    """Replay an export file and compare the tools' results with the recording.

    Args:
        path: the export (``tandem sessions export`` / File > Export session…).
        repo: run in this folder (prepared with :func:`harnesses.recording.apply_in_place`)
            instead of a new checkout.
        out: the replayed runs' lines and the comparison.
        workdir: where the checkout, the per-run session files and the replay's own journal
            go (default: a new ``tandem-replay-*`` temporary folder, kept).
        mode: the approval mode to replay in; default the recorded one, except that a
            recording made in ``full`` mode replays in ``auto`` (sandboxed): the file decides
            neither that its commands run unsandboxed nor (beyond its recorded answers) what
            is approved.

    Raises:
        RecordingError: the file is not an export, or the recorded state cannot be checked
            out.
    """
    export = load_export(path)
    manifest = export["manifest"]
    work = workdir or Path(tempfile.mkdtemp(prefix="tandem-replay-"))
    work.mkdir(parents=True, exist_ok=True)
    if repo is not None:
        root = repo.resolve()
        warnings = apply_in_place(manifest, root)
    else:
        name = Path(str(manifest.get("repo") or "repo")).name
        if name in ("", ".", ".."):  # red team: `/x/..` named the work folder's parent
            name = "repo"
        root = prepare_checkout(manifest, work / name)
        warnings = []
    recorded_mode = str(manifest.get("mode") or "ask")
    trusted = mode == "full"  # the user's own `--mode full`: "if you trust the file"
    if mode is None:
        mode = "auto" if recorded_mode == "full" else recorded_mode
        if recorded_mode == "full":
            warnings.append(
                "recorded in full mode; replaying in auto mode (sandboxed, calls the recording "
                "never asked about are rejected): pass --mode full to replay as recorded"
            )
    if mode not in ("read-only", "ask", "auto", "full"):
        raise RecordingError(f"unknown approval mode {mode!r} in the recording")
    report = ReplayReport(root=root, warnings=warnings)
    for line in warnings:
        print(f"tandem replay: {line}", file=out)
    print(
        f"tandem replay: {len(export['turns'])} recorded turns; the tools run for real in {root} "
        f"(mode {mode}, approvals and reviews answered as recorded)",
        file=out,
    )
    journal_path = work / "replay-journal.sqlite3"
    confined = trusted or (mode != "full" and _sandboxed())
    if not confined:
        line = (
            "no sandbox for this replay: the recording's approvals of commands and tools are "
            "not used (those calls are rejected)"
        )
        report.warnings.append(line)
        print(f"tandem replay: {line}", file=out)
    answers = RecordedAnswers(export, confined=confined)
    for number, run in enumerate(export["runs"], start=1):
        turns = [export["turns"][i] for i in run["turns"]]
        script = work / f"run-{number}.json"
        script.write_text(json.dumps({"turns": turns}, ensure_ascii=False), encoding="utf-8")
        options = HeadlessOptions(
            root,
            str(run.get("task") or "") or _DEFAULT_TASK,
            mode=mode,
            model=f"scripted:{script}",
            max_turns=len(turns) + 1,
            interactive=False,
            journal_path=journal_path,
            answers=answers,
        )
        report.exit_codes.append(await run_headless(options, out=out))
    report.replayed = _replayed_results(journal_path)
    found = compare_results(
        export["tool_results"],
        report.replayed,
        replacements=[(str(root), str(manifest.get("repo") or root))],
    )
    report.mismatches = [m for m in found if m.real]
    report.volatile = [m for m in found if not m.real]
    _print_report(report, len(export["tool_results"]), out)
    return report


def _sandboxed() -> bool:
    """Whether a replay's commands run in the sandbox (settings on and ``bwrap`` works)."""
    from core.settings import load_settings
    from harnesses.shell import sandbox_available

    try:
        return bool(load_settings().sandbox_enabled) and sandbox_available()
    except Exception:  # unreadable settings: assume the worst
        return False


async def run_replay(
    path: Path, repo: Path | None = None, out: TextIO | None = None, mode: str | None = None
) -> int:
    """``tandem replay``: :func:`replay`, its errors as messages; returns the exit code."""
    out = out or sys.stdout
    if repo is not None and not repo.is_dir():
        print(f"tandem replay: {repo} is not a folder", file=sys.stderr)
        return 2
    try:
        report = await replay(path, repo=repo, out=out, mode=mode)
    except RecordingError as exc:
        print(redact_text(f"tandem replay: {exc}"), file=sys.stderr)
        return 2
    return report.exit_code


def _replayed_results(journal_path: Path) -> list[dict[str, Any]]:
    """The replay's top-level tool output items, run after run (its own journal)."""
    if not journal_path.exists():
        return []
    found: list[dict[str, Any]] = []
    with SessionJournal(journal_path) as journal:
        for session in reversed(journal.sessions()):  # oldest first
            for event in journal.events(
                session.id, kinds=["tool_output", "tool_search_output_created"]
            ):
                item = event.payload.get("item")
                if isinstance(item, dict) and not event.payload.get("parent"):
                    found.append(item)
    return found


def _print_report(report: ReplayReport, recorded: int, out: TextIO) -> None:
    for near in report.volatile:
        print(near.describe(), file=out)
    if not report.mismatches:
        apart = (
            f", {len(report.volatile)} of them equal apart from timings" if report.volatile else ""
        )
        print(
            f"tandem replay: the {recorded} tool results match the recording{apart} "
            f"(files in {report.root})",
            file=out,
        )
        return
    print(
        f"tandem replay: {len(report.mismatches)} of the tool results differ from the "
        f"recording (files in {report.root}):",
        file=out,
    )
    for mismatch in report.mismatches:
        print(mismatch.describe(), file=out)


def export_command(
    session_id: str,
    output: Path,
    *,
    journal_path: Path | None = None,
    out: TextIO | None = None,
) -> int:
    """``tandem sessions export ID -o FILE``: write a session's export; returns 0, or 1
    (nothing to export, unwritable file, or an unknown id when called directly) with the
    reason on stderr. ``tandem sessions export`` resolves the id first (a unique prefix; a
    bad id exits 2 there, as ``show`` and ``resume``)."""
    from harnesses.recording import write_export
    from harnesses.sessions import JournalError, default_journal_path

    try:
        with SessionJournal(journal_path or default_journal_path()) as journal:
            written = write_export(journal, session_id, output)
    except (RecordingError, JournalError) as exc:
        print(redact_text(f"tandem sessions export: {exc}"), file=sys.stderr)
        return 1
    data = load_export(written)
    out = out or sys.stdout
    print(
        f"exported session {session_id} ({len(data['turns'])} turns, "
        f"{len(data['tool_results'])} tool results) to {written}; "
        f"`tandem replay {written}` replays it",
        file=out,
    )
    return 0
