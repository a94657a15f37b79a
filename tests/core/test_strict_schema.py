"""Strict JSON schema conversion (spec §1.4, §12 item 1), checked against the reference SDK too."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from agents.strict_schema import ensure_strict_json_schema as reference_strict

from core.errors import UserError
from core.tools.strict_schema import MAX_SCHEMA_NODES, ensure_strict_json_schema

LOCATION_DEFS = {
    "X": {"type": "object", "title": "X", "properties": {"q": {"type": "string"}}},
}

# Schemas both implementations convert; the results must be equal as JSON values.
AGREEING_CASES: dict[str, dict[str, Any]] = {
    "empty": {},
    "root type list": {"type": ["object"], "properties": {}},
    "scalar root": {"type": "string"},
    "oneOf appended to anyOf": {
        "type": "object",
        "properties": {"a": {"oneOf": [{"type": "string"}], "anyOf": [{"type": "integer"}]}},
    },
    "single allOf ref merged": {
        "type": "object",
        "properties": {"a": {"allOf": [{"$ref": "#/$defs/X"}], "description": "d"}},
        "$defs": LOCATION_DEFS,
    },
    "single allOf parent title wins": {
        "type": "object",
        "properties": {
            "a": {"allOf": [{"$ref": "#/$defs/X"}], "title": "A", "default": {"q": "z"}}
        },
        "$defs": LOCATION_DEFS,
    },
    "single allOf equal keys": {
        "type": "object",
        "properties": {"a": {"allOf": [{"type": "string"}], "type": "string"}},
    },
    "single allOf complementary keys": {
        "type": "object",
        "properties": {"a": {"allOf": [{"type": "string", "minLength": 2}], "maxLength": 5}},
    },
    "long allOf kept": {
        "type": "object",
        "properties": {"a": {"allOf": [{"type": "string"}, {"minLength": 1}]}},
    },
    "bare remote ref kept": {"type": "object", "properties": {"a": {"$ref": "http://x/y"}}},
    "json pointer escapes": {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/a~1b~0c", "description": "q"}},
        "$defs": {"a/b~c": {"type": "string"}},
    },
    "percent escapes": {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/a%20b", "description": "x"}},
        "$defs": {"a b": {"type": "string"}},
    },
    "default null removed": {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"], "default": None}},
    },
    "ref with null default stays a ref": {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Y", "default": None}},
        "$defs": {"Y": {"type": "string"}},
    },
    "ref with non-null default inlined": {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Y", "default": "x"}},
        "$defs": {"Y": {"type": "string"}},
    },
    "properties without type": {"properties": {"a": {"properties": {}}}},
    "items visited": {
        "type": "object",
        "properties": {
            "a": {
                "type": "array",
                "items": {"type": "object", "properties": {"z": {"type": "integer", "default": 1}}},
            }
        },
    },
    "tuple items untouched": {
        "type": "object",
        "properties": {"a": {"type": "array", "items": [{"type": "object"}]}},
    },
    "definitions visited": {
        "type": "object",
        "properties": {},
        "definitions": {"A": {"type": "object", "properties": {"x": {}}}},
    },
    "root $id next to $ref": {
        "$id": "x",
        "$ref": "#/$defs/X",
        "$defs": {"X": {"type": "object", "properties": {}}},
    },
    "ref chain": {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/X", "description": "q"}},
        "$defs": {"X": {"$ref": "#/$defs/Y"}, "Y": {"type": "string", "title": "Y"}},
    },
    "inlined target made strict": {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/X", "description": "q"}},
        "$defs": {
            "X": {
                "type": "object",
                "properties": {"n": {"$ref": "#/$defs/Y", "description": "z"}},
            },
            "Y": {"type": "integer"},
        },
    },
    "annotation siblings allowed": {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/Y", "contentMediaType": "x", "examples": [1], "$comment": "c"}
        },
        "$defs": {"Y": {"type": "string"}},
    },
    "nullable nested object": {
        "type": "object",
        "properties": {"a": {"type": ["object", "null"], "properties": {"b": {"type": "string"}}}},
    },
    "nested empty schema kept": {"type": "object", "properties": {"a": {"anyOf": [{}]}}},
    "root bare ref": {"$ref": "#/$defs/Y"},
}

ERROR_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "additionalProperties true": (
        {"type": "object", "additionalProperties": True},
        "additionalProperties should not be set for object types",
    ),
    "additionalProperties sub-schema": (
        {
            "type": "object",
            "properties": {"a": {"type": "object", "additionalProperties": {"type": "integer"}}},
        },
        "additionalProperties should not be set for object types",
    ),
    "root anyOf": ({"anyOf": [{"type": "object"}, {"type": "null"}]}, "must not use `anyOf`"),
    "root anyOf through a ref": (
        {"$ref": "#/$defs/Y", "$id": "r", "$defs": {"Y": {"anyOf": [{"type": "object"}]}}},
        "must not use `anyOf`",
    ),
    "nullable root": ({"type": ["object", "null"], "properties": {}}, "non-nullable object"),
    "conflicting single allOf": (
        {"type": "object", "properties": {"a": {"allOf": [{"type": "string"}], "type": "integer"}}},
        "(type)",
    ),
    "constraining $ref sibling": (
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/X", "minLength": 3}},
            "$defs": {"X": {"type": "string"}},
        },
        "(minLength)",
    ),
    "ref crossing nested $id": (
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/X/properties/b", "description": "q"}},
            "$defs": {
                "X": {"$id": "http://other", "type": "object", "properties": {"b": {}}},
            },
        },
        "nested `$id`",
    ),
    "ref owned by nested $id": (
        {
            "type": "object",
            "properties": {
                "a": {
                    "$id": "http://o",
                    "type": "object",
                    "properties": {"b": {"$ref": "#/$defs/Y", "description": "q"}},
                }
            },
            "$defs": {"Y": {"type": "string"}},
        },
        "nested `$id`",
    ),
    "ref cycle": (
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/X", "description": "q"}},
            "$defs": {"X": {"$ref": "#/$defs/X"}},
        },
        "too deeply nested",
    ),
}


@pytest.mark.parametrize("name", list(AGREEING_CASES))
def test_matches_reference_sdk(name: str) -> None:
    schema = AGREEING_CASES[name]
    original = copy.deepcopy(schema)
    ours = ensure_strict_json_schema(schema)
    assert schema == original, "the input must not be modified"
    assert ours == reference_strict(copy.deepcopy(schema))


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_rejections_raise_user_error_like_the_sdk(name: str) -> None:
    schema, fragment = ERROR_CASES[name]
    with pytest.raises(UserError) as excinfo:
        ensure_strict_json_schema(copy.deepcopy(schema))
    assert fragment in str(excinfo.value)
    with pytest.raises(Exception):  # noqa: B017 - the reference rejects it too
        reference_strict(copy.deepcopy(schema))


def test_empty_root_becomes_closed_object() -> None:
    assert ensure_strict_json_schema({}) == {
        "additionalProperties": False,
        "type": "object",
        "properties": {},
        "required": [],
    }


def test_all_properties_required_in_declaration_order_and_defaults_kept() -> None:
    schema = {
        "type": "object",
        "properties": {
            "b": {"type": "integer", "default": 3},
            "a": {"type": "string"},
            "c": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["a"],
    }
    strict = ensure_strict_json_schema(schema)
    assert strict["required"] == ["b", "a", "c"]
    assert strict["additionalProperties"] is False
    assert strict["properties"]["b"]["default"] == 3
    assert "default" not in strict["properties"]["c"]


def test_ref_with_description_is_inlined_and_description_wins() -> None:
    schema = {
        "type": "object",
        "properties": {"loc": {"$ref": "#/$defs/Loc", "description": "Where."}},
        "$defs": {
            "Loc": {
                "type": "object",
                "title": "Loc",
                "description": "A place.",
                "properties": {"lat": {"type": "number"}},
            }
        },
    }
    loc = ensure_strict_json_schema(schema)["properties"]["loc"]
    assert "$ref" not in loc
    assert loc["description"] == "Where."
    assert loc["title"] == "Loc"
    assert loc["required"] == ["lat"] and loc["additionalProperties"] is False


def test_unresolvable_and_non_local_refs_with_siblings_are_user_errors() -> None:
    with pytest.raises(UserError):
        ensure_strict_json_schema(
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope", "description": "q"}}}
        )
    with pytest.raises(UserError, match="local"):
        ensure_strict_json_schema(
            {"type": "object", "properties": {"a": {"$ref": "http://x/y", "description": "q"}}}
        )


def _nested(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object", "properties": {}}
    node = root
    for _ in range(levels):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        node["properties"]["x"] = child
        node = child
    return root


def test_depth_limit_matches_reference() -> None:
    ensure_strict_json_schema(_nested(49))
    reference_strict(_nested(49))
    with pytest.raises(UserError, match="too deeply nested"):
        ensure_strict_json_schema(_nested(50))
    with pytest.raises(Exception):  # noqa: B017
        reference_strict(_nested(50))


def test_node_limit() -> None:
    fits = {"type": "object", "properties": {f"p{i}": {} for i in range(MAX_SCHEMA_NODES - 1)}}
    assert len(ensure_strict_json_schema(fits)["required"]) == MAX_SCHEMA_NODES - 1
    too_many = {"type": "object", "properties": {f"p{i}": {} for i in range(MAX_SCHEMA_NODES)}}
    with pytest.raises(UserError, match="too large"):
        ensure_strict_json_schema(too_many)


def test_exponential_ref_expansion_is_stopped() -> None:
    defs: dict[str, Any] = {"L0": {"type": "string"}}
    for i in range(1, 20):
        ref = {"$ref": f"#/$defs/L{i - 1}"}
        defs[f"L{i}"] = {
            "type": "object",
            "properties": {"a": {**ref, "description": "x"}, "b": {**ref, "description": "y"}},
        }
    schema = {
        "type": "object",
        "properties": {"r": {"$ref": "#/$defs/L19", "description": "z"}},
        "$defs": defs,
    }
    with pytest.raises(UserError, match="too large"):
        ensure_strict_json_schema(schema)


def test_non_dict_schema_rejected() -> None:
    with pytest.raises(UserError):
        ensure_strict_json_schema([1])  # type: ignore[arg-type]
    with pytest.raises(UserError):
        ensure_strict_json_schema({"type": "object", "properties": {"a": True}})
