"""Conversion of a JSON schema to the strict form the Responses API accepts (spec §1.4)."""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import unquote

from ..errors import UserError

__all__ = ["MAX_SCHEMA_DEPTH", "MAX_SCHEMA_NODES", "ensure_strict_json_schema"]

MAX_SCHEMA_DEPTH = 100
"""Deepest schema path (in path segments, e.g. ``properties``/``name``) that is processed."""

MAX_SCHEMA_NODES = 100_000
"""Most schema nodes visited (counting every ``$ref`` expansion) before giving up."""

_EMPTY_OBJECT: dict[str, Any] = {
    "additionalProperties": False,
    "type": "object",
    "properties": {},
    "required": [],
}

# Keywords that annotate a schema without constraining the values it accepts. Only these may sit
# next to a ``$ref`` (which is then inlined), and for these a single ``allOf`` parent wins.
_ANNOTATION_KEYS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "$defs",
        "definitions",
        "$anchor",
        "$schema",
    }
)

_ADDITIONAL_PROPERTIES_MESSAGE = (
    "additionalProperties should not be set for object types. This could be because you're "
    "using an older version of Pydantic, or because you configured additional properties to be "
    "allowed. If you really need this, update the function or output tool to not use a strict "
    "schema."
)
# The reference's wording (openai-agents 0.24 ``ensure_strict_json_schema``).
_TOO_DEEP_MESSAGE = (
    "JSON schema is too deeply nested to process safely. Simplify or flatten the schema."
)
# Container nesting checked, without recursion, before the schema is copied: deeper input would
# exhaust the interpreter's recursion limit in ``copy.deepcopy`` (a RecursionError, where the
# reference raises UserError). Well above MAX_SCHEMA_DEPTH, so only absurd schemas meet it.
_MAX_RAW_NESTING = 250
_TOO_LARGE_MESSAGE = (
    "JSON schema is too large to convert to a strict schema (more than "
    f"{MAX_SCHEMA_NODES} nodes); `$ref`s that expand exponentially suggest a malformed schema."
)
_NESTED_ID_MESSAGE = (
    "JSON schema contains a `$ref` owned by or crossing a nested `$id` resource; such a "
    "reference cannot be resolved against the document root."
)


