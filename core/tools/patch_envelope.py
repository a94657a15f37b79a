"""Multi-file ``*** Begin Patch`` envelopes (Codex CLI, pasted patches): parse, apply atomically."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .editor import ApplyPatchOperation, ApplyPatchOperationType
from .v4a_apply import apply_v4a
from .v4a_engine import Semantics

if TYPE_CHECKING:
    from ..context import RunContextWrapper

__all__ = [
    "EnvelopeOperation",
    "PatchAction",
    "apply_actions",
    "apply_patch_to_files",
    "parse_patch",
]

_BEGIN = "*** Begin Patch"
_END = "*** End Patch"
_ADD = "*** Add File:"
_UPDATE = "*** Update File:"
_DELETE = "*** Delete File:"
_MOVE = "*** Move to:"
_FILE_HEADERS = (_ADD, _UPDATE, _DELETE)
_LINE_SPLIT = re.compile(r"\r?\n")
_HEREDOC_START = re.compile(r"""^\s*(?:\S+\s+)*<<-?\s*(['"]?)(\w+)\1\s*$""")


@dataclass(slots=True)
class PatchAction:
    """One file action of an envelope.

    Attributes:
        type: ``create_file`` (``*** Add File``), ``update_file`` (``*** Update File``) or
            ``delete_file`` (``*** Delete File``).
        path: the file the header names, as written (stripped of surrounding blanks).
        diff: for ``create_file`` the ``+`` lines (a create-mode V4A diff); for ``update_file``
            the hunk body for :func:`~core.tools.v4a.apply_diff` (``""`` for a pure rename);
            ``None`` for ``delete_file``.
        move_to: rename target of an ``update_file`` (``*** Move to:``), else ``None``.
        semantics: how ``diff`` is applied: ``"codex"`` (the Codex CLI's rules, the default
            for an envelope) or ``"v4a"`` (the reference SDK's); see ``docs/patch-semantics.md``.
    """

    type: ApplyPatchOperationType
    path: str
    diff: str | None = None
    move_to: str | None = None
    semantics: Semantics = "codex"

    def to_operation(self, ctx_wrapper: RunContextWrapper[Any] | None = None) -> EnvelopeOperation:
        """The equivalent operation (spec §5.1) for an ``ApplyPatchEditor``.

        It is an :class:`ApplyPatchOperation` that also carries ``semantics``, which Tandem's
        ``GitAwareEditor`` honours (other editors see a plain operation).
        """
        return EnvelopeOperation(
            type=self.type,
            path=self.path,
            diff=self.diff,
            ctx_wrapper=ctx_wrapper,
            move_to=self.move_to,
            semantics=self.semantics,
        )

    def to_wire(self) -> dict[str, Any]:
        """The ``operation`` object of an ``apply_patch_call`` (spec §5.2; ``move_to`` if set)."""
        wire: dict[str, Any] = {"type": self.type, "path": self.path}
        if self.diff is not None:
            wire["diff"] = self.diff
        if self.move_to is not None:
            wire["move_to"] = self.move_to
        return wire


@dataclass(slots=True)
class EnvelopeOperation(ApplyPatchOperation):
    """An :class:`ApplyPatchOperation` from a ``*** Begin Patch`` envelope.

    Attributes:
        semantics: ``"codex"`` (Codex CLI rules) or ``"v4a"``; read by
            ``harnesses.editor.GitAwareEditor`` to pick the rules for ``diff``.
    """

    semantics: Semantics = "codex"


def parse_patch(text: str) -> list[PatchAction]:
    """Parse a ``*** Begin Patch`` ... ``*** End Patch`` envelope into file actions.

    Accepted layout (the Codex CLI ``apply_patch`` grammar)::

        *** Begin Patch
        *** Add File: <path>          followed by lines starting with "+"
        *** Update File: <path>       optionally "*** Move to: <path>", then V4A hunks
        *** Delete File: <path>       no body
        *** End Patch

    Leniency, as the Codex CLI 0.171 (checked against the binary) and for pasted text:
    surrounding blank lines, a Markdown code fence and a shell heredoc wrapper
    (``apply_patch <<'EOF'`` ... ``EOF``) are removed; marker lines (``*** Begin Patch``,
    file headers, ``*** Move to:``, ``*** End Patch``) may be padded with blanks on both
    sides; empty lines that end a file section or stand right before an ``@@`` line are
    dropped (a blank line between chunks or sections is not read as an empty context line:
    write such a context line as ``" "``); ``\\r\\n`` line ends are accepted (create diffs then
    keep ``\\r\\n``).

    Codex CLI semantics carried by the actions (``semantics="codex"``): an added file ends with
    a newline (its diff gets a final ``+`` line, so any V4A editor writes it so); update hunks
    are applied by :func:`core.tools.v4a_apply.apply_v4a` with the Codex rules.

    Args:
        text: the whole envelope.

    Returns:
        The actions, in patch order.

    Raises:
        ValueError: a malformed envelope, with a message naming the line or the file.
    """
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = _unwrap([_marker(line) for line in _LINE_SPLIT.split(text)])
    if not lines or lines[0].strip() != _BEGIN:
        raise ValueError("Invalid patch: the first line must be '*** Begin Patch'")
    if len(lines) < 2 or lines[-1].strip() != _END:
        raise ValueError("Invalid patch: the last line must be '*** End Patch'")

    actions: list[PatchAction] = []
    body = lines[1:-1]
    index = 0
    while index < len(body):
        lineno = index + 2  # 1-based, counting the '*** Begin Patch' line
        header = body[index].rstrip()
        index += 1
        if header.startswith(_ADD):
            path = _header_path(header, _ADD, lineno)
            added, index = _take_body(body, index)
            for offset, line in enumerate(added, start=lineno + 1):
                if not line.startswith("+"):
                    raise ValueError(
                        f"Invalid patch: Add File '{path}': line {offset} does not start "
                        f"with '+': {line!r}"
                    )
            # Codex CLI: every added line ends with a newline; the final "+" says so in V4A.
            diff = newline.join([*added, "+"]) + newline if added else ""
            actions.append(PatchAction("create_file", path, diff))
        elif header.startswith(_UPDATE):
            path = _header_path(header, _UPDATE, lineno)
            move_to = None
            if index < len(body) and body[index].startswith(_MOVE):
                move_to = _header_path(body[index].rstrip(), _MOVE, lineno + 1)
                index += 1
            hunk, index = _take_body(body, index)
            hunk = _drop_blank_before_headers(hunk)
            if not hunk and move_to is None:
                raise ValueError(f"Invalid patch: Update File '{path}' has no hunks")
            diff = "\n".join(hunk) + "\n" if hunk else ""
            actions.append(PatchAction("update_file", path, diff, move_to))
        elif header.startswith(_DELETE):
            path = _header_path(header, _DELETE, lineno)
            extra, index = _take_body(body, index)
            if extra:
                raise ValueError(f"Invalid patch: Delete File '{path}' must not have a body")
            actions.append(PatchAction("delete_file", path))
        elif not header.strip():
            continue
        else:
            raise ValueError(
                f"Invalid patch: line {lineno} is not a file header "
                f"('*** Add File:', '*** Update File:', '*** Delete File:'): {body[index - 1]!r}"
            )
    if not actions:
        raise ValueError(
            "Invalid patch: no file operations between '*** Begin Patch' and '*** End Patch'; "
            "nothing was changed"
        )
    return actions


def apply_patch_to_files(
    text: str,
    read: Callable[[str], str | None],
    *,
    allow_overwrite: bool = False,
) -> dict[str, str | None]:
    """Compute the effect of an envelope on files, in memory, all or nothing.

    Nothing is written: the caller writes the returned texts (and deletes the ``None`` paths)
    only after this returns, so a failure in any action leaves every file untouched.

    Args:
        text: a ``*** Begin Patch`` envelope (see :func:`parse_patch`).
        read: returns a file's current text, or ``None`` when it does not exist.
        allow_overwrite: let ``Add File`` / ``Move to`` replace an existing file (default: error).

    Returns:
        ``{path: new_text}`` for written files and ``{path: None}`` for removed ones (a moved
        file's old path maps to ``None``), in first-touched order. Created files end with a
        newline (``+a`` / ``+b`` gives ``"a\\nb\\n"``, Codex CLI); updates follow
        :func:`core.tools.v4a_apply.apply_v4a` with each action's ``semantics`` (an updated
        file keeps its final-newline state, a UTF-8 BOM and per-line endings).

    Raises:
        ValueError: the envelope is malformed, or an action fails; the message names the file,
            e.g. ``"Update File 'src/a.py': Invalid Context 3:\\nfoo"``.
    """
    return apply_actions(parse_patch(text), read, allow_overwrite=allow_overwrite)


def apply_actions(
    actions: Iterable[PatchAction],
    read: Callable[[str], str | None],
    *,
    allow_overwrite: bool = False,
) -> dict[str, str | None]:
    """Apply parsed actions in memory, in order; see :func:`apply_patch_to_files`.

    Later actions see the results of earlier ones (an added file can then be updated).

    Raises:
        ValueError: an action fails (missing file, existing target, a diff that does not apply).
    """
    changes: dict[str, str | None] = {}

    def current(path: str) -> str | None:
        return changes[path] if path in changes else read(path)

    for action in actions:
        label = _label(action)
        if action.type == "create_file":
            if not allow_overwrite and current(action.path) is not None:
                raise ValueError(f"{label}: file already exists")
            changes[action.path] = _apply(label, "", action.diff, "create", action.semantics)
        elif action.type == "delete_file":
            if current(action.path) is None:
                raise ValueError(f"{label}: file not found")
            changes[action.path] = None
        else:
            original = current(action.path)
            if original is None:
                raise ValueError(f"{label}: file not found")
            updated = (
                _apply(label, original, action.diff, "default", action.semantics)
                if action.diff
                else original
            )
            target = action.move_to
            if target is not None and target != action.path:
                if not allow_overwrite and current(target) is not None:
                    raise ValueError(f"{label}: move target '{target}' already exists")
                changes[action.path] = None
                changes[target] = updated
            else:
                changes[action.path] = updated
    return changes


def _apply(
    label: str,
    original: str,
    diff: str | None,
    mode: Literal["default", "create"],
    semantics: Semantics,
) -> str:
    try:
        return apply_v4a(original, diff or "", mode, semantics=semantics).text
    except ValueError as exc:
        raise ValueError(f"{label}: {exc}") from exc


def _label(action: PatchAction) -> str:
    kind = {"create_file": "Add File", "update_file": "Update File", "delete_file": "Delete File"}
    return f"{kind[action.type]} '{action.path}'"


def _header_path(header: str, prefix: str, line_number: int) -> str:
    path = header[len(prefix) :].strip()
    if not path:
        raise ValueError(f"Invalid patch: line {line_number}: '{prefix}' without a path")
    return path


def _take_body(body: list[str], index: int) -> tuple[list[str], int]:
    """Lines from ``index`` up to the next file header (trailing empty lines dropped), and the
    header's index."""
    start = index
    while index < len(body) and not body[index].startswith(_FILE_HEADERS):
        index += 1
    end = index
    while end > start and body[end - 1] == "":
        end -= 1
    return body[start:end], index


def _marker(line: str) -> str:
    """A line that is an envelope marker once stripped, stripped (Codex CLI trims them)."""
    stripped = line.strip()
    if stripped.startswith((_BEGIN, _END, _MOVE, *_FILE_HEADERS)):
        return stripped
    return line


def _drop_blank_before_headers(hunk: list[str]) -> list[str]:
    """Remove empty lines directly before an ``@@`` line (a blank line between chunks)."""
    out: list[str] = []
    for line in hunk:
        if line.startswith("@@"):
            while out and out[-1] == "":
                out.pop()
        out.append(line)
    return out


def _unwrap(lines: list[str]) -> list[str]:
    """Drop surrounding blank lines, a Markdown fence and a heredoc wrapper."""
    lines = _trim_blank(lines)
    if len(lines) >= 2 and lines[0].lstrip().startswith("```") and lines[-1].strip() == "```":
        lines = _trim_blank(lines[1:-1])
    if len(lines) >= 2:
        match = _HEREDOC_START.match(lines[0])
        if match and lines[-1].strip() == match.group(2):
            lines = _trim_blank(lines[1:-1])
    return lines


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]
