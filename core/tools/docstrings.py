"""Docstring parsing for function tools: style detection and griffe extraction (spec §1.3)."""

from __future__ import annotations

import inspect
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

# griffe is imported at the first parse (issue 15: ~30 ms, not before the window's first paint)

__all__ = [
    "DocstringStyle",
    "FuncDocumentation",
    "detect_docstring_style",
    "is_callable_instance",
    "generate_func_documentation",
    "parse_docstring",
]

DocstringStyle = Literal["google", "numpy", "sphinx"]

_SPHINX_PATTERNS = [re.compile(p, re.MULTILINE) for p in (r"^:param\s", r"^:type\s")] + [
    re.compile(p, re.MULTILINE) for p in (r"^:return:", r"^:rtype:")
]
_NUMPY_PATTERNS = [
    re.compile(rf"^{word}[ \t]*\n[ \t]*-{{3,}}[ \t]*$", re.MULTILINE)
    for word in ("Parameters", "Returns", "Yields")
]
_GOOGLE_PATTERNS = [
    re.compile(p, re.MULTILINE) for p in (r"^(Args|Arguments):", r"^(Returns):", r"^(Raises):")
]
_GOOGLE_PARAMS_HEADER = re.compile(r"(args|arguments|params|parameters):", re.IGNORECASE)
# Google section headers griffe knows (a line ``Word Word:`` at column 0).
_GOOGLE_ANY_HEADER = re.compile(
    r"(args|arguments|params|parameters|keyword args|keyword arguments|other args|"
    r"other arguments|other params|other parameters|returns?|yields?|raises?|"
    r"exceptions?|warns?|warnings?|examples?|notes?|attributes?|receives?|deprecated):",
    re.IGNORECASE,
)
# griffe logs a warning for every undocumented type; silence it while parsing (spec §1.3).
_GRIFFE_LOGGER = logging.getLogger("griffe")
_GRIFFE_LOCK = threading.Lock()


@dataclass(slots=True)
class FuncDocumentation:
    """What a callable's docstring says.

    Attributes:
        name: the callable's ``__name__`` (class name for callable instances).
        description: the first text section of the docstring, or ``None`` without one.
        param_descriptions: parameter name (leading ``*`` stripped) -> description.
    """

    name: str
    description: str | None
    param_descriptions: dict[str, str] = field(default_factory=dict)


def detect_docstring_style(doc: str) -> DocstringStyle:
    """Guess a docstring's style by counting style markers at line starts (spec §1.3).

    Sphinx scores ``:param``, ``:type``, ``:return:``, ``:rtype:``; numpy scores a
    ``Parameters``/``Returns``/``Yields`` line underlined with 3+ dashes; google scores
    ``Args:``/``Arguments:``, ``Returns:``, ``Raises:``. Highest score wins, ties go
    sphinx > numpy > google, and no marker at all means google.

    Args:
        doc: the cleaned docstring text.

    Returns:
        ``"google"``, ``"numpy"`` or ``"sphinx"``.
    """
    scores = {
        "sphinx": sum(1 for p in _SPHINX_PATTERNS if p.search(doc)),
        "numpy": sum(1 for p in _NUMPY_PATTERNS if p.search(doc)),
        "google": sum(1 for p in _GOOGLE_PATTERNS if p.search(doc)),
    }
    best = max(scores.values())
    if best == 0:
        return "google"
    order: tuple[DocstringStyle, ...] = ("sphinx", "numpy", "google")
    return next(style for style in order if scores[style] == best)


def _normalize_google(doc: str) -> str:
    """Insert a blank line before an ``Args:``-like header glued to the text above it.

    griffe only recognizes a section that follows a blank line; a header line (exactly
    ``Args:``, ``Arguments:``, ``Params:`` or ``Parameters:``, any case, at column 0) right after
    a non-blank line and followed by an indented line gets a blank line inserted before it.
    """
    lines = doc.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if (
            _GOOGLE_PARAMS_HEADER.fullmatch(line)
            and i > 0
            and lines[i - 1].strip()
            and nxt[:1] in (" ", "\t")
            and nxt.strip()
        ):
            out.append("")
        out.append(line)
    return "\n".join(out)


