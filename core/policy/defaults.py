"""The built-in read-only command list, as allow rules with source ``"default"``."""

from __future__ import annotations

from .rules import Rule

__all__ = ["DEFAULT_RULES", "default_rules"]

# (pattern, unless): each pattern reads files or prints, never writes or runs other programs;
# `unless` lists the arguments that would make it write or execute something.
_READ_ONLY: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ls *", ()),
    ("cat *", ()),
    ("head *", ()),
    ("tail *", ()),
    ("wc *", ()),
    ("nl *", ()),
    ("grep *", ()),
    ("egrep *", ()),
    ("fgrep *", ()),
    ("rg *", ("--pre", "--pre-glob", "--search-zip", "-z")),
    (
        "find *",
        (
            "-delete",
            "-exec",
            "-execdir",
            "-ok",
            "-okdir",
            "-fprint",
            "-fprint0",
            "-fprintf",
            "-fls",
        ),
    ),
    ("pwd *", ()),
    ("echo *", ()),
    ("printf *", ()),
    ("which *", ()),
    ("type *", ()),
    ("file *", ()),
    ("stat *", ()),
    ("du *", ()),
    ("df *", ()),
    ("tree *", ("-o",)),
    ("sort *", ("-o", "--output", "--compress-program")),
    ("cut *", ()),
    ("tr *", ()),
    ("diff *", ()),
    ("cmp *", ()),
    ("basename *", ()),
    ("dirname *", ()),
    ("realpath *", ()),
    ("readlink *", ()),
    ("whoami", ()),
    ("uname *", ()),
    ("date", ()),
    ("true", ()),
    ("false", ()),
    ("cd *", ()),
    ("jq *", ()),
    ("md5sum *", ()),
    ("sha1sum *", ()),
    ("sha256sum *", ()),
    ("git status *", ()),
    ("git diff *", ("--output", "--ext-diff")),
    ("git log *", ("--output", "--ext-diff")),
    ("git show *", ("--output", "--ext-diff")),
    ("git blame *", ()),
    ("git ls-files *", ()),
    ("git ls-tree *", ()),
    ("git rev-parse *", ()),
    ("git merge-base *", ()),
    ("git describe *", ()),
    ("git cat-file *", ()),
    ("git shortlog *", ()),
    ("git grep *", ("-O", "--open-files-in-pager")),
    ("git stash list *", ()),
    ("git branch", ()),
    ("git branch --show-current", ()),
    ("git branch -a", ()),
    ("git branch -v", ()),
    ("git branch -vv", ()),
    ("git remote", ()),
    ("git remote -v", ()),
)


def _slug(pattern: str) -> str:
    words = [w for w in pattern.replace("*", "").split() if w]
    return "-".join(w.lstrip("-") or "x" for w in words)


def default_rules() -> tuple[Rule, ...]:
    """The built-in allow rules for read-only commands (ids ``"default:<slug>"``).

    They allow in *ask* and *read-only* mode; user deny/ask rules still win over them.
    """
    return tuple(
        Rule(
            id=f"default:{_slug(pattern)}",
            action="allow",
            kind="command",
            pattern=pattern,
            source="default",
            unless=unless,
        )
        for pattern, unless in _READ_ONLY
    )


DEFAULT_RULES: tuple[Rule, ...] = default_rules()
"""The built-in read-only list (see :func:`default_rules`)."""
