"""Apply a ``*** Begin Patch`` envelope through the Git-aware editor (shell ``apply_patch``, paste).

The envelope (the Codex CLI's format) is parsed with :func:`core.tools.patch_envelope.parse_patch`,
checked as a whole with :func:`~core.tools.patch_envelope.apply_actions` (all or nothing: a
patch that fails anywhere writes nothing), then each file action goes to the
:class:`~harnesses.editor.git_editor.GitAwareEditor` as the equivalent ``ApplyPatchOperation``,
exactly like an ``apply_patch_call``: confinement, the review queue in *ask* mode (the Diff tab),
the stale-write guard. The result reads like the Codex CLI's ``apply_patch`` output.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.tools.patch_envelope import PatchAction, apply_actions, parse_patch
from core.tools.shell import ShellCallOutcome, ShellCommandOutput
from core.tools.shell_patch import resolve_patch_path, success_summary

from .confined import ConfinedWorkspace
from .confinement import ConfinementError

if TYPE_CHECKING:
    from core.context import RunContextWrapper

    from .git_editor import GitAwareEditor

__all__ = ["EnvelopeResult", "apply_envelope", "envelope_actions", "envelope_paths"]

_LETTER = {"create_file": "A", "update_file": "M", "delete_file": "D"}
_PLAIN = re.compile(r"^(Created|Updated|Deleted) [^\n]*?(?: \(all \d+ hunks accepted\))?\.?$")


@dataclass(slots=True)
class EnvelopeResult:
    """What applying one envelope did.

    Attributes:
        landed: ``(letter, path)`` per file written, letter ``A``/``M``/``D`` (Codex's summary
            letters; a moved file under its new path).
        failures: model-visible reasons for what did not land (parse errors, a context that
            does not match, a user rejection, confinement).
        details: the editor's notes beyond "Updated x" (hunks accepted or rejected, the user's
            comment and edits, a stale re-apply).
    """

    landed: list[tuple[str, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """``0`` when everything landed, ``1`` otherwise (the Codex CLI's codes)."""
        return 1 if self.failures or not self.landed else 0

    @property
    def stdout(self) -> str:
        """``"Success. Updated the following files:\\nM a.py\\n"`` plus details, or ``""``."""
        if not self.landed:
            return ""
        text = success_summary(self.landed)
        if self.details:
            text += "\n".join(self.details) + "\n"
        return text

    @property
    def stderr(self) -> str:
        """The failures, one per line block, each ending in a newline; ``""`` when none."""
        return "".join(f"{failure.rstrip()}\n" for failure in self.failures)

    def to_shell_output(self, command: str | None = None) -> ShellCommandOutput:
        """The ``shell_call_output`` entry for this invocation (exit code 0 or 1)."""
        return ShellCommandOutput(
            stdout=self.stdout,
            stderr=self.stderr,
            outcome=ShellCallOutcome(type="exit", exit_code=self.exit_code),
            command=command,
        )


def envelope_actions(text: str, workdir: str | None = None) -> list[PatchAction]:
    """Parse ``text`` and make its paths workspace-relative (``cd`` directory joined).

    Raises:
        ValueError: a malformed envelope (the parser's message).
    """
    actions = parse_patch(text)
    if not workdir:
        return actions
    return [
        dataclasses.replace(
            action,
            path=resolve_patch_path(action.path, workdir),
            move_to=None if action.move_to is None else resolve_patch_path(action.move_to, workdir),
        )
        for action in actions
    ]


def envelope_paths(text: str, workdir: str | None = None) -> list[str]:
    """Every path the envelope touches (rename targets included), for the patch policy;
    ``[]`` when it does not parse (it then writes nothing)."""
    try:
        actions = envelope_actions(text, workdir)
    except ValueError:
        return []
    paths: list[str] = []
    for action in actions:
        paths.extend(p for p in (action.path, action.move_to) if p and p not in paths)
    return paths


async def apply_envelope(
    editor: GitAwareEditor,
    text: str,
    *,
    workdir: str | None = None,
    ctx_wrapper: RunContextWrapper[Any] | None = None,
) -> EnvelopeResult:
    """Apply an envelope through ``editor``; never raises for bad input.

    Steps: parse; check the whole envelope in memory against the files as they are (read
    through a :class:`ConfinedWorkspace`, so a path outside the workspace or into ``.git``
    fails here); if anything fails, nothing is written. Then each action goes to the editor in
    order (review mode: each file waits in the review queue for the user's decision).

    Semantics: the Codex CLI's (each operation carries ``semantics="codex"``, which the editor
    honours, ``docs/patch-semantics.md``); an ``Add File`` never replaces an existing file. The user's per-file and per-hunk decisions in
    review are final, so in *ask* mode part of an envelope may land.

    Args:
        editor: the workspace's editor (its mode decides review or immediate).
        text: the ``*** Begin Patch`` envelope.
        workdir: a ``cd`` directory the paths are relative to (workspace-relative).
        ctx_wrapper: stored on each operation.

    Returns:
        The :class:`EnvelopeResult`.
    """
    result = EnvelopeResult()
    try:
        actions = envelope_actions(text, workdir)
        if not actions:
            raise ValueError("Invalid patch: the patch has no file operations")
        await asyncio.to_thread(_check, editor.workspace, actions)
    except ValueError as exc:
        result.failures.append(f"{exc}\nNothing was written.")
        return result
    for action in actions:
        # an envelope's operation carries semantics="codex", which the editor honours
        operation = action.to_operation(ctx_wrapper)
        outcome = await getattr(editor, action.type)(operation)
        output = (outcome.output or "").strip()
        if outcome.status == "failed":
            result.failures.append(output or f"{action.path}: not applied.")
            continue
        result.landed.append((_LETTER[action.type], action.move_to or action.path))
        if output and not _is_plain(output):
            result.details.append(output)
    return result


def _check(root: Path, actions: list[PatchAction]) -> dict[str, str | None]:
    """The envelope's effect in memory (all or nothing), reading through confinement."""
    with ConfinedWorkspace(root) as tree:

        def read(path: str) -> str | None:
            try:
                with tree.locate(path, follow_leaf=True) as entry:
                    data = entry.read()
            except ConfinementError as exc:
                raise ValueError(str(exc)) from None
            except OSError as exc:
                raise ValueError(f"Could not read {path}: {exc.strerror or exc}.") from None
            if data is None:
                return None
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(
                    f"{path} is not a UTF-8 text file; it cannot be patched."
                ) from None

        return apply_actions(actions, read)


def _is_plain(output: str) -> bool:
    """Whether the editor's output only restates the summary line ("Updated a.py.")."""
    return (
        "User comment:" not in output and "(replacing" not in output and bool(_PLAIN.match(output))
    )
