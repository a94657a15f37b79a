"""The Codex process seam: ``CodexExec`` (one ``codex exec`` turn as JSONL lines) and its default.

Core never starts the Codex CLI itself (PRODUCT.md: no subprocess details in core, and
import-linter forbids ``core`` → ``harnesses``). Core defines the contract here; the
implementation lives in ``harnesses.codex``, which registers a factory on import with
:func:`register_codex_exec_factory`. ``codex_tool`` uses an injected ``codex=`` implementation
when given, else asks :func:`create_codex_exec` at the first call, which raises a ``UserError``
naming the fix when nothing is registered (the app and the tests import ``harnesses.codex``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ...errors import UserError
from .options import CodexOptions, ThreadOptions

__all__ = [
    "CodexExec",
    "CodexExecArgs",
    "CodexExecFactory",
    "create_codex_exec",
    "register_codex_exec_factory",
    "registered_codex_exec_factory",
]


@dataclass(slots=True)
class CodexExecArgs:
    """Everything one Codex turn needs (spec §9.3).

    Attributes:
        input: the prompt: the text inputs joined with a blank line (``"\\n\\n"``).
        images: local image paths (``--image``), in input order.
        thread_id: the thread to resume, or ``None`` for a new thread.
        thread_options: model, sandbox, directory... of the thread.
        output_schema: a strict JSON object schema for ``--output-schema``, or ``None``.
        signal: when set, the process is terminated and the run raises.
        idle_timeout_seconds: seconds without a stdout line before the process is killed.
    """

    input: str
    images: list[str] = field(default_factory=list)
    thread_id: str | None = None
    thread_options: ThreadOptions = field(default_factory=ThreadOptions)
    output_schema: dict[str, Any] | None = None
    signal: asyncio.Event | None = None
    idle_timeout_seconds: float | None = None


@runtime_checkable
class CodexExec(Protocol):
    """Runs one Codex turn and yields its stdout JSONL lines.

    Contract: ``run`` is an async generator of lines (``str``, without the newline). It raises
    ``RuntimeError("Codex stream idle for <n> seconds.")`` after ``idle_timeout_seconds``
    without a line, a ``RuntimeError`` when ``signal`` is set, and ``RuntimeError("Codex exec
    exited with code <n>: <stderr>")`` for a non-zero exit. Closing the generator early
    (``aclose``) or cancelling the consuming task must stop the process (its whole group).
    """

    def run(self, args: CodexExecArgs) -> AsyncIterator[str]:
        """Start the turn described by ``args``; yield each stdout line."""
        ...


CodexExecFactory = Callable[[CodexOptions], CodexExec]
"""``(codex_options) -> CodexExec``: builds the default process implementation."""

_factory: CodexExecFactory | None = None


def register_codex_exec_factory(factory: CodexExecFactory | None) -> None:
    """Install (or with ``None`` remove) the default ``CodexExec`` factory (harnesses call this)."""
    global _factory
    _factory = factory


def registered_codex_exec_factory() -> CodexExecFactory | None:
    """The installed factory, or ``None``."""
    return _factory


def create_codex_exec(options: CodexOptions) -> CodexExec:
    """A ``CodexExec`` from the registered factory.

    Raises:
        UserError: no factory is registered (import ``harnesses.codex``, or pass ``codex=``).
    """
    if _factory is None:
        raise UserError(
            "No Codex process implementation is available: import harnesses.codex (the local "
            "Codex CLI runner) or pass codex=<CodexExec> to codex_tool."
        )
    return _factory(options)
