"""An answer whose items carry no ids is shown once (issue 16: it was shown twice)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import openai
import pytest

from core import Agent, OpenAIResponsesModel
from core.settings import Settings
from desktop.controller import Controller
from desktop.main_window import MainWindow
from desktop.views.transcript.entries import _AssistantMessage
from harnesses.sessions import SessionJournal
from harnesses.workspace import Workspace
from tests.desktop.test_app import run_qasync
from tests.desktop.test_card_truth import run_ended
from tests.support.responses_server import ResponsesServer

_ANSWER = "The bug is in naturaldelta: months are counted as 30.5 days."


def _answer(with_id: bool) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": _ANSWER, "annotations": []}],
    }
    if with_id:
        item["id"] = "msg_1"
    return item


@pytest.mark.parametrize("with_id", [False, True], ids=["no-id", "with-id"])
def test_the_final_answer_is_shown_once(
    tmp_path: Path, qtbot, responses_server: ResponsesServer, with_id: bool
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    responses_server.enqueue([_answer(with_id)])
    journal = SessionJournal(tmp_path / "journal.sqlite3")
    shown: dict[str, Any] = {}

    async def scenario() -> None:
        client = openai.AsyncOpenAI(base_url=responses_server.base_url, api_key="k", max_retries=0)
        workspace = Workspace(repo, mode="ask", data_dir=tmp_path / "data")
        controller = Controller(
            workspace,
            lambda ws: Agent(name="T", model=OpenAIResponsesModel("m", client), tools=[]),
            journal=journal,
            session_id=journal.create_session(repo, "ids"),
        )
        window = MainWindow(controller, Settings())
        qtbot.addWidget(window)
        window.show()
        deltas: list[str] = []
        done: list[str] = []
        controller.assistantDelta.connect(lambda item_id, _d: deltas.append(item_id))
        controller.assistantDone.connect(lambda item_id, _t: done.append(item_id))
        ended = run_ended(controller)
        controller.submit("why is naturaldelta wrong?")
        await ended
        window.conversation.settle()
        shown["messages"] = [
            e for e in window.conversation.entries() if isinstance(e, _AssistantMessage)
        ]
        shown["deltas"], shown["done"] = set(deltas), done
        if os.environ.get("TANDEM_SCREENSHOT_DIR"):  # scripts: look at it
            name = f"message-{'with' if with_id else 'without'}-id.png"
            window.grab().save(os.path.join(os.environ["TANDEM_SCREENSHOT_DIR"], name))
        await controller.shutdown()
        await client.close()
        window.close()

    run_qasync(scenario)
    journal.close()
    assert len(shown["messages"]) == 1  # today: twice without ids
    # one id for the item's whole life, streamed deltas and the finished item alike
    assert shown["deltas"] == set(shown["done"]) and len(shown["done"]) == 1
    assert all(shown["done"])
