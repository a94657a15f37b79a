"""Project instructions: the user's global ``AGENTS.md`` files and the repository's, capped.

The order and the override rule follow the Codex CLI's AGENTS.md guide
(developers.openai.com/codex/guides/agents-md; anchors-products.md): first the global files
(Tandem's config dir, then ``$CODEX_HOME``, default ``~/.codex``), then one file per folder
from the repository root (the nearest folder holding ``.git``) down to the working directory.
In each folder an ``AGENTS.override.md`` replaces its sibling ``AGENTS.md``. The combined text
is capped (32 KiB by default, :attr:`core.settings.Settings.agents_md_cap_bytes`); what the cap
cuts is said, in the text and in :class:`InstructionFile`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "AGENTS_FILE",
    "DEFAULT_CAP_BYTES",
    "OVERRIDE_FILE",
    "InstructionFile",
    "ProjectInstructions",
    "codex_home",
    "discover_instruction_files",
    "instructions_with_agents_md",
    "load_instructions",
]

AGENTS_FILE = "AGENTS.md"
OVERRIDE_FILE = "AGENTS.override.md"
DEFAULT_CAP_BYTES = 32 * 1024
"""The total cap on the instruction files' bytes (Codex's ``project_doc_max_bytes``)."""

Scope = Literal["tandem", "codex", "project"]
_SCOPE_LABEL = {"tandem": "global, Tandem", "codex": "global, Codex", "project": "project"}


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One instruction file found for a run.

    Attributes:
        path: the file (absolute).
        scope: ``"tandem"`` (Tandem's config dir), ``"codex"`` (``$CODEX_HOME``) or
            ``"project"`` (a folder from the repository root to the working directory).
        size: its size on disk (bytes).
        used: how many of its bytes went into the instructions (bytes; ``< size`` when the
            cap cut it, 0 when the cap was already reached or it could not be read).
        replaces: the sibling ``AGENTS.md`` an ``AGENTS.override.md`` replaced, else ``None``.
        error: why it was not read (unreadable, a link leaving the repository...), else ``None``.
    """

    path: Path
    scope: Scope
    size: int
    used: int
    replaces: Path | None = None
    error: str | None = None

    @property
    def truncated(self) -> bool:
        """Whether the cap cut (or skipped) this file."""
        return self.error is None and self.used < self.size

    def label(self, root: Path | None = None) -> str:
        """The path shown to the user: relative to ``root`` for project files."""
        if root is not None and self.scope == "project":
            try:
                return str(self.path.relative_to(root))
            except ValueError:
                pass
        home = Path.home()
        try:
            return "~/" + str(self.path.relative_to(home))
        except ValueError:
            return str(self.path)


@dataclass(frozen=True, slots=True)
class ProjectInstructions:
    """The instruction files of one run and the text they add to the agent's instructions.

    Attributes:
        files: in load order (global first, the working directory's last).
        text: the block appended to the agent's instructions (``""`` when no file was found).
        cap_bytes: the total cap applied (bytes).
        root: the working directory the files were looked up for.
        repository: the repository root (project files are shown relative to it).
        sections: one per file of ``files``, in the same order: the file's part of ``text``
            (heading, body, truncation note), ``""`` when it added nothing (the Codex
            delegate passes on all but the ``codex`` ones, :mod:`harnesses.codex.instructions`).
    """

    files: tuple[InstructionFile, ...]
    text: str
    cap_bytes: int
    root: Path
    repository: Path
    sections: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        """Whether the cap cut any file."""
        return any(f.truncated for f in self.files)

    @property
    def total_bytes(self) -> int:
        """The bytes included from all files."""
        return sum(f.used for f in self.files)

    def summary_lines(self) -> list[str]:
        """One line per file for a terminal, e.g. ``AGENTS.md (project, 1.2 KiB)``; a line
        saying none was found when there is none."""
        if not self.files:
            return [f"no {AGENTS_FILE} found"]
        return [f"{f.label(self.repository)} ({describe(f)})" for f in self.files]


