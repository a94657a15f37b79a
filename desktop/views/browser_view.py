"""BrowserView: the live browser, the agent's actions marked on it, an action log, take-over."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.browser_session import BrowserSession, LoggedAction, PageInput
from harnesses.browser import BrowserAction, FrameMetadata
from harnesses.browser.gated import GateState
from resources import read_text

__all__ = ["BrowserView", "describe_action"]

#: How long an action stays marked on the frame, in seconds.
MARK_S = 1.6
_LOG_LIMIT = 1000
_LOG_COLORS = {"user": "#e3b341", "warning": "#e3b341", "error": "#ff7b72", "info": "#8b949e"}
_CANVAS_BG = QColor("#0f1115")
_AGENT = QColor("#56d4dd")
_USER = QColor("#e3b341")
_STYLE = """
BrowserView { background: #15171c; color: #c9d1d9; }
QLineEdit#browserUrl {
    background: #0f1115; color: #c9d1d9; border: 1px solid #2d323b; border-radius: 6px;
    padding: 3px 8px; selection-background-color: #264f78;
}
QLabel#browserState { border-radius: 11px; padding: 1px 10px; font-weight: bold; }
QLabel#browserState[state="agent"] { color: #56d4dd; background: #143338; }
QLabel#browserState[state="user"] { color: #e3b341; background: #3d2e12; }
QLabel#browserState[state="idle"] { color: #8b949e; background: #21262d; }
QLineEdit#browserUrl[editable="true"] { border-color: #7a5b14; color: #f0f6fc; }
QToolButton#controlButton { padding: 3px 12px; font-weight: bold; }
QToolButton#controlButton[mode="take"] { color: #f0f6fc; background: #2b3340; border-color: #3f6fa8; }
QToolButton#controlButton[mode="give"] { color: #e3b341; background: #3d2e12; border-color: #7a5b14; }
QListWidget#browserLog {
    background: #15171c; color: #c9d1d9; border: none; border-top: 1px solid #2d323b;
    outline: none;
}
QListWidget#browserLog::item { padding: 2px 6px; }
QListWidget#browserLog::item:selected { background: #2b3340; color: #f0f6fc; }
QLabel#browserLogHeader { color: #8b949e; font-weight: bold; }
"""

# Qt keys the page knows by another name (Playwright's key names, UI Events ``key`` values).
_KEY_NAMES: dict[int, str] = {
    Qt.Key.Key_Return: "Enter",
    Qt.Key.Key_Enter: "Enter",
    Qt.Key.Key_Tab: "Tab",
    Qt.Key.Key_Backtab: "Tab",
    Qt.Key.Key_Backspace: "Backspace",
    Qt.Key.Key_Delete: "Delete",
    Qt.Key.Key_Insert: "Insert",
    Qt.Key.Key_Escape: "Escape",
    Qt.Key.Key_Left: "ArrowLeft",
    Qt.Key.Key_Right: "ArrowRight",
    Qt.Key.Key_Up: "ArrowUp",
    Qt.Key.Key_Down: "ArrowDown",
    Qt.Key.Key_Home: "Home",
    Qt.Key.Key_End: "End",
    Qt.Key.Key_PageUp: "PageUp",
    Qt.Key.Key_PageDown: "PageDown",
    Qt.Key.Key_Shift: "Shift",
    Qt.Key.Key_Control: "Control",
    Qt.Key.Key_Alt: "Alt",
    Qt.Key.Key_Meta: "Meta",
    **{getattr(Qt.Key, f"Key_F{n}"): f"F{n}" for n in range(1, 13)},
}
_BUTTONS = {
    Qt.MouseButton.LeftButton: "left",
    Qt.MouseButton.RightButton: "right",
    Qt.MouseButton.MiddleButton: "middle",
}
_SHORTCUT_MODIFIERS = (
    Qt.KeyboardModifier.ControlModifier
    | Qt.KeyboardModifier.AltModifier
    | Qt.KeyboardModifier.MetaModifier
)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_action(action: BrowserAction) -> str:
    """A one-line description of an agent action, e.g. ``click (100, 40)``, ``type "Ada"``."""
    at = f"({action.x}, {action.y})"
    keys = f" with {'+'.join(action.keys)}" if action.keys else ""
    kind = action.kind
    if kind == "click":
        button = "" if action.button in (None, "left") else f" {action.button}"
        return f"click{button} {at}{keys}"
    if kind == "double_click":
        return f"double-click {at}{keys}"
    if kind == "drag" and action.path:
        (x0, y0), (x1, y1) = action.path[0], action.path[-1]
        return f"drag ({x0}, {y0}) → ({x1}, {y1}){keys}"
    if kind == "type":
        return f'type "{_short(action.text or "")}"'
    if kind == "keypress":
        return f"press {action.text or ''}"
    if kind == "scroll":
        dx, dy = action.scroll or (0, 0)
        return f"scroll ({dx}, {dy}) at {at}{keys}"
    if kind == "move":
        return f"move to {at}"
    return kind


@dataclass(slots=True)
class _Mark:
    kind: str
    points: tuple[tuple[float, float], ...]
    text: str
    born: float
    user: bool = False
    anchor: tuple[float, float] | None = None  # where a label goes (page pixels)


class _FrameCanvas(QWidget):
    """Paints the newest frame (aspect kept) and the marks; maps and forwards user input."""

    framePainted = Signal()

    def __init__(self, view: BrowserView) -> None:
        super().__init__(view)
        self._session = view.session
        self.setObjectName("browserCanvas")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setMinimumSize(160, 120)
        self.image: QImage | None = None
        self.meta: FrameMetadata | None = None
        self._serial = 0
        self._painted_serial = 0
        #: Paints that showed a frame not painted before (frames painted, for tests and bench).
        self.frames_painted = 0
        self.marks: list[_Mark] = []
        #: Marks added so far (agent actions and the user's clicks).
        self.marks_added = 0
        self._pointer: tuple[float, float] | None = None
        self._click_count = 1
        self._fade = QTimer(self, interval=33)
        self._fade.timeout.connect(self._on_fade)
        self.setToolTip("The agent's browser. Take control to use it yourself.")

    # -- geometry ----------------------------------------------------------------------------
    def page_size(self) -> QSizeF:
        """The page viewport in CSS pixels (from the frame, else the browser's dimensions)."""
        meta = self.meta
        if meta is not None and meta.device_width > 0 and meta.device_height > 0:
            return QSizeF(meta.device_width, meta.device_height)
        width, height = self._session.viewport_size
        return QSizeF(width, height)

    def frame_rect(self) -> QRectF:
        """Where the frame is drawn: the page scaled into the widget, aspect kept, centred."""
        page = self.page_size()
        size = page.scaled(QSizeF(self.size()), Qt.AspectRatioMode.KeepAspectRatio)
        x = (self.width() - size.width()) / 2
        y = (self.height() - size.height()) / 2
        return QRectF(x, y, size.width(), size.height())

    def to_page(self, pos: QPointF) -> tuple[float, float]:
        """Widget coordinates to page CSS pixels (clamped to the page)."""
        rect, page = self.frame_rect(), self.page_size()
        if rect.width() <= 0 or rect.height() <= 0:
            return (0.0, 0.0)
        x = (pos.x() - rect.x()) * page.width() / rect.width()
        y = (pos.y() - rect.y()) * page.height() / rect.height()
        return (
            round(min(max(x, 0.0), page.width() - 1), 1),
            round(min(max(y, 0.0), page.height() - 1), 1),
        )

    def to_widget(self, x: float, y: float) -> QPointF:
        """Page CSS pixels to widget coordinates."""
        rect, page = self.frame_rect(), self.page_size()
        return QPointF(
            rect.x() + x * rect.width() / max(page.width(), 1.0),
            rect.y() + y * rect.height() / max(page.height(), 1.0),
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._request_frame_size()

    def _request_frame_size(self) -> None:
        # Frames come decoded at the size they are drawn, so painting is a plain copy.
        rect, ratio = self.frame_rect(), self.devicePixelRatioF()
        self._session.set_view_size(round(rect.width() * ratio), round(rect.height() * ratio))

    # -- frames and marks --------------------------------------------------------------------
    def set_frame(self, image: QImage, meta: FrameMetadata) -> None:
        resized = self.meta is None or (
            (meta.device_width, meta.device_height)
            != (self.meta.device_width, self.meta.device_height)
        )
        image.setDevicePixelRatio(self.devicePixelRatioF())
        self.image, self.meta = image, meta
        self._serial += 1
        if resized:  # the page's aspect may have changed: frames should fit the new rect
            self._request_frame_size()
        self.update()

    def add_mark(self, mark: _Mark) -> None:
        self.marks_added += 1
        if mark.points:
            self._pointer = mark.points[-1]
        if mark.text and mark.anchor is None:
            mark.anchor = mark.points[-1] if mark.points else self._pointer
        self.marks.append(mark)
        if not self._fade.isActive():
            self._fade.start()
        self.update()

    def _on_fade(self) -> None:
        now = time.monotonic()
        self.marks = [m for m in self.marks if now - m.born < MARK_S]
        if not self.marks:
            self._fade.stop()
        self.update()

    # -- painting ----------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), _CANVAS_BG)
        rect = self.frame_rect()
        if self.image is None:
            painter.setPen(QColor("#6e7681"))
            painter.drawText(
                self.rect(),
                Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                "No frames yet.\nThe live view starts when the agent uses the browser.",
            )
        else:
            logical = self.image.deviceIndependentSize()
            if (
                abs(logical.width() - rect.width()) < 1
                and abs(logical.height() - rect.height()) < 1
            ):
                painter.drawImage(rect.topLeft(), self.image)
            else:  # a frame decoded for another size (until the next one comes)
                painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
                painter.drawImage(rect, self.image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        now = time.monotonic()
        stacked: dict[tuple[float, float] | None, int] = {}
        for mark in self.marks:
            self._paint_mark(painter, mark, now, rect, stacked)
        if self._session.user_has_control:
            painter.setPen(QPen(_USER, 3))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(rect.adjusted(1.5, 1.5, -1.5, -1.5))
        painter.end()
        if self.image is not None and self._serial != self._painted_serial:
            self._painted_serial = self._serial
            self.frames_painted += 1
            self.framePainted.emit()

    def _paint_mark(
        self,
        painter: QPainter,
        mark: _Mark,
        now: float,
        rect: QRectF,
        stacked: dict[tuple[float, float] | None, int],
    ) -> None:
        age = (now - mark.born) / MARK_S
        if age >= 1:
            return
        alpha = 1.0 - age * age
        color = QColor(_USER if mark.user else _AGENT)
        color.setAlphaF(alpha)
        fill = QColor(color)
        fill.setAlphaF(alpha * 0.25)
        points = [self.to_widget(x, y) for x, y in mark.points]
        painter.setPen(QPen(color, 2.5))
        if mark.kind == "drag" and len(points) > 1:
            path = QPainterPath(points[0])
            for point in points[1:]:
                path.lineTo(point)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
            painter.setBrush(fill)
            painter.drawEllipse(points[0], 5, 5)
            painter.drawEllipse(points[-1], 8, 8)
        elif mark.kind in ("click", "double_click", "scroll") and points:
            centre = points[-1]
            radius = 10 + 16 * age
            painter.setBrush(fill)
            painter.drawEllipse(centre, radius, radius)
            if mark.kind == "double_click":
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawEllipse(centre, radius + 6, radius + 6)
            painter.setBrush(color)
            painter.drawEllipse(centre, 3, 3)
        elif mark.kind == "move" and points:
            painter.setBrush(color)
            painter.drawEllipse(points[-1], 4, 4)
        if mark.text:
            row = stacked.get(mark.anchor, 0)
            stacked[mark.anchor] = row + 1
            self._paint_label(painter, mark, row, color, rect, alpha)

    def _paint_label(
        self,
        painter: QPainter,
        mark: _Mark,
        row: int,
        color: QColor,
        rect: QRectF,
        alpha: float,
    ) -> None:
        font = QFont(self.font())
        font.setBold(True)
        painter.setFont(font)
        metrics = QFontMetricsF(font)
        text = _short(mark.text, 48)
        box = QRectF(0, 0, metrics.horizontalAdvance(text) + 16, metrics.height() + 8)
        if mark.anchor is not None:
            anchor = self.to_widget(*mark.anchor) + QPointF(14, 12)
        else:
            anchor = QPointF(rect.left() + 12, rect.bottom() - box.height() - 12)
        box.moveTopLeft(anchor + QPointF(0, row * (box.height() + 4)))
        if box.right() > rect.right() - 4:
            box.moveRight(rect.right() - 4)
        if box.bottom() > rect.bottom() - 4:
            box.moveBottom(rect.bottom() - 4)
        background = QColor("#0f1115")
        background.setAlphaF(0.85 * alpha)
        painter.setPen(QPen(color, 1.5))
        painter.setBrush(background)
        painter.drawRoundedRect(box, 6, 6)
        text_color = QColor("#f0f6fc")
        text_color.setAlphaF(alpha)
        painter.setPen(text_color)
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)

    # -- user input (only while the user has control) ------------------------------------------
    def _send(self, event: PageInput) -> bool:
        return self._session.send_input(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        button = _BUTTONS.get(event.button())
        if not self._session.user_has_control or button is None:
            super().mousePressEvent(event)
            return
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        x, y = self.to_page(event.position())
        self._click_count = 1
        self._send(PageInput("down", x, y, button=button))
        if button == "left":
            self.add_mark(_Mark("click", ((x, y),), "", time.monotonic(), user=True))
        event.accept()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        button = _BUTTONS.get(event.button())
        if not self._session.user_has_control or button is None:
            super().mouseDoubleClickEvent(event)
            return
        x, y = self.to_page(event.position())
        self._click_count = 2
        self._send(PageInput("down", x, y, button=button, click_count=2))
        event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        button = _BUTTONS.get(event.button())
        if not self._session.user_has_control or button is None:
            super().mouseReleaseEvent(event)
            return
        x, y = self.to_page(event.position())
        self._send(PageInput("up", x, y, button=button, click_count=self._click_count))
        self._click_count = 1
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if not self._session.user_has_control:
            super().mouseMoveEvent(event)
            return
        x, y = self.to_page(event.position())
        self._send(PageInput("move", x, y))
        event.accept()

    def wheelEvent(self, event: QWheelEvent) -> None:
        if not self._session.user_has_control:
            super().wheelEvent(event)
            return
        pixels = event.pixelDelta()
        if not pixels.isNull():
            dx, dy = float(-pixels.x()), float(-pixels.y())
        else:  # 120 units per notch; a notch scrolls about 100 px (Chromium's step)
            angle = event.angleDelta()
            dx, dy = -angle.x() * 100 / 120, -angle.y() * 100 / 120
        x, y = self.to_page(event.position())
        self._send(PageInput("wheel", x, y, dx=dx, dy=dy))
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not self._session.user_has_control:
            super().keyPressEvent(event)
            return
        key = event.key()
        name = _KEY_NAMES.get(key)
        text = event.text()
        shortcut = bool(event.modifiers() & _SHORTCUT_MODIFIERS)
        if name is not None:
            if not (event.isAutoRepeat() and name in ("Shift", "Control", "Alt", "Meta")):
                self._send(PageInput("key_down", key=name))
        elif shortcut and (
            Qt.Key.Key_A <= key <= Qt.Key.Key_Z or Qt.Key.Key_0 <= key <= Qt.Key.Key_9
        ):
            self._send(PageInput("key_down", key=chr(key).lower()))
        elif text and text.isprintable():
            self._send(PageInput("text", text=text))
        event.accept()

    def keyReleaseEvent(self, event: QKeyEvent) -> None:
        if not self._session.user_has_control or event.isAutoRepeat():
            super().keyReleaseEvent(event)
            return
        key = event.key()
        name = _KEY_NAMES.get(key)
        if name is not None:
            self._send(PageInput("key_up", key=name))
        elif Qt.Key.Key_A <= key <= Qt.Key.Key_Z or Qt.Key.Key_0 <= key <= Qt.Key.Key_9:
            if event.modifiers() & _SHORTCUT_MODIFIERS:
                self._send(PageInput("key_up", key=chr(key).lower()))
        event.accept()

    def focusNextPrevChild(self, next: bool) -> bool:
        # While the user has control, Tab belongs to the page.
        if self._session.user_has_control:
            return False
        return super().focusNextPrevChild(next)


class BrowserView(QWidget):
    """The Browser tab: the live page with the agent's actions marked, the current URL, an
    action log tied to the conversation's tool cards, and *Take control* / *Hand back*.

    Frames come decoded and scaled from ``session`` (newest only); the canvas keeps the last
    one while the page is still. The user's mouse and keyboard reach the page only while they
    have control, mapped from widget to page pixels through the scaling.

    Args:
        session: the browser bridge (frames, actions, URL, control).
        parent: the Qt parent.

    Signals:
        callActivated(str): a log entry of a ``computer_call`` was activated (its call id),
            so the window can show that tool card.
    """

    callActivated = Signal(str)
    framePainted = Signal()

    def __init__(self, session: BrowserSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setStyleSheet(read_text("styles", "dark.qss") + _STYLE)

        self.url = QLineEdit()
        self.url.setObjectName("browserUrl")
        self.url.setReadOnly(True)
        self.url.setPlaceholderText("No page yet")
        self.url.setToolTip("The page the agent acts on (editable under Take control)")
        self.url.returnPressed.connect(self._go_to_typed)
        self.nav_buttons: dict[str, QToolButton] = {}
        for kind, glyph, tip in (
            ("back", "←", "Back"),
            ("forward", "→", "Forward"),
            ("reload", "↻", "Reload"),
        ):
            button = QToolButton()
            button.setObjectName(f"browser_{kind}")
            button.setText(glyph)
            button.setToolTip(f"{tip} (under Take control)")
            button.clicked.connect(lambda _=False, k=kind: self._navigate(k))
            self.nav_buttons[kind] = button
        self.state = QLabel()
        self.state.setObjectName("browserState")
        self.state.setFixedHeight(22)
        self.control_button = QToolButton()
        self.control_button.setObjectName("controlButton")
        self.control_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.control_button.clicked.connect(self._toggle_control)

        self.canvas = _FrameCanvas(self)
        self.canvas.framePainted.connect(self.framePainted)
        self.log = QListWidget()
        self.log.setObjectName("browserLog")
        self.log.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.log.setUniformItemSizes(True)
        self.log.itemActivated.connect(self._on_item_activated)
        log_box = QWidget()
        log_layout = QVBoxLayout(log_box)
        log_layout.setContentsMargins(0, 4, 0, 0)
        log_layout.setSpacing(2)
        header = QLabel("Agent actions")
        header.setObjectName("browserLogHeader")
        log_layout.addWidget(header)
        log_layout.addWidget(self.log, 1)
        log_box.setMinimumHeight(70)

        top = QHBoxLayout()
        top.setSpacing(8)
        for button in self.nav_buttons.values():
            top.addWidget(button)
        top.addWidget(self.url, 1)
        top.addWidget(self.state)
        top.addWidget(self.control_button)
        self.split = QSplitter(Qt.Orientation.Vertical)
        self.split.addWidget(self.canvas)
        self.split.addWidget(log_box)
        self.split.setStretchFactor(0, 1)
        self.split.setStretchFactor(1, 0)
        self.split.setChildrenCollapsible(False)
        self.split.setSizes([600, 130])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.split, 1)

        self._gate: GateState = session.gate.state
        self._user = session.user_has_control
        session.frameReady.connect(self.show_frame)
        session.actionMarked.connect(self.mark_action)
        session.urlChanged.connect(self.set_url)
        session.controlChanged.connect(self.set_control)
        session.gateChanged.connect(self.set_gate_state)
        session.notice.connect(self.add_notice)
        session.agentChanged.connect(lambda _running: self._update_state())
        self.set_url(session.current_url)
        self.set_control(session.user_has_control)

    # -- state -----------------------------------------------------------------------------
    @property
    def frames_painted(self) -> int:
        """Frames painted so far (each new frame counts once)."""
        return self.canvas.frames_painted

    def log_entries(self) -> list[tuple[str, str | None]]:
        """The log as ``(text, call_id)`` pairs, oldest first (for tests)."""
        entries = []
        for row in range(self.log.count()):
            item = self.log.item(row)
            entries.append((item.text(), item.data(Qt.ItemDataRole.UserRole)))
        return entries

    # -- slots -----------------------------------------------------------------------------
    @Slot(QImage, object)
    def show_frame(self, image: QImage, meta: FrameMetadata) -> None:
        """Show ``image`` (the newest frame) on the next paint."""
        self.canvas.set_frame(image, meta)

    @Slot(object)
    def mark_action(self, logged: LoggedAction) -> None:
        """Mark an agent action on the frame for :data:`MARK_S` seconds and log it."""
        action = logged.action
        points: tuple[tuple[float, float], ...] = ()
        if action.kind == "drag" and action.path:
            points = tuple((float(x), float(y)) for x, y in action.path)
        elif action.x is not None and action.y is not None:
            points = ((float(action.x), float(action.y)),)
        text = ""
        if action.kind == "type":
            text = f"⌨ {action.text or ''}"
        elif action.kind == "keypress":
            text = f"⏎ {action.text or ''}" if action.text == "Enter" else f"⌨ {action.text or ''}"
        if action.kind not in ("wait", "screenshot"):
            self.canvas.add_mark(_Mark(action.kind, points, text, time.monotonic()))
        self._append_log(describe_action(action), logged.call_id, logged.wall_time, action.url)

    @Slot(str)
    def set_url(self, url: str) -> None:
        """Show the page's URL (not while the user is typing one under Take control)."""
        if self.session.user_has_control and self.url.hasFocus() and self.url.isModified():
            return
        self.url.setText(url)
        self.url.setModified(False)
        self.url.setCursorPosition(0)

    @Slot(bool)
    def set_control(self, user: bool) -> None:
        """Reflect who drives: the button's text and the state pill."""
        self.control_button.setText("Hand back" if user else "Take control")
        self.control_button.setProperty("mode", "give" if user else "take")
        self.control_button.setToolTip(
            "Let the agent continue with the browser"
            if user
            else "Use the browser yourself; the agent waits until you hand back"
        )
        self.url.setReadOnly(not user)
        self.url.setProperty("editable", "true" if user else "false")
        self._repolish(self.url)
        for button in self.nav_buttons.values():
            button.setEnabled(user)
        self.canvas.setMouseTracking(user)
        self.canvas.setCursor(Qt.CursorShape.CrossCursor if user else Qt.CursorShape.ArrowCursor)
        if user:
            self.canvas.setFocus(Qt.FocusReason.OtherFocusReason)
        if self._user != user:
            self._user = user
            self._append_log(
                "You took control" if user else "You handed back control",
                None,
                time.time(),
                "",
                source="user",
            )
        self._gate = GateState(user, self._gate.waiting, self._gate.active)
        self._update_state()
        self._repolish(self.control_button)
        self.canvas.update()

    @Slot(object)
    def set_gate_state(self, state: GateState) -> None:
        """Show whether an agent action is waiting for the user to hand back."""
        self._gate = GateState(self.session.user_has_control, state.waiting, state.active)
        self._update_state()

    @Slot(str, str)
    def add_notice(self, text: str, level: str) -> None:
        """Log a message from the browser (a restart, an input error...)."""
        self._append_log(text, None, time.time(), "", source=level)

    @Slot(str)
    def show_call(self, call_id: str) -> None:
        """Select the log entries of ``call_id`` (a tool card's link was clicked)."""
        self.log.clearSelection()
        first: QListWidgetItem | None = None
        for row in range(self.log.count()):
            item = self.log.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == call_id:
                item.setSelected(True)
                first = first or item
        if first is not None:
            self.log.scrollToItem(first, QAbstractItemView.ScrollHint.PositionAtTop)

    # -- internals -------------------------------------------------------------------------
    def _toggle_control(self) -> None:
        if self.session.user_has_control:
            self.session.hand_back()
        else:
            self.session.take_control()

    def _go_to_typed(self) -> None:
        """Enter in the URL field under Take control: the page loads the typed address."""
        if self.session.user_has_control and self.url.text().strip():
            self.session.send_input(PageInput("goto", text=self.url.text().strip()))
            self.url.setModified(False)
            self.canvas.setFocus(Qt.FocusReason.OtherFocusReason)

    def _navigate(self, kind: str) -> None:
        """A back/forward/reload button (only while the user has control)."""
        if self.session.user_has_control:
            self.session.send_input(PageInput(kind))  # type: ignore[arg-type]

    def _update_state(self) -> None:
        gate = self._gate
        if not self.session.user_has_control and not (
            self.session.agent_running or gate.active or gate.waiting
        ):
            text, state = "Idle", "idle"
        elif not self.session.user_has_control:
            text, state = "Agent is driving", "agent"
        elif self._gate.active:
            text, state = f"You have control — the agent finishes its {self._gate.active}…", "user"
        elif self._gate.waiting:
            text, state = f"You have control — the agent waits to {self._gate.waiting[0]}", "user"
        else:
            text, state = "You have control — the agent waits", "user"
        self.state.setText(text)
        self.state.setProperty("state", state)
        self._repolish(self.state)

    @staticmethod
    def _repolish(widget: QWidget) -> None:
        style = widget.style()
        style.unpolish(widget)
        style.polish(widget)

    def _append_log(
        self, text: str, call_id: str | None, wall_time: float, url: str, *, source: str = "agent"
    ) -> None:
        bar = self.log.verticalScrollBar()
        following = bar.value() >= bar.maximum() - 2
        stamp = datetime.fromtimestamp(wall_time).strftime("%H:%M:%S")
        item = QListWidgetItem(f"{stamp}  {text}")
        item.setData(Qt.ItemDataRole.UserRole, call_id)
        tips = [text]
        if call_id:
            tips.append(f"call {call_id} (activate to show its tool card)")
        if url:
            tips.append(url)
        item.setToolTip("\n".join(tips))
        color = _LOG_COLORS.get(source)
        if color is not None:
            item.setForeground(QColor(color))
        self.log.addItem(item)
        while self.log.count() > _LOG_LIMIT:
            self.log.takeItem(0)
        if following:
            self.log.scrollToBottom()

    def _on_item_activated(self, item: QListWidgetItem) -> None:
        call_id = item.data(Qt.ItemDataRole.UserRole)
        if call_id:
            self.callActivated.emit(str(call_id))
