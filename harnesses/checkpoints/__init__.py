"""Working-tree checkpoints under private Git refs (a shadow Git dir outside repositories)."""

from .store import REF_PREFIX, Checkpoint, CheckpointError, CheckpointStore

__all__ = ["REF_PREFIX", "Checkpoint", "CheckpointError", "CheckpointStore"]
