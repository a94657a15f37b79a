"""The window's side of issue 14: the context meter, compaction cards, *Compact now*, undo,
and a relaunched session that continues from its compacted history (real openai client
against the local Responses server, real journal)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import openai
import pytest

from bench.long_session import FIRST_MESSAGE, SUMMARY, scripted_session
from core import Agent, OpenAIResponsesModel, RunConfig, function_tool
from core.context_window import ContextPolicy
from core.context_window.local import SUMMARY_HEADER
from core.settings import Settings
from desktop.controller import Controller
from desktop.main_window import MainWindow
from harnesses.sessions import SessionJournal
from harnesses.workspace import Workspace
from tests.desktop.test_app import next_signal, run_qasync
from tests.desktop.test_card_truth import run_ended
from tests.support.responses_server import ResponsesServer

LIMIT = 20_000


@function_tool
def run(n: int) -> str:
    """Run scripted command ``n``."""
    return f"output of command {n}\n" * 200  # about 4 KB


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


def _build(
    repo: Path, journal: SessionJournal, server: ResponsesServer, window: int, sid: str | None
) -> tuple[Controller, MainWindow, openai.AsyncOpenAI]:
    workspace = Workspace(repo, mode="auto", data_dir=repo.parent / "data")
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)

    def factory(_ws: Workspace) -> Agent[Any]:
        return Agent(name="Tandem", model=OpenAIResponsesModel("m", client), tools=[run])

    policy = ContextPolicy(window=window, strategy="local", base_url=server.base_url)
    session = sid or journal.create_session(repo, "long")
    controller = Controller(
        workspace,
        factory,
        run_config=RunConfig(context_policy=policy),
        journal=journal,
        session_id=session,
        max_turns=500,
    )
    return controller, MainWindow(controller, Settings()), client


def _inputs(server: ResponsesServer) -> list[list[dict[str, Any]]]:
    return [
        r.body["input"]
        for r in server.requests
        if r.path == "/v1/responses" and r.body.get("instructions") != _compact_instructions()
    ]


def _compact_instructions() -> str:
    from core.context_window.local import COMPACT_INSTRUCTIONS

    return COMPACT_INSTRUCTIONS


def test_long_session_meter_cards_journal_and_relaunch(repo, tmp_path, qtbot, responses_server):
    responses_server.context_limit = LIMIT
    responses_server.compact_endpoint = False
    responses_server.responder = scripted_session(60)
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    seen: dict[str, Any] = {}

    async def first_launch() -> None:
        controller, window, client = _build(repo, journal, responses_server, LIMIT, None)
        qtbot.addWidget(window)
        reports: list[Any] = []
        texts: list[str] = []
        controller.context.reportChanged.connect(reports.append)
        controller.context.reportChanged.connect(
            lambda _r: texts.append(window.top_bar.context_meter.text())
        )
        done = run_ended(controller)
        controller.submit(FIRST_MESSAGE)
        await done
        meter = window.top_bar.context_meter
        assert meter.isVisibleTo(window) and re.fullmatch(r"context: \d+% left", meter.text())
        assert "Context window: 20,000 tokens" in meter.toolTip()
        assert "tool outputs" in meter.toolTip()
        assert sum(1 for r in reports if r.measured) == 61  # the meter moved on every response
        assert texts[0] == "context: 100% left" and len(set(texts)) > 10
        assert texts[-1] == f"context: {reports[-1].percent_left}% left"
        cards = list(window._compaction_cards.values())
        assert cards, "no compaction card"
        card = cards[-1]
        record = card.record
        assert f"{record.tokens_before:,} → {record.tokens_after:,} tokens" in card.figures.text()
        assert record.tokens_after < record.tokens_before
        assert card.summary.isHidden()
        card.toggle.click()
        assert not card.summary.isHidden() and SUMMARY in card.summary.toPlainText()
        seen["history"] = list(controller._history)
        seen["covers"] = controller.context.state.covers
        seen["prefix"] = len(controller.context.state.current.prefix)
        seen["session"] = controller.session_id
        await controller.shutdown()
        await client.close()
        window.close()

    run_qasync(first_launch)
    assert responses_server.peak_input_tokens <= LIMIT
    last = json.dumps(_inputs(responses_server)[-1])
    assert FIRST_MESSAGE in last and SUMMARY_HEADER in last
    journal.flush()
    kinds = [e.kind for e in journal.events(seen["session"])]
    assert "compaction" in kinds and "context_state" in kinds
    outputs = [i for i in seen["history"] if i.get("type") == "function_call_output"]
    assert len(outputs) == 60  # every original item is kept

    responses_server.responder = scripted_session(0)

    async def second_launch() -> None:
        controller, window, client = _build(repo, journal, responses_server, LIMIT, seen["session"])
        qtbot.addWidget(window)
        controller.load_session(seen["session"])
        assert controller._history == seen["history"]
        assert controller.context.state.covers == seen["covers"]
        assert window._compaction_cards  # the cards are shown again
        assert window.conversation.entry_count() >= 60  # the full transcript
        done = run_ended(controller)
        controller.submit("and now?")
        await done
        sent = _inputs(responses_server)[-1]
        assert len(sent) == seen["prefix"] + len(seen["history"]) + 1 - seen["covers"]
        assert SUMMARY_HEADER in json.dumps(sent) and sent[-1]["content"] == "and now?"
        await controller.shutdown()
        await client.close()
        window.close()

    run_qasync(second_launch)
    journal.close()


def test_compact_now_from_the_menu_and_composer_and_undo(repo, tmp_path, qtbot, responses_server):
    responses_server.compact_endpoint = False
    responses_server.responder = scripted_session(12)
    journal = SessionJournal(tmp_path / "journal.sqlite3")

    async def scenario() -> None:
        controller, window, client = _build(repo, journal, responses_server, 400_000, None)
        qtbot.addWidget(window)
        done = run_ended(controller)
        controller.submit("first task")
        await done
        assert not window._compaction_cards  # a big window: nothing compacted on its own
        assert not window.undo_compaction_action.isEnabled()
        full = list(controller._history)

        made = next_signal(controller.context.compacted)
        window.compact_action.trigger()  # Session > Compact now
        (record,) = await made
        card = window._compaction_cards[record.created_at]
        assert record.reason == "manual" and card.undo.isEnabled()
        assert window.undo_compaction_action.isEnabled()
        assert controller.context.state.request_items(full) != full

        undone = next_signal(controller.context.compactionUndone)
        card.undo.click()
        await undone
        assert controller.context.state.request_items(full) == full  # the previous history
        assert "(undone)" in card.title.text() and not card.undo.isEnabled()

        responses_server.responder = scripted_session(0)
        done = run_ended(controller)
        controller.submit("second task")
        await done
        sent = _inputs(responses_server)[-1]
        assert len(sent) == len(full) + 1  # undo restored the uncompacted request history

        made = next_signal(controller.context.compacted)
        window.composer.set_text("/compact")
        window.composer.submit()
        (again,) = await made
        assert "/compact" not in [m.get("content") for m in controller._history]
        responses_server.responder = scripted_session(0)
        done = run_ended(controller)
        controller.submit("third task")
        await done
        sent = _inputs(responses_server)[-1]
        assert SUMMARY_HEADER in json.dumps(sent) and len(sent) < len(controller._history)
        assert not window.undo_compaction_action.isEnabled()  # the next turn closed undo
        assert not window._compaction_cards[again.created_at].undo.isEnabled()
        await controller.shutdown()
        await client.close()
        window.close()

    run_qasync(scenario)
    journal.close()


async def test_tandem_run_compacts_and_prints_the_context(tmp_path, responses_server, monkeypatch):
    """``tandem run --verbose``: its real shell tool, the limit kept, the meter printed."""
    from bench.long_session import tandem_run_session

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    responses_server.context_limit = 25_000
    responses_server.compact_endpoint = False
    repo = tmp_path / "repo"
    repo.mkdir()
    code, text = await tandem_run_session(
        responses_server, turns=40, output_bytes=4_000, limit=25_000, repo=repo, verbose=True
    )
    lines = text.rstrip().splitlines()
    # The context line comes just before the closing summary ("tandem run: done ...").
    assert code == 0 and lines[-1].startswith("tandem run: done (exit 0)")
    assert lines[-2].endswith("compaction(s)")
    assert "[context] compacted (local, threshold)" in text
    assert text.count("% left (") >= 40  # one line per response in verbose mode
    assert responses_server.peak_input_tokens <= 25_000
    last = json.dumps(responses_server.requests[-1].body["input"])
    assert FIRST_MESSAGE in last and SUMMARY_HEADER in last


def test_context_printer_lines() -> None:
    import io

    from core.context_window import (
        CompactionEvent,
        CompactionRecord,
        ContextReport,
        ContextUsageEvent,
    )
    from desktop.context_lines import ContextPrinter

    out = io.StringIO()
    printer = ContextPrinter(out, verbose=True)
    report = ContextReport(window=100_000, threshold=85_000, used=38_000, measured=True)
    printer(ContextUsageEvent(report))
    record = CompactionRecord(
        "local", "threshold", 10, [], items_summarised=10, tokens_before=90_000, tokens_after=9_000
    )
    printer(CompactionEvent(record, report))
    printer.print_final()
    lines = out.getvalue().splitlines()
    assert lines[0] == "[context: 62% left (38,000 / 100,000 tokens)]"
    assert (
        lines[1]
        == "[context] compacted (local, threshold): 10 items summarised, 90,000 -> 9,000 tokens"
    )
    assert lines[2] == "context: 62% left (38,000 / 100,000 tokens), 1 compaction(s)"
