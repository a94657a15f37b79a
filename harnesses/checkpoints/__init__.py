"""Working-tree checkpoints in Tandem's own per-workspace store (outside the workspace)."""

from .store import REF_PREFIX, SCHEMA, Checkpoint, CheckpointError, CheckpointStore

__all__ = ["REF_PREFIX", "SCHEMA", "Checkpoint", "CheckpointError", "CheckpointStore"]
