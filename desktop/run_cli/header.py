"""``tandem run``'s header and closing summary lines (issue 16, the new-user trial)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "DEFAULT_BASE_URL",
    "base_url_source",
    "header_lines",
    "model_error_text",
    "plural",
    "summary_line",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""What the ``openai`` client talks to without a base URL."""


def plural(count: int, word: str, many: str | None = None) -> str:
    """``"1 hunk"``, ``"2 hunks"`` (``many`` for irregular plurals)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def base_url_source(flag: str | None, saved: str | None) -> tuple[str | None, str]:
    """The base URL ``tandem run`` uses and where it came from.

    The order is ``tandem run``'s (:func:`desktop.headless._base_url`): the ``--base-url``
    flag, the saved setting, ``OPENAI_BASE_URL``.

    Returns:
        ``(url or None, source)``; source is ``"--base-url"``, ``"Settings"``,
        ``"OPENAI_BASE_URL"`` or ``"default"`` (no URL: the OpenAI API).
    """
    if flag:
        return flag, "--base-url"
    if saved:
        return saved, "Settings"
    env = os.environ.get("OPENAI_BASE_URL")
    if env:
        return env, "OPENAI_BASE_URL"
    return None, "default"


def model_error_text(exc: BaseException, flag_url: str | None, saved_url: str | None) -> str:
    """A model error's message with the fix where this run's base URL came from
    (``--base-url``, ``OPENAI_BASE_URL``, Settings: :func:`core.models.errors.
    describe_model_error`'s ``fix_in``); the window keeps its own wording."""
    from core.models.errors import describe_model_error

    url, source = base_url_source(flag_url, saved_url)
    if source == "Settings":
        return str(exc)
    return describe_model_error(exc, base_url=url, fix_in=source).message


def header_lines(
    started: Path, root: Path, model: str, flag_url: str | None, saved_url: str | None
) -> list[str]:
    """The header lines after the sandbox line: the model and server, and where commands
    start when ``tandem run`` was started in a subfolder of the repository.

    The key is never shown (only whether the server is the default one).

    Args:
        started: the folder ``tandem run`` was started in (``--repo``, default the cwd).
        root: the workspace root (the repository's top level, :func:`.setup.project_root`).
        model: the model name (``"scripted"`` for a replay).
        flag_url, saved_url: the ``--base-url`` flag and the saved base URL.
    """
    lines: list[str] = []
    if model == "scripted":
        lines.append("model scripted (recorded answers, offline)")
    else:
        url, source = base_url_source(flag_url, saved_url)
        where = f"{url} (from {source})" if url else f"{DEFAULT_BASE_URL} (the default)"
        lines.append(f"model {model} at {where}")
    here = started.resolve()
    if here != root and here.is_relative_to(root):
        lines.append(
            f"started in {here.relative_to(root)}/: the workspace is the repository's top "
            f"level {root}, and commands start there (not in the subfolder)"
        )
    return lines


def summary_line(
    code: int,
    status: str,
    *,
    tokens: tuple[int, int] | None,
    requests: int,
    checkpoints: int,
    rejected: int,
) -> str:
    """The closing line: how the run ended and what it cost.

    Args:
        code: the exit code (docs/tandem-run.md).
        status: ``done``, ``failed``, ``usage``, ``stopped``, ``interrupted``.
        tokens: ``(input, output)`` tokens, ``None`` when no model request was made.
        requests: model requests.
        checkpoints: checkpoints taken during the run.
        rejected: approvals and reviews rejected.

    Returns:
        e.g. ``"tandem run: stopped (exit 3: 1 rejection) · 3 model requests, 5120 input +
        210 output tokens · 1 checkpoint"``.
    """
    why = f"exit 3: {plural(rejected, 'rejection')}" if code == 3 else f"exit {code}"
    parts = [f"tandem run: {status} ({why})"]
    if tokens is not None:
        parts.append(
            f"{plural(requests, 'model request')}, {tokens[0]} input + {tokens[1]} output tokens"
        )
    parts.append(plural(checkpoints, "checkpoint"))
    return " · ".join(parts)
