"""Finding a Chromium executable and the flags to launch it with (platform notes, Playwright)."""

from __future__ import annotations

import glob
import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "ENV_VAR",
    "LAUNCH_ARGS",
    "BrowserNotFoundError",
    "chromium_candidates",
    "default_profile_dir",
    "find_chromium",
]

#: Environment variable naming a Chromium executable (checked after the explicit setting).
ENV_VAR = "TANDEM_CHROMIUM"

#: Flags from the platform notes: no sandbox (root in CI), no GPU, and no background traffic to
#: Google hosts (Debian's Chromium keeps trying without the networking flags).
LAUNCH_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

_SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserNotFoundError(RuntimeError):
    """No usable Chromium was found; the message lists every place that was tried."""


def _playwright_builds() -> Iterator[str]:
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache/ms-playwright")
    patterns = ("chromium-*/chrome-linux*/chrome", "chromium_headless_shell-*/*/headless_shell")
    for pattern in patterns:
        yield from sorted(glob.glob(os.path.join(root, pattern)), reverse=True)


def chromium_candidates(setting: str | None = None) -> list[str]:
    """Every place looked at, in order: the setting, ``$TANDEM_CHROMIUM``, ``/usr/bin/chromium``,
    ``chromium-browser``/``google-chrome`` on ``PATH``, then Playwright's own builds."""
    candidates: list[str] = []
    if setting:
        candidates.append(setting)
    env = os.environ.get(ENV_VAR)
    if env:
        candidates.append(env)
    candidates.append("/usr/bin/chromium")
    for name in _SYSTEM_NAMES:
        found = shutil.which(name)
        candidates.append(found or name)
    candidates.extend(_playwright_builds())
    return candidates


def _usable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_chromium(setting: str | None = None) -> str:
    """The first usable Chromium of :func:`chromium_candidates`.

    An explicit ``setting`` or ``$TANDEM_CHROMIUM`` that is not executable is an error rather
    than silently skipped, so a typo in the settings is reported.

    Returns:
        An absolute path to an executable file.

    Raises:
        BrowserNotFoundError: nothing usable (the message names what was tried and how to fix it).
    """
    for label, explicit in (("setting", setting), (ENV_VAR, os.environ.get(ENV_VAR))):
        if explicit:
            resolved = explicit if os.sep in explicit else (shutil.which(explicit) or explicit)
            if not _usable(resolved):
                raise BrowserNotFoundError(
                    f"The Chromium named by the {label} ({explicit!r}) is not an executable file."
                )
            return os.path.abspath(resolved)
    tried = chromium_candidates()
    for path in tried:
        if _usable(path):
            return os.path.abspath(path)
    raise BrowserNotFoundError(
        "No Chromium browser found (tried: "
        + ", ".join(dict.fromkeys(tried))
        + f"). Install one (Debian: apt-get install chromium) or set {ENV_VAR} or the "
        "browser setting to its path."
    )


def default_profile_dir(project_dir: str | os.PathLike[str]) -> Path:
    """The persistent browser profile for a project: ``$XDG_DATA_HOME/tandem/browser-profiles/
    <name>-<hash>``, so logins survive between sessions on the same project."""
    project = Path(project_dir).resolve()
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local/share")
    digest = hashlib.sha256(str(project).encode()).hexdigest()[:12]
    return base / "tandem" / "browser-profiles" / f"{project.name or 'root'}-{digest}"
