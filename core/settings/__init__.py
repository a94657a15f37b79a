"""The one typed settings model (:mod:`.model`), loaded from and saved to a TOML file in the
platform config dir (:mod:`.file`)."""

from __future__ import annotations

from .file import load_settings, save_settings
from .model import (
    API_KEY_ENV,
    APP_NAME,
    DEFAULT_MODEL,
    MAX_RECENT_FOLDERS,
    SETTINGS_FILE_NAME,
    ApiKey,
    McpServer,
    Settings,
    data_dir,
    mask_secret,
    settings_dir,
    settings_path,
)

__all__ = [
    "API_KEY_ENV",
    "APP_NAME",
    "ApiKey",
    "DEFAULT_MODEL",
    "MAX_RECENT_FOLDERS",
    "McpServer",
    "SETTINGS_FILE_NAME",
    "Settings",
    "data_dir",
    "load_settings",
    "mask_secret",
    "save_settings",
    "settings_dir",
    "settings_path",
]
