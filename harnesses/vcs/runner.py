"""The one door through which Tandem starts git: no repository-controlled code, no secrets.

Every git process Tandem itself starts (checkpoints, the branch badge, the demo) goes through
:func:`run_git` (CONVENTIONS.md item 16; issue 11, Build item 1). The door

* ignores system and global config (``GIT_CONFIG_NOSYSTEM``, ``GIT_CONFIG_GLOBAL=/dev/null``,
  ``HOME=/dev/null`` so neither ``~/.gitconfig`` nor ``$XDG_CONFIG_HOME/git/*`` is read, and
  ``GIT_ATTR_NOSYSTEM``);
* starts git with a fresh, minimal environment: ``PATH``, ``LANG``/``LC_ALL`` and the ``GIT_*``
  variables it sets itself, so no secret of Tandem's environment reaches git or its children;
* neutralises every repository-controlled execution path with command-scope config
  (``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>``, git >= 2.31), which
  git reads after the repository's ``config`` and its ``include.path``/``includeIf`` files, so
  it wins over them (``git help config``, "FILES"/"ENVIRONMENT"). Besides a fixed list
  (hooks, fsmonitor, pager, editors, ssh, askpass, credential helpers, gpg, transports...),
  every driver the repository's config defines (``filter.<d>.clean/smudge/process``,
  ``diff.<d>.command/textconv``, ``merge.<d>.driver``, ``pager.<cmd>``, remotes' programs) is
  read as data with ``git config --list --name-only`` and overridden by name: a driver
  can only run if config defines it, and the only config git reads here is the repository's.
  The env form is used rather than ``-c`` because ``-c`` splits at the first ``=`` and a
  subsection name may contain one (``[filter "x=y"]``);
* runs only a fixed set of subcommands (:data:`ALLOWED_COMMANDS`), so no alias ever runs.

The config listing is reused for a repository named by an explicit ``git_dir`` while the
only file it came from, ``<git_dir>/config``, is unchanged (same device, inode, size, mode,
mtime and ctime, and not touched within :data:`_RACY_NS` of the listing: a rewrite in the same
clock tick could keep every field, the case git calls "racily clean"); a config that
includes other files (``include.*``/``includeIf.*``), reads ``config.worktree``, is a
symbolic link, or belongs to a linked worktree (``commondir``) is listed on every run.

Paths that must never hold a program point under ``/dev/null`` (``/dev/null/...``): nothing
can be created below a character device, not even by root, so no process (the agent's
included) can plant a hook or a program there.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ALLOWED_COMMANDS",
    "TUNABLE",
    "GitError",
    "GitResult",
    "door_counters",
    "door_environment",
    "repository_overrides",
    "run_git",
    "static_overrides",
]

ALLOWED_COMMANDS = frozenset(
    {
        "add",
        "apply",  # a recorded session's dirty-files patch, in a replay checkout (no programs run)
        "cat-file",
        "checkout-index",
        "clean",  # dry runs only (checkpoints: what a ``git clean`` would remove)
        "commit-tree",
        "config",
        "diff",
        "diff-files",  # checkpoints: which entries changed since the kept index (raw, no patch)
        "diff-tree",
        "for-each-ref",
        "hash-object",
        "index-pack",
        "init",
        "ls-files",
        "ls-tree",
        "pack-objects",
        "prune",
        "read-tree",
        "repack",
        "rev-parse",
        "rm",
        "show-ref",  # the destructive guard: does a branch exist
        "symbolic-ref",
        "unpack-objects",
        "update-index",
        "update-ref",
        "write-tree",
    }
)
"""Subcommands the door runs (builtins only; git never expands an alias over a builtin)."""

TUNABLE = frozenset({"core.splitindex", "splitindex.sharedindexexpire"})
"""Config keys a caller may set for one run (:func:`run_git`'s ``tuning``): the index's
format and its shared files' expiry, for index files the caller owns (the checkpoint
store's). None of them names a program."""

_NOWHERE = "/dev/null/tandem-disabled"
"""A program path that cannot exist (below a character device)."""

_STATIC: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),  # find_hook() looks up /dev/null/<name>: never there
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "false"),
    ("core.splitIndex", "false"),
    ("core.pager", "cat"),
    ("core.editor", _NOWHERE),
    ("sequence.editor", _NOWHERE),
    ("core.sshCommand", _NOWHERE),
    ("core.gitProxy", _NOWHERE),
    ("core.askPass", _NOWHERE),
    ("core.alternateRefsCommand", _NOWHERE),
    ("core.attributesFile", "/dev/null"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("credential.helper", ""),  # the empty helper resets the list (git help credentials)
    ("protocol.allow", "never"),  # no transport at all: no lazy fetch, no ext::, no ssh
    ("diff.external", _NOWHERE),
    ("diff.submodule", "short"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("gpg.program", _NOWHERE),
    ("gpg.openpgp.program", _NOWHERE),
    ("gpg.ssh.program", _NOWHERE),
    ("gpg.x509.program", _NOWHERE),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("uploadpack.packObjectsHook", _NOWHERE),
    ("gc.auto", "0"),
    ("gc.autoDetach", "false"),
    ("maintenance.auto", "false"),
    ("color.ui", "never"),
    ("init.templateDir", ""),
)

# (section, variable) -> neutral value, for "<section>.<subsection>.<variable>" keys found in
# the repository's config. Filters with an empty command are not run (convert.c); the others
# point nowhere, so a use we did not foresee fails instead of running repository code.
_PER_DRIVER: dict[tuple[str, str], str] = {
    ("filter", "clean"): "",
    ("filter", "smudge"): "",
    ("filter", "process"): "",
    ("filter", "required"): "false",
    ("diff", "command"): _NOWHERE,
    ("diff", "textconv"): _NOWHERE,
    ("merge", "driver"): _NOWHERE,
    ("remote", "uploadpack"): _NOWHERE,
    ("remote", "receivepack"): _NOWHERE,
    ("remote", "proxy"): _NOWHERE,
    ("remote", "vcs"): _NOWHERE,
    ("remote", "promisor"): "false",
    ("credential", "helper"): "",
    ("hook", "command"): _NOWHERE,  # config-based hooks (newer git)
    ("difftool", "cmd"): _NOWHERE,
    ("mergetool", "cmd"): _NOWHERE,
}
_PER_NAME_SECTIONS = frozenset({"pager"})  # pager.<cmd> = a program (or a boolean)

_EXTRA_ENV = frozenset(
    {
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        "GIT_CEILING_DIRECTORIES",
    }
)


class GitError(Exception):
    """A git command run through the door exited non-zero (or could not start).

    Attributes:
        args_: the git arguments (without the door's own options).
        returncode: the exit status (``-1``: git could not be started or timed out).
        stderr: git's standard error, decoded (UTF-8, replacement characters).
    """

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        self.args_ = tuple(args)
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"git {' '.join(self.args_[:3])} failed ({returncode}): {stderr.strip()}")


