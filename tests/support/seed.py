"""Runs the seed's Python examples (``tests/seed/tools.ko.md``) with only the imports changed.

``python_blocks()`` numbers the page's Python blocks from 0 as issue texts do ("blocks 4-9").
``run_block(n)`` rewrites ``from agents... import`` into ``from core import`` and executes the
block, allowing top-level ``await`` (the page uses it), and returns its namespace and stdout.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import re
from pathlib import Path
from typing import Any

SEED = Path(__file__).resolve().parents[1] / "seed" / "tools.ko.md"

_FENCE = re.compile(r"^([ \t]*)```(\w*)\n(.*?)^\1```", re.S | re.M)
_IMPORT = re.compile(r"^from agents(?:\.[\w.]+)? import ", re.M)


def _fences() -> list[tuple[str, str]]:
    text = SEED.read_text(encoding="utf-8")
    return [(lang, body) for _indent, lang, body in _FENCE.findall(text)]


def python_blocks() -> list[str]:
    """The page's Python code blocks, in order."""
    return [body for lang, body in _fences() if lang == "python"]


def printed_output_after(block: int) -> str:
    """The first non-Python fence after Python block ``block`` (an "output" block), dedented."""
    seen = -1
    fences = _fences()
    for index, (lang, _body) in enumerate(fences):
        if lang == "python":
            seen += 1
            if seen == block:
                for later_lang, later_body in fences[index + 1 :]:
                    if later_lang == "python":
                        break
                    return "\n".join(
                        line[4:] if line.startswith("    ") else line
                        for line in later_body.splitlines()
                    )
    raise LookupError(f"no output block after Python block {block}")


def core_source(block: int) -> str:
    """Block ``block`` with its ``agents`` imports pointed at ``core`` (the only change)."""
    return _IMPORT.sub("from core import ", python_blocks()[block])


async def run_block(
    block: int, namespace: dict[str, Any] | None = None
) -> tuple[dict[str, Any], str]:
    """Execute block ``block`` (top-level ``await`` allowed); returns (namespace, stdout)."""
    source = core_source(block)
    code = compile(source, f"<seed block {block}>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    scope: dict[str, Any] = {"__name__": f"seed_block_{block}"}
    scope.update(namespace or {})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        value = eval(code, scope)
        if inspect.iscoroutine(value):
            await value
    return scope, out.getvalue()
