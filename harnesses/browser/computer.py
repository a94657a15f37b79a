"""``PlaywrightComputer``: an ``AsyncComputer`` driving Chromium through Playwright (issue "Browser")."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from core.tools.computer import AsyncComputer, Button, ComputerRestartedError, Environment

from .discovery import LAUNCH_ARGS, default_profile_dir, find_chromium
from .events import (
    BrowserAction,
    BrowserEventListener,
    BrowserNavigated,
    BrowserRestarted,
    EventHub,
    FrameListener,
)
from .keys import to_playwright_keys
from .navigation import AddressBarGesture, BrowserNote
from .screencast import Screencast

__all__ = ["PlaywrightComputer"]

logger = logging.getLogger("harnesses")

T = TypeVar("T")

_BUTTONS = {"left": "left", "right": "right", "wheel": "middle", "middle": "middle"}


def _pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _find_browser_pid(profile: Path) -> int | None:
    """The main Chromium process using ``profile`` (its command line names the profile and has
    no ``--type=`` switch, which only helper processes carry)."""
    marker = f"--user-data-dir={profile}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
        except OSError:
            continue
        if marker in args and not any(arg.startswith(b"--type=") for arg in args):
            return int(entry)
    return None


def _playwright_error() -> type[Exception]:
    """Playwright's ``Error``, imported at first use: ``playwright.async_api`` costs 0.1-0.3 s
    at import and the window's start-up does not need it (issue 15)."""
    from playwright.async_api import Error

    return Error