def describe(file: InstructionFile) -> str:
    """``"project, 1.2 KiB"``, ``"global, Codex, 40.0 KiB, truncated to 32.0 KiB"``..."""
    parts = [_SCOPE_LABEL[file.scope], _size(file.size)]
    if file.replaces is not None:
        parts.append(f"replaces {file.replaces.name}")
    if file.error is not None:
        parts.append(f"not read: {file.error}")
    elif file.truncated:
        parts.append(
            "skipped: cap reached" if file.used == 0 else f"truncated to {_size(file.used)}"
        )
    return ", ".join(parts)


def codex_home() -> Path:
    """``$CODEX_HOME``, default ``~/.codex`` (the Codex CLI's rule)."""
    value = os.environ.get("CODEX_HOME", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".codex"


def _repository_root(workdir: Path) -> Path:
    """The nearest folder at or above ``workdir`` holding ``.git`` (a folder or a worktree's
    file: Codex's default root marker); ``workdir`` itself when there is none."""
    for folder in (workdir, *workdir.parents):
        if (folder / ".git").exists():
            return folder
    return workdir


def _pick(folder: Path) -> tuple[Path, Path | None] | None:
    override, plain = folder / OVERRIDE_FILE, folder / AGENTS_FILE
    if override.is_file():
        return override, plain if plain.is_file() else None
    if plain.is_file():
        return plain, None
    return None


def discover_instruction_files(
    workdir: Path,
    *,
    config_dir: Path | None = None,
    codex_dir: Path | None = None,
) -> list[tuple[Path, Scope, Path | None]]:
    """The instruction files for ``workdir``, in load order, without reading them.

    Args:
        workdir: the working directory (the opened folder).
        config_dir: Tandem's config dir (default :func:`core.settings.settings_dir`).
        codex_dir: the Codex home (default :func:`codex_home`).

    Returns:
        ``(path, scope, replaced sibling or None)`` triples.
    """
    if config_dir is None:
        from core.settings import settings_dir

        config_dir = settings_dir()
    workdir = workdir.resolve()
    found: list[tuple[Path, Scope, Path | None]] = []
    seen: set[Path] = set()
    for folder, scope in ((config_dir, "tandem"), (codex_dir or codex_home(), "codex")):
        picked = _pick(Path(folder))
        if picked is not None and picked[0].resolve() not in seen:
            seen.add(picked[0].resolve())
            found.append((picked[0], scope, picked[1]))  # type: ignore[arg-type]
    root = _repository_root(workdir)
    chain = [workdir, *workdir.parents]
    for folder in reversed(chain[: chain.index(root) + 1]):
        picked = _pick(folder)
        if picked is not None and picked[0].resolve() not in seen:
            seen.add(picked[0].resolve())
            found.append((picked[0], "project", picked[1]))
    return found


def _read(path: Path, scope: Scope, root: Path, limit: int) -> tuple[bytes, int, str | None]:
    """Up to ``limit`` bytes of ``path``, its size, or an error. A project file that is a
    link resolving outside the repository is not read (it could carry a secret into the
    request)."""
    try:
        if scope == "project" and not path.resolve().is_relative_to(root):
            return b"", 0, "a link leaving the repository"
        size = path.stat().st_size
        with path.open("rb") as handle:
            return handle.read(limit), size, None
    except OSError as exc:
        return b"", 0, exc.strerror or str(exc)


def _cut(data: bytes, limit: int) -> bytes:
    """``data`` cut to at most ``limit`` bytes, on a UTF-8 character boundary."""
    if len(data) <= limit:
        return data
    cut = data[:limit]
    while cut and (cut[-1] & 0xC0) == 0x80:  # a continuation byte: drop the partial character
        cut = cut[:-1]
    if cut and cut[-1] >= 0xC0:
        cut = cut[:-1]
    return cut


def load_instructions(
    workdir: Path,
    *,
    cap_bytes: int = DEFAULT_CAP_BYTES,
    config_dir: Path | None = None,
    codex_dir: Path | None = None,
) -> ProjectInstructions:
    """Read the instruction files for ``workdir`` (see the module docstring), capped.

    Never raises for a file: an unreadable one is listed with its ``error``.

    Args:
        workdir: the working directory.
        cap_bytes: the total cap on the files' bytes (bytes; 0 reads none).
        config_dir: Tandem's config dir (default ``core.settings.settings_dir()``).
        codex_dir: the Codex home (default :func:`codex_home`).

    Returns:
        The files (with sizes and truncation) and the text block for the instructions.
    """
    workdir = workdir.resolve()
    root = _repository_root(workdir)
    files: list[InstructionFile] = []
    sections: list[str] = []
    per_file: list[str] = []
    left = max(0, cap_bytes)
    for path, scope, replaces in discover_instruction_files(
        workdir, config_dir=config_dir, codex_dir=codex_dir
    ):
        data, size, error = _read(path, scope, root, left + 1)
        used = _cut(data, left) if error is None else b""
        left -= len(used)
        file = InstructionFile(path, scope, size, len(used), replaces, error)
        files.append(file)
        per_file.append("")
        if used:
            body = used.decode("utf-8", errors="replace").rstrip()
            if file.truncated:
                body += (
                    f"\n\n[Tandem: truncated here; {len(used)} of {size} bytes included, the "
                    f"instruction files are capped at {cap_bytes} bytes in total.]"
                )
            sections.append(f"## {file.label(root)} ({_SCOPE_LABEL[scope]})\n\n{body}")
            per_file[-1] = sections[-1]
        elif file.truncated:
            sections.append(
                f"## {file.label(root)} ({_SCOPE_LABEL[scope]})\n\n[Tandem: not included; "
                f"the instruction files are capped at {cap_bytes} bytes in total.]"
            )
            per_file[-1] = sections[-1]
    text = ""
    if sections:
        text = (
            f"# Project instructions ({AGENTS_FILE})\n\n"
            "The user's instruction files follow, the most general first; when they disagree, "
            "a later (more specific) file wins. Direct instructions in the conversation win "
            "over all of them.\n\n" + "\n\n".join(sections)
        )
    return ProjectInstructions(tuple(files), text, cap_bytes, workdir, root, tuple(per_file))


def instructions_with_agents_md(
    base: str,
    workdir: Path,
    *,
    cap_bytes: int | Callable[[], int] = DEFAULT_CAP_BYTES,
    on_load: Callable[[ProjectInstructions], Any] | None = None,
    config_dir: Path | None = None,
    codex_dir: Path | None = None,
) -> Callable[[Any, Any], str]:
    """An ``Agent(instructions=...)`` callable: ``base`` plus the instruction files, read
    again at the first turn of each run (the seed's dynamic instructions; a turn of the same
    run reuses what its first turn read, so the instructions stay the same within a run).

    Args:
        base: the default instructions.
        workdir: the working directory.
        cap_bytes: the cap (bytes), or a callable giving it at each load (a setting).
        on_load: called with each new load (e.g. the window's list of files).
        config_dir: Tandem's config dir (default ``core.settings.settings_dir()``).
        codex_dir: the Codex home (default :func:`codex_home`).

    Returns:
        ``(run_context, agent) -> str``.
    """
    last: dict[str, Any] = {}

    def instructions(run_context: Any, _agent: Any) -> str:
        if last.get("context") is not run_context:
            cap = cap_bytes() if callable(cap_bytes) else cap_bytes
            loaded = load_instructions(
                workdir, cap_bytes=cap, config_dir=config_dir, codex_dir=codex_dir
            )
            last.update(context=run_context, loaded=loaded)  # a strong ref: ids are not reused
            if on_load is not None:
                on_load(loaded)
        loaded = last["loaded"]
        return f"{base.rstrip()}\n\n{loaded.text}" if loaded.text else base

    return instructions


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"
