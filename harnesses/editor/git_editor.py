"""``GitAwareEditor``: the workspace's ``ApplyPatchEditor`` with review, stale guard and checkpoints."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from core.tools.editor import ApplyPatchOperation, ApplyPatchResult
from core.tools.v4a_apply import PatchResult, apply_v4a

from .confined import ConfinedEntry, ConfinedWorkspace
from .confinement import ConfinementError, code_paths
from .decisions import Plan, decide, describe
from .hunks import HunkRelocationError, compute_hunks, relocate
from .review import Proposal, ReviewOutcome, ReviewQueue

if TYPE_CHECKING:
    from ..checkpoints import CheckpointStore

__all__ = ["BeforeOverwrite", "EditorMode", "GitAwareEditor"]

_log = logging.getLogger("harnesses")

EditorMode = Literal["review", "immediate"]
"""``review``: proposals wait in the :class:`ReviewQueue` (approval mode *ask*);
``immediate``: operations land at once (modes *auto* / *full access*)."""

_STALE_NOTE = "file changed on disk since the proposal; re-applied against the new content"

BeforeOverwrite = Callable[[list[str]], Awaitable[str | None]]
"""Called with the existing files (relative, POSIX) a write is about to delete or overwrite;
returns ``None`` to let it land, or the model-visible reason it must not."""


def _apply_diff(
    text: str, diff: str, mode: Literal["default", "create"], operation: ApplyPatchOperation
) -> PatchResult:
    """Apply with Tandem's editor rules (``docs/patch-semantics.md``): the reference result
    where openai-agents 0.24 succeeds, reported fallbacks where it refuses, BOM and per-line
    endings kept; an envelope's operation (``semantics="codex"``) follows the Codex CLI."""
    semantics = getattr(operation, "semantics", "v4a")
    return apply_v4a(text, diff, mode, semantics="codex" if semantics == "codex" else "v4a")


class _Refused(Exception):
    """Internal: an operation that must not be applied; the message is model-visible."""


