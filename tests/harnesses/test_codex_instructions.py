"""The Codex delegate gets the agent's project instructions, with the real pinned Codex CLI.

Issue 16, Build item 1: Tandem's global ``AGENTS.md``, the project's files (Tandem's cap and
overrides) and ``$CODEX_HOME/AGENTS.md`` each reach the request Codex sends exactly once,
read again at every call. Every request here is the CLI's own ``POST /v1/responses`` to the
local server (``server.responses_requests``).
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from core.context import ToolContext
from core.settings import Settings, settings_dir
from core.tools.function import invoke_function_tool
from desktop.delegates import codex_delegate
from harnesses.codex import (
    codex_instructions_text,
    instructions_config,
    toml_literal,
)
from harnesses.codex.instructions import ARG_MAX_BYTES
from harnesses.instructions import load_instructions
from harnesses.workspace import Workspace
from tests.support import items
from tests.support.codex_cli import NO_RETRIES, pinned_codex_binary, write_codex_home

#: Not BMP-only on purpose: JSON's surrogate-pair escapes are invalid TOML (the CLI then took
#: the raw quoted text as the value).
GLOBAL_MARK = "tandem-global-5150 \U0001f600 caf\u00e9"
CODEX_MARK = "codex-home-6271"
PROJECT_MARK = "project-doc-7392"


@pytest.fixture(scope="module")
def codex_bin() -> str:
    return pinned_codex_binary()


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codex_bin: str) -> Path:
    """A fresh CODEX_HOME (no network: analytics and plugins off) holding its own AGENTS.md."""
    home = write_codex_home(tmp_path / "codex-home")
    (home / "AGENTS.md").write_text(f"Codex home file. Marker: {CODEX_MARK}.\n")
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("CODEX_PATH", codex_bin)
    return home


@pytest.fixture
def tandem_global() -> Path:
    """Tandem's global AGENTS.md in the test's fresh config dir (tests/conftest.py)."""
    folder = settings_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "AGENTS.md"
    path.write_text(f"Tandem global file. Marker: {GLOBAL_MARK}.\n", encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "AGENTS.md").write_text(f"Project file. Marker: {PROJECT_MARK}.\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(path)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True)
    return path


def call_args(text: str) -> str:
    return json.dumps({"inputs": [{"type": "text", "text": text, "path": None}], "thread_id": None})


def new_ctx() -> ToolContext[Any]:
    return ToolContext(context=None, tool_name="codex", tool_call_id="c", tool_arguments="")


def delegate(server: Any, repo: Path, tmp_path: Path, **settings: Any) -> Any:
    tool = codex_delegate(
        Workspace(repo, mode="auto", data_dir=tmp_path / "data"),
        settings=Settings(base_url=server.base_url, model="gpt-5.5", **settings),
        config=NO_RETRIES,
    )
    assert tool is not None
    return tool


async def call(tool: Any, server: Any, answer: str) -> dict[str, Any]:
    """One Codex call answered with ``answer``; returns the body of the request it sent."""
    before = len(server.responses_requests)
    server.enqueue([items.message(answer)])
    result = await invoke_function_tool(tool, new_ctx(), call_args("go"))
    assert getattr(result, "response", result) == answer
    (request,) = server.responses_requests[before:]
    return request.body


def texts(body: dict[str, Any]) -> list[tuple[str, str]]:
    """``(role, text)`` of every input text part of a request, in order."""
    return [
        (item.get("role", ""), part.get("text", ""))
        for item in body["input"]
        if item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict)
    ]


def count(body: dict[str, Any], marker: str) -> int:
    return sum(text.count(marker) for _role, text in texts(body))


# -- end to end with the real CLI -----------------------------------------------------------


async def test_each_file_reaches_codex_exactly_once(
    responses_server, codex_home, tandem_global, repo, tmp_path
):
    body = await call(delegate(responses_server, repo, tmp_path), responses_server, "ok")
    assert count(body, GLOBAL_MARK) == 1  # intact: the emoji and the accent survived TOML
    assert count(body, PROJECT_MARK) == 1  # Tandem's copy only: the CLI's loading is off
    assert count(body, CODEX_MARK) == 1  # the CLI's own copy only
    developer = [text for role, text in texts(body) if role == "developer"]
    (passed,) = [text for text in developer if GLOBAL_MARK in text]
    assert PROJECT_MARK in passed and CODEX_MARK not in passed
    agents = load_instructions(repo, cap_bytes=Settings().agents_md_cap_bytes)
    for file, section in zip(agents.files, agents.sections, strict=True):  # the agent's words
        assert (section in passed) is (file.scope != "codex"), file


async def test_an_edit_between_two_calls_is_seen(
    responses_server, codex_home, tandem_global, repo, tmp_path
):
    tool = delegate(responses_server, repo, tmp_path)
    first = await call(tool, responses_server, "one")
    tandem_global.write_text("Tandem global file, edited. Marker: edited-8403.\n")
    (repo / "AGENTS.override.md").write_text("Project override. Marker: override-9514.\n")
    second = await call(tool, responses_server, "two")
    assert count(first, GLOBAL_MARK) == 1 and count(first, "edited-8403") == 0
    assert count(second, GLOBAL_MARK) == 0 and count(second, "edited-8403") == 1
    assert count(second, "override-9514") == 1  # the override replaces its sibling, for
    assert count(second, PROJECT_MARK) == 0  # Tandem's copy and the CLI's (none) alike


async def test_a_file_over_the_cap_is_truncated_as_tandem_says(
    responses_server, codex_home, tandem_global, repo, tmp_path
):
    head, tail = "head-1029 " * 30, "tail-2130"
    (repo / "AGENTS.md").write_text(head + "x" * 500 + tail + "\n")
    cap = len(tandem_global.read_bytes()) + len((codex_home / "AGENTS.md").read_bytes()) + 200
    body = await call(
        delegate(responses_server, repo, tmp_path, agents_md_cap_bytes=cap),
        responses_server,
        "capped",
    )
    agents = load_instructions(repo, cap_bytes=cap)
    (project,) = [f for f in agents.files if f.scope == "project"]
    assert 0 < project.used < project.size  # the cap really cut it, after the Codex file
    note = f"[Tandem: truncated here; {project.used} of {project.size} bytes included"
    assert count(body, note) == 1
    assert 0 < count(body, "head-1029") < 30  # its first 200 bytes
    assert count(body, tail) == 0  # neither Tandem's copy nor the CLI's own loading has it
    assert count(body, GLOBAL_MARK) == 1 and count(body, CODEX_MARK) == 1


async def test_instructions_too_long_for_argv_are_cut_and_codex_still_runs(
    responses_server, codex_home, tandem_global, repo, tmp_path
):
    (repo / "AGENTS.md").write_text("big-3241\n" + "y" * 300_000 + "\nend-4352\n")
    body = await call(
        delegate(responses_server, repo, tmp_path, agents_md_cap_bytes=1 << 20),
        responses_server,
        "big",
    )
    assert count(body, "big-3241") == 1 and count(body, "end-4352") == 0
    assert count(body, "[Tandem: the instructions handed to Codex were cut here") == 1


# -- the pieces, without the CLI --------------------------------------------------------------


def test_the_codex_text_leaves_out_only_the_codex_home_file(codex_home, tandem_global, repo):
    agents = load_instructions(repo)
    assert [f.scope for f in agents.files] == ["tandem", "codex", "project"]
    text = codex_instructions_text(agents)
    assert GLOBAL_MARK in text and PROJECT_MARK in text and CODEX_MARK not in text
    assert text.index(GLOBAL_MARK) < text.index(PROJECT_MARK)  # the agent's order


def test_no_file_still_turns_the_clis_project_loading_off(tmp_path):
    empty = load_instructions(tmp_path, config_dir=tmp_path / "none", codex_dir=tmp_path / "no")
    assert codex_instructions_text(empty) == ""
    assert instructions_config("") == {"project_doc_max_bytes": 0}


@pytest.mark.parametrize("unit", ["y", "\u00e9", "\U0001f600", "\x01"])
def test_a_long_text_is_cut_to_fit_one_argument(unit):
    text = "start " + unit * 200_000
    value = instructions_config(text)["developer_instructions"]
    argument = f"developer_instructions={toml_literal(value)}".encode()
    assert len(argument) < ARG_MAX_BYTES
    assert value.startswith("start ") and value.endswith("holds at most 122880 bytes.]")
    assert len(argument) > 0.9 * ARG_MAX_BYTES  # not cut more than it had to be
    assert tomllib.loads(f"x = {toml_literal(value)}")["x"] == value
