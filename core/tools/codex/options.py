"""Codex tool option objects: ``ThreadOptions``, ``TurnOptions``, ``CodexOptions`` (spec §9.1, §9.3)."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, get_args

from ...errors import UserError

__all__ = [
    "DEFAULT_STREAM_LIMIT_BYTES",
    "MAX_STREAM_LIMIT_BYTES",
    "MIN_STREAM_LIMIT_BYTES",
    "STREAM_LIMIT_ENV",
    "ApprovalMode",
    "CodexOptions",
    "ModelReasoningEffort",
    "SandboxMode",
    "ThreadOptions",
    "TurnOptions",
    "WebSearchMode",
    "coerce_options",
    "resolve_stream_limit",
]

SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
ModelReasoningEffort = Literal["minimal", "low", "medium", "high", "xhigh"]
ApprovalMode = Literal["never", "on-request", "on-failure", "untrusted"]
WebSearchMode = Literal["disabled", "cached", "live"]

#: Environment variable overriding the stdout/stderr reader limit (bytes), spec §9.3.
STREAM_LIMIT_ENV = "OPENAI_AGENTS_CODEX_SUBPROCESS_STREAM_LIMIT_BYTES"
MIN_STREAM_LIMIT_BYTES = 65_536
MAX_STREAM_LIMIT_BYTES = 67_108_864
DEFAULT_STREAM_LIMIT_BYTES = 8_388_608


def _check_choice(field_name: str, value: Any, choices: Any) -> None:
    allowed = get_args(choices)
    if value is not None and value not in allowed:
        raise UserError(f"{field_name} must be one of {', '.join(allowed)}; got {value!r}.")


def _check_bool(field_name: str, value: Any) -> None:
    if value is not None and not isinstance(value, bool):
        raise UserError(f"{field_name} must be a bool; got {value!r}.")


@dataclass(slots=True)
class ThreadOptions:
    """Per-thread settings of a Codex run, mapped to ``codex exec`` flags (spec §9.3).

    Attributes:
        model: ``--model``.
        sandbox_mode: ``--sandbox`` (``read-only`` / ``workspace-write`` / ``danger-full-access``).
        working_directory: ``--cd`` (not checked here: the CLI reports a missing directory).
        skip_git_repo_check: ``--skip-git-repo-check`` (needed outside a Git repository).
        model_reasoning_effort: ``--config model_reasoning_effort="..."``.
        network_access_enabled: ``--config sandbox_workspace_write.network_access=<bool>``.
        web_search_mode: ``--config web_search="disabled|cached|live"``; wins over
            ``web_search_enabled``.
        web_search_enabled: legacy switch: ``True`` → ``"live"``, ``False`` → ``"disabled"``.
        approval_policy: ``--config approval_policy="..."``.
        additional_directories: one ``--add-dir`` per entry.

    Raises:
        UserError: a value outside its allowed set.
    """

    model: str | None = None
    sandbox_mode: SandboxMode | None = None
    working_directory: str | None = None
    skip_git_repo_check: bool | None = None
    model_reasoning_effort: ModelReasoningEffort | None = None
    network_access_enabled: bool | None = None
    web_search_mode: WebSearchMode | None = None
    web_search_enabled: bool | None = None
    approval_policy: ApprovalMode | None = None
    additional_directories: list[str] | None = None

    def __post_init__(self) -> None:
        _check_choice("sandbox_mode", self.sandbox_mode, SandboxMode)
        _check_choice("model_reasoning_effort", self.model_reasoning_effort, ModelReasoningEffort)
        _check_choice("web_search_mode", self.web_search_mode, WebSearchMode)
        _check_choice("approval_policy", self.approval_policy, ApprovalMode)
        for name in ("skip_git_repo_check", "network_access_enabled", "web_search_enabled"):
            _check_bool(name, getattr(self, name))
        if self.additional_directories is not None:
            if isinstance(self.additional_directories, str) or not all(
                isinstance(d, str) and d for d in self.additional_directories
            ):
                raise UserError("additional_directories must be a list of non-empty paths.")
            self.additional_directories = list(self.additional_directories)

    @property
    def effective_web_search_mode(self) -> WebSearchMode | None:
        """``web_search_mode``, else the legacy ``web_search_enabled`` mapped, else ``None``."""
        if self.web_search_mode is not None:
            return self.web_search_mode
        if self.web_search_enabled is None:
            return None
        return "live" if self.web_search_enabled else "disabled"


@dataclass(slots=True)
class TurnOptions:
    """Per-turn settings of a Codex run (spec §9.3).

    Attributes:
        output_schema: a JSON object schema the final answer must follow (``--output-schema``);
            the tool-level ``output_schema`` wins when both are set.
        signal: an ``asyncio.Event``; setting it terminates the Codex process.
        idle_timeout_seconds: seconds without a stdout line before the process is killed
            (``None``: no limit).

    Raises:
        UserError: ``idle_timeout_seconds`` not a finite number > 0, or ``signal`` not an
            ``asyncio.Event``.
    """

    output_schema: dict[str, Any] | None = None
    signal: asyncio.Event | None = None
    idle_timeout_seconds: float | None = None

    def __post_init__(self) -> None:
        timeout = self.idle_timeout_seconds
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
                raise UserError("idle_timeout_seconds must be a number of seconds or None.")
            if not math.isfinite(timeout) or timeout <= 0:
                raise UserError("idle_timeout_seconds must be a finite number > 0.")
            self.idle_timeout_seconds = float(timeout)
        if self.signal is not None and not isinstance(self.signal, asyncio.Event):
            raise UserError("signal must be an asyncio.Event.")
        if self.output_schema is not None and not isinstance(self.output_schema, Mapping):
            raise UserError("output_schema must be a JSON schema object (a dict).")


@dataclass(slots=True)
class CodexOptions:
    """How the Codex CLI process is started (spec §9.3); used by the process implementation.

    Attributes:
        codex_path_override: path of the ``codex`` binary (else ``CODEX_PATH``, ``PATH``, the
            project-local install).
        base_url: Responses API base URL (e.g. ``http://127.0.0.1:8000/v1``); mapped to a
            custom model provider, since the CLI ignores ``OPENAI_BASE_URL``.
        api_key: passed to the CLI as ``CODEX_API_KEY``.
        env: the complete child environment (``os.environ`` is then not inherited).
        codex_subprocess_stream_limit_bytes: stdout/stderr reader limit in bytes (65,536 to
            67,108,864); else ``OPENAI_AGENTS_CODEX_SUBPROCESS_STREAM_LIMIT_BYTES``, else
            8,388,608.
        config: extra ``--config key=value`` overrides (Tandem extension), e.g.
            ``{"analytics.enabled": False}``; values are written as TOML literals.

    Raises:
        UserError: a stream limit outside its range, or an ``env`` that is not a mapping.
    """

    codex_path_override: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    env: dict[str, str] | None = None
    codex_subprocess_stream_limit_bytes: int | None = None
    config: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.codex_subprocess_stream_limit_bytes is not None:
            _check_stream_limit(self.codex_subprocess_stream_limit_bytes, "option")
        if self.env is not None:
            if not isinstance(self.env, Mapping):
                raise UserError("codex_options.env must be a mapping.")
            # Keys and values are stringified for the child environment, as openai-agents
            # 0.24 ``Codex`` does (``{"RETRIES": 3}`` becomes ``RETRIES=3``).
            self.env = {str(k): str(v) for k, v in self.env.items()}
        if self.config is not None:
            if not all(isinstance(k, str) and k for k in self.config):
                raise UserError("codex_options.config keys must be non-empty strings.")
            self.config = dict(self.config)


def _check_stream_limit(value: Any, source: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"Codex subprocess stream limit ({source}) must be an integer of bytes.")
    if not MIN_STREAM_LIMIT_BYTES <= value <= MAX_STREAM_LIMIT_BYTES:
        raise UserError(
            f"Codex subprocess stream limit ({source}) must be between {MIN_STREAM_LIMIT_BYTES} "
            f"and {MAX_STREAM_LIMIT_BYTES} bytes; got {value}."
        )
    return value


def resolve_stream_limit(option: int | None, environ: Mapping[str, str]) -> int:
    """The stdout/stderr reader limit in bytes (spec §9.3).

    Args:
        option: ``CodexOptions.codex_subprocess_stream_limit_bytes``.
        environ: where ``OPENAI_AGENTS_CODEX_SUBPROCESS_STREAM_LIMIT_BYTES`` is looked up.

    Returns:
        The option, else the variable's value, else 8,388,608.

    Raises:
        UserError: the value is not an integer in 65,536..67,108,864.
    """
    if option is not None:
        return _check_stream_limit(option, "option")
    raw = environ.get(STREAM_LIMIT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_STREAM_LIMIT_BYTES
    try:
        value = int(raw.strip())
    except ValueError:
        raise UserError(f"{STREAM_LIMIT_ENV} must be an integer of bytes; got {raw!r}.") from None
    return _check_stream_limit(value, STREAM_LIMIT_ENV)


T = TypeVar("T", ThreadOptions, TurnOptions, CodexOptions)


def coerce_options(cls: type[T], value: T | Mapping[str, Any] | None, label: str) -> T:
    """``value`` as a ``cls`` instance: a copy of an instance, or built from a dict.

    Raises:
        UserError: unknown keys in a dict (spec §9.1), or a value of another type.
    """
    if value is None:
        return cls()
    if isinstance(value, cls):
        return dataclasses.replace(value)
    if isinstance(value, Mapping):
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(str(k) for k in value if k not in known)
        if unknown:
            raise UserError(f"Unknown {label} option(s): {', '.join(unknown)}.")
        return cls(**dict(value))
    raise UserError(f"{label} must be a {cls.__name__} or a dict; got {type(value).__name__}.")
