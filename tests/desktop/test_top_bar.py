"""TopBar: repository/branch, model, approval-mode badge and menu, sandbox, token usage."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from desktop.views.top_bar import TopBar, format_tokens


@pytest.fixture
def bar(qtbot):
    widget = TopBar()
    qtbot.addWidget(widget)
    widget.resize(1100, 40)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1k"),
        (12_345, "12.3k"),
        (999_999, "1M"),
        (1_250_000, "1.2M"),
        (3_000_000, "3M"),
    ],
)
def test_format_tokens(count: int, text: str) -> None:
    assert format_tokens(count) == text


def test_repository_and_branch(bar) -> None:
    bar.set_repository("/home/ada/src/datekit", "fix/dates")
    assert bar.repo_name.text() == "datekit"
    assert bar.repo_path.text() == "/home/ada/src/datekit"
    assert "fix/dates" in bar.branch.text()
    assert bar.branch.isVisible()
    bar.set_repository("/tmp/scratch", None)
    assert bar.repo_name.text() == "scratch"
    assert "not a Git repository" in bar.branch.text()


def test_model(bar) -> None:
    assert not bar.model.isVisible()
    bar.set_model("gpt-5.1-codex")
    assert bar.model.text() == "gpt-5.1-codex"
    assert bar.model.isVisible()


def test_mode_badge_text_and_colour_differ_per_mode(bar) -> None:
    seen = {}
    for mode, label in [
        ("read-only", "Read-only"),
        ("ask", "Ask"),
        ("auto", "Auto"),
        ("full", "Full access"),
    ]:
        bar.set_mode(mode)
        assert label in bar.mode_badge.text()
        assert bar.mode_badge.property("mode") == mode
        image = bar.mode_badge.grab().toImage()
        seen[mode] = image.pixelColor(image.width() // 2, 3).name()  # the badge fill
    assert len(set(seen.values())) == 4  # four distinct colours


def test_mode_menu_click_requests_a_change_without_switching(bar, qtbot) -> None:
    bar.set_mode("ask")
    QTest.mouseClick(bar.mode_badge, Qt.MouseButton.LeftButton)
    menu = bar.mode_menu
    qtbot.waitUntil(menu.isVisible)
    target = next(a for a in menu.actions() if a.data() == "full")
    assert bar._mode_actions["ask"].isChecked()
    with qtbot.waitSignal(bar.modeChangeRequested, timeout=1000) as blocker:
        QTest.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(target).center())
    assert blocker.args == ["full"]
    assert "Ask" in bar.mode_badge.text()  # unchanged until the window confirms
    assert bar._mode_actions["ask"].isChecked()
    assert not target.isChecked()
    bar.set_mode("full")
    assert "Full access" in bar.mode_badge.text()
    assert target.isChecked()


@pytest.mark.parametrize(
    ("state", "words"),
    [("on", "Sandbox"), ("off", "No sandbox"), ("unavailable", "unavailable")],
)
def test_sandbox_indicator(bar, state: str, words: str) -> None:
    bar.set_sandbox(state, "bwrap not found on PATH")
    assert words in bar.sandbox.text()
    assert bar.sandbox.toolTip() == "bwrap not found on PATH"
    assert bar.sandbox.property("state") == state
    assert bar.sandbox.isVisible()


def test_usage(bar) -> None:
    bar.set_usage(12_345, 678, 13_023)
    text = bar.usage.text()
    assert "12.3k" in text
    assert "678" in text
    assert "13k" in text
    assert "12,345" in bar.usage.toolTip()
    assert "13,023" in bar.usage.toolTip()


def test_sandbox_tooltip_lists_hidden_and_protected_paths(bar) -> None:
    bar.set_sandbox("on", "Commands run under bubblewrap")
    bar.set_sandbox_protection(["~/.ssh", "~/.config/tandem"], [".git/config", ".git/hooks/"])
    tip = bar.sandbox.toolTip()
    assert tip.startswith("Commands run under bubblewrap")
    for text in ("Hidden from commands", "~/.ssh", "~/.config/tandem", ".git/hooks/"):
        assert text in tip
    assert "Read-only git paths:\n  .git/config" in tip
    bar.set_sandbox("off", "Sandbox turned off in Settings")
    assert "~/.ssh" not in bar.sandbox.toolTip()  # nothing is hidden without the sandbox
    bar.set_sandbox("on", "")
    assert "~/.ssh" in bar.sandbox.toolTip()


def test_sandbox_menu_lists_what_is_hidden_and_protected(bar, qtbot) -> None:
    """Issue 11: clicking the indicator shows what commands cannot see or change, and offers
    the Settings page that changes it."""
    bar.set_sandbox("on", "Commands run under bubblewrap")
    bar.set_sandbox_protection(["~/.ssh", "~/.aws"], [".git/config", ".git/hooks/"])
    bar.sandbox.click()
    qtbot.waitUntil(bar.sandbox_menu.isVisible)
    texts = [a.text().strip() for a in bar.sandbox_menu.actions()]
    for expected in ("~/.ssh", "~/.aws", ".git/config", ".git/hooks/", "Hidden from commands (2):"):
        assert expected in texts
    change = next(a for a in bar.sandbox_menu.actions() if a.text().startswith("Change"))
    assert change.isEnabled()
    with qtbot.waitSignal(bar.settingsRequested):
        change.trigger()
    bar.sandbox_menu.hide()


def test_sandbox_menu_without_the_sandbox_says_nothing_is_hidden(bar, qtbot) -> None:
    bar.set_sandbox_protection(["~/.ssh"], [".git/config"])
    bar.set_sandbox("off", "Sandbox turned off in Settings")
    bar.sandbox.click()
    qtbot.waitUntil(bar.sandbox_menu.isVisible)
    texts = [a.text().strip() for a in bar.sandbox_menu.actions()]
    assert "~/.ssh" not in texts
    assert any("not hidden" in t for t in texts)
    bar.sandbox_menu.hide()
