"""Attack class: a hostile recording file given to ``tandem replay`` (a "bug report").

The export is untrusted input (harnesses/recording/export.py ``load_export``): its
manifest names the recorded repository, ``HEAD`` and a dirty-files patch; its turns are the
model's side; its tool results are what the replay's results are compared with. The
promises: the replay writes only inside its own checkout (under ``--workdir``), and a
result that really differs is never reported as "equal apart from timings".
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from desktop.replay import replay
from harnesses.recording import compare_results

PATCH = (
    "diff --git a/pwned.txt b/pwned.txt\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/pwned.txt\n"
    "@@ -0,0 +1 @@\n"
    "+pwned\n"
)


def _export(path: Path, manifest: dict[str, Any]) -> Path:
    message = {"type": "message", "content": [{"type": "output_text", "text": "done"}]}
    data = {
        "format": "tandem-session/1",
        "manifest": {"git": True, "head": None, "patch": PATCH, "mode": "ask", **manifest},
        "turns": [{"output": [message]}],
        "tool_results": [],
    }
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "repo",
    [
        pytest.param("/home/someone/project/..", id="repo-name-dotdot"),
        pytest.param("..", id="repo-bare-dotdot"),
    ],
)
async def test_the_checkout_stays_inside_the_workdir(tmp_path: Path, repo: str) -> None:
    box = tmp_path / "box"  # the workdir's parent: nothing of the replay may land here
    work = box / "work"
    work.mkdir(parents=True)
    export = _export(tmp_path / "report.json", {"repo": repo})
    try:
        report = await replay(export, out=io.StringIO(), workdir=work)
    except Exception:  # refusing the file is a fine outcome too
        report = None
    assert sorted(p.name for p in box.iterdir()) == ["work"], list(box.iterdir())
    if report is not None:
        assert report.root.resolve().is_relative_to(work.resolve())
        assert (report.root / "pwned.txt").read_text() == "pwned\n"  # applied there


def test_prepare_checkout_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    from harnesses.recording import RecordingError, prepare_checkout

    (tmp_path / "keep.txt").write_text("mine\n")
    with pytest.raises(RecordingError):
        prepare_checkout({"git": True, "head": None, "patch": PATCH}, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def _shell_export(path: Path, command: str, mode: str) -> Path:
    call = {"type": "shell_call", "call_id": "c1", "action": {"commands": [command]}}
    message = {"type": "message", "content": [{"type": "output_text", "text": "done"}]}
    data = {
        "format": "tandem-session/1",
        "manifest": {"git": True, "head": None, "patch": "", "mode": mode, "repo": "project"},
        "turns": [{"output": [call]}, {"output": [message]}],
        "tool_results": [],
        "decisions": {"approvals": {"c1": {"call_id": "c1", "decision": "allow_once"}}},
    }
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("mode", ["ask", "auto", "full"])
async def test_recorded_approvals_never_run_a_command_unsandboxed(
    tmp_path: Path, mode: str
) -> None:
    """The user's settings turn the sandbox off (or there is none: macOS, Windows). A live
    run would ask the user before ``touch <outside>``; the recording's "allow once" must not
    stand in for that answer when nothing confines the command."""
    from core.settings import settings_dir

    settings_dir().mkdir(parents=True, exist_ok=True)
    (settings_dir() / "settings.toml").write_text("sandbox_enabled = false\n")
    marker = tmp_path / "outside" / "pwned.txt"
    marker.parent.mkdir()
    export = _shell_export(tmp_path / "report.json", f"touch {marker}", mode)
    work = tmp_path / "work"
    out = io.StringIO()
    try:
        await replay(export, out=out, workdir=work)
    except Exception:  # refusing the file is a fine outcome too
        pass
    assert not marker.exists(), out.getvalue()


def _result(text: str) -> dict[str, Any]:
    return {"type": "shell_call_output", "call_id": "c1", "output": [{"stdout": text}]}


# (recorded, replayed): the text after a temporary path really differs.
GLUED_TO_A_TMP_PATH = [
    pytest.param("/tmp/p/out=PASS", "/tmp/p/out=FAIL", id="tmp-path-then-equals"),
    pytest.param("/tmp/p/a|ok", "/tmp/p/a|error", id="tmp-path-then-pipe"),
    pytest.param("/tmp/p/x?status=200", "/tmp/p/x?status=500", id="tmp-path-then-query"),
    pytest.param("/tmp/p/x#passed", "/tmp/p/x#failed", id="tmp-path-then-hash"),
    pytest.param("/tmp/p/x!0", "/tmp/p/x!1", id="tmp-path-then-bang"),
]


@pytest.mark.parametrize(("recorded", "replayed"), GLUED_TO_A_TMP_PATH)
def test_a_real_difference_after_a_temp_path_is_not_masked(recorded: str, replayed: str) -> None:
    found = compare_results(
        [{"turn": 1, "call_id": "c1", "item": _result(recorded)}], [_result(replayed)]
    )
    assert [m.what for m in found] == ["differs"]
    assert all(m.real for m in found)


def test_temp_paths_alone_are_still_volatile() -> None:
    recorded = "/tmp/pytest-of-root/pytest-1/test_a0/a.py::test PASSED in 0.01s"
    replayed = "/tmp/pytest-of-root/pytest-7/test_a3/a.py::test PASSED in 0.02s"
    found = compare_results(
        [{"turn": 1, "call_id": "c1", "item": _result(recorded)}], [_result(replayed)]
    )
    assert [m.what for m in found] == ["volatile"]


def _new_file(path: str, text: str = "pwned\n", mode: str = "100644") -> str:
    return (
        f"diff --git a/{path} b/{path}\n"
        f"new file mode {mode}\n"
        "--- /dev/null\n"
        f"+++ b/{path}\n"
        "@@ -0,0 +1 @@\n"
        f"+{text}"
    )


@pytest.mark.parametrize(
    "patch",
    [
        pytest.param(_new_file("../escaped.txt"), id="patch-dotdot-path"),
        pytest.param(_new_file(".git/hooks/post-checkout", "#!/bin/sh\n"), id="patch-into-git-dir"),
        pytest.param(_new_file(".GIT/config", "[core]\n"), id="patch-into-git-dir-case"),
        pytest.param(
            _new_file("link", "..\n\\ No newline at end of file\n", "120000")
            + _new_file("link/escaped.txt"),
            id="patch-symlink-then-through-it",
        ),
    ],
)
def test_the_recorded_patch_writes_only_inside_the_checkout(tmp_path: Path, patch: str) -> None:
    from harnesses.recording import RecordingError, prepare_checkout

    checkout = tmp_path / "work" / "repo"
    try:
        prepare_checkout({"git": True, "head": None, "patch": patch}, checkout)
    except RecordingError:
        pass  # git apply refused it
    assert not (tmp_path / "work" / "escaped.txt").exists()
    assert not (tmp_path / "escaped.txt").exists()
    assert not (checkout / ".git" / "hooks" / "post-checkout").exists()


@pytest.mark.parametrize(
    "head",
    [
        pytest.param("--index-output={out}", id="head-as-read-tree-option"),
        pytest.param("--output={out}", id="head-as-output-option"),
        pytest.param("HEAD\n--all", id="head-with-a-newline"),
    ],
)
def test_a_recorded_head_is_never_an_option(tmp_path: Path, head: str) -> None:
    import subprocess

    from harnesses.recording import RecordingError, prepare_checkout

    origin = tmp_path / "origin"
    origin.mkdir()
    subprocess.run(["git", "init", "-q", str(origin)], check=True)
    (origin / "a.txt").write_text("a\n")
    git = ["git", "-C", str(origin), "-c", "user.name=t", "-c", "user.email=t@e.invalid"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    out = tmp_path / "written-by-an-option"
    manifest = {"git": True, "head": head.format(out=out), "patch": "", "repo": str(origin)}
    with pytest.raises(RecordingError):
        prepare_checkout(manifest, tmp_path / "work" / "repo")
    assert not out.exists()


async def test_an_always_allow_covers_only_what_a_live_rule_would(tmp_path: Path) -> None:
    """The recording says *Always allow* for ``mkdir made`` and gives no decision for a later
    ``touch pwned.txt``. Live, *Always allow* adds a rule for that command; it never lets
    every later command of the shell tool run. Replayed in ask mode, the second call must
    be rejected (the sandbox is on here; the checkout is the replay's own)."""
    first = {"type": "shell_call", "call_id": "c1", "action": {"commands": ["mkdir made"]}}
    second = {"type": "shell_call", "call_id": "c2", "action": {"commands": ["touch pwned.txt"]}}
    message = {"type": "message", "content": [{"type": "output_text", "text": "done"}]}
    data = {
        "format": "tandem-session/1",
        "manifest": {"git": True, "head": None, "patch": "", "mode": "ask", "repo": "project"},
        "turns": [{"output": [first]}, {"output": [second]}, {"output": [message]}],
        "tool_results": [],
        "decisions": {"approvals": {"c1": {"call_id": "c1", "decision": "always_allow"}}},
    }
    export = tmp_path / "report.json"
    export.write_text(json.dumps(data))
    out = io.StringIO()
    report = await replay(export, out=out, workdir=tmp_path / "work")
    assert not (report.root / "pwned.txt").exists(), out.getvalue()
    assert (report.root / "made").is_dir(), out.getvalue()  # the first call ran (allowed)
