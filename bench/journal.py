"""Journal cost over a growing session: per event, at a run's end, at an approval pause, on disk.

Run ``.venv/bin/python -m bench.journal`` (``--runs 100``, ``--outputs 6``, ``--kb 30``,
``--baseline-runs 20``, ``--reopen-runs 1000``). Each simulated run journals what the
controller journals (issue 15, Build item 3): a ``user_message``, ``--outputs`` tool calls
and their outputs of ``--kb`` KB each and a final message as stream events (each holding its
item), one approval pause that saves the run state (``RunState.to_json()`` shape: the whole
history as ``original_input`` plus the run's generated items and model responses), and the
run's end, a ``run_finished`` marker with the run's items. Items are realistic text (pytest,
git log, source lines) so redaction does real work.

Prints, per decile of runs: mean per-event cost (ms), the end-of-run cost (ms), the pause's
run-state save (ms) and the database size (file + WAL) against the items' size. The
``baseline`` rows replay the previous design (the whole scrubbed history written at every
run's end and every pause, no shared items) for ``--baseline-runs`` runs: the peer. Then a
``--reopen-runs`` session (small items) is reopened: open, history rebuilt from the run
markers, latest page (200 events) read, and, for reference, every event read. Last, a 2 MB
tool output: its scrub throughput (MB/s), and the longest gap of an asyncio loop ticking every
millisecond (the GUI loop's stand-in) while ``append_nowait`` journals it on the writer
thread, beside the same scrub run on the loop itself (what the app did before).

Targets (issue 15, Done means): DB size under 2x the items' size after 100 runs; end-of-run
cost independent of the run count (last decile / first decile near 1); reopening a 1,000-run
session shows its latest page in under 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.redaction import redact, redact_text
from harnesses.sessions import SessionJournal
from harnesses.sessions.history import HISTORY_KINDS, rebuild_history

TARGET_SIZE_RATIO = 2.0
TARGET_END_RATIO = 1.5  # last decile / first decile of the end-of-run cost ("independent")
TARGET_REOPEN_S = 1.0
_LINES = (
    "tests/test_api.py::test_create_user PASSED                                  [ 12%]",
    "commit 3f2a9c1d4e5b6a7980f1e2d3c4b5a6978f0e1d2c",
    "Author: Dev Person <dev@example.invalid>",
    "    def handle(self, request: Request) -> Response:",
    "        return self._router.dispatch(request.path, request.method)",
    "-rw-r--r--  1 dev  staff   4096 Jan  1 12:00 README.md",
    '{"id": 17, "name": "widget", "tags": ["a", "b"], "price": 12.5}',
)


def _text(size: int, rng: random.Random) -> str:
    out: list[str] = []
    total = 0
    while total < size:
        line = f"{rng.choice(_LINES)} {rng.randrange(1 << 30)}"
        out.append(line)
        total += len(line) + 1
    return "\n".join(out)[:size]


def _run_items(n: int, outputs: int, size: int, rng: random.Random) -> list[dict[str, Any]]:
    """One run's items: user message, calls and outputs, the final message."""
    items: list[dict[str, Any]] = [{"role": "user", "content": f"task {n}: fix the failing test"}]
    for k in range(outputs):
        call_id = f"call_{n}_{k}"
        items.append(
            {
                "type": "function_call",
                "call_id": call_id,
                "name": "run_tests",
                "arguments": json.dumps({"path": f"tests/test_{k}.py"}),
            }
        )
        items.append(
            {"type": "function_call_output", "call_id": call_id, "output": _text(size, rng)}
        )
    items.append(
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": f"run {n} done"}],
        }
    )
    return items


def _state(history: list[dict[str, Any]], generated: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "$schemaVersion": "1.0",
        "current_turn": 3,
        "original_input": history,
        "generated_items": [{"type": "tool_call_item", "raw_item": item} for item in generated],
        "model_responses": [{"output": generated[-2:], "usage": {}, "response_id": "r"}],
        "context": {"usage": {}, "approvals": {}},
    }


