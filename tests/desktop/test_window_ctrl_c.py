"""Ctrl+C in the terminal that started the window closes it as its close button does.

The window runs through the real entry point (``desktop.cli.main``) in a child process,
offscreen; a small wrapper only prints ``UP`` at its first paint and ``APPROVAL`` when the
demo stops at an approval, so the test knows when to press Ctrl+C (SIGINT to the process).
Before, Python's default handler raised ``KeyboardInterrupt`` inside a Qt slot: a traceback
on the terminal and the window stayed open.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.desktop.crash import ROOT
from tests.desktop.test_tandem_run_tty import _env

WRAPPER = """
import sys
from desktop import app, cli

sessions = []
first_paint = app.after_first_paint
session_init = app._Session.__init__

def init(self, *args, **kwargs):
    session_init(self, *args, **kwargs)
    sessions.append(self)
    self.controller.approvalRequested.connect(lambda _r: print("APPROVAL", flush=True))

def after_first_paint(window, callback, **kwargs):
    def both():
        print("UP", flush=True)
        callback()
    first_paint(window, both, **kwargs)

app._Session.__init__ = init
app.after_first_paint = after_first_paint
sys.exit(cli.main(sys.argv[1:]))
"""


class _Window:
    """The window process, its output read line by line with a deadline."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WRAPPER, *args],
            cwd=ROOT,
            env={**_env(tmp_path / "home"), "QT_QPA_PLATFORM": "offscreen"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def expect(self, word: str, timeout: float = 60.0) -> None:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if not ready:
                continue
            line = self.proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if line.strip() == word:
                return
        pytest.fail(f"no {word!r} from the window; stdout {seen!r}; stderr {self.stderr()!r}")

    def interrupt(self) -> None:
        os.kill(self.proc.pid, signal.SIGINT)

    def running_after(self, seconds: float) -> bool:
        try:
            self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return True
        return False

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "README.md").write_text("hello\n")
    return folder


def test_ctrl_c_closes_an_idle_window(tmp_path: Path, repo: Path) -> None:
    window = _Window(tmp_path, str(repo))
    try:
        window.expect("UP")
        window.interrupt()
        assert window.proc.wait(timeout=60) == 0
        err = window.stderr()
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    finally:
        window.close()


def test_ctrl_c_during_a_run_asks_then_the_second_closes(tmp_path: Path) -> None:
    window = _Window(tmp_path, "demo")  # the scripted demo stops at an approval
    try:
        window.expect("UP")
        window.expect("APPROVAL")
        window.interrupt()  # as the close button: "Quit Tandem?" and the window stays
        assert window.running_after(2.0), window.stderr()
        window.interrupt()  # the second Ctrl+C quits without asking
        code = window.proc.wait(timeout=60)
        err = window.stderr()
        assert code in (0, 1), err  # the demo says whether its sample tests went green
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    finally:
        window.close()


CLOSER = """
import os, signal, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from desktop.interrupt import SigintCloser

app = QApplication([])
closer = SigintCloser(lambda count: print("INTERRUPT", count, flush=True), app)

def press():
    os.kill(os.getpid(), signal.SIGINT)

for n in range(3):
    QTimer.singleShot(200 * (n + 1), press)
QTimer.singleShot(10_000, lambda: sys.exit(5))
app.exec()
"""


def test_the_first_two_ctrl_c_reach_the_window_and_the_third_ends_the_process() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLOSER],
        cwd=ROOT,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split("\n")[:2] == ["INTERRUPT 1", "INTERRUPT 2"], done.stderr
    assert done.returncode == -signal.SIGINT, done.stderr
