"""Tandem's own git: the one hardened door (``runner``) and read-only repository queries."""

from .repo import UserRepo, current_branch, enclosing_top_level, find_repo, init_with_commit
from .runner import (
    ALLOWED_COMMANDS,
    GitError,
    GitResult,
    door_counters,
    door_environment,
    install_policy_probe,
    run_git,
)

install_policy_probe()  # the policy's read-only git questions go through the door too

__all__ = [
    "ALLOWED_COMMANDS",
    "GitError",
    "GitResult",
    "UserRepo",
    "current_branch",
    "door_counters",
    "door_environment",
    "enclosing_top_level",
    "find_repo",
    "init_with_commit",
    "run_git",
]
