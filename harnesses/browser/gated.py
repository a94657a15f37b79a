"""``GatedComputer``: holds the agent's computer actions while the user has taken control."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from core.tools.computer import AsyncComputer, Button, Environment

__all__ = ["ActionGate", "GateListener", "GateState", "GatedComputer"]

logger = logging.getLogger("harnesses")


@dataclass(frozen=True, slots=True)
class GateState:
    """A snapshot of an :class:`ActionGate`, given to its listeners on every change.

    Attributes:
        paused: the user has control; agent actions wait.
        waiting: the kinds of the agent actions waiting at the gate, oldest first (e.g.
            ``("click",)``).
        active: the kind of the agent action running right now, or ``None``.
    """

    paused: bool
    waiting: tuple[str, ...] = ()
    active: str | None = None


GateListener = Callable[[GateState], None]


class ActionGate:
    """An open/closed gate the agent's computer actions pass one at a time (issue "Browser" §3).

    While the gate is open (the agent drives) an action passes at once. :meth:`pause` (the
    user's *Take control*) makes every later action wait in :meth:`action` until :meth:`resume`
    (*Hand back*); an action already running finishes first, and :meth:`idle` lets the user's
    input wait for it. Everything runs on one event loop; listeners are called on it.
    """

    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._open.set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._waiting: list[str] = []
        self._active: str | None = None
        self._listeners: list[GateListener] = []
        self._note: str | None = None

    @property
    def paused(self) -> bool:
        """Whether the user has control (agent actions wait)."""
        return not self._open.is_set()

    @property
    def state(self) -> GateState:
        """The current :class:`GateState`."""
        return GateState(self.paused, tuple(self._waiting), self._active)

    def add_listener(self, listener: GateListener) -> Callable[[], None]:
        """Call ``listener(GateState)`` on every change; returns the unsubscribe function."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def _notify(self) -> None:
        state = self.state
        for listener in list(self._listeners):
            try:
                listener(state)
            except Exception:
                logger.exception("action gate listener failed")

    def pause(self) -> None:
        """Hold the agent's next actions (no effect when already paused)."""
        if self._open.is_set():
            self._open.clear()
            self._notify()

    def resume(self) -> None:
        """Let waiting and later agent actions run (no effect when not paused)."""
        if not self._open.is_set():
            self._open.set()
            self._notify()

    def leave_note(self, note: str) -> None:
        """Give the agent's next action ``note`` instead of running it (*Hand back*: where
        the user left the page). The action raises ``BrowserNote``; the computer tool then
        sends a fresh screenshot and the note as a user message (issue 17)."""
        self._note = note

    @property
    def note(self) -> str | None:
        """The note the next agent action will get, if any."""
        return self._note

    async def idle(self) -> None:
        """Return once no agent action is running (at once when none is)."""
        await self._idle.wait()

    @contextlib.asynccontextmanager
    async def action(self, kind: str) -> AsyncIterator[None]:
        """Wait while paused, then hold the gate's "active" slot for the body's duration.

        Args:
            kind: the action type (``"click"``, ``"screenshot"``...), shown to the user.

        Raises:
            asyncio.CancelledError: the run was cancelled while the action waited.
        """
        if not self._open.is_set():
            self._waiting.append(kind)
            self._notify()
            try:
                await self._open.wait()
            finally:
                self._waiting.remove(kind)
        if self._note is not None:
            from .navigation import BrowserNote  # navigation imports the keys, not this

            note, self._note = self._note, None
            self._notify()
            raise BrowserNote(note)
        self._active = kind
        self._idle.clear()
        self._notify()
        try:
            yield
        finally:
            self._active = None
            self._idle.set()
            self._notify()


def _accepts_keys(method: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "keys" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


class GatedComputer(AsyncComputer):
    """An :class:`~core.tools.computer.AsyncComputer` that passes each action of ``inner``
    through an :class:`ActionGate` first (use it as ``ComputerTool(GatedComputer(...))``).

    Every action, ``screenshot`` included, waits while the gate is paused, so the screenshot
    the model gets after a batch shows the page as the user left it.

    Args:
        inner: the real computer (e.g. a ``PlaywrightComputer``).
        gate: the shared gate (a new open one when omitted).

    Attributes:
        inner: the wrapped computer.
        gate: the gate actions pass.
    """

    def __init__(self, inner: AsyncComputer, gate: ActionGate | None = None) -> None:
        self.inner = inner
        self.gate = gate if gate is not None else ActionGate()

    def __repr__(self) -> str:
        return f"GatedComputer({self.inner!r})"

    @property
    def environment(self) -> Environment | None:
        """The inner computer's environment."""
        return self.inner.environment

    @property
    def dimensions(self) -> tuple[int, int] | None:
        """The inner computer's ``(width, height)`` in pixels."""
        return self.inner.dimensions

    @property
    def current_url(self) -> str:
        """The inner computer's ``current_url`` (read by ``AllowedDomainsPolicy``); ``""`` when
        it has none."""
        return str(getattr(self.inner, "current_url", "") or "")

    async def _mouse(self, kind: str, *args: Any, keys: list[str] | None) -> None:
        method = getattr(self.inner, kind)
        kwargs: dict[str, Any] = {}
        if keys:
            if _accepts_keys(method):
                kwargs["keys"] = keys
            else:
                logger.warning("computer driver %s() does not accept keys; dropping them", kind)
        async with self.gate.action(kind):
            await method(*args, **kwargs)

    async def screenshot(self) -> str:
        """The inner computer's screenshot (base64 PNG), once the gate lets it through."""
        async with self.gate.action("screenshot"):
            return await self.inner.screenshot()

    async def click(
        self, x: int, y: int, button: Button = "left", *, keys: list[str] | None = None
    ) -> None:
        """Click ``button`` at ``(x, y)`` with ``keys`` held."""
        await self._mouse("click", x, y, button, keys=keys)

    async def double_click(self, x: int, y: int, *, keys: list[str] | None = None) -> None:
        """Double-click at ``(x, y)`` with ``keys`` held."""
        await self._mouse("double_click", x, y, keys=keys)

    async def scroll(
        self, x: int, y: int, scroll_x: int, scroll_y: int, *, keys: list[str] | None = None
    ) -> None:
        """Scroll by ``(scroll_x, scroll_y)`` pixels at ``(x, y)``."""
        await self._mouse("scroll", x, y, scroll_x, scroll_y, keys=keys)

    async def type(self, text: str) -> None:
        """Type ``text``."""
        async with self.gate.action("type"):
            await self.inner.type(text)

    async def wait(self) -> None:
        """Let the page settle (the inner computer decides how long)."""
        async with self.gate.action("wait"):
            await self.inner.wait()

    async def move(self, x: int, y: int, *, keys: list[str] | None = None) -> None:
        """Move the pointer to ``(x, y)``."""
        await self._mouse("move", x, y, keys=keys)

    async def keypress(self, keys: list[str]) -> None:
        """Press ``keys`` as one combination."""
        async with self.gate.action("keypress"):
            await self.inner.keypress(keys)

    async def drag(self, path: list[tuple[int, int]], *, keys: list[str] | None = None) -> None:
        """Drag along ``path`` (viewport pixels)."""
        await self._mouse("drag", path, keys=keys)

    @property
    def address_bar_text(self) -> str | None:
        """The inner computer's typed address after Ctrl+L (``None``: the bar is closed)."""
        return getattr(self.inner, "address_bar_text", None)

    async def goto(self, url: str) -> None:
        """Load ``url`` (the ``goto`` tool), once the gate lets it through."""
        async with self.gate.action("goto"):
            await self.inner.goto(url)  # type: ignore[attr-defined]

    async def back(self) -> None:
        """Go back in the history (the ``back`` tool)."""
        async with self.gate.action("back"):
            await self.inner.back()  # type: ignore[attr-defined]

    async def forward(self) -> None:
        """Go forward in the history (the ``forward`` tool)."""
        async with self.gate.action("forward"):
            await self.inner.forward()  # type: ignore[attr-defined]
