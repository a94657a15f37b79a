"""A non-streamed answer is read as the JSON the server sent (issue 15, item 4).

``OpenAIResponsesModel.get_response`` asks the real ``openai`` client for the parsed JSON
(``cast_to=object``) instead of a typed ``Response`` that would only be dumped back to dicts:
the items must reach the runner exactly as sent, and an answer that is not a Responses object is
refused (model output is untrusted input).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from core import ModelBehaviorError, OpenAIResponsesModel
from core.models.history import InputHistory
from core.models.interface import ModelRequest
from core.usage import Usage
from tests.support import items


def _request() -> ModelRequest:
    return ModelRequest(
        model=None, instructions="hi", input=InputHistory([{"role": "user", "content": "go"}])
    )


def _odd_items() -> list[dict[str, Any]]:
    call = items.function_call("lookup", {"key": "k1"}, call_id="call_1")
    call["x_vendor"] = {"nested": [1, None, "é"]}  # a field no typed model knows
    message = items.message("done")
    message["content"][0]["annotations"] = [{"type": "url_citation", "url": "https://e.x"}]
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "abc"}
    return [reasoning, call, message]


async def test_items_reach_the_runner_exactly_as_sent(responses_server, openai_client):
    sent = _odd_items()
    usage = items.usage(7, 3)
    responses_server.enqueue(sent, usage=usage, id="resp_exact")
    model = OpenAIResponsesModel("test-model", openai_client)
    answer = await model.get_response(_request())
    assert answer.output == sent
    assert json.dumps(answer.output) == json.dumps(sent)  # same keys, same order
    assert answer.response_id == "resp_exact"
    counted = Usage.from_response_usage(answer.usage)
    assert (counted.input_tokens, counted.output_tokens) == (7, 3)


@pytest.mark.parametrize(
    ("output", "needle"),
    [
        (["not an item"], "unreadable output"),
        ([[1, 2]], "unreadable output"),
    ],
    ids=["string-item", "array-item"],
)
async def test_an_unreadable_answer_is_refused(responses_server, openai_client, output, needle):
    responses_server.enqueue(output)
    model = OpenAIResponsesModel("test-model", openai_client)
    with pytest.raises(ModelBehaviorError, match=needle):
        await model.get_response(_request())


async def test_a_failed_status_names_the_servers_error(responses_server, openai_client):
    responses_server.enqueue([], terminal="failed", error_message="boom")
    model = OpenAIResponsesModel("test-model", openai_client)
    with pytest.raises(ModelBehaviorError, match=r"ended with status failed.*boom"):
        await model.get_response(_request())


async def test_an_incomplete_status_is_refused(responses_server, openai_client):
    responses_server.enqueue([], terminal="incomplete")
    model = OpenAIResponsesModel("test-model", openai_client)
    with pytest.raises(ModelBehaviorError, match=r"incomplete.*max_output_tokens"):
        await model.get_response(_request())
