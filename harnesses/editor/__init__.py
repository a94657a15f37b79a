"""The Git-aware apply_patch editor: confinement, hunks, review queue and stale-write guard."""

from .confined import ConfinedWorkspace
from .confinement import ConfinementError, resolve_in_workspace
from .git_editor import EditorMode, GitAwareEditor
from .hunks import Hunk, compute_hunks, rebuild
from .review import HunkDecision, Proposal, ReviewEvent, ReviewOutcome, ReviewQueue

__all__ = [
    "ConfinedWorkspace",
    "ConfinementError",
    "EditorMode",
    "GitAwareEditor",
    "Hunk",
    "HunkDecision",
    "Proposal",
    "ReviewEvent",
    "ReviewOutcome",
    "ReviewQueue",
    "compute_hunks",
    "rebuild",
    "resolve_in_workspace",
]
