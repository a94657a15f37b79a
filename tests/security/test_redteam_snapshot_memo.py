"""Attack class: the incremental approval-pause snapshot (``SnapshotMemo`` -> ``SessionJournal``)
writing a secret, a stale value or half a state into the journal (Trust I; issue 15, Build 3).

A hostile model picks what its items hold (secret-shaped strings in values and in keys, lone
surrogates, equal-looking values of another JSON type); an unlucky user registers a key after
an item was stored, edits items between pauses, shares objects between sessions, fills the
disk or kills Tandem mid-save. The promises: no secret pattern or registered value reaches the
journal file's bytes; what ``load_run_state`` returns is ``state.to_json()`` as JSON text at
the moment of the pause (byte for byte after a JSON round trip); a failed or killed save leaves
the previous state whole; a restored state resumes with its approvals as before.
"""

from __future__ import annotations

import copy
import gc
import json
import math
import signal
import sqlite3
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from core import Agent, Runner, RunState
from core.context import RunContextWrapper
from core.context_window.state import CompactionRecord, ContextState
from core.items import ModelResponse, ToolApprovalItem, ToolCallItem, ToolCallOutputItem
from core.redaction import register_secret
from core.run_state_snapshot import FrozenJson, SnapshotMemo
from harnesses.sessions import JournalError, SessionJournal
from tests.core import approval_agent
from tests.support import items

ROOT = Path(__file__).resolve().parents[2]
AGENT: Agent[Any] = Agent(name="main")
SK = "sk-proj-" + "Zr8" * 12  # a provider key shape (core/_redaction_shapes.py)
GHP = "ghp_" + "a1B2c3D4e5" * 4  # a GitHub token shape
LATE = "late-registered-Vq93kLm2"  # a literal value, registered after it was stored


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _raw(journal: SessionJournal) -> bytes:
    """The journal's bytes on disk (database and WAL), as an attacker reading the file sees."""
    return b"".join(p.read_bytes() for p in journal.path.parent.glob(journal.path.name + "*"))


def _leaks(journal: SessionJournal, *secrets: str) -> list[str]:
    raw = _raw(journal)
    found = [s for s in secrets if s.encode() in raw]
    # JSON text escapes nothing in these secrets, but look for the escaped form too
    return found + [s for s in secrets if json.dumps(s)[1:-1].encode() in raw and s not in found]


def _call(call_id: str, arguments: str = "{}", name: str = "shell") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def _out(call_id: str, output: Any) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _paused(history: list[dict[str, Any]], *, output: Any = "done", args: str = "{}") -> RunState:
    """A run paused for approval of call ``p`` after call ``c1`` ran (as ``core._loop`` builds
    it: the input deep-copied, the items shared with the model response)."""
    call, pending = _call("c1", args), _call("p", args)
    out = _out("c1", output if isinstance(output, str) else "see output")
    return RunState(
        current_agent=AGENT,
        original_input=copy.deepcopy(history),
        context=RunContextWrapper(context=None),
        generated_items=[
            ToolCallItem(agent=AGENT, raw_item=call),
            ToolCallOutputItem(agent=AGENT, raw_item=out, output=output),
            ToolApprovalItem(agent=AGENT, raw_item=pending, tool_name="shell", arguments=args),
        ],
        model_responses=[ModelResponse(output=[call, pending], usage=None, response_id="r1")],
        last_model_output=[pending],
        current_turn=1,
    )


def _history(n: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"task {i}: " + "x" * 300} for i in range(n)]


@pytest.fixture
def journal(tmp_path: Path):
    opened = SessionJournal(tmp_path / "j" / "sessions.sqlite3")
    yield opened
    opened.close()


def _loaded(journal: SessionJournal, sid: str) -> str:
    text = journal.load_run_state(sid)
    assert text is not None
    return _text(json.loads(text))


# -- secrets that might slip past the memo ------------------------------------------------------


def test_key_registered_between_pauses_is_scrubbed_from_items_stored_before(journal, tmp_path):
    """Generation change: the frozen items carry notes of the earlier save; the key registered
    afterwards must still be scrubbed from the next snapshot's copy of them."""
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    history = [*_history(3), {"role": "user", "content": f"my deploy id is {LATE}"}]
    state = _paused(history)
    journal.save_run_state(sid, memo.snapshot(state))
    assert _leaks(journal, LATE) == [LATE]  # in principle: not yet a secret, so it is stored
    register_secret(LATE, source="test")
    journal.save_run_state(sid, memo.snapshot(state))  # the same frozen objects, noted before
    assert LATE not in (journal.load_run_state(sid) or "")