class PlaywrightComputer(AsyncComputer):
    """A Chromium browser as the model's computer (spec §6.1), with a live-view feed.

    The browser starts on the first action (or :meth:`start`) with the flags of
    :data:`~harnesses.browser.discovery.LAUNCH_ARGS`; the viewport is ``dimensions`` and
    coordinates are viewport pixels (the screenshot's pixels). When the browser has been closed
    or has crashed, the next action starts it again and raises
    :class:`~core.tools.computer.ComputerRestartedError` (the tool sends a fresh screenshot and
    the error's note to the model); the action is not performed on the new page.

    Args:
        dimensions: ``(width, height)`` of the viewport in pixels.
        start_url: opened after every (re)start; ``None`` keeps the blank page.
        profile_dir: the persistent profile directory (cookies and logins survive restarts).
        project_dir: use the per-project profile :func:`default_profile_dir` (ignored when
            ``profile_dir`` is given).
        throwaway: use a temporary profile deleted by :meth:`close` (also the default when
            neither ``profile_dir`` nor ``project_dir`` is given).
        executable: the browser setting (a path); see :func:`find_chromium` for the search.
        headless: run without a window.
        extra_args: more Chromium switches.
        wait_ms: how long the ``wait`` action waits, in milliseconds.
        action_timeout_ms: Playwright's default timeout for page operations, in milliseconds.

    Raises:
        BrowserNotFoundError: (from the first action) no Chromium found.
    """

    def __init__(
        self,
        *,
        dimensions: tuple[int, int] = (1024, 768),
        start_url: str | None = None,
        profile_dir: str | os.PathLike[str] | None = None,
        project_dir: str | os.PathLike[str] | None = None,
        throwaway: bool = False,
        executable: str | None = None,
        headless: bool = True,
        extra_args: Sequence[str] = (),
        wait_ms: int = 1000,
        action_timeout_ms: int = 15_000,
    ) -> None:
        width, height = dimensions
        if width <= 0 or height <= 0:
            raise ValueError(f"dimensions must be positive, got {dimensions!r}")
        self._dimensions = (int(width), int(height))
        self.start_url = start_url
        if throwaway or (profile_dir is None and project_dir is None):
            self._profile: Path | None = None
        elif profile_dir is not None:
            self._profile = Path(profile_dir)
        else:
            assert project_dir is not None
            self._profile = default_profile_dir(project_dir)
        self._throwaway_dir: Path | None = None
        self._executable = executable
        self._headless = headless
        self._extra_args = tuple(extra_args)
        self._wait_s = max(0, wait_ms) / 1000
        self._timeout_ms = action_timeout_ms
        self._pw: Any = None
        self._context: Any = None
        self._page: Any = None
        self._dead: str | None = None
        self._closing = False
        self._pid: int | None = None
        self._lock = asyncio.Lock()
        self._events = EventHub()
        self._screencast: Screencast | None = None
        self._screencast_args: tuple[FrameListener, dict[str, Any]] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._address = AddressBarGesture()
        #: How many times the browser was restarted after dying.
        self.restarts = 0

    # -- AsyncComputer properties -------------------------------------------------------------
    @property
    def environment(self) -> Environment:
        """Always ``"browser"``."""
        return "browser"

    @property
    def dimensions(self) -> tuple[int, int]:
        """The viewport ``(width, height)`` in pixels."""
        return self._dimensions

    @property
    def current_url(self) -> str:
        """The URL of the page the agent acts on; before start (or while dead), the start URL
        the next action will open (``""`` for a blank page)."""
        page = self._page
        if page is None or page.is_closed() or self._dead is not None:
            return self.start_url or ""
        return str(page.url)

    @property
    def address_bar_text(self) -> str | None:
        """The address typed after Ctrl+L so far, or ``None`` when the (virtual) address bar
        is not focused (read by ``AllowedDomainsPolicy`` to judge an Enter)."""
        return self._address.text

    @property
    def profile_dir(self) -> Path | None:
        """The profile in use (the temporary one for a throw-away profile; ``None`` before)."""
        return self._profile or self._throwaway_dir

    @property
    def browser_pid(self) -> int | None:
        """The main Chromium process id, when running (for diagnostics and tests)."""
        return self._pid

    @property
    def page(self) -> Any:
        """The Playwright ``Page`` the agent acts on (``None`` before start)."""
        return self._page

    @property
    def is_running(self) -> bool:
        """Whether a browser is started and not known to be dead."""
        return self._context is not None and self._dead is None

    def add_listener(self, listener: BrowserEventListener) -> Callable[[], None]:
        """Subscribe to :class:`BrowserAction`/:class:`BrowserNavigated`/:class:`BrowserRestarted`
        events (called on the event loop); returns the unsubscribe function."""
        return self._events.add(listener)

    # -- lifecycle ----------------------------------------------------------------------------
    async def __aenter__(self) -> PlaywrightComputer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Launch the browser if it is not running (a dead one is restarted without a note).

        Raises:
            BrowserNotFoundError: no Chromium found.
        """
        async with self._lock:
            if self._context is None:
                await self._launch()
            elif self._dead is not None:
                await self._restart(self._dead)

    async def close(self) -> None:
        """Stop the screencast, close the browser and Playwright; delete a throw-away profile."""
        async with self._lock:
            await self._stop_screencast_session()
            self._screencast_args = None
            await self._close_context()
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            if self._pw is not None:
                pw, self._pw = self._pw, None
                with contextlib.suppress(Exception):
                    await pw.stop()
            if self._throwaway_dir is not None:
                shutil.rmtree(self._throwaway_dir, ignore_errors=True)
                self._throwaway_dir = None

    async def _close_context(self) -> None:
        context, self._context, self._page = self._context, None, None
        if context is None:
            return
        self._closing = True
        try:
            with contextlib.suppress(Exception):
                await context.close()
        finally:
            self._closing = False
            self._dead = None
            self._pid = None

    def _profile_path(self) -> Path:
        if self._profile is not None:
            self._profile.mkdir(parents=True, exist_ok=True)
            return self._profile.resolve()
        if self._throwaway_dir is None:
            self._throwaway_dir = Path(tempfile.mkdtemp(prefix="tandem-browser-"))
        return self._throwaway_dir

    async def _launch(self) -> None:
        executable = find_chromium(self._executable)
        if self._pw is None:
            from playwright.async_api import async_playwright

            self._pw = await async_playwright().start()
        profile = self._profile_path()
        width, height = self._dimensions
        context = await self._pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=executable,
            headless=self._headless,
            args=[*LAUNCH_ARGS, *self._extra_args],
            viewport={"width": width, "height": height},
        )
        context.set_default_timeout(self._timeout_ms)
        context.on("close", lambda _ctx: self._mark_dead("closed"))
        context.on("page", self._on_new_page)
        self._context = context
        self._dead = None
        page = context.pages[0] if context.pages else await context.new_page()
        self._attach(page)
        if self.start_url:
            await page.goto(self.start_url)
        self._pid = _find_browser_pid(profile)
        if self._screencast_args is not None:
            await self._start_screencast_session()

    def _mark_dead(self, reason: str) -> None:
        if not self._closing and self._dead is None:
            logger.warning("the browser %s", reason)
            self._dead = reason

    def _attach(self, page: Any) -> None:
        self._page = page
        page.on("crash", lambda _page: self._mark_dead("crashed") if page is self._page else None)
        page.on("framenavigated", lambda frame: self._on_navigated(page, frame))

    def _on_navigated(self, page: Any, frame: Any) -> None:
        if page is self._page and frame == page.main_frame:
            self._events.emit(BrowserNavigated(url=str(frame.url)))

    def _on_new_page(self, page: Any) -> None:
        # A popup or new tab opened by the agent's action: act (and stream) there from now on.
        if page is self._page:
            return
        self._attach(page)
        if self._screencast_args is not None:
            task = asyncio.ensure_future(self._move_screencast())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _move_screencast(self) -> None:
        await self._stop_screencast_session()
        with contextlib.suppress(_playwright_error()):
            await self._start_screencast_session()

    def _restart_note(self, reason: str, action: str | None) -> str:
        what = "crashed" if reason == "crashed" else "was closed"
        where = f" at {self.start_url}" if self.start_url else " on a blank page"
        done = (
            f"The requested action ({action}) and the rest of this computer call were not "
            "performed. "
            if action
            else ""
        )
        return (
            f"The browser {what} and has been restarted{where}. {done}Open pages and unsaved "
            "input were lost; cookies and logins in the profile were kept. Look at the new "
            "screenshot before continuing."
        )

    async def _restart(self, reason: str) -> None:
        await self._stop_screencast_session()
        await self._close_context()
        await self._launch()
        self.restarts += 1

    async def _recover(self, reason: str, action: str | None) -> ComputerRestartedError:
        await self._restart(reason)
        note = self._restart_note(reason, action)
        self._events.emit(BrowserRestarted(reason=reason, note=note))
        return ComputerRestartedError(note)

    def _death_reason(self, exc: BaseException) -> str | None:
        if self._dead is not None:
            return self._dead
        page = self._page
        if page is None or page.is_closed():
            return "closed"
        if self._pid is not None and not _pid_alive(self._pid):
            return "closed"
        if type(exc).__name__ == "TargetClosedError" or "has been closed" in str(exc):
            return "closed"
        if "crash" in str(exc).lower():
            return "crashed"
        return None

    async def _act(self, action: str, run: Callable[[Any], Awaitable[T]]) -> T:
        """Run ``run(page)`` on a live browser, starting or restarting it first.

        Raises:
            ComputerRestartedError: the browser was dead (before or during the action) and has
                been restarted; the action was not (completely) performed.
        """
        if action not in ("keypress", "type", "screenshot", "wait"):
            self._address.reset()  # a click or a scroll leaves the address bar
        async with self._lock:
            if self._context is None:
                await self._launch()
            elif self._dead is not None or self._page is None or self._page.is_closed():
                raise await self._recover(self._dead or "closed", action)
            try:
                return await run(self._page)
            except _playwright_error() as exc:
                reason = self._death_reason(exc)
                if reason is None:
                    raise
                raise await self._recover(reason, action) from exc

    def _emit(self, kind: Any, **fields: Any) -> None:
        self._events.emit(BrowserAction(kind=kind, url=self.current_url, **fields))

    @contextlib.asynccontextmanager
    async def _held(self, page: Any, keys: Sequence[str] | None) -> AsyncIterator[None]:
        mapped = to_playwright_keys(list(keys or []))
        for key in mapped:
            await page.keyboard.down(key)
        try:
            yield
        finally:
            for key in reversed(mapped):
                await page.keyboard.up(key)

    # -- screencast (live view) ---------------------------------------------------------------
    async def start_screencast(
        self,
        on_frame: FrameListener,
        *,
        image_format: str = "jpeg",
        quality: int = 80,
        max_size: tuple[int, int] | None = None,
        every_nth_frame: int = 1,
    ) -> None:
        """Stream frames of the page to ``on_frame(data, FrameMetadata)`` until
        :meth:`stop_screencast`; follows new tabs and restarts. Starts the browser if needed.

        Frames come only when pixels change; a view should keep showing the last one.
        """
        async with self._lock:
            await self._stop_screencast_session()
            self._screencast_args = (
                on_frame,
                {
                    "image_format": image_format,
                    "quality": quality,
                    "max_size": max_size,
                    "every_nth_frame": every_nth_frame,
                },
            )
            if self._context is None:
                await self._launch()  # starts the screencast too
            elif self._dead is not None:
                raise await self._recover(self._dead, None)
            else:
                await self._start_screencast_session()

    async def stop_screencast(self) -> None:
        """Stop streaming frames (no frame is delivered after this returns)."""
        async with self._lock:
            self._screencast_args = None
            await self._stop_screencast_session()

    @property
    def screencast_frames(self) -> int:
        """Frames delivered by the current screencast session (0 when none)."""
        return self._screencast.frames if self._screencast is not None else 0

    async def _start_screencast_session(self) -> None:
        if self._screencast_args is None or self._page is None:
            return
        on_frame, options = self._screencast_args
        cast = Screencast(self._page, on_frame, url=lambda: self.current_url, **options)
        await cast.start()
        self._screencast = cast

    async def _stop_screencast_session(self) -> None:
        cast, self._screencast = self._screencast, None
        if cast is not None:
            await cast.stop()

    # -- AsyncComputer actions (spec §6.1, §6.4) ----------------------------------------------
    async def screenshot(self) -> str:
        """The viewport as a base64 PNG (no ``data:`` prefix)."""

        async def run(page: Any) -> str:
            data: bytes = await page.screenshot(type="png")
            return base64.b64encode(data).decode("ascii")

        return await self._act("screenshot", run)

    async def click(
        self, x: int, y: int, button: Button = "left", *, keys: list[str] | None = None
    ) -> None:
        """Click at ``(x, y)``; ``wheel`` is the middle button, ``back``/``forward`` navigate
        the history; ``keys`` are modifiers held during the click."""

        async def run(page: Any) -> None:
            if button == "back":
                await page.go_back()
            elif button == "forward":
                await page.go_forward()
            else:
                async with self._held(page, keys):
                    await page.mouse.click(x, y, button=_BUTTONS.get(button, "left"))

        await self._act("click", run)
        self._emit("click", x=x, y=y, button=button, keys=tuple(keys or ()))

    async def double_click(self, x: int, y: int, *, keys: list[str] | None = None) -> None:
        """Double-click the left button at ``(x, y)``."""

        async def run(page: Any) -> None:
            async with self._held(page, keys):
                await page.mouse.dblclick(x, y)

        await self._act("double_click", run)
        self._emit("double_click", x=x, y=y, button="left", keys=tuple(keys or ()))

    async def scroll(
        self, x: int, y: int, scroll_x: int, scroll_y: int, *, keys: list[str] | None = None
    ) -> None:
        """Move the pointer to ``(x, y)`` and turn the wheel by ``(scroll_x, scroll_y)`` pixels."""

        async def run(page: Any) -> None:
            async with self._held(page, keys):
                await page.mouse.move(x, y)
                await page.mouse.wheel(scroll_x, scroll_y)

        await self._act("scroll", run)
        self._emit("scroll", x=x, y=y, scroll=(scroll_x, scroll_y), keys=tuple(keys or ()))

    async def type(self, text: str) -> None:
        """Type ``text`` into the focused element, or into the address after Ctrl+L."""
        if self._address.on_type(text):
            self._emit("type", text=text)
            return

        async def run(page: Any) -> None:
            await page.keyboard.type(text)

        await self._act("type", run)
        self._emit("type", text=text)

    async def wait(self) -> None:
        """Let the page settle for ``wait_ms`` milliseconds."""

        async def run(page: Any) -> None:
            await asyncio.sleep(self._wait_s)

        await self._act("wait", run)
        self._emit("wait")

    async def move(self, x: int, y: int, *, keys: list[str] | None = None) -> None:
        """Move the pointer to ``(x, y)``."""

        async def run(page: Any) -> None:
            async with self._held(page, keys):
                await page.mouse.move(x, y)

        await self._act("move", run)
        self._emit("move", x=x, y=y, keys=tuple(keys or ()))

    async def keypress(self, keys: list[str]) -> None:
        """Press ``keys`` as one combination (``["CTRL", "A"]``, ``["ENTER"]``, ``["ctrl+c"]``)."""
        mapped = to_playwright_keys(keys)
        if not mapped:
            return
        gesture = self._address.on_keys(mapped)
        if gesture is not None:  # the address-bar gesture (Ctrl+L, typing, Enter)
            self._emit("keypress", text="+".join(mapped))
            if gesture == "submit":
                await self._open_typed_address()
            return

        async def run(page: Any) -> None:
            for key in mapped[:-1]:
                await page.keyboard.down(key)
            try:
                await page.keyboard.press(mapped[-1])
            finally:
                for key in reversed(mapped[:-1]):
                    await page.keyboard.up(key)

        await self._act("keypress", run)
        self._emit("keypress", text="+".join(mapped))

    # -- navigation (issue 17: goto/back/forward tools, the address-bar gesture) ---------------
    async def goto(self, url: str) -> None:
        """Load ``url`` in the page (waits for its ``load`` event).

        Raises:
            playwright.async_api.Error: the page could not be loaded (e.g. connection refused).
            ComputerRestartedError: the browser was dead and has been restarted.
        """

        async def run(page: Any) -> None:
            await page.goto(url)

        await self._act("goto", run)

    async def back(self) -> None:
        """Go back one entry in the page's history (nothing happens at its start)."""

        async def run(page: Any) -> None:
            await page.go_back()

        await self._act("back", run)

    async def forward(self) -> None:
        """Go forward one entry in the page's history."""

        async def run(page: Any) -> None:
            await page.go_forward()

        await self._act("forward", run)

    async def reload(self) -> None:
        """Reload the page."""

        async def run(page: Any) -> None:
            await page.reload()

        await self._act("reload", run)

    async def _open_typed_address(self) -> None:
        """Enter after Ctrl+L: load the typed address. A bad address or a failed load is a
        note for the model (:class:`BrowserNote`), not a failed run."""
        try:
            url = self._address.submit()
        except ValueError as exc:
            raise BrowserNote(f"The address bar did not navigate: {exc}.") from None
        try:
            await self.goto(url)
        except _playwright_error() as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise BrowserNote(f"The browser could not open {url}: {message}") from None

    async def drag(self, path: list[tuple[int, int]], *, keys: list[str] | None = None) -> None:
        """Press the left button at ``path[0]``, move through every point, release at the end."""
        points = [(int(x), int(y)) for x, y in path]
        if not points:
            return

        async def run(page: Any) -> None:
            async with self._held(page, keys):
                await page.mouse.move(*points[0])
                await page.mouse.down()
                try:
                    for point in points[1:]:
                        await page.mouse.move(*point, steps=2)
                finally:
                    await page.mouse.up()

        await self._act("drag", run)
        x, y = points[-1]
        self._emit("drag", x=x, y=y, path=tuple(points), keys=tuple(keys or ()))
