"""The spawner: the one door through which Tandem starts agent child processes.

``spawner`` starts a program under ``supervisor.py`` (subreaper, death with Tandem, the whole
tree killed when the program ends); ``strays`` makes Tandem a subreaper that kills agent
processes reparented to it; ``services`` keeps the background services the agent starts.
"""

from __future__ import annotations

from .services import Service, ServiceRegistry, starts_service
from .spawner import (
    ISOLATION_ENV,
    SUPERVISOR,
    SpawnMode,
    can_isolate,
    finish,
    isolation_wanted,
    kill_now,
    spawn,
    supervised_argv,
    terminate,
)
from .strays import MARKER_ENV, become_subreaper, kill_strays, set_undumpable

__all__ = [
    "ISOLATION_ENV",
    "MARKER_ENV",
    "SUPERVISOR",
    "Service",
    "ServiceRegistry",
    "SpawnMode",
    "become_subreaper",
    "can_isolate",
    "finish",
    "isolation_wanted",
    "kill_now",
    "kill_strays",
    "set_undumpable",
    "spawn",
    "starts_service",
    "supervised_argv",
    "terminate",
]