@dataclass(frozen=True, slots=True)
class GitResult:
    """What one git run produced.

    Attributes:
        returncode: exit status.
        stdout: standard output, bytes.
        stderr: standard error, bytes.
    """

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        """``stdout`` decoded as UTF-8 (undecodable bytes kept as surrogate escapes)."""
        return self.stdout.decode("utf-8", "surrogateescape")


def static_overrides() -> list[tuple[str, str]]:
    """The fixed command-scope config the door gives every git run, ``(key, value)`` pairs."""
    return list(_STATIC)


def repository_overrides(config_keys: Sequence[str]) -> list[tuple[str, str]]:
    """Overrides that disable every driver and program the given config keys define.

    Args:
        config_keys: key names as ``git config --list --name-only`` prints them (section and
            variable lower-cased, subsection verbatim, e.g. ``filter.Evil=x.clean``).

    Returns:
        ``(key, value)`` pairs, in input order, without duplicates.
    """
    out: dict[str, str] = {}
    for key in config_keys:
        section, _, rest = key.partition(".")
        if not rest:
            continue
        section = section.lower()
        if section in _PER_NAME_SECTIONS and "." not in rest:
            out[key] = "false"
            continue
        sub, dot, variable = rest.rpartition(".")
        if not dot or not sub:
            continue
        value = _PER_DRIVER.get((section, variable.lower()))
        if value is not None:
            out[key] = value
    return list(out.items())


