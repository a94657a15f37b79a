"""Red-team findings 4, 5 and 8 on Trust II, replayed as sessions (issue 12).

Each case is a scripted session against the local Responses server on the repository of
:mod:`tests.security._damage` (uncommitted, staged-only, untracked, ignored ``.env`` and
``build/out.bin``, stashes), with a real :class:`~harnesses.workspace.Workspace`:

- 4: a ``shell_call`` with several commands is judged and checkpointed for all of them;
- 5: a ``git clean`` run from another directory is listed there, and a destructive command
  whose checkpoint fails is not run at all;
- 8: ``apply_patch`` deleting or rewriting an ignored file without review checkpoints it
  first, so one restore brings it back.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core import Agent, Runner
from harnesses.checkpoints import CheckpointStore
from harnesses.workspace import Workspace
from tests.security._damage import make_repo
from tests.support import items

VICTIMS = (".env", "build/out.bin")


@pytest.fixture(autouse=True)
def _git_env(git_env: None) -> None:
    """Plain git for the test's own commands (see :func:`tests.security._damage.git_env`)."""


def _read(ws: Path, names: tuple[str, ...]) -> dict[str, bytes | None]:
    return {n: (ws / n).read_bytes() if (ws / n).exists() else None for n in names}


async def _approve_all(agent: Agent, first, workspace: Workspace):
    result = first
    while result.interruptions:
        state = result.to_state()
        for item in result.interruptions:
            state.approve(item)
        result = await Runner.run(agent, state, hooks=workspace.hooks())
    return result


def _sent_output(responses_server, call_id: str) -> dict:
    for item in responses_server.requests[-1].body["input"]:
        if item.get("type") == "shell_call_output" and item.get("call_id") == call_id:
            return item
    raise AssertionError(f"no shell_call_output for {call_id}")


