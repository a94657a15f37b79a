"""The built-in read-only command list, as allow rules with source ``"default"``."""

from __future__ import annotations

from .rules import Rule

__all__ = ["DEFAULT_RULES", "default_rules"]

# (pattern, unless): each pattern reads files or prints, never writes or runs other programs;
# `unless` lists the arguments that would make it write or execute something (shown by
# "always allow"). The full audit is :mod:`core.policy.reach`, which every match must pass:
# each program's option table (:mod:`core.policy.options`, :mod:`core.policy.gitreach`)
# resolves GNU/git abbreviations, attached and bundled short options and `--`, and asks for
# writing options (`sort -o/--outp/-T`, `tree -o/-R`, `file -C`, git's `--output` on every
# log-like subcommand), options that run programs (`rg --pre/-z/--hostname-bin`, `sort
# --compress-program`, `diff -l`, git `--ext-diff`/`--textconv`/`-O`/`--open-files-in-pager`,
# cat-file `--filters`), file lists known only at run time (`--files0-from`, `md5sum -c`,
# `file -f`, `find -files0-from`), symlink-following recursion (`grep -R`, `rg -L`, `find -L`,
# `du -L`, `diff -r`), jq programs that import modules, and unknown or ambiguous long
# options; every file operand and file-taking option (`grep -f`, `diff --to-file`, `jq
# --rawfile`, `git blame --contents`, `git diff --no-index`) must resolve inside the
# workspace after expansion and `cd` tracking. Git read commands also ask when the
# repository's config names a program they would run (`core.fsmonitor`, `diff.external`,
# textconv, filters other than git-lfs, pager, gpg, includes) or when there is no repository
# in the workspace. `date` is allowed only bare (`date -s` sets the clock); `df`, `tr`,
# `sed` only as `sed -n` with print commands on line/range/regex addresses
# (core/policy/sed_script.py); `echo`, `printf` (except `-v`), `uname`, `which`, `type`, `basename`, `dirname`, `pwd`,
# `cd` read no file.
_READ_ONLY: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ls *", ()),
    ("cat *", ()),
    ("head *", ()),
    ("tail *", ()),
    ("wc *", ()),
    ("nl *", ()),
    ("sed *", ("-i", "--in-place", "-f", "--file")),
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
    ("file *", ("-C", "--compile")),
    ("stat *", ()),
    ("du *", ()),
    ("df *", ()),
    ("tree *", ("-o", "-R")),
    ("sort *", ("-o", "--output", "-T", "--temporary-directory", "--compress-program")),
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
    ("git diff *", ("--output", "--ext-diff", "--textconv")),
    ("git log *", ("--output", "--ext-diff", "--textconv")),
    ("git show *", ("--output", "--ext-diff", "--textconv")),
    ("git blame *", ()),
    ("git ls-files *", ()),
    ("git ls-tree *", ()),
    ("git rev-parse *", ()),
    ("git merge-base *", ()),
    ("git describe *", ()),
    ("git cat-file *", ("--filters", "--textconv")),
    ("git shortlog *", ("--output",)),
    ("git grep *", ("-O", "--open-files-in-pager")),
    ("git stash list *", ("--output", "--ext-diff", "--textconv")),
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
