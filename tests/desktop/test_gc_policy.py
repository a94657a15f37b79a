"""The GUI thread's interpreter policy: collection on GUI timers, a short switch interval."""

from __future__ import annotations

import gc
import os
import sys
import threading

import pytest
from PySide6.QtCore import QObject

from desktop.gc_policy import GUI_SWITCH_INTERVAL_S, install_gui_thread_gc
from desktop.views.diff.stream import (
    BUILD_NICE,
    BUILD_SWITCH_INTERVAL_S,
    _lower_priority,
    _SwitchInterval,
)


@pytest.fixture
def _interpreter():
    saved = sys.getswitchinterval()
    enabled = gc.isenabled()
    yield
    sys.setswitchinterval(saved)
    if enabled:
        gc.enable()


@pytest.mark.usefixtures("_interpreter")
def test_the_policy_collects_on_gui_timers_and_shortens_the_switch_interval(qtbot) -> None:
    sys.setswitchinterval(0.005)
    gc.enable()
    owner = QObject()
    timers = install_gui_thread_gc(owner, young_ms=10, settle_ms=None)
    assert not gc.isenabled()
    assert sys.getswitchinterval() == pytest.approx(GUI_SWITCH_INTERVAL_S)
    assert GUI_SWITCH_INTERVAL_S < 0.005
    collected: list[int] = []
    gc.callbacks.append(lambda phase, info: collected.append(info["generation"]))
    try:
        qtbot.waitUntil(lambda: 1 in collected, timeout=5_000)  # a young pass, from the timer
    finally:
        gc.callbacks.pop()
        for timer in timers:
            timer.stop()


@pytest.mark.usefixtures("_interpreter")
def test_a_build_lowers_the_apps_interval_and_gives_it_back() -> None:
    sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
    held = _SwitchInterval()
    held.hold()
    assert sys.getswitchinterval() == pytest.approx(
        min(GUI_SWITCH_INTERVAL_S, BUILD_SWITCH_INTERVAL_S)
    )
    held.release()
    assert sys.getswitchinterval() == pytest.approx(GUI_SWITCH_INTERVAL_S)


@pytest.mark.usefixtures("_interpreter")
def test_the_interval_is_left_alone_or_refused_when_not_positive() -> None:
    sys.setswitchinterval(0.004)
    owner = QObject()
    for timer in install_gui_thread_gc(owner, settle_ms=None, switch_interval_s=None):
        timer.stop()
    assert sys.getswitchinterval() == pytest.approx(0.004)
    with pytest.raises(ValueError, match="switch_interval_s"):
        install_gui_thread_gc(owner, settle_ms=None, switch_interval_s=0)


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
def test_a_build_worker_runs_below_the_gui_threads_priority() -> None:
    def nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    gui = nice()
    seen: list[int] = []

    def work() -> None:
        _lower_priority()
        seen.append(nice())

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(10)
    assert seen == [max(gui, BUILD_NICE)]
    assert nice() == gui  # the GUI thread keeps its priority


class _Node:
    """A cycle's member (weak-referenceable)."""

    def __init__(self) -> None:
        self.me = self


@pytest.mark.usefixtures("_interpreter")
def test_a_full_pass_freezes_its_survivors_and_the_deep_pass_frees_cycles_that_died_frozen() -> (
    None
):
    import weakref

    from desktop.gc_policy import collect_deep, collect_recent

    gc.disable()
    try:
        frozen_before = gc.get_freeze_count()
        kept = [_Node() for _ in range(1_000)]
        collect_recent()
        assert gc.get_freeze_count() >= frozen_before + 1_000  # the next pass skips them
        tracked = len(gc.get_objects())  # what a pass scans now: not the frozen ones
        assert tracked < gc.get_freeze_count()
        probe = weakref.ref(kept[0])
        del kept  # the cycles die while frozen
        collect_recent()
        assert probe() is not None  # a pass over the recent objects does not see them
        collect_deep()
        assert probe() is None  # the deep pass does
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("_interpreter")
def test_the_three_timers_run_at_their_intervals() -> None:
    owner = QObject()
    timers = install_gui_thread_gc(
        owner, young_ms=11, full_ms=22, deep_ms=33, settle_ms=None, switch_interval_s=None
    )
    try:
        assert [t.interval() for t in timers] == [11, 22, 33]
        assert all(t.isActive() for t in timers)
    finally:
        for timer in timers:
            timer.stop()
