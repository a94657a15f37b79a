"""ApprovalPanel: the queue, one request at a time, answers, shortcuts; Notifier."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QSystemTrayIcon, QWidget

from desktop.notify import Notifier
from desktop.views.approval_panel import (
    ALLOW_ONCE_KEY,
    ALWAYS_ALLOW_KEY,
    REJECT_KEY,
    ApprovalPanel,
    ApprovalRequest,
)


def _req(rid: str, *, rule: str | None = "any `git diff …` command", **kw) -> ApprovalRequest:
    fields = {
        "kind": "command",
        "title": f"Run command {rid}",
        "body": f"git diff {rid}",
        "reason": "asked because no rule allows `git diff` (rule: none)",
    }
    fields.update(kw)
    return ApprovalRequest(id=rid, rule_preview=rule, **fields)


@pytest.fixture
def panel(qtbot) -> ApprovalPanel:
    p = ApprovalPanel()
    qtbot.addWidget(p)
    p.resize(700, 220)
    return p


def _key(seq: str):
    combo = QKeySequence(seq)[0]
    return combo.key(), combo.keyboardModifiers()


def test_request_validation() -> None:
    with pytest.raises(ValueError, match="kind"):
        ApprovalRequest("x", "shell", "t", "b", "r", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="id"):
        ApprovalRequest("", "command", "t", "b", "r", None)


def test_empty_panel_hides_and_disables(panel: ApprovalPanel) -> None:
    assert panel.pending_count() == 0 and panel.current() is None
    assert not panel.isVisible()
    assert not panel.allow_once_button.isEnabled()
    assert not panel.reject_button.isEnabled()


def test_queue_shows_one_at_a_time_with_count(qtbot, panel: ApprovalPanel) -> None:
    with qtbot.waitSignal(panel.pendingCountChanged) as sig:
        panel.enqueue(_req("a"))
    assert sig.args == [1]
    assert panel.isVisible()
    assert panel.count_badge.text() == "1 of 1"
    panel.enqueue(_req("b", rule=None, kind="patch", title="Edit 2 files", body="M x.py +1"))
    panel.enqueue(_req("c"))
    panel.enqueue(_req("a"))  # duplicate id: ignored
    assert panel.pending_count() == 3
    assert panel.count_badge.text() == "1 of 3"
    assert panel.title_label.text() == "Run command a"
    assert panel.body_view.toPlainText() == "git diff a"
    assert "git diff" in panel.reason_label.text()
    assert "adds rule" in panel.rule_label.text() and "git diff …" in panel.rule_label.text()
    assert panel.always_allow_button.isEnabled()

    with qtbot.waitSignal(panel.decided) as sig:
        qtbot.mouseClick(panel.allow_once_button, Qt.MouseButton.LeftButton)
    assert sig.args == ["a", "allow_once", ""]
    assert panel.count_badge.text() == "1 of 2"
    assert panel.title_label.text() == "Edit 2 files"
    assert panel.kind_badge.text() == "PATCH"
    assert not panel.always_allow_button.isEnabled()  # no rule offered
    assert panel.rule_label.text() == ""

    with qtbot.assertNotEmitted(panel.decided):
        panel.always_allow()  # disabled for this request: nothing happens
    panel.message_edit.setText("  use a smaller change  ")
    with qtbot.waitSignal(panel.decided) as sig:
        qtbot.mouseClick(panel.reject_button, Qt.MouseButton.LeftButton)
    assert sig.args == ["b", "reject", "use a smaller change"]
    assert panel.message_edit.text() == ""

    seen: list[tuple] = []
    panel.decided.connect(lambda *a: seen.append(("decided", *a)))
    panel.pendingCountChanged.connect(lambda n: seen.append(("count", n)))
    qtbot.mouseClick(panel.always_allow_button, Qt.MouseButton.LeftButton)
    assert seen == [("decided", "c", "always_allow", ""), ("count", 0)]
    assert panel.pending_count() == 0
    assert not panel.isVisible()


def test_withdraw_current_and_queued(qtbot, panel: ApprovalPanel) -> None:
    for rid in "abc":
        panel.enqueue(_req(rid))
    with qtbot.waitSignal(panel.pendingCountChanged) as sig:
        panel.withdraw("b")
    assert sig.args == [2]
    assert panel.current() is not None and panel.current().id == "a"
    panel.withdraw("a")
    assert panel.current().id == "c" and panel.count_badge.text() == "1 of 1"
    with qtbot.assertNotEmitted(panel.pendingCountChanged):
        panel.withdraw("unknown")
    with qtbot.assertNotEmitted(panel.decided):
        panel.withdraw("c")
    assert not panel.isVisible()


def test_clear(qtbot, panel: ApprovalPanel) -> None:
    panel.enqueue(_req("a"))
    panel.enqueue(_req("b"))
    with qtbot.waitSignal(panel.pendingCountChanged) as sig:
        panel.clear()
    assert sig.args == [0] and panel.pending() == ()


def test_destructive_request_is_marked(panel: ApprovalPanel) -> None:
    panel.enqueue(
        _req(
            "d",
            rule=None,
            body="rm -rf src",
            reason="asked because `rm -rf src` is destructive (rule: destructive-guard)",
            destructive=True,
        )
    )
    assert panel.property("destructive") is True
    assert "\u26a0" in panel.reason_label.text()
    assert "<code" in panel.reason_label.text() and "rm -rf src" in panel.reason_label.text()
    assert not panel.always_allow_button.isEnabled()
    panel.enqueue(_req("e"))
    panel.reject()
    assert panel.property("destructive") is False


def test_reason_html_is_escaped(panel: ApprovalPanel) -> None:
    panel.enqueue(_req("x", reason="asked because `a <b> & c` is <i>odd</i>"))
    text = panel.reason_label.text()
    assert "&lt;i&gt;odd&lt;/i&gt;" in text and "a &lt;b&gt; &amp; c" in text


def test_enter_in_message_field_rejects_with_message(qtbot, panel: ApprovalPanel) -> None:
    panel.enqueue(_req("a"))
    panel.message_edit.setFocus()
    qtbot.keyClicks(panel.message_edit, "wrong file")
    with qtbot.waitSignal(panel.decided) as sig:
        qtbot.keyClick(panel.message_edit, Qt.Key.Key_Return)
    assert sig.args == ["a", "reject", "wrong file"]


def test_window_shortcuts_and_tooltips(qtbot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    panel = ApprovalPanel(window)
    window.resize(700, 300)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    for rid in "abc":
        panel.enqueue(_req(rid))
    assert ALLOW_ONCE_KEY in panel.allow_once_button.toolTip()
    assert ALWAYS_ALLOW_KEY in panel.always_allow_button.toolTip()
    assert REJECT_KEY in panel.reject_button.toolTip()

    answers = []
    panel.decided.connect(lambda *args: answers.append(args))
    for seq in (ALLOW_ONCE_KEY, ALWAYS_ALLOW_KEY, REJECT_KEY):
        key, mods = _key(seq)
        qtbot.keyClick(window, key, mods)
    assert answers == [
        ("a", "allow_once", ""),
        ("b", "always_allow", ""),
        ("c", "reject", ""),
    ]
    key, mods = _key(ALLOW_ONCE_KEY)
    qtbot.keyClick(window, key, mods)  # nothing pending: no answer
    assert len(answers) == 3


# -- Notifier --------------------------------------------------------------------------------


class _RecordingTray(QSystemTrayIcon):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[tuple[str, str, int]] = []

    def showMessage(self, title, message, icon=None, msecs=10000):  # type: ignore[override]
        self.messages.append((title, message, msecs))


def test_notifier_without_tray_is_a_noop(qtbot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    notifier = Notifier(window)
    assert notifier.available is QSystemTrayIcon.isSystemTrayAvailable()
    if not notifier.available:
        assert notifier.notify("Tandem needs approval", "Run a command") is False


def test_notifier_only_when_window_inactive(qtbot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    tray = _RecordingTray()
    notifier = Notifier(window, tray=tray)
    assert notifier.available
    assert notifier.notify("Tandem needs approval", "1 pending", timeout_ms=3000) is True
    assert tray.messages == [("Tandem needs approval", "1 pending", 3000)]

    window.show()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    assert notifier.notify("again", "2 pending") is False
    assert len(tray.messages) == 1


def test_mcp_always_allow_is_for_this_run_not_a_saved_rule(panel: ApprovalPanel) -> None:
    panel.enqueue(
        _req(
            "m",
            rule="`read_page` on wiki, for the rest of this run",
            kind="mcp",
            title="Use the MCP tool read_page",
        )
    )
    assert panel.kind_badge.text() == "MCP TOOL"
    assert "also allows" in panel.rule_label.text() and "adds rule" not in panel.rule_label.text()
    assert "not saved" in panel.always_allow_button.toolTip()
