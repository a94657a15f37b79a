"""The apply_patch editor seam (seed: ``agents.editor``; spec §5.1).

Core defines the contract; ``harnesses`` provides the Git-aware implementation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..context import RunContextWrapper

__all__ = ["ApplyPatchEditor", "ApplyPatchOperation", "ApplyPatchResult"]

ApplyPatchOperationType = Literal["create_file", "update_file", "delete_file"]


@dataclass(slots=True)
class ApplyPatchOperation:
    """One operation of an ``apply_patch_call`` (spec §5.1).

    Attributes:
        type: ``create_file`` | ``update_file`` | ``delete_file``.
        path: workspace-relative path the model named.
        diff: the V4A hunk body (no envelope); ``None`` for ``delete_file``.
        ctx_wrapper: the run context of the call.
        move_to: rename target for ``update_file``, when the payload carries one.
    """

    type: ApplyPatchOperationType
    path: str
    diff: str | None = None
    ctx_wrapper: RunContextWrapper[Any] | None = None
    move_to: str | None = None


@dataclass(slots=True)
class ApplyPatchResult:
    """What an editor reports for one operation: ``status`` and a model-visible ``output``."""

    status: Literal["completed", "failed"] | None = None
    output: str | None = None


@runtime_checkable
class ApplyPatchEditor(Protocol):
    """Applies operations; each method may be sync or async and may return an
    :class:`ApplyPatchResult`, a ``str`` (the output), a ``{"status", "output"}`` mapping or ``None``.
    """

    def create_file(self, operation: ApplyPatchOperation) -> Any: ...

    def update_file(self, operation: ApplyPatchOperation) -> Any: ...

    def delete_file(self, operation: ApplyPatchOperation) -> Any: ...
