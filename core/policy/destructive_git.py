"""The destructive guard's verdict on ``git`` subcommands: what each could lose.

Judged by effect (git-scm.com/docs of each subcommand): a path checkout, a restore, any
reset but ``--soft``, a clean, a ref deletion, a dropped stash entry, a forced branch or
worktree removal, a pruning gc… A subcommand git does not install here may be an alias
the guard cannot see, so it is *possibly* destructive. Options are read as git's
parse-options reads them: a unique prefix stands for its option, ``--no-X`` undoes ``X``,
the last of ``reset``'s modes wins; an unknown long option is *possibly* destructive.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .destructive_paths import Places, describe_paths
from .git_probe import git_exec_commands
from .harm import Harm

__all__ = ["KNOWN_GIT_SUBCOMMANDS", "git_harm", "installed_git_commands"]

# fmt: off
KNOWN_GIT_SUBCOMMANDS = frozenset(
    {
        "add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle",
        "cat-file", "check-attr", "check-ignore", "check-mailmap", "check-ref-format",
        "checkout", "checkout-index", "cherry", "cherry-pick", "citool", "clean", "clone",
        "column", "commit", "commit-graph", "commit-tree", "config", "count-objects",
        "describe", "diff", "diff-files", "diff-index", "diff-tree", "difftool", "fetch",
        "filter-branch", "filter-repo", "for-each-ref", "format-patch", "fsck", "gc",
        "get-tar-commit-id", "grep", "gui", "hash-object", "help", "init", "instaweb",
        "interpret-trailers", "lfs", "log", "ls-files", "ls-remote", "ls-tree", "maintenance",
        "merge", "merge-base", "merge-file", "merge-tree", "mergetool", "mktag", "mktree", "mv",
        "name-rev", "notes", "pack-refs", "prune", "pull", "push", "range-diff", "read-tree",
        "rebase", "reflog", "remote", "repack", "replace", "request-pull", "rerere", "reset",
        "restore", "rev-list", "rev-parse", "revert", "rm", "send-email", "shortlog", "show",
        "show-branch", "show-ref", "sparse-checkout", "stage", "stash", "status",
        "stripspace", "submodule", "switch", "symbolic-ref", "tag", "update-index",
        "update-ref", "var", "verify-commit", "verify-pack", "verify-tag", "version",
        "whatchanged", "worktree", "write-tree",
    }
)
# fmt: on
"""Subcommands git itself provides; anything else may be a user alias."""

# Option tables of the subcommands the guard judges (git 2.39 `git SUB -h`): ``x:long``
# (short letter, long name), ``=`` after a name takes a value, ``?`` an optional ``=value``.
# fmt: off
_TABLES = {
    "checkout": "b= B= l :guess :overlay q:quiet :recurse-submodules? :progress m:merge "
                ":conflict= d:detach t:track? f:force :orphan= :overwrite-ignore "
                ":ignore-other-worktrees 2:ours 3:theirs p:patch :ignore-skip-worktree-bits "
                ":pathspec-from-file= :pathspec-file-nul",
    "restore": "s:source= S:staged W:worktree :ignore-unmerged :overlay q:quiet "
               ":recurse-submodules? :progress m:merge :conflict= 2:ours 3:theirs p:patch "
               ":ignore-skip-worktree-bits :pathspec-from-file= :pathspec-file-nul",
    "reset": "q:quiet :refresh :mixed :soft :hard :merge :keep :recurse-submodules? p:patch "
             "N:intent-to-add :pathspec-from-file= :pathspec-file-nul",
    "clean": "q:quiet n:dry-run f:force i:interactive e:exclude=",
    "branch": "v:verbose q:quiet t:track? u:set-upstream-to= :unset-upstream :color? r:remotes "
              ":contains= :no-contains= :abbrev? a:all d:delete m:move c:copy l:list "
              ":show-current :create-reflog :edit-description f:force :merged= :no-merged= "
              ":column? :sort= :points-at= i:ignore-case :recurse-submodules :format=",
    "update-ref": "m= :no-deref :stdin :create-reflog z d",
    "worktree remove": "f:force",
    "read-tree": ":index-output= :empty v:verbose :trivial :aggressive :reset :prefix= "
                 ":exclude-per-directory= n:dry-run :sparse-checkout :debug-unpack "
                 ":recurse-submodules? q:quiet",
    "checkout-index": "a:all :ignore-skip-worktree-bits f:force q:quiet n:no-create u:index "
                      ":stdin :temp :prefix= :stage=",
    "rm": "n:dry-run q:quiet :cached f:force :ignore-unmatch :sparse :pathspec-from-file= "
          ":pathspec-file-nul",
    "mv": "v:verbose n:dry-run f:force :sparse",
    "gc": "q:quiet :prune? :cruft :aggressive :auto :force :keep-largest-pack",
    "tag": "l:list d:delete v:verify a:annotate m:message= F:file= e:edit s:sign :cleanup= "
           "u:local-user= f:force :create-reflog :column? :contains= :no-contains= :merged= "
           ":no-merged= :sort= :points-at= :format= :color? i:ignore-case",
    "symbolic-ref": "q:quiet d:delete :short :recurse m=",
    "switch": "c:create= C:force-create= :guess :discard-changes q:quiet :recurse-submodules? "
              ":progress m:merge :conflict= d:detach t:track? f:force :orphan= "
              ":overwrite-ignore :ignore-other-worktrees",
    "push": "v:verbose q:quiet :repo= :all :mirror d:delete :tags n:dry-run :porcelain f:force "
            ":force-with-lease? :force-if-includes :recurse-submodules= :thin :receive-pack= "
            ":exec= u:set-upstream :progress :prune :verify :follow-tags :signed? :atomic "
            "o:push-option= 4:ipv4 6:ipv6",
    "update-index": ":ignore-submodules :add :replace :remove :unmerged :refresh "
                    ":really-refresh :cacheinfo= :chmod= :assume-unchanged :skip-worktree "
                    ":ignore-skip-worktree-entries :info-only :force-remove :stdin :index-info "
                    ":unresolve g:again :ignore-missing :verbose :clear-resolve-undo "
                    ":index-version= :split-index :untracked-cache :test-untracked-cache "
                    ":force-untracked-cache :force-write-index :fsmonitor :fsmonitor-valid q z",
}
# fmt: on
# Mode options where the last one given wins (git reset's OPT_SET_INT group).
_MODES = {"reset": ("--soft", "--mixed", "--hard", "--merge", "--keep")}
_ABORTS = frozenset({"am", "merge", "cherry-pick", "revert", "rebase"})
_Table = tuple[dict[str, str], dict[str, str]]
_PARSED: dict[str, _Table] = {}


def _table(sub: str) -> _Table | None:
    """``(longs, shorts)`` of ``sub``: long name → arity (``""``, ``"="``, ``"?"``) and short
    letter → its long name (or ``"-x"``/``"-x="`` for short-only options)."""
    if sub not in _TABLES:
        return None
    if sub not in _PARSED:
        longs: dict[str, str] = {}
        shorts: dict[str, str] = {}
        for token in _TABLES[sub].split():
            letter, _, name = token.partition(":")
            arity = "=" if token.endswith("=") else "?" if token.endswith("?") else ""
            if name:
                long = "--" + name.rstrip("=?")
                longs[long] = arity
                if letter:
                    shorts[letter] = long
            else:
                shorts[letter.rstrip("=")] = "-" + letter
        _PARSED[sub] = (longs, shorts)
    return _PARSED[sub]


def _resolve(name: str, longs: dict[str, str]) -> tuple[str, bool] | None:
    """``(long option, negated)`` that ``name`` (``--forc``, ``--no-dry-r``) stands for.

    git's parse-options accepts any unique prefix of an option or of its ``--no-`` form
    (``git help cli``); ``None`` when ``name`` is unknown or ambiguous.
    """
    if name in longs:
        return name, False
    if name.startswith("--no-") and "--" + name[5:] in longs:
        return "--" + name[5:], True
    forms = [(long, False) for long in longs] + [("--no-" + long[2:], True) for long in longs]
    hits = {
        (long if not neg else "--" + long[5:], neg) for long, neg in forms if long.startswith(name)
    }
    return hits.pop() if len(hits) == 1 else None


def _parse(
    sub: str, args: Sequence[str]
) -> tuple[set[str], set[str], list[str], list[str], list[str], dict[str, str]]:
    """Options in effect after the whole line (last one wins, ``--no-X`` undoes ``X``).

    Returns:
        ``(letters, longs, before, after, unknown, values)``: short letters and long names
        in effect (a short letter with a long name counts as both), operands before and
        after ``--``, long options not in the subcommand's table, option values by name.
    """
    table = _table(sub)
    longs_table, shorts = table if table is not None else ({}, {})
    state: dict[str, bool] = {}
    values: dict[str, str] = {}
    before: list[str] = []
    after: list[str] = []
    unknown: list[str] = []

    def turn(key: str, on: bool) -> None:
        for other in _MODES.get(sub, ()):
            if on and key in _MODES[sub]:
                state[other] = False
        state[key] = on

    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            after = list(args[i + 1 :])
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            hit = _resolve(name, longs_table) if table is not None else (name, False)
            if hit is None:
                unknown.append(name)
            else:
                key, negated = hit
                arity = longs_table.get(key, "")
                if arity == "=" and not eq and not negated and i + 1 < len(args):
                    i += 1
                    value = args[i]
                turn(key, not negated)
                if value or eq:
                    values[key] = value
        elif arg.startswith("-") and len(arg) > 1:
            for pos, letter in enumerate(arg[1:]):
                key = shorts.get(letter, "-" + letter)
                takes = key.endswith("=") or longs_table.get(key) == "="
                key = key.rstrip("=")
                turn(key, True)
                if takes:
                    value = arg[pos + 2 :]
                    if not value and i + 1 < len(args):
                        i += 1
                        value = args[i]
                    values[key] = value
                    break
        else:
            before.append(arg)
        i += 1
    on = {key for key, flag in state.items() if flag}
    letters = {k[1] for k in on if len(k) == 2} | {
        letter for letter, key in shorts.items() if key in on
    }
    return letters, {k for k in on if k.startswith("--")}, before, after, unknown, values


def _split(sub: str, args: Sequence[str]) -> tuple[set[str], set[str], list[str], list[str]]:
    """Short-option letters, long option names, operands before ``--`` and after it."""
    letters, longs, before, after, _unknown, _values = _parse(sub, args)
    return letters, longs, before, after


def _has(longs: set[str], *names: str) -> bool:
    return any(n in longs for n in names)


def _pathlike(op: str, places: Places) -> bool:
    """Whether a lone ``git checkout`` operand names paths rather than a branch."""
    if op in (".", "..", ":/", "*") or op.startswith(("./", "../", ":")) or op.endswith("/"):
        return True
    if re.search(r"[*?\[]", op):
        return True
    if op == "-" or op.startswith("@{") or "~" in op or "^" in op:
        return False
    return places.exists(op)


def _changes_to(paths: Sequence[str], what: str = "uncommitted changes", note: str = "") -> str:
    """``"discards WHAT to PATHS NOTE"``; ``["."]`` reads "every file", no paths nothing."""
    tail = f" {note}" if note else ""
    if not paths:
        return f"discards {what}{tail}"
    if list(paths) == ["."]:
        return f"discards {what} to every file{tail}"
    return f"discards {what} to {describe_paths(paths)}{tail}"


def _checkout(args: Sequence[str], places: Places) -> Harm | None:
    letters, longs, before, after = _split("checkout", args)
    from_file = _has(longs, "--pathspec-from-file")
    if from_file:
        return Harm("discards uncommitted changes to the files listed in the pathspec file")
    if "p" in letters or _has(longs, "--patch"):
        return Harm(_changes_to(after or before[1:] or ["."]))
    force = "f" in letters or _has(longs, "--force")
    if args and "--" in args:
        paths = after
        return Harm(_changes_to(paths or ["."]), removes=(), removes_unknown=not paths)
    if letters & {"b", "B"} or _has(longs, "--orphan"):
        if force:
            return Harm("discards uncommitted changes (checkout --force)")
        return _recreate("-B", _parse("checkout", args)[5], places) if "B" in letters else None
    if len(before) > 1:
        return Harm(_changes_to(before[1:]))
    if before and _pathlike(before[0], places):
        return Harm(_changes_to(before))
    if force or _has(longs, "--discard-changes"):
        return Harm("discards uncommitted changes to every file (checkout --force)")
    return None


def _restore(args: Sequence[str]) -> Harm:
    letters, longs, before, after = _split("restore", args)
    paths = before + after
    staged = "S" in letters or _has(longs, "--staged")
    worktree = "W" in letters or _has(longs, "--worktree")
    if _has(longs, "--pathspec-from-file"):
        return Harm("discards changes to the files listed in the pathspec file")
    if staged and not worktree:
        return Harm(_changes_to(paths, "staged changes", "(staged-only content is lost)"))
    if staged:
        return Harm(_changes_to(paths, "staged and unstaged changes"))
    return Harm(_changes_to(paths))


def _reset(args: Sequence[str], places: Places) -> Harm | None:
    letters, longs, before, after = _split("reset", args)
    if _has(longs, "--soft"):
        return None  # HEAD moves; index and tree stay; the old HEAD is in the reflog
    if _has(longs, "--hard"):
        return Harm("discards uncommitted changes")
    if _has(longs, "--merge", "--keep"):
        return Harm("may discard uncommitted changes (reset --merge/--keep)")
    if "p" in letters or _has(longs, "--patch"):
        return Harm("discards staged changes it is told to (staged-only content is lost)")
    if after:
        paths = after
    else:
        paths = before if before and places.exists(before[0]) else before[1:]
    if paths:
        return Harm(_changes_to(paths, "staged changes", "(staged-only content is lost)"))
    return Harm("discards staged changes (staged-only content is lost)")


def _clean(args: Sequence[str]) -> Harm | None:
    letters, longs, before, after = _split("clean", args)
    if "n" in letters or _has(longs, "--dry-run"):
        return None
    paths = before + after
    where = f" under {describe_paths(paths)}" if paths else ""
    if "X" in letters:
        what = f"deletes ignored files{where} (git clean -X)"
    elif "x" in letters:
        what = f"deletes untracked and ignored files{where} (git clean -x)"
    else:
        what = f"deletes untracked files{where}"
    return Harm(what, removes_unknown=True, git_clean=tuple(args))


def _stash(args: Sequence[str]) -> Harm | None:
    sub = args[0] if args else "push"
    rest = args[1:]
    entry = next((a for a in rest if not a.startswith("-")), "stash@{0}")
    if sub == "clear":
        return Harm("deletes every stash entry", refs=("refs/stash",))
    if sub == "drop":
        return Harm(f"deletes the stash entry {entry}", refs=(entry,))
    if sub == "pop":
        return Harm(
            f"applies and drops the stash entry {entry} (a conflict mixes it with your changes)",
            refs=(entry,),
        )
    return None


def _branch(args: Sequence[str]) -> Harm | None:
    letters, longs, before, _after = _split("branch", args)
    force = "f" in letters or _has(longs, "--force")
    delete = "d" in letters or _has(longs, "--delete")
    names = tuple(before)
    if "D" in letters or (delete and force):
        shown = describe_paths(list(names)) if names else "a branch"
        return Harm(
            f"deletes {shown}, which may hold unmerged work",
            refs=tuple(f"refs/heads/{n}" for n in names),
        )
    if (
        "M" in letters
        or "C" in letters
        or (force and (letters & {"m", "c"} or _has(longs, "--move", "--copy")))
    ):
        return Harm("renames or copies over an existing branch", refs=names)
    if force and names and not delete:
        return Harm(
            f"moves the existing branch {names[0]} (its commits may be lost)", refs=names[:1]
        )
    return None


def _update_ref(args: Sequence[str]) -> Harm:
    letters, longs, before, _after = _split("update-ref", args)
    if _has(longs, "--stdin"):
        return Harm("updates or deletes the refs listed on its input", certain=True)
    if "d" in letters:
        return Harm(f"deletes the ref {describe_paths(before[:1])}", refs=tuple(before[:1]))
    return Harm(
        f"moves the ref {describe_paths(before[:1])} (what it held may be lost)",
        refs=tuple(before[:1]),
    )


def _worktree(args: Sequence[str]) -> Harm | None:
    if not args or args[0] != "remove":
        return None
    letters, longs, before, _after = _split("worktree remove", args[1:])
    if "f" in letters or _has(longs, "--force"):
        return Harm(f"deletes the worktree {describe_paths(before)} with its uncommitted changes")
    return None


def _simple(sub: str, args: Sequence[str], places: Places) -> Harm | None:
    letters, longs, before, after = _split(sub, args)
    if sub == "read-tree":
        if "n" in letters or _has(longs, "--dry-run"):
            return None
        if "u" in letters:
            return Harm("overwrites the index and the working tree (read-tree -u)")
        return Harm("overwrites the index (staged-only content is lost)")
    if sub == "checkout-index" and ("f" in letters or _has(longs, "--force")):
        return Harm("overwrites files in the working tree (checkout-index --force)")
    if sub == "rm" and not ("n" in letters or _has(longs, "--dry-run")):
        paths = before + after
        return Harm(
            f"deletes {describe_paths(paths)} with any uncommitted content",
            removes=places.resolve(paths)[0],
        )
    if sub == "mv" and ("f" in letters or _has(longs, "--force")):
        return Harm(f"overwrites {describe_paths(before[-1:])} (git mv --force)")
    if sub == "gc" and _parse(sub, args)[5].get("--prune") and "--prune" in longs:
        return Harm(
            "prunes unreachable objects now (dropped stashes and lost commits cannot come back)"
        )
    if sub == "prune":
        return Harm(
            "prunes unreachable objects (dropped stashes and lost commits cannot come back)"
        )
    if sub == "reflog" and before[:1] in (["expire"], ["delete"]):
        return Harm("drops the reflog used to recover lost work")
    if sub in ("filter-branch", "filter-repo"):
        return Harm("rewrites history and refs (git " + sub + ")")
    if sub in _ABORTS and _has(longs, "--abort"):
        return Harm(
            f"resets the working tree and index (git {sub} --abort may discard uncommitted changes)"
        )
    if sub == "tag" and ("d" in letters or _has(longs, "--delete")):
        return Harm(
            f"deletes the tag {describe_paths(before)}",
            refs=tuple(f"refs/tags/{t}" for t in before),
        )
    if sub == "tag" and ("f" in letters or _has(longs, "--force")):
        return Harm("overwrites an existing tag", refs=tuple(before[:1]))
    if sub == "symbolic-ref" and ("d" in letters or _has(longs, "--delete")):
        return Harm("deletes a symbolic ref")
    if sub == "switch" and ("f" in letters or _has(longs, "--force", "--discard-changes")):
        return Harm("discards uncommitted changes to every file (switch --discard-changes)")
    if sub == "switch" and "--force-create" in longs:
        return _recreate("-C", _parse(sub, args)[5], places)
    if sub == "update-index" and _has(longs, "--force-remove"):
        return Harm(
            f"drops {describe_paths(before + after)} from the index (staged-only content is lost)"
        )
    if sub == "submodule" and before[:1] == ["deinit"] and ("f" in letters or "--force" in args):
        return Harm(
            "deletes submodule working trees with their local changes (deinit --force)",
            removes_unknown=True,
        )
    if sub == "notes" and before[:1] in (["remove"], ["prune"]):
        return Harm("deletes notes (refs/notes)", refs=("refs/notes/commits",))
    if sub == "sparse-checkout" and before[:1] in (["set"], ["init"], ["reapply"]):
        return Harm(
            "removes files outside the sparse patterns from the working tree", removes_unknown=True
        )
    if sub == "push" and (
        "f" in letters
        or "d" in letters
        or _has(longs, "--force", "--force-with-lease", "--force-if-includes", "--delete")
        or _has(longs, "--mirror", "--prune")
        or any(o.startswith(("+", ":")) for o in before)
    ):
        return Harm("rewrites or deletes remote history")
    return None


def _recreate(flag: str, values: dict[str, str], places: Places) -> Harm | None:
    """``checkout -B NAME``/``switch -C NAME``: moves NAME when that branch exists."""
    name = values.get(flag) or values.get("--force-create") or ""
    if name and places.branch_exists(name) is False:
        return None
    return Harm(
        f"moves the existing branch {name or 'it names'} (its commits may be lost)",
        refs=(f"refs/heads/{name}",) if name else (),
    )


def installed_git_commands() -> frozenset[str]:
    """The git commands this machine runs without an alias: the ``git-*`` programs in git's
    exec path (builtins are installed there as links), read from the folder, not by running
    git (:func:`core.policy.git_probe.git_exec_commands`).

    A name git does not install (``git gui`` without git-gui) falls back to a user alias,
    so the guard cannot see what it runs. With no exec path found,
    :data:`KNOWN_GIT_SUBCOMMANDS`.
    """
    found = git_exec_commands()
    return found if found else KNOWN_GIT_SUBCOMMANDS


def git_harm(args: Sequence[str], places: Places) -> Harm | None:
    """What ``git ARGS`` (global options already dropped) could lose, or ``None``.

    ``git checkout X`` with one operand is a path checkout when ``X`` exists as a path in
    the command's directory (conservatively, even when a branch ``X`` exists too), looks
    like one (``.``, ``./x``, ``x/``, a glob) or the directory is unknown; otherwise it is
    a branch switch, which git refuses when it would overwrite local changes.
    ``git reset --soft`` is not destructive: index and tree stay, the old HEAD is in the
    reflog. ``git stash`` (push), ``git stash list``/``show``/``apply``, ``git clean -n``
    are not either.

    Args:
        args: the words after ``git`` (subcommand first).
        places: where the command runs (see :class:`~core.policy.destructive_paths.Places`).

    Returns:
        The :class:`~core.policy.harm.Harm`, ``Harm(certain=False)`` for a subcommand
        git does not ship (it may be an alias), else ``None``.
    """
    if not args:
        return None
    sub, rest = args[0], list(args[1:])
    if sub in _TABLES:
        unknown = _parse(sub, rest)[4]
        if unknown:
            return Harm(
                f"passes `{unknown[0]}` to git {sub}, an option the guard does not know",
                certain=False,
                removes_unknown=True,
            )
    if sub == "checkout":
        return _checkout(rest, places)
    if sub == "restore":
        return _restore(rest)
    if sub == "reset":
        return _reset(rest, places)
    if sub == "clean":
        return _clean(rest)
    if sub == "stash":
        return _stash(rest)
    if sub == "branch":
        return _branch(rest)
    if sub == "update-ref":
        return _update_ref(rest)
    if sub == "worktree":
        return _worktree(rest)
    if sub not in installed_git_commands() and not sub.startswith("-"):
        return Harm(
            f"runs `git {sub}`, which may be an alias the guard cannot see",
            certain=False,
            removes_unknown=True,
        )
    return _simple(sub, rest, places)