def test_key_registered_while_a_snapshot_waits_in_the_writer_queue_is_scrubbed(journal, tmp_path):
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    history = [{"role": "user", "content": f"the key is {LATE}"}]
    journal.save_run_state(sid, memo.snapshot(_paused(history)))
    queued = memo.snapshot(_paused(history))  # frozen items noted by the save above
    register_secret(LATE, source="test")
    journal.save_state_nowait(sid, queued, "awaiting_approval").result(10)
    assert LATE not in (journal.load_run_state(sid) or "")


def test_a_secret_put_into_nested_content_after_freezing_is_still_scrubbed(journal, tmp_path):
    """The frozen item shares its nested lists; a secret written into them in place after the
    item was frozen (its carried JSON text is stale) is scrubbed from what is stored."""
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    message = {"role": "user", "content": [{"type": "input_text", "text": "hello"}]}
    state = _paused([message])
    snap = memo.snapshot(state)
    frozen = snap["original_input"][0]
    assert isinstance(frozen, FrozenJson) and SK not in (frozen.json_text or "")
    frozen["content"].append({"type": "input_text", "text": f"key {SK}"})  # in place
    assert SK in _text(snap)  # in principle: the value handed to the journal holds it
    journal.save_run_state(sid, snap)
    assert _leaks(journal, SK) == []


def test_a_secret_put_into_a_stored_frozen_item_in_place_is_never_written(journal, tmp_path):
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    state = _paused([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}])
    journal.save_run_state(sid, memo.snapshot(state))
    state.original_input[0]["content"].append({"type": "input_text", "text": GHP})
    journal.save_run_state(sid, memo.snapshot(state))
    assert _leaks(journal, GHP) == []


class _Opaque:
    """A tool output JSON cannot hold: the run state keeps ``str()`` of it."""

    def __str__(self) -> str:
        return f"<Opaque holding {SK}>"


def _with(where: str) -> RunState:
    """A paused state carrying the secret ``SK`` at ``where``."""
    history = _history(2)
    args = "{}"
    output: Any = "ok"
    if where == "input-value":
        history.append({"role": "user", "content": f"use {SK}"})
    elif where == "input-key":
        history.append({"role": "user", "content": "hi", SK: "x"})
    elif where == "arguments":
        args = json.dumps({"cmd": f"curl -H 'Authorization: Bearer {SK}'"})
    elif where == "tool-output-text":
        output = f"OPENAI_API_KEY={SK}"
    elif where == "tool-output-json-key":
        output = {SK: "value"}
    elif where == "tool-output-json-value":
        output = {"env": [f"KEY={SK}"]}
    elif where == "tool-output-not-json":
        output = _Opaque()
    state = _paused(history, output=output, args=args)
    if where == "response-id":
        state.model_responses[0] = ModelResponse(output=[], usage=None, response_id=f"r-{SK}")
    elif where == "approval-tool-name":
        state.generated_items[2].tool_name = f"t-{SK}"
    elif where == "previous-response-id":
        state.previous_response_id = SK
    elif where == "model-response-output":
        state.model_responses[0].output.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": f"here: {SK}"}],
            }
        )
    elif where == "last-model-output":
        state.last_model_output = [{"type": "reasoning", "summary": [{"text": SK}]}]
    elif where == "context-state":
        prefix = [{"role": "user", "content": f"summary mentions {SK}"}]
        state.context_state = ContextState(
            compactions=[CompactionRecord("local", "manual", 1, prefix, summary=f"it used {SK}")]
        )
    elif where == "run-context":
        state.context.context = {"notes": f"token {SK}"}
    elif where == "run-context-key":
        state.context.context = {SK: 1}
    elif where == "nested-sub-agent-state":
        inner = _paused([{"role": "user", "content": f"sub task with {SK}"}])
        state.context._nested_runs["c1"] = inner
    return state


PLACES = [
    "response-id",
    "approval-tool-name",
    "previous-response-id",
    "input-value",
    "input-key",
    "arguments",
    "tool-output-text",
    "tool-output-json-key",
    "tool-output-json-value",
    "tool-output-not-json",
    "model-response-output",
    "last-model-output",
    "context-state",
    "run-context",
    "run-context-key",
    "nested-sub-agent-state",
]


