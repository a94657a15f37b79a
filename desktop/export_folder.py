"""Where File > Export session… suggests saving: outside the repository, remembered."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import platformdirs

from core.settings import data_dir

__all__ = ["EXPORTS_FOLDER", "STATE_FILE", "remember_export_folder", "suggested_export_path"]

_log = logging.getLogger("desktop")

EXPORTS_FOLDER = "exports"
"""The folder of Tandem's data dir exports go to when no other folder suits."""
STATE_FILE = "last-export-folder"
"""The file in Tandem's data dir that holds the folder the last export went to."""


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except (OSError, ValueError):
        return False
    return True


def _remembered(state: Path, repo: Path) -> Path | None:
    try:
        text = (state / STATE_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    folder = Path(text) if text else None
    if folder is None or not folder.is_absolute() or not folder.is_dir() or _inside(folder, repo):
        return None
    return folder


def suggested_export_path(session_id: str, repo: Path, *, state_dir: Path | None = None) -> Path:
    """The file name File > Export session… suggests (issue 16: never in the work tree).

    The folder is, in order: the folder the last export went to (when it still exists and
    is outside ``repo``), the user's Documents folder (``platformdirs.user_documents_dir``,
    when it exists and is outside ``repo``), else ``<data dir>/exports`` (created).

    Args:
        session_id: the session's id; its first 8 characters name the file.
        repo: the repository the window works on; nothing inside it is suggested.
        state_dir: where the remembered folder is read (default: Tandem's data dir).

    Returns:
        An absolute path ``<folder>/tandem-session-<id8>.json``.
    """
    state = state_dir if state_dir is not None else data_dir()
    name = f"tandem-session-{(session_id or 'session')[:8]}.json"
    folder = _remembered(state, repo)
    if folder is None:
        documents = Path(platformdirs.user_documents_dir())
        if documents.is_dir() and not _inside(documents, repo):
            folder = documents
    if folder is None:
        folder = state / EXPORTS_FOLDER
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # the dialog still opens; it shows the nearest folder
            _log.debug("could not create %s: %s", folder, exc)
    return folder / name


def remember_export_folder(
    chosen: str | os.PathLike[str], repo: Path, *, state_dir: Path | None = None
) -> None:
    """Remember the folder of the file the user exported to, for the next suggestion.

    A folder inside ``repo`` is not remembered (the user chose it once; it is not made the
    default). A failure to write is logged at debug level and otherwise ignored.

    Args:
        chosen: the file the user picked in the save dialog.
        repo: the window's repository.
        state_dir: where to write (default: Tandem's data dir).
    """
    folder = Path(chosen).expanduser().parent
    if not folder.is_absolute() or _inside(folder, repo):
        return
    state = state_dir if state_dir is not None else data_dir()
    try:
        state.mkdir(parents=True, exist_ok=True)
        (state / STATE_FILE).write_text(str(folder) + "\n", encoding="utf-8")
    except OSError as exc:
        _log.debug("could not remember the export folder: %s", exc)
