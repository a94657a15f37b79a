"""Browser navigation for the model: ``goto``/``back``/``forward``/``current_url`` function tools
beside the computer tool, and the address-bar gesture (Ctrl+L, type, Enter) a headless page lacks.

The OpenAI computer-use sample app gives browser environments the same extra functions; a model
trained on full browsers still presses Ctrl+L and types the address, so
:class:`AddressBarGesture` recognises that sequence and the computer navigates (issue 17).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from core.context import RunContextWrapper, ToolContext
from core.tools.computer import ComputerRestartedError
from core.tools.function import FunctionTool

from .domains import AllowedDomainsPolicy
from .keys import to_playwright_keys

__all__ = [
    "NAVIGATION_TOOL_NAMES",
    "AddressBarGesture",
    "BrowserNote",
    "address_targets",
    "navigation_tools",
    "normalize_address",
]

#: The names of the function tools :func:`navigation_tools` builds.
NAVIGATION_TOOL_NAMES = ("goto", "back", "forward", "current_url")

_OPEN_KEYS = ({"Control", "l"}, {"Meta", "l"}, {"Alt", "d"}, {"F6"})
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_LOCAL = re.compile(r"^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?(/.*)?$", re.IGNORECASE)


class BrowserNote(ComputerRestartedError):
    """A note for the model instead of the action: the computer tool sends a fresh
    screenshot and ``note`` (as for a restart, ``core.tools.computer``), the batch stops.

    Raised for an address the bar cannot open, and at the gate when the user handed control
    back (``ActionGate.leave_note``: the page may not be where the model left it).
    """


def normalize_address(text: str) -> str:
    """What a browser's address bar makes of ``text``: a URL to load.

    ``localhost:8000/signup`` and ``127.0.0.1:5000`` get ``http://``, other host names
    (``example.com/docs``) ``https://``; a text with a scheme (``http:``, ``about:``,
    ``data:``, ``file:``) is kept as typed.

    Raises:
        ValueError: empty text, or text with spaces and no scheme (a search, which this
            browser cannot run offline).
    """
    value = text.strip()
    if not value:
        raise ValueError("no address was given")
    if _SCHEME.match(value) and not re.match(r"^[^/:]+:\d", value):
        return value
    if any(c.isspace() for c in value):
        raise ValueError(f"{value!r} is not an address (searches are not supported)")
    if _LOCAL.match(value):
        return "http://" + value
    return "https://" + value


class AddressBarGesture:
    """The state of a typed address: Ctrl+L (also Cmd+L, Alt+D, F6) opens it, typed text
    fills it, Backspace edits, Enter submits, Escape or any other action cancels.

    Feed it every key combination (Playwright names, e.g. ``["Control", "l"]``) and typed
    text; it tells the computer whether the input belongs to the address bar.
    """

    def __init__(self) -> None:
        self._buffer: str | None = None

    @property
    def active(self) -> bool:
        """Whether the address bar has focus (typed text goes into it, not the page)."""
        return self._buffer is not None

    @property
    def text(self) -> str | None:
        """The address typed so far, or ``None`` when the bar is not focused."""
        return self._buffer

    def reset(self) -> None:
        """Leave the address bar (another action happened)."""
        self._buffer = None

    def on_keys(self, keys: Sequence[str]) -> str | None:
        """Handle one key combination.

        Returns:
            ``"open"`` (the bar got focus), ``"edit"`` (the key edited the address),
            ``"submit"`` (Enter: navigate to :attr:`text`, then the bar closes),
            ``"cancel"`` (Escape) or ``None`` (the key is not for the bar; it goes to the page
            and the bar closes).
        """
        pressed = set(keys)
        if pressed in _OPEN_KEYS:
            self._buffer = ""
            return "open"
        if self._buffer is None:
            return None
        if pressed == {"Enter"}:
            return "submit"
        if pressed == {"Escape"}:
            self._buffer = None
            return "cancel"
        if pressed == {"Backspace"}:
            self._buffer = self._buffer[:-1]
            return "edit"
        if pressed in ({"Control", "a"}, {"Meta", "a"}, {"Delete"}):
            self._buffer = "" if pressed == {"Delete"} else self._buffer
            return "edit"  # select all: the next typed text replaces the address
        self._buffer = None
        return None

    def on_type(self, text: str) -> bool:
        """Add typed ``text`` to the address; ``False`` when the bar is not focused."""
        if self._buffer is None:
            return False
        self._buffer += text
        return True

    def submit(self) -> str:
        """The URL to load for the typed address; the bar closes.

        Raises:
            ValueError: the typed text is not an address (:func:`normalize_address`).
        """
        typed, self._buffer = self._buffer or "", None
        return normalize_address(typed)


def address_targets(actions: Sequence[dict[str, Any]], typed: str | None = None) -> list[str]:
    """The URLs a ``computer_call``'s actions would open through the address-bar gesture.

    Args:
        actions: the call's actions (``keypress`` with ``keys``, ``type`` with ``text``...).
        typed: what the bar already holds (``PlaywrightComputer.address_bar_text``).

    Returns:
        Each address submitted with Enter, normalised (bad ones are left out: they open
        nothing).
    """
    gesture = AddressBarGesture()
    gesture._buffer = typed
    targets: list[str] = []
    for action in actions:
        kind = action.get("type")
        if kind == "keypress":
            keys = [str(k) for k in action.get("keys") or ()]
            if gesture.on_keys(to_playwright_keys(keys)) == "submit":
                try:
                    targets.append(gesture.submit())
                except ValueError:
                    pass
        elif kind == "type":
            gesture.on_type(str(action.get("text") or ""))
        elif kind not in ("screenshot", "wait"):
            gesture.reset()
    return targets


_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
_GOTO_ARGS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {
            "type": "string",
            "description": "The address to open, e.g. http://localhost:8000/signup",
        }
    },
    "required": ["url"],
}
_DESCRIPTIONS = {
    "goto": (
        "Open a URL in the browser the computer tool shows. Use this (not Ctrl+L and typing) "
        "to go to an address; localhost addresses need no approval."
    ),
    "back": "Go back one page in the browser's history (instead of the keyboard or mouse).",
    "forward": "Go forward one page in the browser's history.",
    "current_url": "The URL of the page the browser shows now.",
}


def _goto_url(arguments: str) -> str:
    try:
        data = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not JSON: {exc}") from None
    url = data.get("url") if isinstance(data, dict) else None
    if not isinstance(url, str):
        raise ValueError("goto needs a string 'url'")
    return normalize_address(url)


def navigation_tools(
    computer: Any, policy: AllowedDomainsPolicy | None = None
) -> list[FunctionTool]:
    """The function tools ``goto(url)``, ``back()``, ``forward()``, ``current_url()`` on
    ``computer`` (a ``PlaywrightComputer`` or a ``GatedComputer`` around one), for an agent
    whose computer tool's environment is ``"browser"``.

    ``goto`` asks for approval exactly when ``policy`` would for an action on the target
    page (loopback and listed domains pass; default policy: only loopback and blank pages).
    Every tool returns ``"Now at <url>."`` (plus any note for the model, e.g. that the user
    handed control back); a bad address or a failed load is returned as the tool's error text.

    Args:
        computer: has ``goto(url)``, ``back()``, ``forward()`` (async) and ``current_url``.
        policy: the allowed-domains rules of the computer tool.

    Returns:
        Four :class:`core.tools.function.FunctionTool` objects, named as
        :data:`NAVIGATION_TOOL_NAMES`.
    """
    rules = policy if policy is not None else AllowedDomainsPolicy()

    def goto_needs_approval(
        ctx: RunContextWrapper[Any], args: dict[str, Any], call_id: str
    ) -> bool:
        try:
            url = normalize_address(str(args.get("url", "")))
        except ValueError:
            return False  # the call fails with a clear error; nothing to approve
        return not rules.allows(url)

    async def run(name: str, arguments: str) -> str:
        notes: list[str] = []
        try:
            if name == "goto":
                await _noted(computer.goto(_goto_url(arguments)), notes)
            elif name in ("back", "forward"):
                await _noted(getattr(computer, name)(), notes)
        except ValueError as exc:
            return f"Error: {exc}"
        except Exception as exc:  # a failed load: the model reads why
            return f"Error: the browser could not navigate: {exc}"
        text = f"Now at {computer.current_url or 'about:blank'}."
        return " ".join([*notes, text])

    def make(name: str) -> FunctionTool:
        async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
            return await run(name, arguments)

        return FunctionTool(
            name=name,
            description=_DESCRIPTIONS[name],
            params_json_schema=_GOTO_ARGS if name == "goto" else _NO_ARGS,
            on_invoke_tool=invoke,
            strict_json_schema=True,
            needs_approval=goto_needs_approval if name == "goto" else False,
        )

    return [make(name) for name in NAVIGATION_TOOL_NAMES]


async def _noted(awaitable: Any, notes: list[str]) -> None:
    """Await ``awaitable``; a note for the model raised at the gate (the user handed back
    control) is kept in ``notes`` and the navigation is not done (the model re-plans)."""
    try:
        await awaitable
    except ComputerRestartedError as exc:
        notes.append(exc.note)
