"""Optional delegate tools of Tandem's agent (shared by the window and ``tandem run``).

The Codex delegate runs the real Codex CLI on the session's provider (issue 17): Tandem's
model, base URL and key become a per-call ``-c model_providers.tandem...`` override (the key
through ``env_key`` to the Codex process alone, never to the commands it runs), unless the
user chose "use my Codex login" in Settings. Issue 16: every call hands Codex the project
instructions Tandem's agent gets (``harnesses.codex.instructions``). See docs/delegates.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import harnesses.codex  # registers the Codex CLI process for codex_tool
from core import codex_tool
from core.settings import Settings
from core.tools.codex import CodexOptions, ThreadOptions
from harnesses.codex import CodexTurnWatch, StallListener, SubprocessCodexExec, agents_md_source
from harnesses.workspace import Workspace

__all__ = ["OPENAI_BASE_URL", "codex_delegate", "codex_options_for"]

_SANDBOX = {"read-only": "read-only", "full": "danger-full-access"}

#: Where the Responses API lives when the settings name no server.
OPENAI_BASE_URL = "https://api.openai.com/v1"


def codex_options_for(
    settings: Settings,
    *,
    codex_path: Path | None = None,
    config: Mapping[str, Any] | None = None,
) -> CodexOptions:
    """The Codex process options of a session.

    Args:
        settings: the session's model, base URL (``None``: :data:`OPENAI_BASE_URL`) and key
            (``None``: a keyless server; no ``Authorization`` header is sent).
        codex_path: the CLI binary (else ``settings.codex_path``, ``CODEX_PATH``, ``PATH``,
            the project-local install).
        config: more ``--config`` pairs (e.g. retry counts).

    Returns:
        :class:`core.tools.codex.CodexOptions` with ``base_url`` and ``api_key`` set; the
        environment is inherited (``CODEX_HOME`` and the user's ``config.toml`` still apply).
    """
    binary = codex_path or settings.codex_path
    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    return CodexOptions(
        codex_path_override=str(binary) if binary else None,
        base_url=None if settings.codex_use_login else (settings.base_url or OPENAI_BASE_URL),
        api_key=None if settings.codex_use_login else key,
        config=dict(config) if config else None,
    )


def codex_delegate(
    workspace: Workspace,
    *,
    settings: Settings | None = None,
    codex_path: Path | None = None,
    on_stream: Callable[[Any], Any] | None = None,
    on_stall: StallListener | None = None,
    config: Mapping[str, Any] | None = None,
) -> Any | None:
    """A ``codex`` tool working in ``workspace`` on the session's provider.

    Codex's sandbox follows the approval mode (``read-only``/``full``, else
    ``workspace-write``).

    Project instructions (issue 16): each call reads the ``AGENTS.md`` files again as the
    agent's instructions do (:func:`harnesses.instructions.load_instructions`, the cap
    ``settings.agents_md_cap_bytes``) and passes the Tandem-global and project ones, with
    Tandem's overrides, cap and truncation notes, as ``-c developer_instructions=...``. The
    CLI's own project loading is turned off (``-c project_doc_max_bytes=0``), so no project
    file goes in twice; ``$CODEX_HOME/AGENTS.md`` (or its override), which the CLI 0.171.0
    always adds and cannot be told not to, is left to the CLI (the same ``CODEX_HOME``: the
    process inherits Tandem's environment). Details: :mod:`harnesses.codex.instructions`.

    Every call is watched: no JSONL event for ``settings.codex_stall_seconds`` calls ``on_stall``
    with a ``stop`` that kills the Codex process group (:class:`harnesses.codex.CodexTurnWatch`).
    The process is spawned through ``harnesses.spawn`` (subreaper supervisor, PDEATHSIG), so
    it dies with Tandem.

    Args:
        workspace: the repository and its approval mode.
        settings: model, base URL, key, "use my Codex login", stall time (default
            ``Settings()``: the OpenAI default, no key).
        codex_path: the CLI binary (overrides ``settings.codex_path``).
        on_stream: ``codex_tool(on_stream=)``: every Codex event (terminal and diff views).
        on_stall: ``(stalled, idle_seconds, stop)``, see :data:`harnesses.codex.StallListener`.
        config: extra ``--config`` pairs for the CLI.

    Returns:
        The tool, or ``None`` when the Codex CLI is not installed
        (``harnesses.codex.codex_install_hint()``).
    """
    settings = settings or Settings()
    options = codex_options_for(settings, codex_path=codex_path, config=config)
    if harnesses.codex.find_codex_binary(options.codex_path_override) is None:
        return None
    process = SubprocessCodexExec(
        options,
        use_login=settings.codex_use_login,
        inherit_key=False,
        instructions=agents_md_source(workspace.started_in, cap_bytes=settings.agents_md_cap_bytes),
    )
    watch = CodexTurnWatch(process, stall_seconds=settings.codex_stall_seconds, on_stall=on_stall)
    model = None if settings.codex_use_login else settings.model
    return codex_tool(
        codex=watch,
        default_thread_options=ThreadOptions(model=model),
        sandbox_mode=_SANDBOX.get(str(workspace.mode), "workspace-write"),
        working_directory=str(workspace.root),
        skip_git_repo_check=True,
        on_stream=on_stream,
    )
