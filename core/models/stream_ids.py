"""One id per output item for its whole life, when the server sends none (issue 16)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GENERATED_ID_MARK", "ItemIds"]

GENERATED_ID_MARK = "_tandem_"
"""Part of every id Tandem makes up (``msg_tandem_<hex>``), so one can tell them apart."""

_PREFIXES = {
    "message": "msg",
    "reasoning": "rs",
    "function_call": "fc",
    "custom_tool_call": "ctc",
    "shell_call": "sh",
    "apply_patch_call": "apc",
    "computer_call": "cu",
}


def _new_id(kind: Any) -> str:
    prefix = _PREFIXES.get(kind if isinstance(kind, str) else "", "item")
    return f"{prefix}{GENERATED_ID_MARK}{uuid.uuid4().hex}"


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _put(obj: Any, name: str, value: str) -> None:
    if isinstance(obj, dict):
        obj[name] = value
    else:
        setattr(obj, name, value)


@dataclass(slots=True)
class ItemIds:
    """Gives the output items of one model response one id each, for their whole life.

    The Responses API names every output item with an ``id`` that its stream events repeat
    as ``item_id`` (``response.output_text.delta``...) beside the item's ``output_index``.
    Some servers (local gateways, ``tests/support/responses_server.py`` with id-less items)
    send items without ``id``, and deltas with a placeholder ``item_id`` or none: a consumer
    keying the streamed text by ``item_id`` and the finished item by ``id`` then shows the
    answer twice. Per ``output_index`` this keeps the first id seen: the server's item id
    when it sends one (never changed), else a placeholder ``item_id`` a delta brought
    before the item, else a made-up one (``msg_tandem_<hex>``, unique per item). Items and
    events are changed in place; server-given item ids are left as they are.

    One instance serves one model call: ``response.created`` (each attempt of a retried
    stream opens with it) starts over, so a retry's items get ids of their own.
    """

    _ids: dict[int, tuple[str, bool]] = field(default_factory=dict)
    """output_index → (id, whether the server's item itself carried it)."""

    def event(self, event: Any) -> None:
        """Fill in or align the ids of one stream event (typed ``openai`` event or dict).

        ``response.output_item.added``/``.done`` items without ``id`` get the index's id;
        events that name their item by ``item_id`` (deltas, ``.done`` events of parts)
        get it when theirs is missing or is a placeholder for an id-less item. Events
        without ``output_index`` are left alone.
        """
        if _get(event, "type") == "response.created":  # a new response (a retried stream)
            self._ids.clear()
            return
        index = _get(event, "output_index")
        if not isinstance(index, int):
            return
        item = _get(event, "item")
        if item is not None:
            self._item(index, item)
            return
        if not (isinstance(event, dict) or hasattr(type(event), "model_fields")):
            return
        fields = event.keys() if isinstance(event, dict) else type(event).model_fields
        if "item_id" not in fields:
            return
        given = _get(event, "item_id")
        known = self._ids.get(index)
        if known is None:
            name = given if isinstance(given, str) and given else _new_id(None)
            self._ids[index] = (name, False)
        elif known[0] != given and (not known[1] or not given):
            _put(event, "item_id", known[0])

    def items(self, output: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Give the response's output items (wire dicts, in ``output_index`` order) their ids.

        Returns:
            ``output`` itself, each item holding an ``id``.
        """
        for index, item in enumerate(output):
            if isinstance(item, dict):
                self._item(index, item)
        return output

    def _item(self, index: int, item: Any) -> None:
        given = _get(item, "id")
        known = self._ids.get(index)
        if isinstance(given, str) and given:
            if known is None or not known[1]:
                self._ids[index] = (given, True)
            return
        if known is None:
            known = self._ids[index] = (_new_id(_get(item, "type")), False)
        _put(item, "id", known[0])