def ensure_strict_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Return the strict form of ``schema`` (the input is never modified).

    Rules (spec §1.4), applied to every node reachable through ``$defs``, ``definitions``,
    ``properties``, ``items`` (a dict), ``anyOf``, ``oneOf`` and ``allOf``:

    * an empty root ``{}`` becomes an empty closed object;
    * a node with ``properties`` and no ``type`` gets ``"type": "object"``;
    * object nodes get ``"additionalProperties": false``; any other value is an error;
    * every ``properties`` node gets ``required`` = all its property names, in order;
    * ``"default": null`` is removed, other defaults stay;
    * ``oneOf`` entries are appended to ``anyOf``; a single-entry ``allOf`` is merged into its
      parent; a ``$ref`` with sibling keywords is inlined (siblings win);
    * the root must not be an ``anyOf`` and a root ``type`` list must be ``["object"]``.

    Args:
        schema: a JSON schema object (e.g. a Pydantic ``model_json_schema()``).

    Returns:
        A new, strict schema dict.

    Raises:
        UserError: the schema cannot be made strict (open ``additionalProperties``, a ``$ref``
            with constraining siblings, an unresolvable or non-local ``$ref`` with siblings,
            conflicting single ``allOf``, a bad root, depth over :data:`MAX_SCHEMA_DEPTH` or
            more than :data:`MAX_SCHEMA_NODES` nodes).
    """
    if not isinstance(schema, dict):
        raise UserError(f"A JSON schema must be an object, got {type(schema).__name__}.")
    if not schema:
        return copy.deepcopy(_EMPTY_OBJECT)
    _check_nesting(schema)
    root = copy.deepcopy(schema)
    converter = _StrictConverter(root)
    result = converter.visit(root, ())
    _check_root(result)
    if result.get("type") == ["object"]:
        result["type"] = "object"
    return result


def _check_nesting(schema: dict[str, Any]) -> None:
    """Raise UserError when dicts/lists nest deeper than ``_MAX_RAW_NESTING`` (iterative walk)."""
    stack: list[tuple[Any, int]] = [(schema, 1)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_RAW_NESTING:
            raise UserError(_TOO_DEEP_MESSAGE)
        if id(node) in seen:
            continue
        seen.add(id(node))
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def _check_root(root: dict[str, Any]) -> None:
    if "anyOf" in root:
        raise UserError("The root of a strict JSON schema must not use `anyOf`.")
    root_type = root.get("type")
    if isinstance(root_type, list) and root_type != ["object"]:
        raise UserError(
            "The root of a strict JSON schema must be a non-nullable object, but its type is "
            f"{root_type!r}. Make the root a plain object, or turn strict mode off."
        )


def _is_object_type(node: dict[str, Any]) -> bool:
    node_type = node.get("type")
    return node_type == "object" or (isinstance(node_type, list) and "object" in node_type)


def _is_annotation_key(key: str, *, at_root: bool) -> bool:
    return key in _ANNOTATION_KEYS or key.startswith("content") or (at_root and key == "$id")


class _StrictConverter:
    """One conversion: holds the document root (for ``$ref`` lookups) and the node budget."""

    def __init__(self, root: dict[str, Any]) -> None:
        self._root = root
        self._nodes = 0

    def visit(
        self, node: Any, path: tuple[str | int, ...], in_nested_id: bool = False
    ) -> dict[str, Any]:
        """Make ``node`` (found at ``path``) strict; ``in_nested_id``: under a non-root ``$id``."""
        if len(path) >= MAX_SCHEMA_DEPTH:
            raise UserError(_TOO_DEEP_MESSAGE)
        self._nodes += 1
        if self._nodes > MAX_SCHEMA_NODES:
            raise UserError(_TOO_LARGE_MESSAGE)
        if not isinstance(node, dict):
            where = "/".join(str(part) for part in path) or "<root>"
            raise UserError(f"Expected a JSON schema object at {where}, got {node!r}.")

        if "default" in node and node["default"] is None:
            del node["default"]

        if "$ref" in node and len(node) > 1:
            merged = self._inline_ref(node, path, in_nested_id)
            return self.visit(merged, path, in_nested_id)

        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            merged = self._merge_single_all_of(node, all_of[0], path, in_nested_id)
            return self.visit(merged, path, in_nested_id)

        inner = in_nested_id or (bool(path) and "$id" in node)

        for defs_key in ("$defs", "definitions"):
            defs = node.get(defs_key)
            if isinstance(defs, dict):
                for name in list(defs):
                    defs[name] = self.visit(defs[name], (*path, defs_key, name), inner)

        properties = node.get("properties")
        if isinstance(properties, dict):
            node.setdefault("type", "object")
            node["required"] = list(properties)
            for name in list(properties):
                properties[name] = self.visit(properties[name], (*path, "properties", name), inner)

        if _is_object_type(node):
            if "additionalProperties" not in node:
                node["additionalProperties"] = False
            elif node["additionalProperties"] is not False:
                raise UserError(_ADDITIONAL_PROPERTIES_MESSAGE)

        items = node.get("items")
        if isinstance(items, dict):
            node["items"] = self.visit(items, (*path, "items"), inner)

        any_of = node.get("anyOf")
        if isinstance(any_of, list):
            node["anyOf"] = [
                self.visit(entry, (*path, "anyOf", i), inner) for i, entry in enumerate(any_of)
            ]
        one_of = node.pop("oneOf", None)
        if isinstance(one_of, list):
            converted = [
                self.visit(entry, (*path, "oneOf", i), inner) for i, entry in enumerate(one_of)
            ]
            node["anyOf"] = [*node.get("anyOf", []), *converted]
        elif one_of is not None:
            node["oneOf"] = one_of

        if isinstance(all_of, list):
            node["allOf"] = [
                self.visit(entry, (*path, "allOf", i), inner) for i, entry in enumerate(all_of)
            ]
        return node

    # -- $ref and allOf ------------------------------------------------------------------
    def _inline_ref(
        self, node: dict[str, Any], path: tuple[str | int, ...], in_nested_id: bool
    ) -> dict[str, Any]:
        """The referenced schema with ``node``'s sibling keywords laid over it."""
        at_root = not path
        bad = sorted(
            key for key in node if key != "$ref" and not _is_annotation_key(key, at_root=at_root)
        )
        if bad:
            if "$id" in bad and not at_root:
                raise UserError(_NESTED_ID_MESSAGE)
            raise UserError(
                "JSON schema contains a `$ref` with sibling keyword(s) that constrain values "
                f"({', '.join(bad)}); they cannot be merged without changing what it accepts."
            )
        if in_nested_id:
            raise UserError(_NESTED_ID_MESSAGE)
        target = self._resolve_chain(node["$ref"])
        merged = {key: value for key, value in node.items() if key != "$ref"}
        for key, value in target.items():
            merged.setdefault(key, value)
        return merged

    def _merge_single_all_of(
        self, node: dict[str, Any], entry: Any, path: tuple[str | int, ...], in_nested_id: bool
    ) -> dict[str, Any]:
        """``node`` with its one ``allOf`` entry folded in (node's annotations win)."""
        if isinstance(entry, dict) and set(entry) == {"$ref"}:
            if in_nested_id:
                raise UserError(_NESTED_ID_MESSAGE)
            entry = self._resolve_chain(entry["$ref"])
        if not isinstance(entry, dict):
            raise UserError(f"`allOf` entries must be JSON schema objects, got {entry!r}.")
        parent = {key: value for key, value in node.items() if key != "allOf"}
        conflicts = sorted(
            key
            for key, value in entry.items()
            if key in parent
            and parent[key] != value
            and not _is_annotation_key(key, at_root=not path)
        )
        if conflicts:
            raise UserError(
                "JSON schema contains a single `allOf` entry whose keyword(s) "
                f"({', '.join(conflicts)}) conflict with its parent; they cannot be merged "
                "without changing what it accepts."
            )
        merged = copy.deepcopy(entry)
        merged.update(parent)
        return merged

    def _resolve_chain(self, ref: Any) -> dict[str, Any]:
        """Follow ``ref`` (and any bare ``$ref`` it lands on) to a deep copy of the target."""
        seen: set[str] = set()
        while True:
            if not isinstance(ref, str):
                raise UserError(f"`$ref` must be a string, got {ref!r}.")
            if ref in seen or len(seen) >= MAX_SCHEMA_DEPTH:
                raise UserError(_TOO_DEEP_MESSAGE)
            seen.add(ref)
            target = self._resolve(ref)
            if set(target) == {"$ref"}:
                ref = target["$ref"]
                continue
            return copy.deepcopy(target)

    def _resolve(self, ref: str) -> dict[str, Any]:
        """The node a local ``#/...`` JSON pointer designates in the document root."""
        if ref == "#":
            return self._root
        if not ref.startswith("#/"):
            raise UserError(f"Only local `$ref`s (starting with '#/') can be inlined, got {ref!r}.")
        node: Any = self._root
        parts = ref[2:].split("/")
        for raw in parts:
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise UserError(f"`$ref` {ref!r} does not resolve inside the schema.")
            if isinstance(node, dict) and "$id" in node:
                raise UserError(_NESTED_ID_MESSAGE)
        if not isinstance(node, dict):
            raise UserError(f"`$ref` {ref!r} does not point to a JSON schema object.")
        return node
