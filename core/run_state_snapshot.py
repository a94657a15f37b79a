"""Run-state snapshots that cost what is new: each item's JSON is built once (issue 15, Build 3).

At every approval pause the desktop saves the paused :class:`~core.run_state.RunState`. Its
``original_input`` is the session's whole history, so serialising it whole at every pause costs
what the session holds, not what the run added, and one big ``json.dumps`` holds the GIL (and
stalls the GUI) for as long as it runs. :class:`SnapshotMemo` builds a dict equal to
``RunState.to_json()`` whose items are :class:`FrozenJson`: each item is frozen (and its JSON
text built) once, and later snapshots of the same session hand back the same frozen object
for the same item, so a consumer (the session journal) can recognise it by identity and skip
the hashing and scrubbing it did the first time.

The assumption that makes this sound is the one :class:`core.models.history.InputHistory`
already makes: items are created by the runner (or by the caller, for the input) and not
changed in place afterwards. The runner never assigns to an item's fields or a wire dict's
keys after it recorded it (``core/_loop.py``, ``core/_tool_exec.py``); it deep-copies a list
input (``core._loop``), which gives new dicts sharing the same strings. What is checked cheaply
anyway: a wire dict found by identity must still have the same top-level values (same objects,
same order), and a run item the same fields (same objects); a nested in-place change is not
seen (documented, like ``InputHistory``). Items that are not found by identity are looked up by
their content, through a type-tagged structural key that shares the item's strings (Python
caches a string's hash, so the key of a deep copy costs a walk over its containers, not its
text); equal keys mean equal JSON text.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from .items import ModelResponse, RunItem, ToolApprovalItem, ToolCallOutputItem
from .run_state import RunState, _item_json_fields, _usage_json

__all__ = ["FrozenJson", "SnapshotMemo"]

# top-level parts of ``RunState.to_json()`` built from the live state's own containers
_LIVE_PARTS = ("context", "last_model_output")


class FrozenJson(dict[str, Any]):
    """A JSON object (a conversation item) frozen once, with its JSON text built then.

    A real ``dict``: ``json.dumps``, :func:`core.redaction.redact` and every ``Mapping``
    consumer see its keys and values, so a snapshot made of these is a plain JSON-ready value.
    Its keys cannot be set or removed (``TypeError``); nested values are shared with the item
    it was frozen from and, by the runner's convention, never changed.

    Attributes:
        json_text: ``json.dumps(self, ensure_ascii=False)`` as built when frozen, or ``None``
            when not built (a wrapper holding other frozen items: a consumer that needs its
            text serialises it itself).
        memo: notes a consumer keeps about this exact frozen value (the session journal keeps
            the hash of the blob it stored, by session and secrets generation); core never
            reads it.
    """

    __slots__ = ("json_text", "memo")

    def __init__(self, value: Mapping[str, Any], json_text: str | None = None) -> None:
        super().__init__(value)
        self.json_text = json_text
        self.memo: dict[Any, Any] = {}

    def _frozen(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError("a FrozenJson item cannot be changed")

    __setitem__ = __delitem__ = __ior__ = _frozen
    clear = pop = popitem = setdefault = update = _frozen

    def __copy__(self) -> FrozenJson:
        return self  # immutable at the top level

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return copy.deepcopy(dict(self), memo)  # a plain, independent dict

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenJson, (dict(self), self.json_text))


class _Key:
    """A structural key (see :func:`_key`) with its hash computed once (tuples do not cache it)."""

    __slots__ = ("hash", "image")

    def __init__(self, image: Any) -> None:
        self.image = image
        self.hash = hash(image)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self.hash == other.hash and self.image == other.image


class _Unkeyable(Exception):
    """A value whose JSON text a structural key cannot pin down (a subclass, a non-str key)."""


def _key(value: Any) -> Any:
    """A hashable image of ``value`` that is equal for two values exactly when their JSON text
    is (types tagged: ``1``/``1.0``/``True`` differ; dict key order kept; floats by ``repr``).

    Raises:
        _Unkeyable: a type the image cannot represent exactly.
    """
    kind = type(value)
    if kind is str or value is None:
        return value
    if kind is dict:
        parts: list[Any] = ["{"]
        append = parts.append
        for k, v in value.items():
            if type(k) is not str:
                raise _Unkeyable
            append(k)
            append(v if type(v) is str or v is None else _key(v))  # the common leaves inline
        return tuple(parts)
    if kind is list:
        return ("[", *[v if type(v) is str else _key(v) for v in value])
    if kind is int or kind is bool:
        return (kind.__name__, value)
    if kind is float:
        return ("f", repr(value))
    raise _Unkeyable


def _dumps(value: Any) -> str | None:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None


def _same_top(source: dict[str, Any], seen: tuple[tuple[str, Any], ...]) -> bool:
    """``source`` still has the keys and (the same) values ``seen`` recorded, in order."""
    if len(source) != len(seen):
        return False
    return all(
        k1 == k2 and v1 is v2 for (k1, v1), (k2, v2) in zip(source.items(), seen, strict=True)
    )


def _same_fields(now: tuple[Any, ...], then: tuple[Any, ...]) -> bool:
    """The same objects (strings: equal) in the same places."""
    if len(now) != len(then):
        return False
    return all(a is b or (type(a) is str and a == b) for a, b in zip(now, then, strict=True))


_Seen = tuple[Any, tuple[tuple[str, Any], ...], FrozenJson, _Key | None]


class SnapshotMemo:
    """Frozen items of one session's run states, kept from one snapshot to the next.

    :meth:`snapshot` returns what ``state.to_json()`` returns (equal as JSON, key for key),
    with ``original_input`` items, ``generated_items`` (and their ``raw_item``) and
    ``model_responses`` (and the items of their ``output``) as :class:`FrozenJson`. An item
    already frozen by an earlier snapshot of this memo is handed back as the same object: the
    cost of a snapshot is a walk over its items' containers plus the JSON of what is new.
    The parts that are not items (``context``: approval records, run context, nested runs;
    ``last_model_output``) are deep copies, so deciding an approval after the pause does not
    change a snapshot queued for writing.

    The memo keeps only what the latest snapshot used (memory: about one snapshot's items and
    their text). Not thread-safe: take one snapshot at a time (the desktop awaits each one, on
    a worker thread, while the run is paused and nothing changes the state).
    """

    def __init__(self) -> None:
        # id(source) -> (source, its items then, frozen, key); key -> frozen;
        # id(run item or response) -> (it, its fields then, frozen)
        self._by_id: dict[int, _Seen] = {}
        self._by_key: dict[_Key, FrozenJson] = {}
        self._items: dict[int, tuple[Any, tuple[Any, ...], FrozenJson]] = {}
        self._new_by_id: dict[int, _Seen] = {}
        self._new_by_key: dict[_Key, FrozenJson] = {}
        self._new_items: dict[int, tuple[Any, tuple[Any, ...], FrozenJson]] = {}

    def snapshot(self, state: RunState) -> dict[str, Any]:
        """``state.to_json()``, with its items frozen once per session (see the class).

        Raises:
            TypeError: as :meth:`RunState.to_json` would (a value JSON cannot hold where the
                run state keeps it as is).
        """
        self._new_by_id, self._new_by_key, self._new_items = {}, {}, {}
        try:
            data = state._json(self._run_item, self._wire, self._response)
            # the parts that are not items share the live state's containers (approval
            # records' call-id lists, the run context, nested runs, the last model output):
            # copied, so a decision taken after the pause cannot reach the queued write
            for name in _LIVE_PARTS:
                data[name] = copy.deepcopy(data[name])
        except BaseException:
            self._new_by_id, self._new_by_key, self._new_items = {}, {}, {}
            raise
        self._by_id, self._by_key, self._items = self._new_by_id, self._new_by_key, self._new_items
        self._new_by_id, self._new_by_key, self._new_items = {}, {}, {}
        return data

    def __len__(self) -> int:
        """How many frozen wire items the memo holds."""
        return len(self._by_id)

    # -- wire items ---------------------------------------------------------------------------
    def _wire(self, value: Any) -> Any:
        """``value`` (a wire item) frozen, or as it is when it is not a plain JSON dict."""
        if type(value) is not dict:
            return value
        ident = id(value)
        hit = self._new_by_id.get(ident)
        if hit is None:
            hit = self._by_id.get(ident)
        key: _Key | None
        if hit is not None and hit[0] is value and _same_top(value, hit[1]):
            frozen, key = hit[2], hit[3]
        else:
            try:
                key = _Key(_key(value))
            except (_Unkeyable, RecursionError):
                key = None
            found = None
            if key is not None:
                found = self._new_by_key.get(key)
                if found is None:
                    found = self._by_key.get(key)
            if found is not None:
                frozen = found
            else:
                text = _dumps(value)
                if text is None:
                    return value  # not JSON: the consumer handles it as it does any value
                frozen = FrozenJson(value, text)
        self._new_by_id[ident] = (value, tuple(value.items()), frozen, key)
        if key is not None:
            self._new_by_key[key] = frozen
        return frozen

    # -- wrappers (run items, model responses) ------------------------------------------------
    def _wrapped(
        self, source: Any, fields: tuple[Any, ...], build: Callable[[], FrozenJson]
    ) -> FrozenJson:
        hit = self._new_items.get(id(source))
        if hit is None:
            hit = self._items.get(id(source))
        if hit is not None and hit[0] is source and _same_fields(fields, hit[1]):
            wrapper = hit[2]
        else:
            wrapper = build()
        self._new_items[id(source)] = (source, fields, wrapper)
        return wrapper

    def _run_item(self, item: RunItem) -> dict[str, Any]:
        raw = self._wire(item.raw_item)
        fields: tuple[Any, ...] = (item.type, item.agent.name, item.raw_item, raw)
        if isinstance(item, ToolCallOutputItem):
            fields += (item.output,)
        if isinstance(item, ToolApprovalItem):
            fields += (item.tool_name, item.tool_namespace, item.arguments)
        return self._wrapped(item, fields, lambda: FrozenJson(_item_json_fields(item, raw)))

    def _response(self, response: ModelResponse) -> dict[str, Any]:
        output = [self._wire(o) for o in response.output]
        fields = (response.usage, response.response_id, response.request_id, *output)

        def build() -> FrozenJson:
            return FrozenJson(
                {
                    "output": output,
                    "usage": _usage_json(response.usage),
                    "response_id": response.response_id,
                    "request_id": response.request_id,
                }
            )

        return self._wrapped(response, fields, build)
