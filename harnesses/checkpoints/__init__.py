"""Working-tree checkpoints in Tandem's own per-workspace store (outside the workspace)."""

from ._cap import DEFAULT_CAP_BYTES, Recoverability, human_bytes
from .store import (
    DEFAULT_RETENTION,
    REF_PREFIX,
    SCHEMA,
    Checkpoint,
    CheckpointError,
    CheckpointStore,
    Retention,
    retention_from_settings,
)

__all__ = [
    "DEFAULT_CAP_BYTES",
    "DEFAULT_RETENTION",
    "REF_PREFIX",
    "SCHEMA",
    "Checkpoint",
    "CheckpointError",
    "CheckpointStore",
    "Recoverability",
    "Retention",
    "human_bytes",
    "retention_from_settings",
]
