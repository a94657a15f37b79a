"""Playwright-driven Chromium as the ``ComputerTool`` harness, with a live-view frame feed."""

from .computer import PlaywrightComputer
from .discovery import (
    ENV_VAR,
    LAUNCH_ARGS,
    BrowserNotFoundError,
    chromium_candidates,
    default_profile_dir,
    find_chromium,
)
from .domains import LOCAL_HOSTS, AllowedDomainsPolicy
from .events import (
    BrowserAction,
    BrowserEvent,
    BrowserEventListener,
    BrowserNavigated,
    BrowserRestarted,
    FrameListener,
    FrameMetadata,
)
from .keys import to_playwright_key, to_playwright_keys
from .screencast import Screencast

__all__ = [
    "ENV_VAR",
    "LAUNCH_ARGS",
    "LOCAL_HOSTS",
    "AllowedDomainsPolicy",
    "BrowserAction",
    "BrowserEvent",
    "BrowserEventListener",
    "BrowserNavigated",
    "BrowserNotFoundError",
    "BrowserRestarted",
    "FrameListener",
    "FrameMetadata",
    "PlaywrightComputer",
    "Screencast",
    "chromium_candidates",
    "default_profile_dir",
    "find_chromium",
    "to_playwright_key",
    "to_playwright_keys",
]
