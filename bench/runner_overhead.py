"""Per-turn runner overhead against the local Responses server, Tandem vs the reference SDK.

Runs N model round trips (a function tool call per turn, then a final message) and prints the
client-side overhead per turn = (wall time - server handling time) / N, for N = 50 and 200.
When ``openai-agents`` is installed (``pip install -e .[bench]``), the same workload runs on
the reference SDK and the ratio is printed.

Usage: ``python -m bench.runner_overhead [--turns 50 200] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import openai

from tests.support import items
from tests.support.responses_server import ResponsesServer, ScriptedResponse


def _responder(turns: int) -> Callable[[dict[str, Any]], ScriptedResponse]:
    def answer(body: dict[str, Any]) -> ScriptedResponse:
        done = sum(1 for i in body.get("input", []) if i.get("type") == "function_call_output")
        if done < turns:
            call = items.function_call("lookup", {"key": f"k{done}"}, call_id=f"call_{done}")
            return ScriptedResponse(output=[call])
        return ScriptedResponse(output=[items.message("finished")])

    return answer


async def _tandem(base_url: str, turns: int) -> None:
    from core import Agent, OpenAIResponsesModel, Runner, function_tool

    @function_tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}: " + "x" * 200

    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    agent = Agent(
        name="bench",
        instructions="Benchmark.",
        model=OpenAIResponsesModel("bench-model", client),
        tools=[lookup],
    )
    result = await Runner.run(agent, "go", max_turns=turns + 5)
    assert result.final_output == "finished"
    await client.close()


async def _reference(base_url: str, turns: int) -> None:
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    @function_tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}: " + "x" * 200

    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    agent = Agent(
        name="bench",
        instructions="Benchmark.",
        model=OpenAIResponsesModel("bench-model", client),
        tools=[lookup],
    )
    result = await Runner.run(agent, "go", max_turns=turns + 5)
    assert result.final_output == "finished"
    await client.close()


def _measure(runner: Callable[[str, int], Any], turns: int) -> tuple[float, float]:
    """(overhead ms per turn over the whole run, overhead ms per turn over the last 10%)."""
    with ResponsesServer() as server:
        server.responder = _responder(turns)
        start = time.perf_counter()
        asyncio.run(runner(server.base_url, turns))
        wall = time.perf_counter() - start
        requests = server.requests
        total = (wall - server.handling_time_s) / len(requests) * 1000
        stamps = [getattr(r, "received_at", None) for r in requests]
        late = total
        if all(s is not None for s in stamps):
            tail = max(2, len(requests) // 10)
            gaps = [
                (stamps[i] - stamps[i - 1] - requests[i - 1].handling_s) * 1000
                for i in range(len(requests) - tail, len(requests))
            ]
            late = statistics.mean(gaps)
        return total, late


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    try:
        import agents  # noqa: F401

        contenders: dict[str, Callable[[str, int], Any]] = {
            "tandem": _tandem,
            "openai-agents": _reference,
        }
    except ImportError:
        contenders = {"tandem": _tandem}
    rows: dict[str, dict[str, Any]] = {}
    for turns in args.turns:
        for name, runner in contenders.items():
            runs = [_measure(runner, turns) for _ in range(args.repeat)]
            rows.setdefault(str(turns), {})[name] = {
                "per_turn_ms": min(r[0] for r in runs),
                "last_turns_ms": min(r[1] for r in runs),
            }
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'turns':>6} {'runner':>14} {'overhead/turn':>14} {'last 10%/turn':>14} {'ratio':>8}")
    for turns, by_name in rows.items():
        ours = by_name["tandem"]["per_turn_ms"]
        for name, fig in by_name.items():
            ratio = f"{fig['per_turn_ms'] / ours:6.1f}x" if name != "tandem" else "     1x"
            print(
                f"{turns:>6} {name:>14} {fig['per_turn_ms']:>11.2f} ms {fig['last_turns_ms']:>11.2f} ms {ratio:>8}"
            )
    if "openai-agents" not in next(iter(rows.values())):
        print("(openai-agents not installed: pip install -e '.[bench]' for the reference figures)")


if __name__ == "__main__":
    main()
