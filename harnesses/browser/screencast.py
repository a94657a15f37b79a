"""CDP screencast of one Playwright page: frames delivered to a callback, each one acknowledged."""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable
from typing import Any

from .events import FrameListener, FrameMetadata

__all__ = ["Screencast"]

logger = logging.getLogger("harnesses")


class Screencast:
    """Streams ``Page.screencastFrame`` events of ``page`` to ``on_frame`` (platform notes).

    Chromium sends frames only when pixels change (56-60 fps on an animated page, almost none on
    a still one), so a view keeps the last frame it got. Every frame is acknowledged with
    ``Page.screencastFrameAck`` or Chromium stops sending.

    Args:
        page: a Playwright async ``Page``.
        on_frame: ``(data, FrameMetadata)``; ``data`` is the encoded image (JPEG or PNG bytes).
            Called on the event loop; keep it quick.
        url: returns the current page URL, stamped on each frame's metadata.
        image_format: ``"jpeg"`` (smaller, faster) or ``"png"``.
        quality: JPEG quality 0-100.
        max_size: ``(max_width, max_height)`` in pixels, or ``None`` for the viewport size.
        every_nth_frame: send one frame in ``n``.
    """

    def __init__(
        self,
        page: Any,
        on_frame: FrameListener,
        *,
        url: Callable[[], str],
        image_format: str = "jpeg",
        quality: int = 80,
        max_size: tuple[int, int] | None = None,
        every_nth_frame: int = 1,
    ) -> None:
        if image_format not in ("jpeg", "png"):
            raise ValueError(f"image_format must be 'jpeg' or 'png', got {image_format!r}")
        self._page = page
        self._on_frame = on_frame
        self._url = url
        self._format = image_format
        self._quality = quality
        self._max_size = max_size
        self._every_nth = max(1, every_nth_frame)
        self._session: Any = None
        self._acks: set[asyncio.Task[Any]] = set()
        self.frames = 0

    @property
    def running(self) -> bool:
        """Whether the screencast has been started and not stopped."""
        return self._session is not None

    async def start(self) -> None:
        """Open a CDP session on the page and start the screencast."""
        if self._session is not None:
            return
        session = await self._page.context.new_cdp_session(self._page)
        session.on("Page.screencastFrame", self._handle)
        params: dict[str, Any] = {"format": self._format, "everyNthFrame": self._every_nth}
        if self._format == "jpeg":
            params["quality"] = self._quality
        if self._max_size is not None:
            params["maxWidth"], params["maxHeight"] = self._max_size
        self._session = session
        try:
            await session.send("Page.startScreencast", params)
        except Exception:
            self._session = None
            raise

    def _handle(self, params: dict[str, Any]) -> None:
        session = self._session
        if session is None:
            return
        ack = asyncio.ensure_future(
            session.send("Page.screencastFrameAck", {"sessionId": params["sessionId"]})
        )
        self._acks.add(ack)
        ack.add_done_callback(self._ack_done)
        meta = params.get("metadata") or {}
        frame = FrameMetadata(
            format=self._format,
            device_width=float(meta.get("deviceWidth", 0)),
            device_height=float(meta.get("deviceHeight", 0)),
            page_scale_factor=float(meta.get("pageScaleFactor", 1.0)),
            offset_top=float(meta.get("offsetTop", 0.0)),
            scroll_x=float(meta.get("scrollOffsetX", 0.0)),
            scroll_y=float(meta.get("scrollOffsetY", 0.0)),
            timestamp=meta.get("timestamp"),
            url=self._url(),
        )
        self.frames += 1
        try:
            self._on_frame(base64.b64decode(params["data"]), frame)
        except Exception:
            logger.exception("screencast frame listener failed")

    def _ack_done(self, task: asyncio.Task[Any]) -> None:
        self._acks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.debug("screencast ack failed: %s", task.exception())

    async def stop(self) -> None:
        """Stop the screencast and detach (the listener goes first, so no late ack fails)."""
        session, self._session = self._session, None
        if session is None:
            return
        session.remove_listener("Page.screencastFrame", self._handle)
        try:
            await session.send("Page.stopScreencast")
            await session.detach()
        except Exception as exc:  # the page or browser may already be gone
            logger.debug("stopping the screencast: %s", exc)
        if self._acks:
            await asyncio.gather(*self._acks, return_exceptions=True)
