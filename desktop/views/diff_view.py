"""Compatibility shim: the diff view now lives in the :mod:`desktop.views.diff` package
(model, row painter, view); existing imports keep working."""

from __future__ import annotations

from desktop.views.diff.view import DiffView

__all__ = ["DiffView"]
