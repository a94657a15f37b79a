"""The user's index, refs and stash: captured into the checkpoint store, written back exactly.

Objects move between the user's repository and the store as packs built from an explicit
object list (``pack-objects --stdout`` in one, ``index-pack --stdin`` in the other), through
the door; no alternates. Only what the destination lacks is sent. A copied commit whose
parents are not copied is listed in the store's ``shallow`` file, so the store's walks (gc,
repack) stop there: the store holds the user's ref tips and stash entries with their trees,
not the history behind them (reachable-from-HEAD history can be large, and the user's
repository keeps it unless ``.git`` itself is removed; then the restored repository is
shallow at those tips).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harnesses.vcs import GitResult, run_git

__all__ = [
    "RefsState",
    "commit_messages",
    "refs_identity",
    "copy_objects",
    "closure",
    "missing",
    "read_refs",
    "write_shallow",
]

_STASH = "refs/stash"
_ZERO_CHARS = frozenset("0")


@dataclass(slots=True)
class RefsState:
    """The user's refs at checkpoint time.

    Attributes:
        head: ``"ref: refs/heads/<b>"`` (symbolic) or a commit id (detached), ``None``.
        refs: ``refname -> object id`` (all refs but ``refs/tandem/``).
        stash_log: the raw lines of ``logs/refs/stash`` (oldest first).
        commits: commits whose objects the checkpoint must hold (ref tips, stash entries
            and their parents).
        head_commit: the commit ``HEAD`` names (``None``: unborn, or not known).
        head_known: whether ``head_commit`` is known from the refs read (``HEAD`` names a
            branch pointing at a commit, or an unborn branch); otherwise ask ``rev-parse``.
    """

    head: str | None = None
    refs: dict[str, str] = field(default_factory=dict)
    stash_log: list[str] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)
    head_commit: str | None = None
    head_known: bool = False


def _git(
    git_dir: Path, cwd: Path, *args: str, stdin: bytes | None = None, check: bool = True
) -> GitResult:
    return run_git(args, cwd=cwd, git_dir=git_dir, stdin=stdin, check=check)


def missing(git_dir: Path, cwd: Path, oids: Iterable[str]) -> list[str]:
    """The object ids among ``oids`` that ``git_dir`` does not have (order kept, unique)."""
    wanted = list(dict.fromkeys(o for o in oids if o and set(o) != _ZERO_CHARS))
    if not wanted:
        return []
    out = _git(
        git_dir, cwd, "cat-file", "--batch-check", stdin=("\n".join(wanted) + "\n").encode()
    ).text
    return [line.split(" ", 1)[0] for line in out.splitlines() if line.endswith(" missing")]


def closure(git_dir: Path, cwd: Path, commits: Iterable[str]) -> list[str]:
    """Every object a set of commits needs without their history: the commits, their trees
    and blobs (gitlinks excluded)."""
    out: list[str] = []
    for commit in dict.fromkeys(commits):
        out.append(commit)
        out.append(_git(git_dir, cwd, "rev-parse", f"{commit}^{{tree}}").text.strip())
        out.extend(tree_objects(git_dir, cwd, commit))
    return out


def tree_objects(git_dir: Path, cwd: Path, treeish: str) -> list[str]:
    """Trees and blobs below ``treeish`` (``ls-tree -r -t``; gitlinks left out)."""
    listing = _git(git_dir, cwd, "ls-tree", "-r", "-t", "-z", "--full-tree", treeish).text
    oids: list[str] = []
    for record in listing.split("\0"):
        if record:
            header = record.partition("\t")[0]
            _mode, kind, oid = header.split(" ")
            if kind != "commit":
                oids.append(oid)
    return oids


def copy_objects(src: Path, dst: Path, cwd: Path, oids: Iterable[str]) -> int:
    """Copy the objects ``dst`` lacks from ``src`` (one pack through the door).

    Returns:
        How many objects were sent.
    """
    need = missing(dst, cwd, oids)
    if not need:
        return 0
    pack = _git(
        src, cwd, "pack-objects", "--stdout", "-q", stdin=("\n".join(need) + "\n").encode()
    ).stdout
    _git(dst, cwd, "index-pack", "--stdin", stdin=pack)
    return len(need)


def parents(git_dir: Path, cwd: Path, commit: str) -> list[str]:
    """The parent ids of ``commit`` (from its raw object)."""
    return parents_of(git_dir, cwd, [commit]).get(commit, [])


def parents_of(git_dir: Path, cwd: Path, commits: Sequence[str]) -> dict[str, list[str]]:
    """``commit -> parent ids`` for several commits, from one ``cat-file --batch``.

    Commits ``git_dir`` lacks are left out.
    """
    wanted = list(dict.fromkeys(commits))
    if not wanted:
        return {}
    data = _git(git_dir, cwd, "cat-file", "--batch", stdin=("\n".join(wanted) + "\n").encode())
    out: dict[str, list[str]] = {}
    raw = data.stdout
    pos = 0
    for oid in wanted:
        end = raw.index(b"\n", pos)
        header = raw[pos:end].decode("ascii", "replace").split(" ")
        pos = end + 1
        if len(header) < 3 or header[1] == "missing":
            continue
        size = int(header[2])
        body = raw[pos : pos + size]
        pos += size + 1
        if header[1] != "commit":
            continue
        found = []
        for line in body.split(b"\n\n", 1)[0].split(b"\n"):
            if line.startswith(b"parent "):
                found.append(line[7:].decode("ascii").strip())
        out[oid] = found
    return out


def commit_messages(git_dir: Path, cwd: Path, commits: Sequence[str]) -> dict[str, str]:
    """``commit -> message`` (what ``%(contents)`` shows) for several commits, from one
    ``cat-file --batch``; commits ``git_dir`` lacks, and other objects, are left out."""
    wanted = list(dict.fromkeys(commits))
    if not wanted:
        return {}
    raw = _git(
        git_dir, cwd, "cat-file", "--batch", stdin=("\n".join(wanted) + "\n").encode()
    ).stdout
    out: dict[str, str] = {}
    pos = 0
    for oid in wanted:
        end = raw.index(b"\n", pos)
        header = raw[pos:end].decode("ascii", "replace").split(" ")
        pos = end + 1
        if len(header) < 3 or header[1] == "missing":
            continue
        size = int(header[2])
        body = raw[pos : pos + size]
        pos += size + 1
        if header[1] == "commit":
            out[oid] = body.partition(b"\n\n")[2].decode("utf-8", "replace")
    return out


def write_shallow(git_dir: Path, cwd: Path, commits: Sequence[str]) -> None:
    """Add to ``git_dir/shallow`` each of ``commits`` with a parent ``git_dir`` lacks."""
    table = parents_of(git_dir, cwd, commits)
    absent = set(missing(git_dir, cwd, [p for ps in table.values() for p in ps]))
    boundary = [c for c, ps in table.items() if any(p in absent for p in ps)]
    if not boundary:
        return
    path = git_dir / "shallow"
    existing: set[str] = set()
    with contextlib.suppress(FileNotFoundError):
        existing = set(path.read_text(encoding="ascii").split())
    merged = sorted(existing | set(boundary))
    if merged == sorted(existing):
        return
    tmp = path.with_name("shallow.tandem-tmp")
    tmp.write_text("".join(c + "\n" for c in merged), encoding="ascii")
    os.replace(tmp, path)


def read_refs(git_dir: Path, cwd: Path) -> RefsState:
    """Read the user's ``HEAD``, refs and stash reflog (read only).

    Args:
        git_dir: the user's git dir; cwd: its work tree.

    Returns:
        The :class:`RefsState`; ``commits`` lists ref tips that are commits, each stash
        entry and its parents (base, index, untracked).
    """
    state = RefsState()
    sym = _git(git_dir, cwd, "symbolic-ref", "-q", "HEAD", check=False)
    if sym.returncode == 0 and sym.text.strip():
        state.head = "ref: " + sym.text.strip()
    else:
        rev = _git(git_dir, cwd, "rev-parse", "--verify", "-q", "HEAD", check=False)
        state.head = rev.text.strip() or None if rev.returncode == 0 else None
    out = _git(
        git_dir,
        cwd,
        "for-each-ref",
        "--format=%(objectname) %(objecttype) %(*objectname) %(*objecttype) %(refname)",
    ).text
    commits: list[str] = []
    kinds: dict[str, str] = {}
    for line in out.splitlines():
        oid, kind, peeled, peeled_kind, name = line.split(" ", 4)
        kinds[name] = kind
        if name.startswith("refs/tandem/"):
            continue
        state.refs[name] = oid
        if kind == "commit":
            commits.append(oid)
        elif kind == "tag" and peeled_kind == "commit":
            commits.append(peeled)
    if state.head and state.head.startswith("ref: "):
        target = state.head[5:]
        if target not in kinds:  # an unborn branch
            state.head_known = True
        elif kinds[target] == "commit" and target in state.refs:
            state.head_commit, state.head_known = state.refs[target], True
    if state.head and not state.head.startswith("ref: "):
        commits.append(state.head)
    with contextlib.suppress(FileNotFoundError, UnicodeDecodeError):
        log = (git_dir / "logs" / _STASH).read_text(encoding="utf-8")
        state.stash_log = [line for line in log.splitlines() if line.strip()]
    entries = [line.split(" ", 2)[1] for line in state.stash_log]
    table = parents_of(git_dir, cwd, entries)
    for entry in entries:
        commits.append(entry)
        commits.extend(table.get(entry, []))
    state.commits = list(dict.fromkeys(c for c in commits if set(c) != _ZERO_CHARS))
    return state


def refs_identity(git_dir: Path) -> tuple[tuple[str, tuple[int, ...] | None], ...] | None:
    """What :func:`read_refs` reads, as file identities: ``HEAD``, ``packed-refs``,
    ``logs/refs/stash`` and every folder and file below ``refs/`` (``lstat``: device,
    inode, size, mode, mtime, ctime; see :func:`._incremental.file_identity`).

    Git's files backend keeps each loose ref in a file of its own below ``refs/`` (written
    through a lock file renamed into place, which changes the folder's identity too) and
    the rest in ``packed-refs`` (``git help gitrepository-layout``), so while all these are
    unchanged, and none was touched within :data:`._incremental.RACY_NS` of the record,
    the refs and ``HEAD`` are the ones read then.

    Returns:
        ``((relative path, identity), ...)`` sorted, or ``None`` when that cannot prove
        anything: a linked worktree (``commondir``: the refs live elsewhere), a
        ``reftable`` repository, a symbolic link among them (its target may change alone),
        or an entry that cannot be read.
    """
    from ._incremental import file_identity

    base = os.fspath(git_dir)
    if os.path.lexists(os.path.join(base, "commondir")) or os.path.lexists(
        os.path.join(base, "reftable")
    ):
        return None
    found: list[tuple[str, tuple[int, ...] | None]] = [
        (name, file_identity(os.path.join(base, name)))
        for name in ("HEAD", "packed-refs", "logs/refs/stash", "refs")
    ]
    pending = ["refs"]
    try:
        while pending:
            folder = pending.pop()
            with os.scandir(os.path.join(base, folder)) as entries:
                for entry in entries:
                    rel = f"{folder}/{entry.name}"
                    st = entry.stat(follow_symlinks=False)
                    ident = (st.st_dev, st.st_ino, st.st_size, st.st_mode)
                    found.append((rel, (*ident, st.st_mtime_ns, st.st_ctime_ns)))
                    if entry.is_symlink():
                        return None
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(rel)
    except OSError:
        return None
    if any(ident is not None and (len(ident) < 6 or stat.S_ISLNK(ident[3])) for _, ident in found):
        return None
    return tuple(sorted(found))


def stash_entry_env(line: str) -> tuple[str, str, dict[str, str]]:
    """``(new id, message, committer env)`` from one raw reflog line."""
    head, _, message = line.partition("\t")
    _old, new, rest = head.split(" ", 2)
    ident, _, when = rest.rpartition("> ")
    name, _, email = ident.partition(" <")
    env = {
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_COMMITTER_DATE": "@" + when.strip(),
    }
    return new, message, env


def write_stash(git_dir: Path, cwd: Path, log: Sequence[str], tip: str | None = None) -> None:
    """Make the user's ``refs/stash`` and its reflog hold exactly ``log``'s entries.

    Args:
        git_dir, cwd: the user's repository and work tree.
        log: raw reflog lines, oldest first.
        tip: what ``refs/stash`` pointed to (it may have had no reflog, or a tip the
            reflog does not end with); ``None``: no ``refs/stash``.
    """
    current: list[str] = []
    with contextlib.suppress(FileNotFoundError, UnicodeDecodeError):
        text = (git_dir / "logs" / _STASH).read_text(encoding="utf-8")
        current = [line for line in text.splitlines() if line.strip()]
    now = _git(git_dir, cwd, "rev-parse", "-q", "--verify", _STASH, check=False)
    now_tip = now.text.strip() if now.returncode == 0 else None
    if current == list(log) and now_tip == tip:
        return
    if now_tip is not None:
        _git(git_dir, cwd, "update-ref", "-d", _STASH)
    for line in log:
        new, message, env = stash_entry_env(line)
        run_git(
            ["update-ref", "--create-reflog", "-m", message, _STASH, new],
            cwd=cwd,
            git_dir=git_dir,
            extra_env=env,
        )
    last = stash_entry_env(log[-1])[0] if log else None
    if tip is not None and tip != last:
        _git(git_dir, cwd, "update-ref", _STASH, tip)
