"""Attack surface: a git process started anywhere but the hardened door (CONVENTIONS 16).

Scans the source of ``core/``, ``harnesses/`` and ``desktop/`` and fails when a module other
than ``harnesses/vcs/runner.py`` imports GitPython, resolves the git binary, or starts a
process whose argv literally begins with ``git``. The scanner is itself tested on bad
samples, so the scan can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOOR = Path("harnesses/vcs/runner.py")
_STARTERS = {
    "run",
    "Popen",
    "call",
    "check_call",
    "check_output",
    "getoutput",
    "getstatusoutput",
    "system",
    "popen",
    "create_subprocess_exec",
    "create_subprocess_shell",
    "subprocess_exec",
    "subprocess_shell",
    "posix_spawn",
    "posix_spawnp",
    "execute",  # GitPython's Git.execute
}


def _is_git_word(node: ast.AST, *, shell: bool = False) -> bool:
    """A literal naming the git program (``"git"``, ``"/usr/bin/git"``; with ``shell``, also
    a command line such as ``"git commit -m x"``)."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return False
    word = node.value.strip()
    if shell:
        word = word.split(" ", 1)[0]
    return word == "git" or word.endswith("/git")


def _argv_starts_with_git(node: ast.AST) -> bool:
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        head = node.elts[0]
        return _is_git_word(head.value if isinstance(head, ast.Starred) else head)
    return _is_git_word(node, shell=True)


def offences(source: str) -> list[str]:
    """Ways ``source`` starts git or reaches GitPython, as ``"line N: what"``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "git" or alias.name.startswith("git."):
                    found.append(f"line {node.lineno}: import {alias.name} (GitPython)")
        elif isinstance(node, ast.ImportFrom):
            if node.module and (node.module == "git" or node.module.startswith("git.")):
                found.append(f"line {node.lineno}: from {node.module} import (GitPython)")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name.startswith(("exec", "spawn")) or name in _STARTERS:
                if any(_argv_starts_with_git(a) for a in node.args[:2]):
                    found.append(f"line {node.lineno}: {name}(git ...)")
            if name in ("which", "find_executable") and node.args and _is_git_word(node.args[0]):
                found.append(f"line {node.lineno}: {name}('git')")
            if name == "__import__" and node.args and getattr(node.args[0], "value", "") == "git":
                found.append(f"line {node.lineno}: __import__('git')")
        elif isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            # an argv built for later: ["git", "-C", x, ...] (a data tuple like ("git", "diff")
            # in the policy has no option or path after the words, so look for one)
            head = node.elts[0]
            rest = node.elts[1:]
            if _is_git_word(head) and any(not isinstance(e, ast.Constant) for e in rest):
                found.append(f"line {node.lineno}: argv starting with 'git'")
    return found


def _sources() -> list[Path]:
    return sorted(
        p.relative_to(ROOT)
        for top in ("core", "harnesses", "desktop")
        for p in (ROOT / top).rglob("*.py")
    )


def test_only_the_door_starts_git() -> None:
    sources = _sources()
    assert DOOR in sources and len(sources) > 50
    report = {
        str(path): hits
        for path in sources
        if path != DOOR and (hits := offences((ROOT / path).read_text(encoding="utf-8")))
    }
    assert report == {}


def test_the_door_is_where_git_starts() -> None:
    """The exemption covers a real spawner: the door resolves git and runs it."""
    text = (ROOT / DOOR).read_text(encoding="utf-8")
    assert 'shutil.which("git"' in text and "subprocess.run(" in text
    assert offences(text)  # it resolves the git binary, which the scan flags elsewhere


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("import git\n", id="import-gitpython"),
        pytest.param("from git import Repo\n", id="from-gitpython"),
        pytest.param("import git.cmd as g\n", id="import-gitpython-submodule"),
        pytest.param("m = __import__('git')\n", id="dunder-import"),
        pytest.param("import subprocess\nsubprocess.run(['git', 'status'])\n", id="subprocess-run"),
        pytest.param("import subprocess as sp\nsp.Popen(('git', 'add', '-A'))\n", id="popen-tuple"),
        pytest.param("import os\nos.system('git commit -m x')\n", id="os-system-string"),
        pytest.param("import os\nos.execvp('git', ['git', 'gc'])\n", id="os-execvp"),
        pytest.param(
            "import asyncio\nasyncio.create_subprocess_exec('/usr/bin/git', 'log')\n",
            id="asyncio-absolute-path",
        ),
        pytest.param("import shutil\nexe = shutil.which('git')\n", id="which-git"),
        pytest.param("argv = ['git', '-C', str(path), 'status']\n", id="argv-for-later"),
        pytest.param("g.execute(['git', *args], env=env)\n", id="gitpython-execute"),
    ],
)
def test_the_scanner_catches(source: str) -> None:
    assert offences(source)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("READ_ONLY = {('git', 'diff'), ('git', 'log')}\n", id="policy-data"),
        pytest.param("if name == 'git':\n    pass\n", id="comparison"),
        pytest.param("from harnesses.vcs import run_git\nrun_git(['status'], cwd=p)\n", id="door"),
    ],
)
def test_the_scanner_lets_data_be(source: str) -> None:
    assert offences(source) == []


@pytest.mark.parametrize(
    "key",
    ["core.fsmonitor", "core.hooksPath", "filter.x.clean", "core.pager", "core.splitIndex.x"],
)
def test_the_door_tunes_no_key_that_names_a_program(key: str, tmp_path: Path) -> None:
    """``run_git(tuning=...)`` comes after every override, so it takes only the index
    format keys (``TUNABLE``); anything else is refused before git starts."""
    from harnesses.vcs import door_counters, run_git
    from harnesses.vcs.runner import TUNABLE

    assert TUNABLE == frozenset({"core.splitindex", "splitindex.sharedindexexpire"})
    before = door_counters()["runs"]
    with pytest.raises(ValueError, match="does not tune"):
        run_git(["rev-parse", "--git-dir"], cwd=tmp_path, tuning=[(key, "/bin/sh")])
    assert door_counters()["runs"] == before
    done = run_git(
        ["init", "-q", str(tmp_path / "r")], cwd=tmp_path, tuning=[("core.splitIndex", "true")]
    )
    assert done.returncode == 0