def door_environment(
    overrides: Sequence[tuple[str, str]] = (),
    *,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    index_file: Path | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment of one git process (nothing else of ``os.environ`` leaks).

    Args:
        overrides: command-scope config, ``(key, value)``; the static list is always first.
        git_dir, work_tree, index_file: ``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``.
        extra: identity or ``GIT_CEILING_DIRECTORIES`` (only the names in ``_EXTRA_ENV``).

    Returns:
        The environment dict.

    Raises:
        ValueError: ``extra`` names a variable the door does not pass.
    """
    env = {
        "PATH": os.environ.get("PATH") or os.defpath,
        "LANG": "C",
        "LC_ALL": "C",
        "HOME": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_LITERAL_PATHSPECS": "1",
        "GIT_PROTOCOL_FROM_USER": "0",
        "GIT_NO_LAZY_FETCH": "1",
        "GIT_PAGER": "cat",
        "GIT_EDITOR": _NOWHERE,
        "GIT_SSH_COMMAND": _NOWHERE,
        "GIT_ASKPASS": _NOWHERE,
    }
    pairs = [*_STATIC, *overrides]
    env["GIT_CONFIG_COUNT"] = str(len(pairs))
    for n, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
    if work_tree is not None:
        env["GIT_WORK_TREE"] = str(work_tree)
    if index_file is not None:
        env["GIT_INDEX_FILE"] = str(index_file)
    for name, value in (extra or {}).items():
        if name not in _EXTRA_ENV:
            raise ValueError(f"the git door does not pass {name!r}")
        env[name] = value
    return env


def run_git(
    args: Sequence[str],
    *,
    cwd: Path,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    index_file: Path | None = None,
    extra_env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    check: bool = True,
    timeout_s: float | None = None,
    tuning: Sequence[tuple[str, str]] = (),
) -> GitResult:
    """Run ``git <args>`` through the door (blocking; call it off the event loop).

    First lists the config git will read for this repository (as data, same environment),
    then runs the command with that config's drivers and programs overridden.

    Args:
        args: subcommand and its arguments; the subcommand must be in
            :data:`ALLOWED_COMMANDS` (no global options: the door sets them).
        cwd: working directory (repository discovery starts here when ``git_dir`` is None).
        git_dir, work_tree, index_file: the repository, its work tree and index.
        extra_env: identity / ``GIT_CEILING_DIRECTORIES`` (see :func:`door_environment`).
        stdin: bytes for standard input (``/dev/null`` when ``None``).
        check: raise :class:`GitError` on a non-zero exit.
        timeout_s: wall-clock limit in seconds (``None``: no limit).
        tuning: command-scope settings given after all the others (so they win), only
            of keys in :data:`TUNABLE` (formats and caches, never a program).

    Returns:
        The :class:`GitResult`.

    Raises:
        ValueError: an argument list the door does not run, or a ``tuning`` key it
            does not take.
        GitError: git failed (with ``check``), could not start, or timed out.
    """
    if not args or args[0] not in ALLOWED_COMMANDS:
        raise ValueError(f"the git door does not run {args[:1]!r}")
    for key, _value in tuning:
        if key.lower() not in TUNABLE:
            raise ValueError(f"the git door does not tune {key!r}")
    options = list(args[: list(args).index("--")] if "--" in args else args)
    if args[0] == "clean" and "-n" not in options and "--dry-run" not in options:
        raise ValueError("the git door runs `git clean` only as a dry run (-n)")

    def environment(overrides: Sequence[tuple[str, str]]) -> dict[str, str]:
        return door_environment(
            overrides,
            git_dir=git_dir,
            work_tree=work_tree,
            index_file=index_file,
            extra=extra_env,
        )

    keys = _config_keys(cwd, git_dir, environment(()), timeout_s)
    env = environment([*repository_overrides(keys), *tuning])
    result = _spawn(list(args), cwd, env, stdin, timeout_s)
    if check and result.returncode != 0:
        raise GitError(args, result.returncode, _decode(result.stderr))
    return result


_RACY_NS = 1_000_000_000
"""A config file changed less than this long (ns) before its listing is never reused."""
_CACHE_MAX = 64
_listings: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {}
_counters = {"runs": 0, "listings": 0, "listings_reused": 0}
_cache_lock = threading.Lock()


def door_counters() -> dict[str, int]:
    """How many git processes the door started (a debug counter, for benchmarks and tests).

    Returns:
        ``{"runs": commands run, "listings": config listings spawned, "listings_reused":
        listings taken from the cache instead}``, counted since the process started.
    """
    with _cache_lock:
        return dict(_counters)


def _fingerprint(git_dir: Path) -> tuple[int, ...] | None:
    """The identity of ``<git_dir>/config`` (``()`` when absent), or ``None`` when a listing
    of this repository must not be reused (linked worktree, symbolic link, unreadable)."""
    try:
        if os.path.lexists(git_dir / "commondir"):
            return None
        st = os.lstat(git_dir / "config")
    except FileNotFoundError:
        return ()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)


def _config_keys(
    cwd: Path, git_dir: Path | None, env: dict[str, str], timeout_s: float | None
) -> list[str]:
    """The config key names git reads for this repository (``git config --list``), reused
    while ``<git_dir>/config`` is unchanged (see the module docstring)."""
    slot = None if git_dir is None else os.path.abspath(os.path.join(cwd, git_dir))
    before = None
    started = time.time_ns()
    if slot is not None:
        before = _fingerprint(Path(slot))
        with _cache_lock:
            _counters["runs"] += 1
            hit = _listings.get(slot) if before is not None else None
            if hit is not None and hit[0] == before:
                _counters["listings_reused"] += 1
                return list(hit[1])
            _counters["listings"] += 1
    else:
        with _cache_lock:
            _counters["runs"] += 1
            _counters["listings"] += 1
    listing = _spawn(
        ["config", "-z", "--list", "--name-only", "--show-origin"], cwd, env, None, timeout_s
    )
    if listing.returncode not in (0, 1):  # 1: nothing set; other: unreadable config
        raise GitError(["config", "--list"], listing.returncode, _decode(listing.stderr))
    fields = listing.stdout.decode("utf-8", "surrogateescape").split("\0")
    origins, keys = fields[0:-1:2], [k for k in fields[1::2] if k]
    if slot is not None and before is not None:
        reusable = before == _fingerprint(Path(slot)) and not _racy(before, started)
        for origin, key in zip(origins, keys, strict=False):
            lowered = key.lower()
            if lowered.startswith(("include.", "includeif.", "extensions.worktreeconfig")):
                reusable = False
            if origin.startswith("file:") and os.path.abspath(
                os.path.join(cwd, origin[5:])
            ) != os.path.join(slot, "config"):
                reusable = False
            elif not origin.startswith(("file:", "command line:")):
                reusable = False
        with _cache_lock:
            if reusable:
                if len(_listings) >= _CACHE_MAX:
                    _listings.pop(next(iter(_listings)))
                _listings[slot] = (before, tuple(keys))
            else:
                _listings.pop(slot, None)
    return keys


def _racy(fingerprint: tuple[int, ...], started_ns: int) -> bool:
    """Whether the file was changed too recently for its identity to prove it unchanged."""
    if not fingerprint:
        return False
    return max(fingerprint[4], fingerprint[5]) >= started_ns - _RACY_NS


_PROBE_COMMANDS = frozenset({"check-ignore", "show-ref"})


def _policy_probe(cwd: str, args: Sequence[str]) -> int | None:
    """Answer one of the destructive guard's read-only git questions through the door."""
    if not args or args[0] not in _PROBE_COMMANDS:
        return None
    try:
        if args[0] == "check-ignore":  # literal pathspecs (the door's) rule check-ignore out
            paths = list(args[list(args).index("--") + 1 :]) if "--" in args else []
            if not paths:
                return None
            listed = run_git(
                ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", *paths],
                cwd=Path(cwd),
                check=False,
                timeout_s=10,
            )
            if listed.returncode != 0:
                return None
            return 0 if listed.stdout.strip(b"\0") else 1  # 0: some path is ignored
        return run_git(list(args), cwd=Path(cwd), check=False, timeout_s=10).returncode
    except (GitError, ValueError, OSError):
        return None


def install_policy_probe() -> None:
    """Make :mod:`core.policy.git_probe` ask its questions through this door."""
    from core.policy.git_probe import set_git_probe

    set_git_probe(_policy_probe)


def _git_binary() -> str:
    found = shutil.which("git", path=os.environ.get("PATH") or os.defpath)
    if found is None:
        raise GitError(["git"], -1, "git is not installed (not found on PATH)")
    return found


def _spawn(
    args: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None, timeout_s: float | None
) -> GitResult:
    argv = [_git_binary(), "--no-pager", *args]
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            input=stdin,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            timeout=timeout_s,
            check=False,
            close_fds=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(args, -1, str(exc)) from exc
    return GitResult(done.returncode, done.stdout, done.stderr)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")
