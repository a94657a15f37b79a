"""Tandem's project instructions for the Codex CLI, as per-call ``--config`` pairs (issue 16).

What the pinned CLI 0.171.0 does with instructions (checked by running it against
``tests/support/responses_server.py`` and reading the request it sent):

- ``developer_instructions = "..."`` becomes the first content part of the request's second
  ``developer`` message; Codex's own system prompt stays.
- ``instructions`` and ``model_instructions_file`` *replace* Codex's whole system prompt
  (21 KB down to the given text): not used. ``experimental_instructions_file`` is ignored.
- By itself the CLI adds a ``user`` message "# AGENTS.md instructions for <cwd>" holding
  ``$CODEX_HOME/AGENTS.md`` (or its ``AGENTS.override.md``), then the project files from the
  repository root down to ``--cd`` (``AGENTS.override.md`` replacing its sibling).
  ``project_doc_max_bytes = 0`` drops the project files; the ``$CODEX_HOME`` file stays
  (no key turns it off).

So no file goes in twice: Tandem passes what it resolved for the Tandem-global and project
files (override rule, its cap, links leaving the repository refused) as
``developer_instructions`` and turns the CLI's project loading off; the ``$CODEX_HOME`` file,
which the CLI always reads from the same ``CODEX_HOME`` Tandem read it from (the child
inherits the environment), is left to the CLI. docs/delegates.md.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harnesses.instructions import AGENTS_FILE, ProjectInstructions, load_instructions

from .argv import toml_literal

__all__ = [
    "ARG_MAX_BYTES",
    "DEVELOPER_INSTRUCTIONS_KEY",
    "PROJECT_DOC_KEY",
    "InstructionsSource",
    "agents_md_source",
    "codex_instructions_text",
    "instructions_config",
]

#: The CLI key whose text is added to Codex's developer message.
DEVELOPER_INSTRUCTIONS_KEY = "developer_instructions"
#: The CLI key capping its own project ``AGENTS.md`` loading (0: none).
PROJECT_DOC_KEY = "project_doc_max_bytes"
#: The longest ``developer_instructions=<literal>`` argument (bytes, UTF-8): Linux refuses a
#: single argument of 128 KiB or more (``MAX_ARG_STRLEN``, E2BIG), this keeps a margin.
ARG_MAX_BYTES = 120 * 1024

InstructionsSource = Callable[[], str]
"""Returns the text for ``developer_instructions`` at each call (``""``: none)."""

_HEADER = (
    f"# Project instructions ({AGENTS_FILE}), as Tandem loaded them\n\n"
    "The user's instruction files follow, the most general first; when they disagree, a later "
    "(more specific) file wins. The project files below also win over your own global "
    f"{AGENTS_FILE} from CODEX_HOME, which you get separately. Direct instructions in the "
    "task win over all of them.\n\n"
)


def codex_instructions_text(loaded: ProjectInstructions) -> str:
    """The ``developer_instructions`` text for a load: every section but the ``codex`` ones.

    The ``$CODEX_HOME`` file still counts against the cap as it does for Tandem's agent, so
    the project files are cut exactly where the agent's are.

    Args:
        loaded: :func:`harnesses.instructions.load_instructions`' result.

    Returns:
        A heading and the sections (with Tandem's truncation notes), or ``""`` when no
        Tandem-global or project file added text.
    """
    parts = [
        section
        for file, section in zip(loaded.files, loaded.sections, strict=False)
        if section and file.scope != "codex"
    ]
    return _HEADER + "\n\n".join(parts) if parts else ""


def agents_md_source(
    workdir: Path,
    *,
    cap_bytes: int | Callable[[], int],
    config_dir: Path | None = None,
    codex_dir: Path | None = None,
) -> InstructionsSource:
    """A source reading the instruction files for ``workdir`` again at every call.

    Args:
        workdir: the working directory (Codex's ``--cd``).
        cap_bytes: the total cap (bytes), or a callable giving it at each load.
        config_dir / codex_dir: as for :func:`harnesses.instructions.load_instructions`.

    Returns:
        ``() -> str``: :func:`codex_instructions_text` of a fresh load (blocking file reads:
        :class:`harnesses.codex.SubprocessCodexExec` calls it in a worker thread).
    """

    def source() -> str:
        cap = cap_bytes() if callable(cap_bytes) else cap_bytes
        loaded = load_instructions(
            workdir, cap_bytes=cap, config_dir=config_dir, codex_dir=codex_dir
        )
        return codex_instructions_text(loaded)

    return source


def instructions_config(text: str, *, arg_max_bytes: int = ARG_MAX_BYTES) -> dict[str, Any]:
    """The ``--config`` pairs that hand ``text`` to the CLI and stop its own project loading.

    A text whose argument would reach ``arg_max_bytes`` is cut (on a character boundary) and
    ends with a note saying so, so the CLI still starts (a cap over about 100 KiB in Settings).

    Args:
        text: the instructions (``""``: only the project loading is turned off).
        arg_max_bytes: the longest ``developer_instructions=<literal>`` argument (bytes).

    Returns:
        ``{"project_doc_max_bytes": 0}`` plus ``"developer_instructions": text`` when
        ``text`` is not empty.
    """
    config: dict[str, Any] = {PROJECT_DOC_KEY: 0}
    if text:
        config[DEVELOPER_INSTRUCTIONS_KEY] = _fit(text, arg_max_bytes)
    return config


def _arg_bytes(text: str) -> int:
    return len(f"{DEVELOPER_INSTRUCTIONS_KEY}={toml_literal(text)}".encode())


def _fit(text: str, limit: int) -> str:
    """``text``, or its longest prefix (plus a note) whose argument stays under ``limit``."""
    if _arg_bytes(text) < limit:
        return text
    note = (
        "\n\n[Tandem: the instructions handed to Codex were cut here; a command-line "
        f"argument holds at most {limit} bytes.]"
    )
    keep = len(text)
    while keep > 0:  # shrink in proportion to the overshoot (escapes make bytes uneven)
        keep = max(0, keep * (limit - _arg_bytes(note)) // (_arg_bytes(text[:keep]) + 1))
        candidate = text[:keep] + note
        if _arg_bytes(candidate) < limit:
            return candidate
        keep -= 1
    return note.lstrip()
