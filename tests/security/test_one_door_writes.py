"""One door for file writes: only ``harnesses/editor/confined.py`` writes in the patch path.

CONVENTIONS item 16: every file write the editor makes goes through one confined writer
(directory fds, no-follow). The attack this closes: a new pathname-based write (``open(p,
"w")``, ``Path.write_text``, ``os.replace``...) anywhere in the editor or the apply_patch tool
would reopen the check-then-write race of issue 11 ("Write race"). The source is scanned with
``ast``; anything that could write, or whose mode cannot be read statically, counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOOR = ROOT / "harnesses" / "editor" / "confined.py"
PATCH_PATH = [
    *sorted((ROOT / "harnesses" / "editor").glob("*.py")),
    *(ROOT / "core" / "tools" / name for name in ("apply_patch.py", "editor.py", "v4a.py")),
    ROOT / "core" / "tools" / "patch_envelope.py",
]

# attribute calls that create, change or remove file-system entries, on any receiver
_WRITING_ATTRS = frozenset(
    {
        "write_text", "write_bytes", "touch", "mkdir", "makedirs", "rmdir", "removedirs",
        "unlink", "rename", "renames", "symlink_to", "hardlink_to", "link_to", "chmod",
        "lchmod", "fchmod", "chown", "lchown", "truncate", "ftruncate", "mkfifo", "mknod",
        "symlink", "link", "utime", "rmtree", "copy", "copy2", "copyfile", "copytree",
        "move", "mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile",
        "SpooledTemporaryFile", "TemporaryDirectory", "fsync",
    }
)  # fmt: skip
# names that only write when called on the os/shutil module (str.replace and list.remove
# are everywhere); Path.replace(target) is caught by its single argument
_OS_ONLY = frozenset({"replace", "remove", "write", "open", "fdopen", "pwrite", "writev"})
_MODULES = frozenset({"os", "shutil", "tempfile", "io", "codecs", "pathlib"})


def _mode_writes(node: ast.expr | None) -> bool:
    """Whether an ``open()`` mode argument writes; a mode we cannot read counts as writing."""
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return any(flag in node.value for flag in "wax+")
    return True


def _open_mode(call: ast.Call, position: int) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "mode":
            return keyword.value
    return call.args[position] if len(call.args) > position else None


def violations(source: str, filename: str = "<snippet>") -> list[str]:
    """Every call or import in ``source`` that could write a file, as ``"line: what"``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.ImportFrom) and node.module in _MODULES:
            for alias in node.names:
                if alias.name in _WRITING_ATTRS | _OS_ONLY | {"*"}:
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("shutil", "tempfile"):
                    found.append(f"{node.lineno}: import {alias.name}")
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            if _mode_writes(_open_mode(node, 1)):
                found.append(f"{node.lineno}: open(..., writing mode)")
        elif isinstance(func, ast.Attribute):
            receiver = func.value.id if isinstance(func.value, ast.Name) else None
            name = func.attr
            if name in _WRITING_ATTRS:
                found.append(f"{node.lineno}: .{name}()")
            elif name in _OS_ONLY and receiver in _MODULES:
                found.append(f"{node.lineno}: {receiver}.{name}()")
            elif name == "replace" and len(node.args) + len(node.keywords) == 1:
                found.append(f"{node.lineno}: .replace(target)")
            elif name == "open" and _mode_writes(_open_mode(node, 0)):
                found.append(f"{node.lineno}: .open(writing mode)")
    return found


def test_the_scan_covers_the_patch_path() -> None:
    names = {path.name for path in PATCH_PATH}
    assert {"git_editor.py", "review.py", "confined.py", "apply_patch.py", "v4a.py"} <= names
    assert all(path.is_file() for path in PATCH_PATH)


@pytest.mark.parametrize("path", [p for p in PATCH_PATH if p != DOOR], ids=lambda p: p.name)
def test_nothing_but_the_confined_writer_writes(path: Path) -> None:
    assert violations(path.read_text(encoding="utf-8"), str(path)) == []


def test_the_door_itself_is_seen_by_the_scan() -> None:
    """The scanner finds the confined writer's own writes (it would see a new one)."""
    found = " ".join(violations(DOOR.read_text(encoding="utf-8"), str(DOOR)))
    for what in ("os.open()", ".rename()", ".unlink()", ".mkdir()", "os.write()", ".link()"):
        assert what in found


@pytest.mark.parametrize(
    "snippet",
    [
        pytest.param("open(p, 'w')", id="open-w"),
        pytest.param("open(p, mode='ab')", id="open-append-kw"),
        pytest.param("open(p, 'r+')", id="open-plus"),
        pytest.param("open(p, 'xb')", id="open-exclusive"),
        pytest.param("open(p, m)", id="open-unknown-mode"),
        pytest.param("p.open('w')", id="path-open-w"),
        pytest.param("p.write_text('x')", id="write-text"),
        pytest.param("p.write_bytes(b'x')", id="write-bytes"),
        pytest.param("p.touch()", id="touch"),
        pytest.param("p.parent.mkdir(parents=True)", id="path-mkdir"),
        pytest.param("os.makedirs(d)", id="makedirs"),
        pytest.param("os.replace(a, b)", id="os-replace"),
        pytest.param("p.replace(q)", id="path-replace"),
        pytest.param("os.rename(a, b)", id="os-rename"),
        pytest.param("os.unlink(p)", id="os-unlink"),
        pytest.param("os.remove(p)", id="os-remove"),
        pytest.param("p.unlink(missing_ok=True)", id="path-unlink"),
        pytest.param("os.open(p, os.O_WRONLY)", id="os-open"),
        pytest.param("os.fdopen(fd, 'wb')", id="fdopen"),
        pytest.param("os.write(fd, b'x')", id="os-write"),
        pytest.param("shutil.move(a, b)", id="shutil-move"),
        pytest.param("import shutil", id="import-shutil"),
        pytest.param("tempfile.mkstemp(dir=d)", id="mkstemp"),
        pytest.param("from os import rename", id="from-os-import"),
        pytest.param("from os import *", id="star-import"),
        pytest.param("io.open(p, 'w')", id="io-open"),
        pytest.param("os.symlink(a, b)", id="symlink"),
        pytest.param("os.chmod(p, 0o777)", id="chmod"),
    ],
)
def test_the_scan_catches_each_spelling(snippet: str) -> None:
    assert violations(snippet) != []


@pytest.mark.parametrize(
    "snippet",
    [
        pytest.param("open(p)", id="open-read"),
        pytest.param("open(p, 'rb')", id="open-rb"),
        pytest.param("p.read_bytes()", id="read-bytes"),
        pytest.param("s.replace('a', 'b')", id="str-replace"),
        pytest.param("items.remove(x)", id="list-remove"),
        pytest.param("fh.write('x')", id="file-object-write"),
    ],
)
def test_the_scan_lets_reads_through(snippet: str) -> None:
    assert violations(snippet) == []
