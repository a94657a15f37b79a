"""The Codex ``output_schema`` option: a JSON object schema or a field descriptor (spec §9.3)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ...errors import UserError
from ..strict_schema import ensure_strict_json_schema

__all__ = ["normalize_output_schema"]

_PRIMITIVES = ("string", "number", "integer", "boolean")


def _field_schema(name: str, schema: Any) -> dict[str, Any]:
    if not isinstance(schema, Mapping):
        raise UserError(f"output_schema property {name!r} needs a 'schema' object.")
    kind = schema.get("type")
    out: dict[str, Any] = {"type": kind}
    if kind in _PRIMITIVES:
        enum = schema.get("enum")
        if enum is not None:
            if kind != "string" or not isinstance(enum, list) or not enum:
                raise UserError(f"output_schema property {name!r}: enum needs string values.")
            if not all(isinstance(v, str) for v in enum):
                raise UserError(f"output_schema property {name!r}: enum needs string values.")
            out["enum"] = list(enum)
    elif kind == "array":
        out["items"] = _field_schema(f"{name}[]", schema.get("items"))
    else:
        raise UserError(
            f"output_schema property {name!r} has unsupported type {kind!r} "
            "(use string, number, integer, boolean or array)."
        )
    if isinstance(schema.get("description"), str):
        out["description"] = schema["description"]
    return out


def _from_descriptor(descriptor: Mapping[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for entry in descriptor["properties"]:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            raise UserError("output_schema descriptor properties need a 'name'.")
        name = entry["name"]
        if name in properties:
            raise UserError(f"output_schema property {name!r} is defined twice.")
        properties[name] = _field_schema(name, entry.get("schema"))
        if isinstance(entry.get("description"), str):
            properties[name]["description"] = entry["description"]
    required = descriptor.get("required")
    if required is None:
        required = list(properties)
    elif not isinstance(required, list) or any(r not in properties for r in required):
        raise UserError("output_schema 'required' must list defined property names.")
    schema: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "required": list(required),
    }
    for key in ("title", "description"):
        if isinstance(descriptor.get(key), str):
            schema[key] = descriptor[key]
    return schema


def normalize_output_schema(value: Any) -> dict[str, Any] | None:
    """The strict JSON schema written to ``--output-schema`` (spec §9.3).

    Args:
        value: ``None``; a JSON schema with ``type: "object"`` (made strict); or a descriptor
            ``{title?, description?, properties: [{name, description?, schema}], required?}``
            whose field schemas are ``string|number|integer|boolean`` (optional string
            ``enum``) or ``array`` of those.

    Returns:
        A new dict, or ``None``.

    Raises:
        UserError: not an object schema, or an invalid descriptor.
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise UserError("output_schema must be a JSON schema object or a schema descriptor.")
    if isinstance(value.get("properties"), list):
        return _from_descriptor(value)
    if value.get("type") != "object":
        raise UserError('output_schema must be a JSON schema with "type": "object".')
    return ensure_strict_json_schema(copy.deepcopy(dict(value)))
