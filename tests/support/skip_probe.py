"""Run only by ``tests/test_no_skips.py``: one test that skips, one skipped module-level
below ``SKIP_MODULE=1``, one expected failure."""

from __future__ import annotations

import os

import pytest

if os.environ.get("SKIP_MODULE") == "1":
    pytest.skip("module-level probe skip", allow_module_level=True)


def test_skips() -> None:
    pytest.skip("probe skip")


@pytest.mark.xfail(reason="probe expected failure", strict=True)
def test_expected_failure() -> None:
    raise AssertionError("expected")


def test_passes() -> None:
    assert True
