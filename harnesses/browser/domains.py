"""Allowed-domains policy: whether a computer action on the current page needs the user's approval."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from core.context import RunContextWrapper
from core.tools.computer import ComputerActionRequest

__all__ = ["LOCAL_HOSTS", "AllowedDomainsPolicy"]

#: Hosts always allowed: the user's own machine (dev servers).
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
#: Actions that only look at the page never need approval.
_PASSIVE = frozenset({"screenshot", "wait"})
#: Pages that belong to no site (the blank start page, inline documents).
_SITELESS_SCHEMES = frozenset({"about", "data", "blob", "chrome-error"})


def _host(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower().rstrip(".")


def _is_loopback(host: str) -> bool:
    if host in LOCAL_HOSTS or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(slots=True)
class AllowedDomainsPolicy:
    """Decides whether acting on a page needs approval (issue "Browser", item 4).

    A domain entry ``example.com`` allows that host and its subdomains; ``*`` allows every
    host. Loopback hosts (``localhost``, ``127.0.0.1``, ``::1``, ``*.localhost``) and site-less
    pages (``about:blank``, ``data:``) are always allowed; ``file:`` pages and anything else
    outside the list ask first. Use an instance as ``ComputerTool(needs_approval=policy)``;
    an address typed after Ctrl+L and submitted with Enter is judged like the page it opens
    (the same rule as the ``goto`` tool, ``harnesses.browser.navigation``).

    Attributes:
        domains: allowed domain names (case-insensitive, a leading ``*.`` or ``.`` is ignored).
    """

    domains: Iterable[str] = ()
    _entries: frozenset[str] = field(init=False, default=frozenset())

    def __post_init__(self) -> None:
        cleaned = set()
        for entry in self.domains:
            value = entry.strip().lower().rstrip(".")
            value = value.removeprefix("*.").lstrip(".")
            if value:
                cleaned.add(value)
        self._entries = frozenset(cleaned)

    def allows(self, url: str | None) -> bool:
        """Whether actions on ``url`` may run without asking (``None``/empty: a blank page)."""
        if not url:
            return True
        scheme, host = _host(url)
        if scheme in _SITELESS_SCHEMES:
            return True
        if scheme not in ("http", "https", "ws", "wss") or not host:
            return False
        if _is_loopback(host) or "*" in self._entries:
            return True
        return any(host == entry or host.endswith("." + entry) for entry in self._entries)

    def needs_approval_for(self, url: str | None, actions: Iterable[dict[str, Any]]) -> bool:
        """``True`` when ``actions`` include one that acts on the page and ``url`` is not allowed."""
        acting = any(action.get("type") not in _PASSIVE for action in actions)
        return acting and not self.allows(url)

    async def __call__(self, ctx: RunContextWrapper[Any], request: ComputerActionRequest) -> bool:
        """The ``ComputerTool`` ``needs_approval`` callable: reads the computer's ``current_url``
        (a computer without one is treated as being on a page outside the list)."""
        url = getattr(request.computer, "current_url", "\0unknown")
        if url == "\0unknown":
            return self.needs_approval_for("unknown:", request.actions)
        from .navigation import address_targets  # navigation imports this module

        typed = getattr(request.computer, "address_bar_text", None)
        if any(not self.allows(t) for t in address_targets(request.actions, typed)):
            return True  # Ctrl+L, an address outside the list, Enter: as goto would ask
        return self.needs_approval_for(url, request.actions)