def _db_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def _journal_runs(tmp: Path, runs: int, outputs: int, size: int) -> None:
    rng = random.Random(15)
    path = tmp / "journal.sqlite3"
    journal = SessionJournal(path)
    sid = journal.create_session(tmp, "bench")
    history: list[dict[str, Any]] = []
    items_bytes = 0
    rows: list[tuple[int, float, float, float, int]] = []
    per_event: list[float] = []
    for n in range(1, runs + 1):
        added = _run_items(n, outputs, size, rng)
        items_bytes += sum(len(json.dumps(i, ensure_ascii=False)) for i in added)
        times: list[float] = []
        start = time.perf_counter()
        journal.append(sid, "user_message", {"text": added[0]["content"]})
        times.append(_ms(start))
        pause = 0.0
        for k, item in enumerate(added[1:], 1):
            kind = {"function_call": "tool_called", "message": "message_output_created"}.get(
                str(item.get("type")), "tool_output"
            )
            start = time.perf_counter()
            journal.append(sid, kind, {"item": item})
            times.append(_ms(start))
            if k == len(added) // 2:  # an approval pause halfway through the run
                start = time.perf_counter()
                journal.save_run_state(
                    sid, _state([*history, added[0]], added[1 : k + 1]) | {"current_turn": n}
                )
                pause = _ms(start)
                journal.save_run_state(sid, None)
        start = time.perf_counter()
        journal.append(sid, "run_finished", {"final_output": "done", "items": added})
        end = _ms(start)
        history.extend(added)
        per_event.extend(times)
        rows.append((n, sum(times) / len(times), end, pause, _db_size(path)))
    journal.close()
    _print_rows("tandem (items stored once)", rows, items_bytes, runs)
    firsts = [r[2] for r in rows[: max(1, runs // 10)]]
    lasts = [r[2] for r in rows[-max(1, runs // 10) :]]
    ratio = (sum(lasts) / len(lasts)) / max(sum(firsts) / len(firsts), 1e-9)
    size_ratio = rows[-1][4] / items_bytes
    print(
        f"  after {runs} runs: DB {rows[-1][4] / 1e6:.1f} MB for {items_bytes / 1e6:.1f} MB of "
        f"items = {size_ratio:.2f}x (target < {TARGET_SIZE_RATIO}x: "
        f"{'met' if size_ratio < TARGET_SIZE_RATIO else 'NOT met'})"
    )
    print(
        f"  end-of-run cost, last decile / first decile: {ratio:.2f} (target < "
        f"{TARGET_END_RATIO}: {'met' if ratio < TARGET_END_RATIO else 'NOT met'}); "
        f"per event: median {sorted(per_event)[len(per_event) // 2]:.2f} ms, "
        f"max {max(per_event):.1f} ms"
    )


def _baseline_runs(tmp: Path, runs: int, outputs: int, size: int) -> None:
    """The previous design: the whole scrubbed history at each run's end and pause."""
    rng = random.Random(15)
    path = tmp / "baseline.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, kind TEXT, payload_json TEXT)")
    db.execute("CREATE TABLE state (id INTEGER PRIMARY KEY, json TEXT)")
    history: list[dict[str, Any]] = []
    items_bytes = 0
    rows: list[tuple[int, float, float, float, int]] = []

    def write(kind: str, payload: Any) -> None:
        db.execute(
            "INSERT INTO events (kind, payload_json) VALUES (?, ?)",
            (kind, json.dumps(redact(payload), ensure_ascii=False)),
        )

    for n in range(1, runs + 1):
        added = _run_items(n, outputs, size, rng)
        items_bytes += sum(len(json.dumps(i, ensure_ascii=False)) for i in added)
        times: list[float] = []
        for item in added:
            start = time.perf_counter()
            write("event", {"item": item})
            times.append(_ms(start))
        start = time.perf_counter()
        text = json.dumps(_state([*history, added[0]], added[1:]), indent=2, ensure_ascii=False)
        data = json.dumps(redact(json.loads(text), by_key=False), ensure_ascii=False)
        db.execute("INSERT OR REPLACE INTO state (id, json) VALUES (1, ?)", (data,))
        pause = _ms(start)
        history.extend(added)
        start = time.perf_counter()
        write("history", {"items": history})
        end = _ms(start)
        rows.append((n, sum(times) / len(times), end, pause, _db_size(path)))
    db.close()
    _print_rows("baseline (whole history at every end and pause)", rows, items_bytes, runs)


def _print_rows(
    title: str, rows: list[tuple[int, float, float, float, int]], items_bytes: int, runs: int
) -> None:
    print(title)
    print("   run  event ms  end-of-run ms  pause save ms    DB MB  DB/items")
    step = max(1, runs // 10)
    running = 0
    for n, event, end, pause, size in rows:
        running = n
        if n == 1 or n % step == 0 or n == runs:
            share = size / max(1, items_bytes * n / runs)
            print(
                f"  {n:4d}  {event:8.2f}  {end:13.1f}  {pause:13.1f}  {size / 1e6:7.1f}  {share:8.2f}"
            )
    del running


def _reopen(tmp: Path, runs: int) -> None:
    rng = random.Random(7)
    path = tmp / "reopen.sqlite3"
    with SessionJournal(path) as journal:
        sid = journal.create_session(tmp, "long")
        for n in range(1, runs + 1):
            added = _run_items(n, 2, 400, rng)
            journal.append(sid, "user_message", {"text": added[0]["content"]})
            for item in added[1:]:
                journal.append(sid, "tool_output", {"item": item})
            journal.append(sid, "run_finished", {"final_output": "done", "items": added})
    start = time.perf_counter()
    journal = SessionJournal(path)
    opened = time.perf_counter() - start
    history = rebuild_history((e.kind, e.payload) for e in journal.events(sid, kinds=HISTORY_KINDS))
    rebuilt = time.perf_counter() - start
    page = journal.events(sid, last=200)
    shown = time.perf_counter() - start
    t = time.perf_counter()
    every = journal.events(sid)
    full = time.perf_counter() - t
    journal.close()
    print(
        f"reopen a {runs}-run session ({len(every)} events, {len(history)} history items, "
        f"{_db_size(path) / 1e6:.1f} MB):"
    )
    print(
        f"  open {opened * 1000:.0f} ms, + history rebuilt {rebuilt * 1000:.0f} ms, "
        f"+ latest page ({len(page)} events) {shown * 1000:.0f} ms (target < "
        f"{TARGET_REOPEN_S * 1000:.0f} ms: {'met' if shown < TARGET_REOPEN_S else 'NOT met'}); "
        f"reading every event: {full * 1000:.0f} ms"
    )


async def _max_gap(work: Any, tick_s: float = 0.001) -> float:
    """The longest gap (ms) between ticks of this loop while ``work()`` runs."""
    loop = asyncio.get_running_loop()
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(tick_s)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0.02)
    await work(loop)
    await asyncio.sleep(0.02)
    done.set()
    await task
    return max(gaps) * 1000


async def _stall(tmp: Path) -> None:
    rng = random.Random(3)
    output = _text(2_000_000, rng)
    start = time.perf_counter()
    redact_text(output)
    scrub = time.perf_counter() - start
    journal = SessionJournal(tmp / "stall.sqlite3")
    sid = journal.create_session(tmp, "stall")

    async def off_loop(loop: Any) -> None:
        future = journal.append_nowait(sid, "tool_output", {"item": {"output": output}})
        await asyncio.wrap_future(future)

    async def on_loop(loop: Any) -> None:
        json.dumps(redact({"item": {"output": output + " "}}), ensure_ascii=False)

    off = await _max_gap(off_loop)
    on = await _max_gap(on_loop)
    await journal.aclose()
    print(
        f"2 MB tool output: scrubbed at {2 / scrub:.0f} MB/s; longest loop gap while journaled "
        f"on the writer thread {off:.0f} ms (scrubbed on the loop itself: {on:.0f} ms)"
    )


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--outputs", type=int, default=6, help="tool outputs per run")
    parser.add_argument("--kb", type=int, default=30, help="KB per tool output")
    parser.add_argument("--baseline-runs", type=int, default=20)
    parser.add_argument("--reopen-runs", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tandem-bench-journal-") as tmp:
        os.environ.setdefault("XDG_DATA_HOME", str(Path(tmp) / "xdg"))
        _journal_runs(Path(tmp), args.runs, args.outputs, args.kb * 1000)
        if args.baseline_runs:
            _baseline_runs(Path(tmp), args.baseline_runs, args.outputs, args.kb * 1000)
        if args.reopen_runs:
            _reopen(Path(tmp), args.reopen_runs)
        asyncio.run(_stall(Path(tmp)))


if __name__ == "__main__":
    main()