class GitAwareEditor:
    """Applies V4A operations inside ``workspace`` (implements ``ApplyPatchEditor``, spec §5.1).

    Every path is confined to the workspace (no absolute paths, ``..``, escaping symlinks or
    ``.git/``). In ``review`` mode each operation becomes a :class:`Proposal` in ``queue``
    and only the hunks the user accepts land; in ``immediate`` mode the operation lands at
    once. In both modes the write is refused or re-applied if the file changed on disk since
    the proposal (stale-write guard), and, with ``checkpoints``, the working tree is
    checkpointed before the first write that changes it.

    Every read and write goes through one :class:`ConfinedWorkspace` (the workspace root
    opened once; directory fds and ``O_NOFOLLOW`` on the way; temp files made and renamed
    inside the opened directory), so a directory swapped for a symlink mid-write is refused,
    never followed (issue 11, "Writes that cannot escape").

    Failures never raise: they come back as ``ApplyPatchResult(status="failed")`` with a
    message for the model, and the file is left untouched.

    Paths where git finds code it runs outside the sandbox (a ``core.hooksPath`` folder such
    as ``.githooks/`` or husky's ``.husky/``, a config file an ``include.path`` names, a
    bare git dir) are refused in ``immediate`` mode with a reason naming the place, and go
    to review like any patch in ``review`` mode (red-team report, hole 4).
    """

    def __init__(
        self,
        workspace: Path,
        *,
        mode: EditorMode = "review",
        queue: ReviewQueue | None = None,
        checkpoints: CheckpointStore | None = None,
        before_overwrite: BeforeOverwrite | None = None,
    ) -> None:
        """Args:
        workspace: root directory every path is confined to.
        mode: ``"review"`` or ``"immediate"``.
        queue: where proposals wait in review mode (a fresh one if ``None``).
        checkpoints: store used to snapshot the tree before writing, or ``None``.
        before_overwrite: awaited before a delete or an update lands (the file it removes
            or rewrites); a reason it returns refuses the write, nothing written. The
            workspace checkpoints an ignored or not-yet-checkpointed file there, so a
            restore brings it back (red-team finding 8).

        Raises:
            ValueError: unknown ``mode`` or ``workspace`` is not a directory.
            OSError: the workspace cannot be opened (it is held open by a directory fd for
                the editor's lifetime, see :class:`ConfinedWorkspace`).
        """
        if mode not in ("review", "immediate"):
            raise ValueError(f"mode must be 'review' or 'immediate', not {mode!r}")
        workspace = Path(workspace)
        if not workspace.is_dir():
            raise ValueError(f"workspace {str(workspace)!r} is not a directory")
        self._tree = ConfinedWorkspace(workspace)
        self.workspace = self._tree.root
        self._mode: EditorMode = mode
        self.queue = queue if queue is not None else ReviewQueue()
        self.checkpoints = checkpoints
        self.before_overwrite = before_overwrite
        self._write_lock = threading.Lock()

    @property
    def mode(self) -> EditorMode:
        """The current mode; may be switched between operations (approval mode change)."""
        return self._mode

    @mode.setter
    def mode(self, value: EditorMode) -> None:
        if value not in ("review", "immediate"):
            raise ValueError(f"mode must be 'review' or 'immediate', not {value!r}")
        self._mode = value

    async def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """Create ``operation.path`` from a create-mode V4A diff."""
        return await self._handle(operation)

    async def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """Apply a V4A diff to ``operation.path`` (and rename it to ``move_to`` if given)."""
        return await self._handle(operation)

    async def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """Delete ``operation.path``."""
        return await self._handle(operation)

    async def propose(self, operation: ApplyPatchOperation) -> Proposal:
        """Compute the proposal for ``operation`` without writing anything.

        Raises:
            ValueError: the operation is refused (confinement, bad diff, missing file...);
                the message is the model-visible reason.
        """
        try:
            return await asyncio.to_thread(self._propose, operation)
        except _Refused as exc:
            raise ValueError(str(exc)) from None

    async def _handle(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        try:
            proposal = await asyncio.to_thread(self._propose, operation)
        except _Refused as exc:
            return ApplyPatchResult(status="failed", output=str(exc))
        if self._mode == "immediate":
            refusal = await asyncio.to_thread(self._code_path_refusal, proposal)
            if refusal is not None:
                return ApplyPatchResult(status="failed", output=refusal)
            plan = Plan(desired=proposal.new_text, may_rediff=True)
            return await self._land(proposal, plan, summary=None)
        future = self.queue.submit(proposal)
        try:
            outcome = await future
        except asyncio.CancelledError:
            self.queue.withdraw(proposal.id)
            raise
        decided = decide(proposal, outcome)
        if isinstance(decided, ApplyPatchResult):
            return decided
        plan, summary = decided
        return await self._land(proposal, plan, summary=summary)

    async def land_reviewed(self, proposal: Proposal, outcome: ReviewOutcome) -> ApplyPatchResult:
        """Land the user's ``outcome`` for a ``proposal`` no tool call is waiting for (one
        restored from the session journal after a crash or a restart, issue 12).

        The same path as a live review: the decisions become a write plan, a checkpoint is
        taken, and the write goes through the confined tree with the stale-file check
        (the file changed since the proposal: the accepted hunks are re-applied to it, or
        nothing is written). The queue is not involved.

        Returns:
            The result the model would have seen (``"Applied 2 of 3 hunks to a.py ..."``);
            a failure, nothing written, when the proposal's hunks are not the ones its old
            and new text give (a record altered on disk: what lands must be what was shown).
        """
        shown = compute_hunks(proposal.old_text or "", proposal.new_text or "")
        if tuple(shown) != tuple(proposal.hunks):
            return ApplyPatchResult(
                status="failed",
                output=(
                    f"Refused {proposal.path}: the reviewed hunks do not match the change "
                    "they belong to. Nothing was written."
                ),
            )
        decided = decide(proposal, outcome)
        if isinstance(decided, ApplyPatchResult):
            return decided
        plan, summary = decided
        return await self._land(proposal, plan, summary=summary)

    def _code_path_refusal(self, proposal: Proposal) -> str | None:
        """Why an unreviewed (``immediate``) write must not land: the path or rename target
        is where git finds code it runs outside the sandbox, a ``core.hooksPath`` folder
        (``.githooks/``, husky's ``.husky/``), an included config file or a bare git dir
        (:func:`~harnesses.editor.confinement.code_paths`); the shell's sandbox binds the
        same places read-only. In ``review`` mode such a patch goes to the user like any
        other (the user is the approval). Fails closed when the config cannot be read.

        Returns:
            The model-visible refusal, or ``None`` when the write may land.
        """
        try:
            found = code_paths(self.workspace)
            reasons = [
                found.reason(self.workspace, p) for p in (proposal.path, proposal.move_to) if p
            ]
        except Exception as exc:  # unreadable config, or a race on the way: do not guess
            _log.warning("cannot tell the repository's hooks folders", exc_info=True)
            return (
                f"Refused {proposal.path!r}: Tandem could not read the repository's git "
                f"config to tell where git runs hooks from ({exc}). Nothing was written."
            )
        for reason in reasons:
            if reason is not None:
                return (
                    f"{reason} The editor does not write there without review (auto and "
                    "full access modes); ask the user to make this change, or to switch to "
                    "ask mode so it can be reviewed. Nothing was written."
                )
        return None

    # -- proposal -------------------------------------------------------------------------

    def _locate(self, path: str, *, follow_leaf: bool) -> ConfinedEntry:
        try:
            return self._tree.locate(path, follow_leaf=follow_leaf)
        except ConfinementError as exc:
            raise _Refused(_nothing_written(exc)) from None
        except OSError as exc:
            raise _Refused(f"Could not open {path}: {exc.strerror or exc}.") from None

    def _propose(self, op: ApplyPatchOperation) -> Proposal:
        kind = op.type
        if kind not in ("create_file", "update_file", "delete_file"):
            raise _Refused(f"Unknown apply_patch operation: {kind}")
        with self._locate(op.path, follow_leaf=kind != "delete_file") as entry:
            display = entry.path
            move_to: str | None = None
            if op.move_to is not None and kind == "update_file":
                with self._locate(op.move_to, follow_leaf=False) as dest:
                    if dest.path != display:
                        move_to = dest.path
                        if _probe(dest.exists, display):
                            raise _Refused(
                                f"Cannot move {display} to {move_to}: the destination already "
                                "exists. Nothing was written."
                            )
            try:
                data = entry.read()
            except ConfinementError as exc:
                raise _Refused(_nothing_written(exc)) from None
            except OSError as exc:
                raise _Refused(f"Could not read {display}: {exc.strerror or exc}.") from None
        old_text: str | None = None
        if data is not None:
            try:
                old_text = data.decode("utf-8")
            except UnicodeDecodeError:
                if kind != "delete_file":
                    raise _Refused(
                        f"{display} is not a UTF-8 text file; it cannot be patched."
                    ) from None
                old_text = data.decode("utf-8", "replace")
        if kind != "create_file" and data is None:
            raise _Refused(f"{display} does not exist. Nothing was written.")
        new_text: str | None = None
        notes: tuple[str, ...] = ()
        if kind != "delete_file":
            if op.diff is None:
                raise _Refused(f"{kind} for {display} needs a diff. Nothing was written.")
            try:
                if kind == "create_file":
                    applied = _apply_diff("", op.diff, "create", op)
                else:
                    applied = _apply_diff(old_text or "", op.diff, "default", op)
                new_text, notes = applied.text, tuple(applied.notes())
            except ValueError as exc:
                raise _Refused(
                    f"Could not apply the diff to {display}: {exc}\nThe file was not changed."
                ) from None
        hunks = compute_hunks(old_text or "", new_text or "")
        return Proposal(
            id=uuid.uuid4().hex,
            operation=op,
            path=display,
            move_to=move_to,
            old_text=old_text,
            new_text=new_text,
            hunks=tuple(hunks),
            created_at=time.time(),
            base_fingerprint=fingerprint(data),
            notes=notes,
        )

    # -- landing --------------------------------------------------------------------------

    async def _land(
        self, proposal: Proposal, plan: Plan, *, summary: str | None
    ) -> ApplyPatchResult:
        if self.checkpoints is not None:
            try:
                await self.checkpoints.ensure(f"before apply_patch {proposal.path}")
            except Exception:  # a failed snapshot must not block the edit; it is logged
                _log.warning("checkpoint before apply_patch failed", exc_info=True)
        if self.before_overwrite is not None and proposal.kind != "create_file":
            try:
                refusal = await self.before_overwrite([proposal.path])
            except Exception as exc:  # the hook failed: do not remove unprotected
                _log.warning("protecting %s before the write failed", proposal.path, exc_info=True)
                refusal = (
                    f"Refused {proposal.path}: it could not be checkpointed before the write "
                    f"({exc}). Nothing was written."
                )
            if refusal is not None:
                return ApplyPatchResult(status="failed", output=refusal)
        try:
            note = await asyncio.to_thread(self._write, proposal, plan)
        except _Refused as exc:
            return ApplyPatchResult(status="failed", output=str(exc))
        except ConfinementError as exc:
            return ApplyPatchResult(status="failed", output=_nothing_written(exc))
        except OSError as exc:
            return ApplyPatchResult(
                status="failed",
                output=f"Could not write {proposal.path}: {exc.strerror or exc}.",
            )
        output = summary if summary is not None else describe(proposal, plan)
        if proposal.notes:
            output = f"{output}\n" + "\n".join(f"Note: {n}." for n in proposal.notes)
        if note:
            output = f"{output}\nNote: {note}."
        return ApplyPatchResult(status="completed", output=output)

    def _write(self, proposal: Proposal, plan: Plan) -> str | None:
        with self._write_lock:
            return self._write_locked(proposal, plan)

    def _write_locked(self, proposal: Proposal, plan: Plan) -> str | None:
        """Re-walk, re-read, stale-check and write through the same opened directories."""
        kind = proposal.kind
        with self._locate(proposal.path, follow_leaf=kind != "delete_file") as entry:
            current = entry.read()
            desired = plan.desired
            note: str | None = None
            if fingerprint(current) != proposal.base_fingerprint:
                desired = self._reapply(proposal, plan, current)
                note = _STALE_NOTE
            if desired is None:
                entry.delete()
                return note
            data = desired.encode("utf-8")
            if proposal.move_to and proposal.move_to != entry.path:
                with self._locate(proposal.move_to, follow_leaf=False) as dest:
                    try:
                        entry.move_to(dest, data)
                    except FileExistsError:
                        raise _Refused(
                            f"Cannot move {proposal.path} to {proposal.move_to}: the "
                            "destination now exists. Nothing was written."
                        ) from None
            elif current is None:
                try:
                    entry.create(data)
                except FileExistsError:
                    raise _Refused(
                        f"{proposal.path} was created on disk since the proposal; it was not "
                        "overwritten. Read the file and propose an update instead."
                    ) from None
            else:
                entry.write(data)
        return note

    def _reapply(self, proposal: Proposal, plan: Plan, current: bytes | None) -> str | None:
        path = proposal.path
        if proposal.base_fingerprint is None:
            raise _Refused(
                f"{path} was created on disk since the proposal; it was not overwritten. "
                "Read the file and propose an update instead."
            )
        if current is None:
            raise _Refused(f"{path} was deleted on disk since the proposal; nothing was written.")
        if plan.desired is None:
            raise _Refused(
                f"{path} changed on disk since its deletion was proposed; it was not deleted."
            )
        try:
            current_text = current.decode("utf-8")
        except UnicodeDecodeError:
            raise _Refused(
                f"{path} changed on disk since the proposal and is no longer UTF-8 text; "
                "nothing was written."
            ) from None
        old = proposal.old_text or ""
        reasons: list[str] = []
        try:
            return relocate(current_text, compute_hunks(old, plan.desired))
        except HunkRelocationError as exc:
            reasons.append(str(exc))
        diff = proposal.operation.diff
        if plan.may_rediff and diff is not None and proposal.kind == "update_file":
            try:
                return _apply_diff(current_text, diff, "default", proposal.operation).text
            except ValueError as exc:
                reasons.append(f"the diff no longer applies: {exc}")
        raise _Refused(
            f"{path} changed on disk since the proposal and the change could not be re-applied "
            f"to the new content ({'; '.join(reasons)}). Nothing was written; read the file "
            "again and make a new patch."
        )


def fingerprint(data: bytes | None) -> str | None:
    """sha256 hex digest of ``data``; ``None`` for an absent file."""
    return None if data is None else hashlib.sha256(data).hexdigest()


def _nothing_written(exc: ConfinementError) -> str:
    return f"{exc} Nothing was written."


def _probe(check: Callable[[], bool], display: str) -> bool:
    try:
        return check()
    except OSError as exc:
        raise _Refused(f"Could not check {display}: {exc.strerror or exc}.") from None