@pytest.mark.parametrize("form", ["memo", "memo-second-pause", "text"])
@pytest.mark.parametrize("where", PLACES)
def test_a_secret_shape_anywhere_in_the_state_never_reaches_the_journal(
    journal, tmp_path, where, form
):
    state = _with(where)
    assert SK in state.to_string()  # in principle: the state holds the secret there
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    if form == "memo-second-pause":
        journal.save_run_state(sid, memo.snapshot(state))
    journal.save_run_state(sid, state.to_string() if form == "text" else memo.snapshot(state))
    assert _leaks(journal, SK) == []
    assert json.loads(journal.load_run_state(sid) or "{}")["$schemaVersion"]


def test_one_memo_two_sessions_and_two_journals_each_scrub_with_their_own_secrets(tmp_path):
    """One frozen object in two sessions of one journal and in a journal that knows a literal
    secret (its configured key) the first does not: neither reuses the other's blob."""
    configured = "gw-configured-Kx81qq"
    plain = SessionJournal(tmp_path / "a" / "s.sqlite3")
    keyed = SessionJournal(tmp_path / "b" / "s.sqlite3", extra_secrets=[configured])
    try:
        memo = SnapshotMemo()
        state = _paused([{"role": "user", "content": f"gateway {configured}"}])
        snap = memo.snapshot(state)
        s1, s2 = plain.create_session(tmp_path, "1"), plain.create_session(tmp_path, "2")
        k1 = keyed.create_session(tmp_path, "k")
        plain.save_run_state(s1, snap)
        plain.save_run_state(s2, memo.snapshot(state))  # the same objects, noted for s1
        keyed.save_run_state(k1, memo.snapshot(state))
        assert configured in (plain.load_run_state(s2) or "")  # not a secret to that journal
        assert configured not in (keyed.load_run_state(k1) or "")
        assert _leaks(keyed, configured) == []
        with sqlite3.connect(plain.path) as db:  # s2 got blobs of its own (it loads alone)
            owners = {r[0] for r in db.execute("SELECT DISTINCT session_id FROM blobs")}
        assert owners == {s1, s2}
        plain.delete_session(s1)
        assert _loaded(plain, s2) == _text(state.to_json())
    finally:
        plain.close()
        keyed.close()


def test_a_frozen_item_journaled_as_an_event_is_still_scrubbed_by_key(journal, tmp_path):
    """Run states keep secret-named keys' values (keys are structural there); the same frozen
    object appended as an event must get the event's key scrubbing, not the state's blob."""
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    item = {"type": "message", "role": "user", "content": "hi", "api_key": "plainvalue-7781"}
    snap = memo.snapshot(_paused([item]))
    journal.save_run_state(sid, snap)
    journal.append(sid, "item", {"item": snap["original_input"][0]})
    (event,) = journal.events(sid)
    assert event.payload["item"]["api_key"] == "[REDACTED]"


# -- stale or wrong state -----------------------------------------------------------------------

