"""``CodexThread``: one Codex conversation, run turn by turn through a ``CodexExec`` (spec §9.5)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Literal

from .events import ThreadEvent, ThreadStartedEvent, parse_event_line
from .options import ThreadOptions, TurnOptions
from .output_schema import normalize_output_schema
from .process import CodexExec, CodexExecArgs

__all__ = ["CodexInput", "CodexThread", "split_inputs"]


@dataclass(frozen=True, slots=True)
class CodexInput:
    """One tool input: ``type="text"`` with ``text``, or ``type="local_image"`` with ``path``."""

    type: Literal["text", "local_image"]
    text: str | None = None
    path: str | None = None


def split_inputs(inputs: Sequence[CodexInput]) -> tuple[str, list[str]]:
    """``(prompt, images)``: text inputs joined with ``"\\n\\n"``, image paths in order (§9.3)."""
    texts = [i.text for i in inputs if i.type == "text" and i.text is not None]
    images = [i.path for i in inputs if i.type == "local_image" and i.path is not None]
    return "\n\n".join(texts), images


class CodexThread:
    """A Codex thread: new until its first ``thread.started`` event, then resumable by ``id``.

    Args:
        codex_exec: the process implementation.
        options: the thread's options (copied).
        thread_id: an existing thread to resume, or ``None``.
    """

    def __init__(
        self, codex_exec: CodexExec, options: ThreadOptions, thread_id: str | None = None
    ) -> None:
        self._exec = codex_exec
        self.options = dataclasses.replace(options)
        self._id = thread_id

    @property
    def id(self) -> str | None:
        """The thread id (``None`` before the first turn started a new thread)."""
        return self._id

    async def run_streamed(
        self, inputs: Sequence[CodexInput], turn_options: TurnOptions | None = None
    ) -> AsyncGenerator[ThreadEvent, None]:
        """Run one turn, yielding every parsed event; records the id from ``thread.started``.

        The underlying line generator is closed when this generator is closed or cancelled,
        which stops the process.

        Raises:
            ValueError: a stdout line is not a JSON object.
            RuntimeError: whatever the ``CodexExec`` raises (idle timeout, exit code...).
            UserError: an invalid ``output_schema``.
        """
        turn = turn_options or TurnOptions()
        prompt, images = split_inputs(inputs)
        args = CodexExecArgs(
            input=prompt,
            images=images,
            thread_id=self._id,
            thread_options=self.options,
            output_schema=normalize_output_schema(turn.output_schema),
            signal=turn.signal,
            idle_timeout_seconds=turn.idle_timeout_seconds,
        )
        lines = self._exec.run(args)
        try:
            async for line in lines:
                if not line.strip():
                    continue
                event = parse_event_line(line)
                if isinstance(event, ThreadStartedEvent) and event.thread_id:
                    self._id = event.thread_id
                yield event
        finally:
            aclose = getattr(lines, "aclose", None)
            if aclose is not None:
                await aclose()
