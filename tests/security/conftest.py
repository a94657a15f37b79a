"""Fixtures shared by the security modules: the user's HOME, a marker outside the workspace,
and plain git for the tests' own commands."""

from tests.security._damage import git_env
from tests.security._user_git import home, marker

__all__ = ["git_env", "home", "marker"]