def _indent_opening_section(doc: str) -> str:
    """Re-indent the body of a section that opens the docstring (no summary line).

    ``inspect.getdoc`` dedents every line after the first by their common indent, so when a
    docstring starts ``Args:`` on its first line the entries land at column 0 and griffe reads the
    section as plain text. When the first line is a Google section header and the line after it
    is at column 0, the lines up to the next column-0 header are indented by four spaces.
    """
    lines = doc.split("\n")
    if len(lines) < 2 or not _GOOGLE_ANY_HEADER.fullmatch(lines[0].strip()):
        return doc
    if not lines[1].strip() or lines[1][:1] in (" ", "\t"):
        return doc
    out = [lines[0].strip()]
    index = 1
    while index < len(lines) and not _GOOGLE_ANY_HEADER.fullmatch(lines[index]):
        out.append(f"    {lines[index]}" if lines[index].strip() else "")
        index += 1
    if index < len(lines) and out[-1]:
        out.append("")
    return "\n".join(out + lines[index:])


def parse_docstring(
    doc: str | None, style: DocstringStyle | None = None
) -> tuple[str | None, dict[str, str]]:
    """Parse ``doc`` with griffe.

    Args:
        doc: the cleaned docstring (``inspect.getdoc`` output), or ``None``.
        style: the docstring style; detected with :func:`detect_docstring_style` when ``None``.

    Returns:
        ``(description, param_descriptions)``: the first text section (``None`` when there is
        none) and a map from parameter name (leading ``*`` stripped) to its description, read
        from ``Args``/``Parameters`` and also from Google ``Keyword Args``/``Other Parameters``
        and NumPy ``Other Parameters`` sections (issue 13: openai-agents 0.24 drops those,
        a public Agents SDK bug report). A docstring that opens with ``Args:`` (no summary)
        keeps its parameter descriptions (0.24 loses them when the section is the only one).
    """
    if not doc:
        return None, {}
    style = style or detect_docstring_style(doc)
    if style == "google":
        doc = _normalize_google(_indent_opening_section(doc))
    from griffe import Docstring, DocstringSectionKind

    # Sections whose entries describe parameters: Args, and Keyword Args / Other Parameters.
    parameter_kinds = (DocstringSectionKind.parameters, DocstringSectionKind.other_parameters)
    with _GRIFFE_LOCK:
        previous = _GRIFFE_LOGGER.level
        _GRIFFE_LOGGER.setLevel(logging.ERROR)
        try:
            # griffe cleans the text again, treating line 1 apart from the others; an empty
            # first line keeps the already-clean text (an opening ``Args:`` body) as it is.
            sections = Docstring("\n" + doc, lineno=1, parser=style).parse()
        finally:
            _GRIFFE_LOGGER.setLevel(previous)
    description: str | None = None
    params: dict[str, str] = {}
    for section in sections:
        if section.kind == DocstringSectionKind.text and description is None:
            description = section.value
        elif section.kind in parameter_kinds:
            for param in section.value:
                # ``Args`` wins over ``Keyword Args``/``Other Parameters`` for the same name.
                if section.kind == DocstringSectionKind.parameters:
                    params[param.name.lstrip("*")] = param.description
                else:
                    params.setdefault(param.name.lstrip("*"), param.description)
    return description, params


def generate_func_documentation(
    func: Callable[..., Any], style: DocstringStyle | None = None
) -> FuncDocumentation:
    """Name, description and parameter descriptions of ``func`` (spec §1.3).

    For a callable class instance the name is the class name, the description comes from the
    class docstring (falling back to ``__call__``'s) and the parameter descriptions from
    ``__call__``'s docstring.

    Args:
        func: a function, bound method or callable instance.
        style: forced docstring style, or ``None`` to detect it per docstring.

    Returns:
        A :class:`FuncDocumentation`.
    """
    if is_callable_instance(func):
        call = type(func).__call__
        call_description, params = parse_docstring(inspect.getdoc(call), style)
        class_doc = type(func).__doc__
        class_description, _ = (
            parse_docstring(inspect.cleandoc(class_doc), style) if (class_doc) else (None, {})
        )
        return FuncDocumentation(
            name=type(func).__name__,
            description=class_description or call_description,
            param_descriptions=params,
        )
    description, params = parse_docstring(inspect.getdoc(func), style)
    return FuncDocumentation(
        name=getattr(func, "__name__", type(func).__name__),
        description=description,
        param_descriptions=params,
    )


def is_callable_instance(func: Any) -> bool:
    """True for objects called through a class ``__call__`` (not functions, methods, classes)."""
    return not (
        inspect.isfunction(func)
        or inspect.ismethod(func)
        or inspect.isbuiltin(func)
        or inspect.isroutine(func)
        or inspect.isclass(func)
    )
