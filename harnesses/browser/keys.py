"""Mapping the model's key names (``ENTER``, ``CTRL``, ``ArrowLeft``, ``cmd``...) to Playwright's."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MODIFIERS", "to_playwright_key", "to_playwright_keys"]

#: Playwright modifier key names.
MODIFIERS = frozenset({"Alt", "Control", "Meta", "Shift", "ControlOrMeta"})

_ALIASES: dict[str, str] = {
    # modifiers
    "alt": "Alt",
    "option": "Alt",
    "opt": "Alt",
    "ctrl": "Control",
    "control": "Control",
    "shift": "Shift",
    "cmd": "Meta",
    "command": "Meta",
    "meta": "Meta",
    "super": "Meta",
    "win": "Meta",
    "windows": "Meta",
    # editing and whitespace
    "enter": "Enter",
    "return": "Enter",
    "tab": "Tab",
    "space": " ",
    "spacebar": " ",
    "backspace": "Backspace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "ins": "Insert",
    "esc": "Escape",
    "escape": "Escape",
    # navigation
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
    "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pgup": "PageUp",
    "pagedown": "PageDown",
    "pgdn": "PageDown",
    # locks and misc
    "capslock": "CapsLock",
    "numlock": "NumLock",
    "scrolllock": "ScrollLock",
    "printscreen": "PrintScreen",
    "pause": "Pause",
    "contextmenu": "ContextMenu",
    "menu": "ContextMenu",
    # punctuation the model sometimes spells out
    "plus": "+",
    "minus": "-",
    "comma": ",",
    "period": ".",
    "slash": "/",
    "backslash": "\\",
    "semicolon": ";",
    "quote": "'",
    "backquote": "`",
    "equal": "=",
}


def to_playwright_key(name: str) -> str:
    """One key name in Playwright's form.

    Case-insensitive for named keys (``ENTER``/``enter``/``Enter`` → ``Enter``), ``F1``-``F24``,
    arrows as ``LEFT`` or ``ArrowLeft``; a single character is kept as given. Unknown multi-letter
    names are passed through unchanged (Playwright reports them if invalid).
    """
    if len(name) == 1:
        return name
    key = name.strip()
    folded = key.lower().replace("_", "").replace("-", "")
    if folded in _ALIASES:
        return _ALIASES[folded]
    if folded[:1] == "f" and folded[1:].isdigit() and 1 <= int(folded[1:]) <= 24:
        return f"F{int(folded[1:])}"
    return key


def to_playwright_keys(keys: Sequence[str]) -> list[str]:
    """A key combination (``["CTRL", "A"]``) in Playwright's form, in press order.

    A combination may also arrive as one ``"ctrl+a"`` string; it is split on ``+``. A lone
    letter pressed with Control, Alt or Meta is lower-cased so shortcuts work (``CTRL``+``A`` is
    ``Control``+``a``, as a keyboard would send); with only Shift, the case is kept.
    """
    names: list[str] = []
    for entry in keys:
        if len(entry) > 1 and "+" in entry.strip("+"):
            names.extend(part for part in entry.split("+") if part)
        else:
            names.append(entry)
    mapped = [to_playwright_key(name) for name in names]
    if any(key in ("Control", "Alt", "Meta") for key in mapped):
        mapped = [key.lower() if len(key) == 1 and key.isalpha() else key for key in mapped]
    return mapped
