"""Content-addressed item storage for the session journal: each item is scrubbed and stored once.

A journaled value (an event payload, a run state) names *ref paths* such as ``item``,
``items/*`` or ``generated_items/*/raw_item``. The value found at each ref path is replaced by
the hash of its scrubbed JSON text and stored once per session in the ``blobs`` table; the
row keeps the list of ref paths it used, so reading it back is unambiguous (every value at a
ref path of that row is a hash). The same conversation item, journaled as a stream event,
as part of a run's end marker and inside every run-state snapshot, is thus stored (and
scrubbed) once: the journal grows with what happened, not with how often it was saved.

Scrubbing results are cached in memory by the digest of the item's unscrubbed JSON text (a
process-local digest, never stored) for as long as the registered secrets stay the same
(:func:`core.redaction.secrets_generation`). An item handed over frozen
(:class:`core.run_state_snapshot.FrozenJson`, as run-state snapshots are) is known by identity:
its digest is taken from the JSON text it carries (never encoded again), and the hash of its
stored blob is noted on the object itself (by writer, session, nested paths, key scrubbing and
secrets generation), so the next snapshot holding the same object costs a dict lookup; what a
new frozen item stores is its carried text, parsed and scrubbed (so the blob under that text's
digest is always that text's content). Text holding a lone surrogate (a model's ``\\ud800``
escape, which UTF-8 cannot encode) is stored with JSON's ASCII escapes and reads back the same.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from core.redaction import redact, secrets_generation
from core.run_state_snapshot import FrozenJson

__all__ = ["BlobWriter", "expand", "split_paths"]

_STAR = "*"
_CHUNK = 500  # host parameters per ``IN (...)`` query (SQLite allows 999 by default)
_CACHE_ENTRIES = 200_000


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _walk(value: Any, segments: Sequence[str], visit: Callable[[Any, Any], None]) -> None:
    """Call ``visit(container, key)`` for every place ``segments`` names inside ``value``."""
    head, rest = segments[0], segments[1:]
    if head == _STAR:
        if not isinstance(value, list):
            return
        keys: Iterable[Any] = range(len(value))
    else:
        if not isinstance(value, dict) or head not in value:
            return
        keys = (head,)
    for key in keys:
        if rest:
            _walk(value[key], rest, visit)
        else:
            visit(value, key)


def split_paths(paths: Iterable[str]) -> list[list[str]]:
    """``["items/*", "item"]`` -> ``[["items", "*"], ["item"]]`` (empty segments dropped)."""
    return [[s for s in p.split("/") if s] for p in paths if p.strip("/")]


class BlobWriter:
    """Replaces the values at ref paths by hashes and writes the blobs a session lacks.

    Used on the journal's writer thread, under its connection lock; one instance per
    journal. Its cache maps ``(session, by_key, nested paths, digest of the unscrubbed
    JSON)`` to the hash of the scrubbed text already stored. Hashes are put into the
    scrubbed copy after scrubbing, so no secret pattern can ever rewrite a ref.

    Args:
        secrets: literal secret values scrubbed besides the registered ones.
    """

    def __init__(self, secrets: tuple[str, ...]) -> None:
        self._secrets = secrets
        self._cache: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._generation = secrets_generation()
        self._pending: list[tuple[tuple[Any, ...], str]] = []
        self._pending_frozen: list[tuple[FrozenJson, tuple[Any, ...], str]] = []
        # what this transaction stored so far (an item held twice in one value, e.g. a call
        # in a model response and in a run item, is scrubbed once): digest keys, and
        # (id(frozen item), note) while the item is held by _pending_frozen
        self._in_txn: dict[tuple[Any, ...], str] = {}
        self._token = object()  # this writer (its secrets) in the notes on frozen items

    def scrub_and_split(
        self,
        db: sqlite3.Connection,
        session_id: str,
        value: Any,
        paths: Sequence[str],
        *,
        by_key: bool,
    ) -> tuple[str, str | None]:
        """Scrub ``value`` and store what sits at ``paths`` as blobs of ``session_id``.

        Call inside a transaction; call :meth:`committed` after it commits (so the cache
        only names blobs that are really stored) or :meth:`rolled_back`.

        Args:
            db: the journal's connection.
            session_id: the session the blobs belong to.
            value: a JSON-compatible value (a payload mapping, a run state dict); not
                modified.
            paths: ref paths (``"item"``, ``"items/*"``, ``"generated_items/*/raw_item"``;
                a path below another is stored inside that one's blob).
            by_key: also scrub by key name (see :func:`core.redaction.redact`).

        Returns:
            ``(JSON text of the scrubbed skeleton, JSON list of the ref paths used or None)``.
        """
        if self._generation != secrets_generation():
            self._cache.clear()
            self._generation = secrets_generation()
        segments = [tuple(s) for s in split_paths(paths)]
        scrubbed, used = self._scrub(db, session_id, value, segments, by_key)
        refs = [p for p, segs in zip(paths, split_paths(paths), strict=True) if tuple(segs) in used]
        return _json_text(scrubbed), (json.dumps(refs) if refs else None)

    def committed(self) -> None:
        """The transaction committed: remember the blobs it wrote."""
        for key, blob_hash in self._pending:
            self._cache[key] = blob_hash
            self._cache.move_to_end(key)
        while len(self._cache) > _CACHE_ENTRIES:
            self._cache.popitem(last=False)
        for frozen, note, blob_hash in self._pending_frozen:
            frozen.memo[note] = blob_hash
        self._pending.clear()
        self._pending_frozen.clear()
        self._in_txn.clear()

    def rolled_back(self) -> None:
        """The transaction rolled back: forget the blobs it would have written."""
        self._pending.clear()
        self._pending_frozen.clear()
        self._in_txn.clear()

    def _scrub(
        self,
        db: sqlite3.Connection,
        session_id: str,
        value: Any,
        segments: list[tuple[str, ...]],
        by_key: bool,
    ) -> tuple[Any, set[tuple[str, ...]]]:
        """``value`` scrubbed, with the values at the outermost ``segments`` stored as blobs
        (the deeper ones inside them) and replaced by their hashes; also the paths used."""
        used: set[tuple[str, ...]] = set()
        if not segments:
            return redact(value, self._secrets, by_key=by_key), used
        top = _outermost(segments)
        skeleton = _shallow_copies(value, top)
        hashes: list[str] = []
        for segs in top:
            nested = _nested(segs, segments)

            def visit(container: Any, key: Any, _nested: tuple[Any, ...] = nested) -> None:
                hashes.append(self._store(db, session_id, container[key], _nested, by_key))
                container[key] = None

            before = len(hashes)
            _walk(skeleton, segs, visit)
            if len(hashes) > before:
                used.add(segs)
                used.update(segs + n for n in nested)
        scrubbed = redact(skeleton, self._secrets, by_key=by_key)
        order = iter(hashes)

        def put(container: Any, key: Any) -> None:
            container[key] = next(order, None)

        for segs in top:
            _walk(scrubbed, segs, put)
        return scrubbed, used

    def _store(
        self,
        db: sqlite3.Connection,
        session_id: str,
        item: Any,
        nested: tuple[tuple[str, ...], ...],
        by_key: bool,
    ) -> str:
        key: tuple[Any, ...] | None = None
        note: tuple[Any, ...] | None = None
        raw: str | None
        if isinstance(item, FrozenJson):
            # the same object as in an earlier value: its blob is stored (same secrets)
            note = (self._token, session_id, by_key, nested, self._generation)
            known = item.memo.get(note)
            if known is None:
                known = self._in_txn.get((id(item), note))
            if known is not None:
                return str(known)
            raw = item.json_text
            if raw is None:
                raw = _dumps_or_none(item)
        else:
            raw = _dumps_or_none(item)  # not plain JSON: scrubbed and hashed without the cache
        if raw is not None:
            key = (session_id, by_key, nested, _digest(raw))
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                if note is not None:
                    item.memo[note] = cached  # a committed blob
                return cached
            cached = self._in_txn.get(key)
            if cached is not None:
                return cached
        content = item
        if note is not None and not nested and raw is not None and raw is item.json_text:
            # what is stored under the digest of the carried text is that text's content,
            # even if the item was changed in place after it was frozen (and JSON's spelling
            # of its keys, as the state's text has them)
            content = json.loads(raw)
        scrubbed, _used = self._scrub(db, session_id, content, list(nested), by_key)
        text = _json_text(scrubbed)
        blob_hash = _digest(text)
        db.execute(
            "INSERT OR IGNORE INTO blobs (session_id, hash, json) VALUES (?, ?, ?)",
            (session_id, blob_hash, text),
        )
        if key is not None:
            self._pending.append((key, blob_hash))
            self._in_txn[key] = blob_hash
        if note is not None:
            self._pending_frozen.append((item, note, blob_hash))
            self._in_txn[(id(item), note)] = blob_hash
        return blob_hash


def _json_text(value: Any) -> str:
    """``value`` as JSON text SQLite can store: UTF-8 as it is, or, when a string holds a lone
    surrogate (a model's ``"\\ud800"`` escape, which UTF-8 cannot encode), ASCII with escapes,
    which reads back as the same value."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def _dumps_or_none(item: Any) -> str | None:
    try:
        return json.dumps(item, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def _outermost(segments: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The paths not below another path of ``segments`` (order kept, unique)."""
    unique = list(dict.fromkeys(segments))
    return [s for s in unique if not any(o != s and s[: len(o)] == o for o in unique)]


def _nested(top: tuple[str, ...], segments: list[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    """The paths of ``segments`` below ``top``, relative to it."""
    return tuple(
        dict.fromkeys(s[len(top) :] for s in segments if len(s) > len(top) and s[: len(top)] == top)
    )


def _shallow_copies(value: Any, segments: Iterable[Sequence[str]]) -> Any:
    """A copy of ``value`` whose containers along ``segments`` are new (the rest shared)."""
    root = _plain_copy(value) if isinstance(value, (dict, list)) else value
    for segs in segments:
        _copy_along(root, segs)
    return root


def _copy_along(container: Any, segments: Sequence[str]) -> None:
    if len(segments) < 2:
        return
    head, rest = segments[0], segments[1:]
    if head == _STAR:
        if not isinstance(container, list):
            return
        keys: Iterable[Any] = range(len(container))
    else:
        if not isinstance(container, dict) or head not in container:
            return
        keys = (head,)
    for key in keys:
        child = container[key]
        if isinstance(child, (dict, list)):
            child = _plain_copy(child)
            container[key] = child
            _copy_along(child, rest)


def _plain_copy(value: dict[Any, Any] | list[Any]) -> dict[Any, Any] | list[Any]:
    """A shallow copy as a plain ``dict``/``list`` (a frozen item's copy can be assigned to)."""
    return dict(value) if isinstance(value, dict) else list(value)


def expand(
    db: sqlite3.Connection, session_id: str, rows: list[tuple[Any, str | None]]
) -> list[Any]:
    """Put the blobs back into journaled values (in place), a level at a time.

    Args:
        db: the journal's connection.
        session_id: their session.
        rows: ``(parsed skeleton, JSON list of ref paths or None)`` per value.

    Returns:
        The values, in order, with every ref replaced by its (parsed) blob; a ref whose
        blob is missing becomes ``None``.
    """
    level: list[tuple[Any, list[tuple[str, ...]]]] = []
    for value, refs in rows:
        if refs:
            level.append((value, [tuple(s) for s in split_paths(json.loads(refs))]))
    while level:
        slots: list[tuple[Any, Any, tuple[tuple[str, ...], ...]]] = []
        for value, segments in level:
            for segs in _outermost(segments):
                nested = _nested(segs, segments)

                def slot(
                    c: Any,
                    k: Any,
                    n: tuple[tuple[str, ...], ...] = nested,
                    out: list[tuple[Any, Any, tuple[tuple[str, ...], ...]]] = slots,
                ) -> None:
                    out.append((c, k, n))

                _walk(value, segs, slot)
        texts = _fetch(db, session_id, {c[k] for c, k, _n in slots if isinstance(c[k], str)})
        level = []
        for container, key, nested in slots:
            ref = container[key]
            text = texts.get(ref) if isinstance(ref, str) else None
            container[key] = json.loads(text) if text is not None else None
            if nested and container[key] is not None:
                level.append((container[key], list(nested)))
    return [value for value, _refs in rows]


def _fetch(db: sqlite3.Connection, session_id: str, hashes: set[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    pending = list(hashes)
    while pending:
        chunk, pending = pending[:_CHUNK], pending[_CHUNK:]
        marks = ",".join("?" * len(chunk))
        for blob_hash, text in db.execute(
            f"SELECT hash, json FROM blobs WHERE session_id = ? AND hash IN ({marks})",
            (session_id, *chunk),
        ):
            found[blob_hash] = text
    return found
