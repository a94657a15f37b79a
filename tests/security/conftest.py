"""Fixtures shared by the security modules: the user's HOME and a marker outside the workspace."""

from tests.security._user_git import home, marker

__all__ = ["home", "marker"]
