"""Typed events a ``PlaywrightComputer`` publishes for a live view: actions, navigations, restarts."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

__all__ = [
    "BrowserAction",
    "BrowserEvent",
    "BrowserEventListener",
    "BrowserNavigated",
    "BrowserRestarted",
    "EventHub",
    "FrameMetadata",
    "FrameListener",
]

logger = logging.getLogger("harnesses")

ActionKind: TypeAlias = Literal[
    "click", "double_click", "drag", "keypress", "move", "scroll", "type", "wait", "screenshot"
]


@dataclass(frozen=True, slots=True)
class BrowserAction:
    """One action the agent performed, in viewport pixels (what a view marks on the frame).

    Attributes:
        kind: the ``computer_call`` action type.
        x, y: the pointer position (``None`` for keyboard actions, ``wait``, ``screenshot``).
        path: the drag path ``[(x, y), ...]`` (empty otherwise).
        text: typed text (``type``) or the ``+``-joined key combination (``keypress``).
        button: the mouse button of a click.
        keys: modifier keys held during a mouse action.
        scroll: ``(scroll_x, scroll_y)`` pixels for ``scroll``.
        url: the page URL when the action ran.
        at: ``time.monotonic()`` seconds when the action finished.
    """

    kind: ActionKind
    x: int | None = None
    y: int | None = None
    path: tuple[tuple[int, int], ...] = ()
    text: str | None = None
    button: str | None = None
    keys: tuple[str, ...] = ()
    scroll: tuple[int, int] | None = None
    url: str = ""
    at: float = field(default_factory=time.monotonic)
    type: Literal["browser_action"] = "browser_action"


@dataclass(frozen=True, slots=True)
class BrowserNavigated:
    """The page's main frame now shows ``url``."""

    url: str
    at: float = field(default_factory=time.monotonic)
    type: Literal["browser_navigated"] = "browser_navigated"


@dataclass(frozen=True, slots=True)
class BrowserRestarted:
    """The browser had died (``reason``: ``"closed"``/``"crashed"``) and was started again."""

    reason: str
    note: str
    at: float = field(default_factory=time.monotonic)
    type: Literal["browser_restarted"] = "browser_restarted"


BrowserEvent: TypeAlias = BrowserAction | BrowserNavigated | BrowserRestarted
BrowserEventListener: TypeAlias = Callable[[BrowserEvent], None]


@dataclass(frozen=True, slots=True)
class FrameMetadata:
    """What comes with one screencast frame (CDP ``Page.screencastFrame`` metadata).

    Attributes:
        format: ``"jpeg"`` or ``"png"`` (the bytes' encoding).
        device_width, device_height: the viewport in CSS pixels.
        page_scale_factor: the page zoom.
        offset_top: top offset of the page area in CSS pixels.
        scroll_x, scroll_y: the page scroll offset in CSS pixels.
        timestamp: the browser's frame time in seconds (``None`` if not sent).
        url: the page URL when the frame arrived.
        received_at: ``time.monotonic()`` seconds when the frame was received.
    """

    format: str
    device_width: float
    device_height: float
    page_scale_factor: float = 1.0
    offset_top: float = 0.0
    scroll_x: float = 0.0
    scroll_y: float = 0.0
    timestamp: float | None = None
    url: str = ""
    received_at: float = field(default_factory=time.monotonic)


FrameListener: TypeAlias = Callable[[bytes, FrameMetadata], None]


class EventHub:
    """Listeners of browser events; a failing listener is logged and does not stop the others."""

    __slots__ = ("_listeners",)

    def __init__(self) -> None:
        self._listeners: list[BrowserEventListener] = []

    def add(self, listener: BrowserEventListener) -> Callable[[], None]:
        """Subscribe ``listener``; returns a function that unsubscribes it."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def emit(self, event: BrowserEvent) -> None:
        """Call every listener with ``event``, in subscription order."""
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                logger.exception("browser event listener failed")
