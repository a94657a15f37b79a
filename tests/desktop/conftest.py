"""Qt tests run offscreen; garbage is collected on the main thread only (see desktop.gc_policy)."""

import gc
import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _collect_on_the_main_thread():
    """Automatic GC could run in a worker thread and destroy Qt objects there."""
    gc.disable()
    yield
    gc.collect()
