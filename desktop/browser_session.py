"""BrowserSession: the Qt bridge between a ``PlaywrightComputer`` and the live browser view."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QSize, Qt, Signal, Slot
from PySide6.QtGui import QImage, QImageReader

from core.tools.computer import ComputerRestartedError
from harnesses.browser import (
    BrowserAction,
    BrowserEvent,
    BrowserNavigated,
    BrowserRestarted,
    FrameMetadata,
    PlaywrightComputer,
)
from harnesses.browser.gated import ActionGate, GateState
from harnesses.browser.navigation import normalize_address

__all__ = ["BrowserSession", "LoggedAction", "PageInput"]

logger = logging.getLogger("desktop")

#: How long closing waits for the screencast to stop, and *Hand back* for the user's queued
#: input to reach the page, in seconds.
_STOP_TIMEOUT_S = 5.0

InputKind = Literal[
    "move", "down", "up", "wheel", "key_down", "key_up", "text", "goto", "back", "forward", "reload"
]


@dataclass(frozen=True, slots=True)
class LoggedAction:
    """One agent action for the view: what to mark on the frame and list in the log.

    Attributes:
        action: the harness event (viewport pixels, kind, text...).
        call_id: the ``computer_call`` it belongs to, when known (ties it to a tool card).
        wall_time: ``time.time()`` seconds when the action was reported.
    """

    action: BrowserAction
    call_id: str | None
    wall_time: float


@dataclass(frozen=True, slots=True)
class PageInput:
    """One input event of the user for the page, in viewport CSS pixels.

    Attributes:
        kind: ``move``/``down``/``up``/``wheel`` (mouse), ``key_down``/``key_up`` (a
            Playwright key name such as ``"Enter"``, ``"Shift"``, ``"a"``) or ``text`` (typed
            characters).
        x, y: the pointer position (mouse kinds).
        button: ``"left"``/``"right"``/``"middle"`` for ``down``/``up``.
        click_count: 2 for the press and release of a double click.
        dx, dy: wheel deltas in pixels (positive ``dy`` scrolls down).
        key: the key name for ``key_down``/``key_up``.
        text: the characters for ``text``; the typed address for ``goto`` (normalised like
            an address bar: ``localhost:8000`` → ``http://localhost:8000``). ``back``,
            ``forward`` and ``reload`` are the view's navigation buttons.
    """

    kind: InputKind
    x: float = 0.0
    y: float = 0.0
    button: str = "left"
    click_count: int = 1
    dx: float = 0.0
    dy: float = 0.0
    key: str = ""
    text: str = ""


def _decode(data: bytes, image_format: str, fit: tuple[int, int] | None) -> QImage:
    """Decode one frame (runs on the decoder thread; ``QImageReader.read`` releases the GIL).

    Args:
        data: JPEG or PNG bytes.
        image_format: ``"jpeg"`` or ``"png"``.
        fit: ``(width, height)`` in device pixels to scale into (aspect kept), or ``None``.

    Raises:
        ValueError: the bytes are not a readable image.
    """
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer, b"jpeg" if image_format == "jpeg" else b"png")
    size = reader.size()
    if fit is not None and size.isValid() and fit[0] > 0 and fit[1] > 0:
        scaled = size.scaled(QSize(*fit), Qt.AspectRatioMode.KeepAspectRatio)
        if scaled != size and not scaled.isEmpty():
            reader.setScaledSize(scaled)
    image = reader.read()
    buffer.close()
    if image.isNull():
        raise ValueError(f"undecodable {image_format} frame: {reader.errorString()}")
    return image


class BrowserSession(QObject):
    """Streams a browser to the view and lets the user take control of it.

    Frames of the CDP screencast are decoded on one worker thread, newest first: while a frame
    is decoding, a newer one replaces any waiting one (the older is dropped), so the GUI thread
    only ever receives the latest picture, already scaled to the view (see
    :meth:`set_view_size`). *Take control* pauses the shared :class:`ActionGate` (the agent's
    ``GatedComputer`` waits before its next action) and forwards :class:`PageInput` to
    ``page.mouse``/``page.keyboard`` in order on the event loop; *Hand back* releases held
    buttons and keys, then resumes the gate.

    Args:
        computer: the browser the agent drives.
        gate: the gate shared with the agent's ``GatedComputer`` (a new one when omitted).
        autostart: start the screencast at the agent's first action or navigation.
        quality: JPEG quality of the screencast frames (0-100).
        parent: the Qt parent.

    Signals:
        frameReady(QImage, FrameMetadata): a decoded frame, newest only.
        actionMarked(LoggedAction): the agent performed an action.
        urlChanged(str): the page's URL.
        controlChanged(bool): ``True`` when the user has control.
        agentChanged(bool): ``True`` while an agent run is going on (the status line says
            *idle* otherwise).
        gateChanged(GateState): the gate's state (which agent action waits or runs).
        streamingChanged(bool): the screencast started or stopped.
        notice(str, str): a message for the user and its level (``info``/``warning``/``error``).
    """

    frameReady = Signal(QImage, object)
    actionMarked = Signal(object)
    urlChanged = Signal(str)
    controlChanged = Signal(bool)
    gateChanged = Signal(object)
    streamingChanged = Signal(bool)
    notice = Signal(str, str)
    agentChanged = Signal(bool)

    def __init__(
        self,
        computer: PlaywrightComputer,
        gate: ActionGate | None = None,
        *,
        autostart: bool = True,
        quality: int = 80,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.computer = computer
        self.gate = gate if gate is not None else ActionGate()
        self._autostart = autostart
        self._quality = quality
        self._user_control = False
        self._url_at_take = ""
        self._agent_running = False
        self._streaming = False
        self._starting = False
        self._closed = False
        self._url = ""
        self._calls: list[str] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        # frames
        self._executor: ThreadPoolExecutor | None = None
        self._decoding: asyncio.Future[QImage] | None = None
        self._next: tuple[bytes, FrameMetadata] | None = None
        self._last: tuple[bytes, FrameMetadata] | None = None
        self._fit: tuple[int, int] | None = None
        #: Frames received from the screencast / decoded and emitted / dropped unseen.
        self.frames_received = 0
        self.frames_decoded = 0
        self.frames_dropped = 0
        # user input
        self._inputs: deque[PageInput] = deque()
        self._input_ready = asyncio.Event()
        self._drained = asyncio.Event()
        self._drained.set()
        self._input_task: asyncio.Task[None] | None = None
        self._held_buttons: set[str] = set()
        self._held_keys: set[str] = set()
        self._input_error_shown = False
        self._unsubscribe = [
            computer.add_listener(self._on_browser_event),
            self.gate.add_listener(self._on_gate),
        ]

    # -- state ---------------------------------------------------------------------------------
    @property
    def user_has_control(self) -> bool:
        """Whether the user has taken control (their input goes to the page)."""
        return self._user_control

    @property
    def agent_running(self) -> bool:
        """Whether an agent run is going on (:meth:`set_agent_running`)."""
        return self._agent_running

    @Slot(bool)
    def set_agent_running(self, running: bool) -> None:
        """The controller's ``runningChanged``: the status line's *idle* / *agent driving*."""
        if running != self._agent_running:
            self._agent_running = running
            self.agentChanged.emit(running)

    @property
    def streaming(self) -> bool:
        """Whether the screencast is running."""
        return self._streaming

    @property
    def current_url(self) -> str:
        """The last URL reported (``""`` before any page)."""
        return self._url

    @property
    def viewport_size(self) -> tuple[int, int]:
        """The browser viewport ``(width, height)`` in CSS pixels."""
        return self.computer.dimensions

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- lifecycle -----------------------------------------------------------------------------
    @Slot()
    def start(self) -> None:
        """Start the screencast (launching the browser if needed); errors become notices."""
        if self._closed or self._streaming or self._starting:
            return
        self._starting = True
        self._spawn(self._start())

    async def _start(self) -> None:
        try:
            await self.computer.start_screencast(self._on_frame, quality=self._quality)
        except ComputerRestartedError as exc:
            self.notice.emit(exc.note, "warning")
        except Exception as exc:
            self._starting = False
            logger.warning("browser screencast did not start: %s", exc)
            self.notice.emit(f"The live browser view could not start: {exc}", "error")
            return
        self._starting = False
        if self._closed:
            return
        self._streaming = True
        self.streamingChanged.emit(True)
        self._set_url(self.computer.current_url)

    async def close(self) -> None:
        """Stop the screencast, the input forwarding and the decoder; give control back."""
        if self._closed:
            return
        self._closed = True
        for remove in self._unsubscribe:
            remove()
        self._user_control = False
        self.gate.resume()
        if self._input_task is not None:
            self._input_task.cancel()
        for task in list(self._tasks):
            task.cancel()
        pending = [t for t in (self._input_task, *self._tasks) if t is not None]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if self._streaming or self._starting:
            try:  # a wedged browser must not hold up closing the window
                await asyncio.wait_for(self.computer.stop_screencast(), _STOP_TIMEOUT_S)
            except Exception as exc:  # TimeoutError included
                logger.debug("stopping the screencast: %s", exc)
        if self._streaming:
            self._streaming = False
            self.streamingChanged.emit(False)
        if self._decoding is not None:
            await asyncio.gather(self._decoding, return_exceptions=True)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    # -- frames --------------------------------------------------------------------------------
    @Slot(int, int)
    def set_view_size(self, width: int, height: int) -> None:
        """Decode frames to fit ``width`` x ``height`` device pixels (aspect kept); the last
        frame is decoded again at the new size."""
        fit = (max(1, int(width)), max(1, int(height)))
        if fit == self._fit:
            return
        self._fit = fit
        if self._last is not None and self._next is None and not self._closed:
            self._next = self._last
            if self._decoding is None:
                self._decode_next()

    def _on_frame(self, data: bytes, meta: FrameMetadata) -> None:
        if self._closed:
            return
        self.frames_received += 1
        if self._next is not None:
            self.frames_dropped += 1
        self._next = self._last = (data, meta)
        if meta.url and meta.url != self._url:
            self._set_url(meta.url)
        if self._decoding is None:
            self._decode_next()

    def _decode_next(self) -> None:
        assert self._next is not None
        data, meta = self._next
        self._next = None
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="tandem-frames")
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, _decode, data, meta.format, self._fit)
        self._decoding = future
        future.add_done_callback(lambda done: self._decoded(done, meta))

    def _decoded(self, future: asyncio.Future[QImage], meta: FrameMetadata) -> None:
        self._decoding = None
        if self._closed:
            return
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            logger.debug("dropping a frame: %s", error)
        else:
            self.frames_decoded += 1
            self.frameReady.emit(future.result(), meta)
        if self._next is not None:
            self._decode_next()

    # -- browser events --------------------------------------------------------------------------
    def _on_browser_event(self, event: BrowserEvent) -> None:
        if self._closed:
            return
        if isinstance(event, BrowserAction):
            call_id = self._calls[0] if self._calls else None
            self.actionMarked.emit(LoggedAction(event, call_id, time.time()))
            if event.url:
                self._set_url(event.url)
        elif isinstance(event, BrowserNavigated):
            self._set_url(event.url)
        elif isinstance(event, BrowserRestarted):
            self.notice.emit(event.note, "warning")
        if self._autostart:
            self.start()

    def _set_url(self, url: str) -> None:
        if url != self._url:
            self._url = url
            self.urlChanged.emit(url)

    def _on_gate(self, state: GateState) -> None:
        if not self._closed:
            self.gateChanged.emit(state)

    @Slot(str, str, str, str)
    def on_tool_started(self, call_id: str, kind: str, title: str, detail: str) -> None:
        """The controller's ``toolStarted``: a ``computer`` call's later actions carry its id."""
        if kind == "computer" and call_id not in self._calls:
            self._calls.append(call_id)

    @Slot(str, str, object, str)
    def on_tool_updated(self, call_id: str, status: str, duration: Any, summary: str) -> None:
        """The controller's ``toolUpdated``: a finished call stops owning actions."""
        if status in ("completed", "failed", "rejected", "killed", "cancelled", "interrupted") and call_id in self._calls:
            self._calls.remove(call_id)

    # -- control -------------------------------------------------------------------------------
    @Slot()
    def take_control(self) -> None:
        """Pause the agent's computer actions and forward the user's input to the page."""
        if self._closed or self._user_control:
            return
        self._user_control = True
        self._url_at_take = self.computer.current_url
        self.gate.pause()
        self.controlChanged.emit(True)

    @Slot()
    def hand_back(self) -> None:
        """Stop forwarding input; once the queued input ran and held buttons and keys are
        released, the agent's actions go on. When the user left the page on another URL than
        they took it on, the agent's next action is replaced by a note naming the URL (a
        ``BrowserNote``: a fresh screenshot and the note reach the model, issue 17)."""
        if not self._user_control:
            return
        self._user_control = False
        self.controlChanged.emit(False)
        for button in sorted(self._held_buttons):
            self._enqueue(PageInput("up", button=button))
        for key in sorted(self._held_keys):
            self._enqueue(PageInput("key_up", key=key))
        self._spawn(self._resume_after_input())

    async def _resume_after_input(self) -> None:
        try:
            await asyncio.wait_for(self.drain(), _STOP_TIMEOUT_S)
        except TimeoutError:  # a hung page must not keep the agent waiting for ever
            logger.warning("the user's input did not finish; handing back anyway")
        if not self._user_control:
            url = self.computer.current_url or "about:blank"
            if url != self._url_at_take:  # the agent's next action was planned elsewhere
                self.gate.leave_note(
                    "The user took control of the browser and has handed it back. The page is "
                    f"now {url}; your last screenshot is out of date (a fresh one is attached)."
                )
            self.gate.resume()

    @Slot(object)
    def send_input(self, event: PageInput) -> bool:
        """Queue one user input for the page (ignored unless the user has control).

        Returns:
            Whether the input was queued.
        """
        if self._closed or not self._user_control:
            return False
        self._enqueue(event)
        return True

    def _enqueue(self, event: PageInput) -> None:
        if event.kind == "move" and self._inputs and self._inputs[-1].kind == "move":
            self._inputs[-1] = event  # only the newest pointer position matters
        else:
            self._inputs.append(event)
        self._drained.clear()
        self._input_ready.set()
        if self._input_task is None or self._input_task.done():
            self._input_task = asyncio.ensure_future(self._forward_inputs())

    async def drain(self) -> None:
        """Return once every queued input has been sent to the page."""
        await self._drained.wait()

    async def _forward_inputs(self) -> None:
        while True:
            await self._input_ready.wait()
            while self._inputs:
                await self.gate.idle()  # never interleave with an agent action still running
                event = self._inputs.popleft()
                try:
                    await self._perform(event)
                except Exception as exc:
                    logger.debug("forwarding %s to the page failed: %s", event.kind, exc)
                    if not self._input_error_shown:
                        self._input_error_shown = True
                        self.notice.emit(f"Your input did not reach the page: {exc}", "warning")
            self._input_ready.clear()
            self._drained.set()

    async def _perform(self, event: PageInput) -> None:
        page = self.computer.page
        if page is None or page.is_closed():
            return
        mouse, keyboard = page.mouse, page.keyboard
        kind = event.kind
        if kind == "move":
            await mouse.move(event.x, event.y)
        elif kind == "down":
            await mouse.move(event.x, event.y)
            await mouse.down(button=event.button, click_count=event.click_count)
            self._held_buttons.add(event.button)
        elif kind == "up":
            if event.x or event.y:
                await mouse.move(event.x, event.y)
            await mouse.up(button=event.button, click_count=event.click_count)
            self._held_buttons.discard(event.button)
        elif kind == "wheel":
            await mouse.move(event.x, event.y)
            await mouse.wheel(event.dx, event.dy)
        elif kind == "key_down":
            await keyboard.down(event.key)
            self._held_keys.add(event.key)
        elif kind == "key_up":
            await keyboard.up(event.key)
            self._held_keys.discard(event.key)
        elif kind == "text":
            await keyboard.type(event.text)
        elif kind == "goto":
            try:
                url = normalize_address(event.text)
            except ValueError as exc:
                self.notice.emit(f"Not an address: {exc}", "warning")
                return
            try:
                await page.goto(url)
            except Exception as exc:
                self.notice.emit(f"Could not open {url}: {str(exc).splitlines()[0]}", "warning")
        elif kind == "back":
            await page.go_back()
        elif kind == "forward":
            await page.go_forward()
        elif kind == "reload":
            await page.reload()
