"""Per-turn runner overhead against the local Responses server, Tandem vs the reference SDK.

Runs N model round trips (one function tool call per turn, whose output is ``--sizes`` bytes,
then a final message) and prints the client-side overhead per turn: the gap between one
request's answer and the next request's arrival, less nothing the server did (the server's own
handling time is taken out). ``mean`` is over the whole run, ``last 10%`` over the last tenth of
the turns (where the history, and so the body, is largest: a flat runner has both equal).

Contenders: ``tandem`` (the whole history in every body, as for a server that does not store
responses), ``tandem+prev_id`` (``auto_previous_response_id``: only the new items are sent) and,
when ``openai-agents`` is installed (``pip install -e .[bench]``), ``openai-agents`` 0.24 on
the same workload. The reference SDK's cost grows with the history (about 1 s per turn at
200 turns x 20 KB), so it runs only up to ``--reference-max-kb`` KB of history (default 5,000;
``--reference-max-kb 0`` leaves it out).

Targets (issue 15, Done means): overhead per turn at 200 turns x 20 KB under 5 ms, and at
1,000 turns x 200 B under 5 ms, read on the ``last 10%`` column of ``tandem``. ``post floor``
is a bare ``client.post`` of a ready body as large as that run's last one, on the same server
(no runner at all): with full bodies nothing can go below it, so ``last 10% - post floor`` (the
``runner`` column) is what the runner itself adds. Each Tandem figure is the median of
``--repeat`` runs, printed with the best and worst run (the spread on a shared machine).

Usage: ``python -m bench.runner_overhead [--turns 50 200 1000] [--sizes 200 20000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import openai

from tests.support import items
from tests.support.responses_server import ResponsesServer, ScriptedResponse

#: (turns, output bytes) -> target ms per turn, on the ``last 10%`` figure.
TARGETS_MS = {(200, 20_000): 5.0, (1000, 200): 5.0}


def _responder(
    turns: int, server: ResponsesServer, sizes: list[int]
) -> Callable[[dict[str, Any]], ScriptedResponse]:
    state = {"asked": 0}

    def answer(body: dict[str, Any]) -> ScriptedResponse:
        # counted per request, not from the input, so it also serves previous_response_id runs
        done = state["asked"]
        state["asked"] += 1
        # the server records every body: keep only its size, or 1,000 turns x 20 KB would hold
        # ~20 GB in this process and the collector's walks over it would be timed as overhead
        for old in server.requests[len(sizes) : -1]:
            sizes.append(len(old.raw))
            old.raw, old.body = b"", None
        if done < turns:
            call = items.function_call("lookup", {"key": f"k{done}"}, call_id=f"call_{done}")
            return ScriptedResponse(output=[call])
        return ScriptedResponse(output=[items.message("finished")])

    return answer


def _tandem_runner(size: int, *, previous_id: bool) -> Callable[[str, int], Any]:
    async def run(base_url: str, turns: int) -> None:
        from core import Agent, OpenAIResponsesModel, Runner, function_tool

        @function_tool
        def lookup(key: str) -> str:
            """Look a key up."""
            return f"value of {key}: " + "x" * size

        client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
        agent = Agent(
            name="bench",
            instructions="Benchmark.",
            model=OpenAIResponsesModel("bench-model", client),
            tools=[lookup],
        )
        result = await Runner.run(
            agent, "go", max_turns=turns + 5, auto_previous_response_id=previous_id
        )
        assert result.final_output == "finished"
        await client.close()

    return run


def _reference_runner(size: int) -> Callable[[str, int], Any]:
    async def run(base_url: str, turns: int) -> None:
        from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled

        set_tracing_disabled(True)

        @function_tool
        def lookup(key: str) -> str:
            """Look a key up."""
            return f"value of {key}: " + "x" * size

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

    return run


def _transport_floor(body_bytes: int, posts: int = 40) -> float:
    """Ms per round trip for a bare ``client.post`` of a body of ``body_bytes`` bytes, made
    fresh (one copy) before each post, on the same server and client with no runner: the
    floor of issue 15 (one write of the body) plus the HTTP exchange itself.

    The median gap of the second half of ``posts`` posts (a shared machine's stalls would
    otherwise move a mean of a few posts by milliseconds). The answer is taken as parsed JSON
    (``cast_to=object``, as Tandem's runner takes it): building a typed ``Response`` costs
    more than a millisecond and is no part of the transport."""
    from openai._base_client import make_request_options

    filler = max(body_bytes - 60, 0)
    body = json.dumps({"model": "m", "input": [{"role": "user", "content": "x" * filler}]})

    async def post_all(base_url: str) -> None:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
        options = make_request_options(extra_headers={"Content-Type": "application/json"})
        for _ in range(posts):  # a fresh body each time, as a runner makes one per turn
            data = body.encode()
            await client.post("/responses", content=data, options=options, cast_to=object)
            del data
        await client.close()

    with ResponsesServer() as server:
        server.responder = lambda _body: ScriptedResponse(output=[items.message("ok")])
        asyncio.run(post_all(server.base_url))
        requests = server.requests[posts // 2 :]
        return statistics.median(
            (b.received_at - a.received_at - a.handling_s) * 1000
            for a, b in itertools.pairwise(requests)
        )


def _measure(runner: Callable[[str, int], Any], turns: int) -> dict[str, float]:
    """Overhead in ms per turn (whole run and last 10%) and the largest body in KB."""
    with ResponsesServer() as server:
        sizes: list[int] = []
        server.responder = _responder(turns, server, sizes)
        start = time.perf_counter()
        asyncio.run(runner(server.base_url, turns))
        wall = time.perf_counter() - start
        requests = server.requests
        mean = (wall - server.handling_time_s) / len(requests) * 1000
        tail = max(2, len(requests) // 10)
        gaps = [
            (requests[i].received_at - requests[i - 1].received_at - requests[i - 1].handling_s)
            * 1000
            for i in range(len(requests) - tail, len(requests))
        ]
        body_kb = max([*sizes, len(requests[-1].raw)]) / 1000
        return {"mean_ms": mean, "last_ms": statistics.mean(gaps), "body_kb": body_kb}


def _summary(runs: list[dict[str, float]]) -> dict[str, float]:
    """The runs of one contender: the median run's figures, with the spread of ``last_ms``."""
    ordered = sorted(runs, key=lambda r: r["last_ms"])
    middle = ordered[len(ordered) // 2]
    return {
        **middle,
        "last_best_ms": ordered[0]["last_ms"],
        "last_worst_ms": ordered[-1]["last_ms"],
        "runs": len(runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, nargs="+", default=[50, 200, 1000])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 20_000])
    parser.add_argument(
        "--repeat", type=int, default=3, help="Tandem runs per figure (the median is judged)"
    )
    parser.add_argument("--reference-max-kb", type=float, default=5_000)
    parser.add_argument(
        "--reference-max-turns", type=int, default=200, help="longer runs leave the reference out"
    )
    parser.add_argument("--no-prev-id", action="store_true", help="leave tandem+prev_id out")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    try:
        import agents  # noqa: F401

        have_reference = True
    except ImportError:
        have_reference = False
    rows: list[dict[str, Any]] = []
    for size in args.sizes:
        for turns in args.turns:
            contenders: dict[str, Callable[[str, int], Any]] = {
                "tandem": _tandem_runner(size, previous_id=False),
            }
            if not args.no_prev_id:
                contenders["tandem+prev_id"] = _tandem_runner(size, previous_id=True)
            history_kb = turns * (size + 150) / 1000
            if (
                have_reference
                and history_kb <= args.reference_max_kb
                and turns <= args.reference_max_turns
            ):
                contenders["openai-agents"] = _reference_runner(size)
            for name, runner in contenders.items():
                repeat = 1 if name == "openai-agents" else args.repeat  # minutes per run
                runs = [_measure(runner, turns) for _ in range(repeat)]
                target = TARGETS_MS.get((turns, size)) if name == "tandem" else None
                rows.append(
                    {
                        "size": size,
                        "turns": turns,
                        "runner": name,
                        "target_ms": target,
                        **_summary(runs),
                    }
                )
            body = int(rows[-len(contenders)]["body_kb"] * 1000)
            floors = sorted(_transport_floor(body) for _ in range(args.repeat))
            for row in rows[-len(contenders) :]:
                mine = row["runner"] == "tandem"
                row["floor_ms"] = floors[len(floors) // 2] if mine else None
                row["floor_spread_ms"] = [floors[0], floors[-1]] if mine else None
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        "last 10% = mean gap over the last tenth of the turns, median of the runs "
        "[best-worst]; post floor = median of the floor runs [best-worst]"
    )
    print(
        f"{'output':>7} {'turns':>6} {'runner':>15} {'body':>9} {'mean/turn':>10} "
        f"{'last 10%':>10} {'[spread]':>15} {'vs tandem':>9} {'post floor':>10} "
        f"{'[spread]':>13} {'runner':>9}  target"
    )
    ours = {(r["size"], r["turns"]): r for r in rows if r["runner"] == "tandem"}
    for r in rows:
        base = ours[(r["size"], r["turns"])]["last_ms"]
        ratio = "" if r["runner"] == "tandem" else f"{r['last_ms'] / base:8.1f}x"
        target = ""
        if r["target_ms"] is not None:
            verdict = "met" if r["last_ms"] < r["target_ms"] else "MISSED"
            target = f"< {r['target_ms']:.0f} ms: {verdict}"
        spread = f"[{r['last_best_ms']:.2f}-{r['last_worst_ms']:.2f}]" if r["runs"] > 1 else ""
        floor = floor_spread = added = ""
        if r["floor_ms"] is not None:
            floor = f"{r['floor_ms']:7.2f} ms"
            low, high = r["floor_spread_ms"]
            floor_spread = f"[{low:.2f}-{high:.2f}]"
            added = f"{r['last_ms'] - r['floor_ms']:+6.2f} ms"
        print(
            f"{r['size']:>6}B {r['turns']:>6} {r['runner']:>15} {r['body_kb']:>7.0f}KB "
            f"{r['mean_ms']:>7.2f} ms {r['last_ms']:>7.2f} ms {spread:>15} {ratio:>9} "
            f"{floor:>10} {floor_spread:>13} {added:>9}  {target}"
        )
    if not have_reference:
        print("(openai-agents not installed: pip install -e '.[bench]' for the reference figures)")


if __name__ == "__main__":
    main()