EDITS = {
    "int-to-bool": lambda s: s.original_input[0].__setitem__("n", True),
    "int-to-float": lambda s: s.original_input[0].__setitem__("n", 1.0),
    "zero-to-minus-zero": lambda s: s.original_input[0].__setitem__("z", -0.0),
    "nan": lambda s: s.original_input[0].__setitem__("z", math.nan),
    "big-int": lambda s: s.original_input[0].__setitem__("n", 2**70 + 1),
    "key-order": lambda s: s.original_input.__setitem__(
        0, dict(reversed(list(s.original_input[0].items())))
    ),
    "nfc-to-nfd": lambda s: s.original_input[0].__setitem__(
        "content", unicodedata.normalize("NFD", s.original_input[0]["content"])
    ),
    "equal-copy": lambda s: s.original_input.__setitem__(0, copy.deepcopy(s.original_input[0])),
    "nested-list-replaced": lambda s: s.original_input[1].__setitem__("content", [{"t": "b"}]),
    "item-removed": lambda s: s.original_input.pop(0),
    "item-added": lambda s: s.original_input.append({"role": "user", "content": "more"}),
    "tool-output-1-to-true": lambda s: setattr(s.generated_items[1], "output", True),
    "tool-output-replaced": lambda s: setattr(s.generated_items[1], "output", "other"),
    "arguments-replaced": lambda s: setattr(s.generated_items[2], "arguments", '{"x":1}'),
    "usage-replaced": lambda s: setattr(s.model_responses[0], "usage", {"input_tokens": 3}),
    "response-output-grown": lambda s: s.model_responses[0].output.append(_call("q")),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edit_between_pauses_is_what_loads(journal, tmp_path, edit):
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    history = [
        {"role": "user", "content": "caf\u00e9 na\u00efve", "n": 1, "z": 0.0},
        {"role": "user", "content": [{"t": "a"}]},
    ]
    state = _paused(history, output=1)
    journal.save_run_state(sid, memo.snapshot(state))
    assert _loaded(journal, sid) == _text(state.to_json())
    before = _text(state.to_json())
    EDITS[edit](state)
    assert _text(state.to_json()) != before or edit == "equal-copy"  # the edit is visible
    journal.save_run_state(sid, memo.snapshot(state))
    assert _loaded(journal, sid) == _text(state.to_json())


def test_an_item_changed_in_place_after_freezing_never_stands_for_another_item(journal, tmp_path):
    """Items are not changed in place once made (the runner's convention); if one is anyway,
    after it was frozen, its carried JSON text is stale. The blob stored under that text's
    digest must be the text's content: an untouched item equal to the original, journaled
    later, must load as itself, not as the changed one."""
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    original = {"role": "user", "content": [{"type": "input_text", "text": "rm -rf build"}]}
    state = _paused([copy.deepcopy(original)])
    snap = memo.snapshot(state)
    snap["original_input"][0]["content"][0]["text"] = "rm -rf ~"  # in place, after freezing
    journal.save_run_state(sid, snap)
    journal.append(sid, "item", {"item": copy.deepcopy(original)})
    assert journal.events(sid)[0].payload["item"] == original
    later = _paused([copy.deepcopy(original)])
    journal.save_run_state(sid, SnapshotMemo().snapshot(later))
    assert _loaded(journal, sid) == _text(later.to_json())


@pytest.mark.parametrize("form", ["memo", "text"])
def test_a_non_string_key_loads_as_json_text_has_it(journal, tmp_path, form):
    """A tool's dict output keyed by ``True``/``None``/``1`` (code, not the model): JSON text
    spells the keys ``true``/``null``/``1``; the journal must load what ``to_json`` text says."""
    sid = journal.create_session(tmp_path, "t")
    state = _paused([{"role": "user", "content": "x", True: 1, None: 2, 3: 4}], output={True: "a"})
    value = SnapshotMemo().snapshot(state) if form == "memo" else state.to_string()
    journal.save_run_state(sid, value)
    assert _loaded(journal, sid) == _text(json.loads(state.to_string()))


def test_equal_looking_values_of_other_types_in_two_items_stay_apart(journal, tmp_path):
    sid = journal.create_session(tmp_path, "t")
    values = [1, True, 1.0, 0.0, -0.0, "1", None, [1], {"1": 1}, 2**64, 2**64 + 1.0]
    history = [{"role": "user", "v": v} for v in values]
    state = _paused(history)
    memo = SnapshotMemo()
    journal.save_run_state(sid, memo.snapshot(state))
    journal.save_run_state(sid, memo.snapshot(state))
    assert _loaded(journal, sid) == _text(state.to_json())
    loaded = json.loads(journal.load_run_state(sid) or "{}")
    assert [type(i["v"]) for i in loaded["original_input"]] == [type(v) for v in values]


def test_a_freed_items_id_reused_by_another_object_is_not_taken_for_it(journal, tmp_path):
    """CPython hands a freed dict's address to the next one; the memo must not take the new
    item (same id, other content) for the one it froze."""
    reused = 0
    for _ in range(20):  # in principle: ids of freed dicts come back
        a = {"k": 1}
        ident = id(a)
        del a
        reused += id({"k": 2}) == ident
    assert reused > 0
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    state = _paused([{"role": "user", "content": "first"}])
    journal.save_run_state(sid, memo.snapshot(state))
    for round_ in range(5):
        frozen_id = id(state.original_input[0])
        state.original_input = [{"role": "user", "content": f"second {round_}"}]
        gc.collect()
        fresh = [{"role": "user", "content": f"second {round_}"} for _ in range(2000)]
        assert frozen_id not in {id(d) for d in fresh}  # the memo keeps what it froze alive
        del fresh
        journal.save_run_state(sid, memo.snapshot(state))
        assert _loaded(journal, sid) == _text(state.to_json())


def test_surrogates_in_model_text_do_not_lose_the_state_or_the_events(journal, tmp_path):
    """A hostile model's JSON may carry a lone surrogate escape (``"\\ud800"``): Python keeps
    it, UTF-8 cannot; the journal must still store the state and the event, losslessly."""
    sid = journal.create_session(tmp_path, "t")
    odd = "a\ud800b \udfff \U0001f600"
    state = _paused([{"role": "user", "content": odd}, {"role": "user", odd: "key"}])
    journal.save_run_state(sid, SnapshotMemo().snapshot(state))
    assert _loaded(journal, sid) == _text(state.to_json())
    journal.append(sid, "item", {"item": {"type": "message", "content": odd}})
    assert journal.events(sid)[0].payload["item"]["content"] == odd


# -- failure mid-save: rollback, crash ----------------------------------------------------------


@pytest.mark.parametrize("fails", ["blob-insert", "state-update"])
def test_a_save_failing_mid_transaction_leaves_the_previous_state_whole(journal, tmp_path, fails):
    """Disk full, simulated by a trigger: after some new blobs went in (or all of them, when
    the row update fails), the save rolls back; the previous state loads whole, nothing is
    noted on the frozen items, and the retry of the same snapshot stores it whole."""
    sid = journal.create_session(tmp_path, "t")
    memo = SnapshotMemo()
    state = _paused(_history(5))
    journal.save_run_state(sid, memo.snapshot(state))
    before = _loaded(journal, sid)
    state.original_input.extend(_history(30)[5:])
    snap = memo.snapshot(state)
    with sqlite3.connect(journal.path) as db:
        if fails == "blob-insert":
            limit = db.execute("SELECT count(*) FROM blobs").fetchone()[0] + 10
            db.execute(
                f"CREATE TRIGGER full BEFORE INSERT ON blobs WHEN (SELECT count(*) FROM blobs)"
                f" >= {limit} BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
            )
        else:
            db.execute(
                "CREATE TRIGGER full BEFORE UPDATE OF run_state_json ON sessions"
                " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
            )
    with pytest.raises(JournalError, match="disk is full"):
        journal.save_run_state(sid, snap)
    assert _loaded(journal, sid) == before
    assert all(not i.memo for i in snap["original_input"][5:])
    with sqlite3.connect(journal.path) as db:
        db.execute("DROP TRIGGER full")
    journal.save_run_state(sid, snap)
    assert _loaded(journal, sid) == _text(state.to_json())


_CHILD = r"""
import sys
from tests.security.test_redteam_snapshot_memo import _crash_states
from core.run_state_snapshot import SnapshotMemo
from harnesses.sessions import SessionJournal
journal = SessionJournal(sys.argv[1])
memo = SnapshotMemo()
store = journal._blobs._store
stored = [0]
def counting(*args, **kwargs):  # says when a save is halfway through writing its blobs
    stored[0] += 1
    if stored[0] == 20:
        print(f"mid {n}", flush=True)
        if n == int(sys.argv[3]):
            sys.stdin.readline()  # held here, transaction open, until the parent kills it
    return store(*args, **kwargs)
journal._blobs._store = counting
for n, state in enumerate(_crash_states(), 1):
    snap = memo.snapshot(state)
    stored[0] = 0
    journal.save_run_state(sys.argv[2], snap)
    print(f"saved {n}", flush=True)
"""


def _crash_states(count: int = 400) -> Any:
    """States that each add 40 new items of 4 KB to the history (a save writes 160 KB)."""
    history: list[dict[str, Any]] = []
    for n in range(count):
        history.extend({"role": "user", "content": f"{n}.{i} " + "y" * 4000} for i in range(40))
        yield _paused(history)


def test_killing_tandem_mid_save_leaves_one_whole_state(journal, tmp_path):
    sid = journal.create_session(tmp_path, "t")
    journal.close()
    texts = {n: _text(s.to_json()) for n, s in enumerate(_crash_states(12), 1)}
    for kill_after in (2, 5, 9):
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(journal.path), sid, str(kill_after)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdout is not None
            for line in child.stdout:  # bounded: the child prints two lines per save
                if line.strip() == f"mid {kill_after}":
                    child.send_signal(signal.SIGKILL)  # mid-save: some of its blobs written
                    break
        finally:
            child.kill()
            child.wait(30)
            for pipe in (child.stdin, child.stdout):
                if pipe is not None:
                    pipe.close()
        assert child.returncode == -signal.SIGKILL
        reopened = SessionJournal(journal.path)
        try:
            loaded = _loaded(reopened, sid)
        finally:
            reopened.close()
        assert loaded == texts[kill_after - 1]  # the previous state, whole
        with sqlite3.connect(journal.path) as db:  # and none of the killed save's blobs
            (count,) = db.execute(
                "SELECT count(*) FROM blobs WHERE json LIKE ?",
                (f'%"content": "{kill_after - 1}.%',),
            ).fetchone()
        assert count == 0


# -- approvals: what the pause holds, and resume ------------------------------------------------


@pytest.mark.parametrize("decision", ["approve", "reject", "approve-always"])
def test_a_decision_taken_after_the_pause_is_not_in_the_queued_snapshot(
    journal, tmp_path, decision
):
    """The desktop queues the pause's snapshot and asks the user; the writer may run after
    the answer. The journal must hold the state of the pause, not the pause plus the answer
    (the text form, built at the pause, never could)."""
    sid = journal.create_session(tmp_path, "t")
    state = _paused(_history(2))
    earlier = ToolApprovalItem(agent=AGENT, raw_item=_call("c0"), tool_name="shell")
    state.approve(earlier)  # a call of the same tool approved earlier in this run
    state.reject(ToolApprovalItem(agent=AGENT, raw_item=_call("c00"), tool_name="shell"))
    at_pause = state.to_string()
    snap = SnapshotMemo().snapshot(state)
    (pending,) = state.get_interruptions()
    if decision == "reject":
        state.reject(pending, rejection_message="no")
    else:
        state.approve(pending, always_approve=decision == "approve-always")
    assert _text(state.to_json()) != _text(json.loads(at_pause))  # the answer changed the state
    journal.save_state_nowait(sid, snap, "awaiting_approval").result(10)
    assert _loaded(journal, sid) == _text(json.loads(at_pause))


async def test_a_restored_memo_snapshot_resumes_with_its_approvals_as_before(
    responses_server, tmp_path
):
    """A real run paused twice (c1 approved at the first pause, c2 waiting at the second),
    each pause snapshotted through one memo into the journal; the restored state asks for c2
    only, keeps c1's approval, and resumes as the in-memory state would."""
    responses_server.enqueue([items.function_call("delete_file", {"path": "a.log"}, "c1")])
    responses_server.enqueue([items.function_call("delete_file", {"path": "b.log"}, "c2")])
    responses_server.enqueue([items.message("done")])
    approval_agent.EXECUTED.clear()
    agent = approval_agent.build_agent(responses_server.base_url)
    journal = SessionJournal(tmp_path / "s.sqlite3")
    try:
        sid = journal.create_session(tmp_path, "t")
        memo = SnapshotMemo()
        first = await Runner.run(agent, "clean")
        state = first.to_state()
        journal.save_run_state(sid, memo.snapshot(state))
        (c1,) = state.get_interruptions()
        state.approve(c1)
        second = await Runner.run(agent, state)
        state = second.to_state()
        at_pause = _text(state.to_json())
        journal.save_run_state(sid, memo.snapshot(state))
        assert _loaded(journal, sid) == at_pause
        restored = await RunState.from_string(agent, journal.load_run_state(sid) or "")
    finally:
        journal.close()
    assert [i.call_id for i in restored.get_interruptions()] == ["c2"]
    assert _text(restored.to_json()) == at_pause
    assert restored.context._approvals["delete_file"].approved == ["c1"]
    (c2,) = restored.get_interruptions()
    restored.reject(c2, rejection_message="not b")
    final = await Runner.run(agent, restored)
    assert final.final_output == "done"
    assert approval_agent.EXECUTED == ["delete_file:a.log"]  # b.log was rejected, never ran
    sent = responses_server.requests[-1].body["input"]
    assert [i["output"] for i in sent if i.get("type") == "function_call_output"][-1] == "not b"
