"""The retry banner (issue 16, item 4): a closed port shows "retrying in N s" with a countdown,
then the failure naming the URL and the cause, with Retry and Open Settings that work."""

from __future__ import annotations

import asyncio
import io
import socket
from pathlib import Path

from core.models.errors import ModelErrorInfo, RetryNotice
from core.settings import Settings, save_settings
from desktop.app import AppOptions, _Session
from desktop.views.retry_banner import RetryBanner
from tests.desktop.shots import save_shot


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_countdown_retry_now_and_failure(qtbot):
    banner = RetryBanner()
    qtbot.addWidget(banner)
    woken: list[bool] = []
    info = ModelErrorInfo(
        "refused",
        "Cannot reach http://127.0.0.1:9/v1/responses: refused.",
        open_settings=True,
        retryable=True,
    )
    banner.show_retry(RetryNotice(2.2, 1, 3, info, lambda: woken.append(True)))
    assert not banner.isHidden() and banner.state == "retrying"
    assert "retrying in 3 s (retry 1 of 3)" in banner.message.text()
    banner.tick()
    assert "retrying in 2 s" in banner.message.text()
    banner.retry_button.click()  # Retry during the pause: no waiting
    assert woken == [True] and "retrying now" in banner.message.text()
    assert banner.settings_button.isVisibleTo(banner)
    banner.show_failure(info)
    assert banner.state == "failed" and banner.message.text() == info.message
    with qtbot.waitSignal(banner.retryRequested):
        banner.retry_button.click()
    with qtbot.waitSignal(banner.settingsRequested):
        banner.settings_button.click()
    banner.running_changed(False)  # a failure stays when the run ends
    assert banner.state == "failed"
    banner.running_changed(True)
    assert banner.state == "hidden" and banner.isHidden()


async def test_closed_port_in_the_window(tmp_path: Path, qtbot):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    settings_path = tmp_path / "settings.toml"
    save_settings(Settings(model="test-model", base_url=url, explorer=False), settings_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    session = _Session(
        AppOptions(repo, journal_path=tmp_path / "journal.sqlite3", settings_path=settings_path)
    )
    window = session.window
    qtbot.addWidget(window)
    window.show()
    banner = window.retry_banner
    notices: list[RetryNotice] = []
    session.controller.modelRetrying.connect(notices.append)
    failures: list[ModelErrorInfo] = []
    session.controller.modelFailed.connect(failures.append)
    try:
        finished = asyncio.Event()
        session.controller.runningChanged.connect(lambda running: running or finished.set())
        seen: list[str] = []

        def on_retry(notice: RetryNotice) -> None:
            seen.append(banner.message.text())
            banner.retry_button.click()  # the user does not wait out the backoff

        session.controller.modelRetrying.connect(on_retry)
        session.controller.submit("hello")
        await asyncio.wait_for(finished.wait(), 60)
        assert len(notices) == 3 and all(n.info.kind == "refused" for n in notices)
        assert seen and all("retrying in" in text and url in text for text in seen)
        assert len(failures) == 1 and failures[0].kind == "refused"
        assert banner.state == "failed" and not banner.isHidden()
        text = banner.message.text()
        assert f"{url}/responses" in text and "connection refused" in text
        assert "stream" not in text
        window.resize(1440, 900)
        save_shot(window, "tandem-retry-banner.png")  # scripts/screenshots.sh

        window.retry_banner.settings_button.click()  # Open Settings
        assert window._settings_dialog is not None and window._settings_dialog.isVisible()
        window._settings_dialog.close()

        finished.clear()
        session.controller.modelRetrying.disconnect(on_retry)
        session.controller.modelRetrying.connect(lambda n: n.retry_now())
        banner.retry_button.click()  # Retry: the last message is sent again
        await asyncio.wait_for(finished.wait(), 60)
        assert len(failures) == 2 and len(notices) == 6
    finally:
        await session.close()


async def test_tandem_run_uses_the_dialogs_validator_and_explains_errors(tmp_path, capsys):
    from desktop.headless import HeadlessOptions, run_headless

    out = io.StringIO()  # run_headless's default ``out`` is the sys.stdout of its import
    options = HeadlessOptions(tmp_path, "hi", base_url="localhost:1234", interactive=False)
    assert await run_headless(options, out=out) == 2
    assert "did you mean http://localhost:1234/v1?" in capsys.readouterr().err

    url = f"http://127.0.0.1:{_closed_port()}/v1"  # keyless: a localhost server
    options = HeadlessOptions(tmp_path, "hi", base_url=url, interactive=False, sandbox=False)
    assert await run_headless(options, out=out) == 1
    err = capsys.readouterr().err
    assert f"Cannot reach {url}/responses: connection refused" in err
    assert "ModelProviderError" not in err and "stream" not in err


def test_settings_dialog_uses_the_validator_and_keeps_no_key_needed(qtbot):
    from desktop.dialogs.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.base_url_edit.setText("localhost:1234")
    assert dialog.apply() is False
    assert "did you mean http://localhost:1234/v1?" in dialog._fields["base_url"].error.text()
    dialog.base_url_edit.setText("http://localhost:1234")
    dialog.no_key_check.setChecked(True)
    with qtbot.waitSignal(dialog.settingsApplied) as applied:
        assert dialog.apply() is True
    assert applied.args[0].no_key_needed and applied.args[0].base_url == "http://localhost:1234"
    assert "/v1" in dialog.status_label.text()  # the hint: local servers serve under /v1
