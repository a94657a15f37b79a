"""A Python interpreter that sandboxed commands can see, for tests that run Python inside bwrap.

The venv's interpreter may live under ``/tmp`` (a fresh clone there), which the sandbox
replaces with a private tmpfs; the base interpreter the venv was made from is outside it.
"""

from __future__ import annotations

import os
import sys

__all__ = ["SANDBOX_PYTHON"]

_BASE = os.path.join(sys.base_prefix, "bin", "python3")
SANDBOX_PYTHON = _BASE if os.access(_BASE, os.X_OK) else sys.executable