MULTI = [
    pytest.param(["rm -f .env", "git clean -fdX"], VICTIMS, id="rm-then-clean"),
    pytest.param(["touch t", "rm -f .env"], (".env",), id="harmless-then-rm"),
    pytest.param(["git status", "git clean -fdX", "ls"], VICTIMS, id="clean-in-the-middle"),
]
MODES = [pytest.param(m, id=m) for m in ("ask", "auto", "full")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("commands,victims", MULTI)
async def test_multi_command_call_is_judged_and_checkpointed_for_every_command(
    responses_server, model, tmp_path: Path, mode: str, commands: list[str], victims
) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    before = _read(ws, victims)
    workspace = Workspace(ws, mode=mode, data_dir=tmp_path / "data")
    agent = Agent(name="coder", model=model, tools=workspace.tools())
    responses_server.enqueue([items.shell_call(commands, call_id="sh1", timeout_ms=60_000)])
    responses_server.enqueue([items.message("done")])

    first = await Runner.run(agent, "tidy up", hooks=workspace.hooks())
    assert [i.tool_name for i in first.interruptions] == ["shell"], f"{commands} ran in {mode}"
    decision = workspace.decisions["sh1"].decision
    destructive = next(c for c in commands if c.startswith(("rm", "git clean")))
    assert decision.reason.startswith(f"asked because `{destructive}` is destructive")
    assert workspace.reason_for("sh1") == decision.reason
    assert decision.checkpoint_required
    assert len(decision.segments) >= len(commands)
    if "git clean -fdX" in commands:
        assert decision.git_clean == (("-fdX",),)
        assert decision.git_clean_cwds == (str(ws),)
    if "rm -f .env" in commands:
        assert str(ws / ".env") in decision.removes
    summary = (await workspace.recoverability(decision)).summary()
    assert summary == "everything it removes is recoverable"

    final = await _approve_all(agent, first, workspace)
    assert final.final_output == "done"
    assert all(v is None for v in _read(ws, victims).values()), "the commands should have run"
    guard = [
        c for c in await workspace.checkpoints.list() if c.label == "before destructive command"
    ]
    assert len(guard) == 1
    await workspace.checkpoints.restore(guard[0].id)
    assert _read(ws, victims) == before


OTHER_DIR = [
    pytest.param("cd src && git clean -fdX ..", id="cd-then-clean-dotdot"),
    pytest.param("git -C src clean -fdX ..", id="git-C-clean-dotdot"),
    pytest.param("cd src; git clean -fdX -- ../build ../.env", id="cd-then-clean-pathspecs"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", OTHER_DIR)
async def test_clean_from_another_directory_is_listed_where_it_runs(
    responses_server, model, tmp_path: Path, mode: str, command: str
) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    before = _read(ws, VICTIMS)
    workspace = Workspace(ws, mode=mode, data_dir=tmp_path / "data")
    agent = Agent(name="coder", model=model, tools=workspace.tools())
    responses_server.enqueue([items.shell_call([command], call_id="sh1", timeout_ms=60_000)])
    responses_server.enqueue([items.message("done")])

    first = await Runner.run(agent, "tidy up", hooks=workspace.hooks())
    assert first.interruptions, f"{command!r} ran in {mode} without asking"
    decision = workspace.decisions["sh1"].decision
    assert decision.git_clean_cwds == (str(ws / "src"),)
    assert (await workspace.recoverability(decision)).summary() == (
        "everything it removes is recoverable"
    )
    await _approve_all(agent, first, workspace)
    assert all(v is None for v in _read(ws, VICTIMS).values()), "the clean should have run"
    guard = [c for c in await workspace.checkpoints.list() if c.label.startswith("before destr")]
    await workspace.checkpoints.restore(guard[-1].id)
    assert _read(ws, VICTIMS) == before


async def test_clean_listing_runs_in_its_directory_and_falls_back_to_the_widest(
    tmp_path: Path,
) -> None:
    """The store alone: the dry run of ``git clean -X ..`` runs in ``src`` (from the root it
    fails: "outside repository"); that error, a directory that does not exist or one only
    known at run time gives the widest listing (untracked and ignored) instead."""
    ws = tmp_path / "repo"
    make_repo(ws)
    store = CheckpointStore(ws, data_dir=tmp_path / "data", retention=None)
    env = (ws / ".env").read_bytes()
    notes = (ws / "notes.txt").read_bytes()

    found = await store.recoverability(git_clean=[("-fdX", "..")], git_clean_cwds=[str(ws / "src")])
    assert {p for p, _ in found.covered} == {".env", "build/out.bin"}
    held = await store.create("clean from src", git_clean=[("-X", "..")], git_clean_cwds=["src"])
    widest = await store.create(
        "clean from nowhere", git_clean=[("-X", "..")], git_clean_cwds=[str(ws / "missing")]
    )
    unknown = await store.create("clean from $X", git_clean=[("-X",)], git_clean_cwds=[None])
    # from the root `git clean -n -X ..` is git's error: the widest listing instead
    wide = await store.recoverability(git_clean=[("-fdX", "..")])
    assert {".env", "build/out.bin", "notes.txt"} <= {p for p, _ in wide.covered}

    for checkpoint in (held, widest, unknown):
        (ws / ".env").unlink()
        (ws / "notes.txt").unlink()
        await store.restore(checkpoint.id)
        assert (ws / ".env").read_bytes() == env, checkpoint.label
        assert (ws / "notes.txt").read_bytes() == notes, checkpoint.label


@pytest.mark.parametrize("mode", MODES)
async def test_destructive_command_whose_checkpoint_fails_is_not_run(
    responses_server, model, tmp_path: Path, mode: str
) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    before = _read(ws, VICTIMS)
    blocked = tmp_path / "data"
    blocked.write_text("a file where the checkpoint store's folder should be\n")
    workspace = Workspace(ws, mode=mode, data_dir=blocked)
    agent = Agent(name="coder", model=model, tools=workspace.tools())
    responses_server.enqueue(
        [items.shell_call(["rm -f .env", "git clean -fdX"], call_id="sh1", timeout_ms=60_000)]
    )
    responses_server.enqueue([items.message("understood")])

    first = await Runner.run(agent, "tidy up", hooks=workspace.hooks())
    assert first.interruptions
    found = await workspace.recoverability(workspace.decisions["sh1"].decision)  # no raise
    assert found.unknown and "could not be checked" in found.summary()

    final = await _approve_all(agent, first, workspace)
    assert final.final_output == "understood"
    assert _read(ws, VICTIMS) == before, "nothing may run without its checkpoint"
    sent = _sent_output(responses_server, "sh1")
    assert len(sent["output"]) == 2
    for entry in sent["output"]:
        assert "Tandem did not run this command" in entry["stderr"]
        assert "checkpoint" in entry["stderr"] and "Nothing was run" in entry["stderr"]
        assert entry["outcome"] == {"type": "exit", "exit_code": 127}


def _envelope(body: str) -> str:
    return "apply_patch <<'EOF'\n*** Begin Patch\n" + body + "*** End Patch\nEOF"


PATCHES = [
    pytest.param(
        items.apply_patch_call({"type": "delete_file", "path": ".env"}, call_id="p1"),
        None,
        id="apply-patch-call-delete",
    ),
    pytest.param(
        items.apply_patch_call(
            {
                "type": "update_file",
                "path": ".env",
                "diff": "@@\n-API_TOKEN=never-lose-me\n+API_TOKEN=\n",
            },
            call_id="p1",
        ),
        b"API_TOKEN=\n",
        id="apply-patch-call-update",
    ),
    pytest.param(
        items.shell_call([_envelope("*** Delete File: .env\n")], call_id="p1"),
        None,
        id="shell-envelope-delete",
    ),
]


@pytest.mark.parametrize("mode", [pytest.param(m, id=m) for m in ("auto", "full")])
@pytest.mark.parametrize("call,after", PATCHES)
async def test_apply_patch_removing_an_ignored_file_checkpoints_it_first(
    responses_server, model, tmp_path: Path, mode: str, call: dict, after: bytes | None
) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    env = (ws / ".env").read_bytes()
    workspace = Workspace(ws, mode=mode, data_dir=tmp_path / "data")
    agent = Agent(name="coder", model=model, tools=workspace.tools())
    responses_server.enqueue([call])
    responses_server.enqueue([items.message("done")])

    final = await Runner.run(agent, "drop the token", hooks=workspace.hooks())
    assert final.final_output == "done"
    assert _read(ws, (".env",)) == {".env": after}, "the patch should have landed"
    labels = [c.label for c in await workspace.checkpoints.list()]
    assert labels == ["before turn 1", "before apply_patch .env"]
    await workspace.checkpoints.restore((await workspace.checkpoints.list())[-1].id)
    assert (ws / ".env").read_bytes() == env


async def test_apply_patch_on_a_checkpointed_file_takes_no_extra_checkpoint(
    responses_server, model, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    workspace = Workspace(ws, mode="auto", data_dir=tmp_path / "data")
    agent = Agent(name="coder", model=model, tools=workspace.tools())
    op = {"type": "delete_file", "path": "notes.txt"}  # untracked: the turn's checkpoint has it
    responses_server.enqueue([items.apply_patch_call(op, call_id="p1")])
    responses_server.enqueue([items.message("done")])
    await Runner.run(agent, "delete notes", hooks=workspace.hooks())
    assert not (ws / "notes.txt").exists()
    assert [c.label for c in await workspace.checkpoints.list()] == ["before turn 1"]


async def test_apply_patch_refuses_to_delete_an_ignored_file_over_the_cap(
    responses_server, model, tmp_path: Path
) -> None:
    ws = tmp_path / "repo"
    make_repo(ws)
    env = (ws / ".env").read_bytes()
    workspace = Workspace(ws, mode="full", data_dir=tmp_path / "data", checkpoint_cap_bytes=4)
    agent = Agent(name="coder", model=model, tools=workspace.tools())
    op = {"type": "delete_file", "path": ".env"}
    responses_server.enqueue([items.apply_patch_call(op, call_id="p1")])
    responses_server.enqueue([items.message("done")])
    await Runner.run(agent, "drop the token", hooks=workspace.hooks())
    assert (ws / ".env").read_bytes() == env
    sent = [
        i
        for i in responses_server.requests[-1].body["input"]
        if i.get("type") == "apply_patch_call_output"
    ]
    assert sent[-1]["status"] == "failed"
    assert "larger than the checkpoint size cap" in sent[-1]["output"]
