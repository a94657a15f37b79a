"""One TOML writer for the settings file, MCP tables and Codex overrides (core/toml_text.py)."""

from __future__ import annotations

import math
import tomllib

import pytest

from core.toml_text import toml_key, toml_literal, toml_string

VALUES = [
    True,
    0,
    -7,
    2.5,
    1e300,
    "",
    'quote " and backslash \\',
    "tab\t newline\n cr\r form\f bell\x07 del\x7f",
    "emoji \U0001f600 café 日本",
    [1, "two", [3.0]],
    (1, 2),
    {"plain": 1, "needs quotes": "x", "nested": {"a": [True]}},
    {},
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_every_literal_reads_back_as_the_same_value(value: object) -> None:
    read = tomllib.loads(f"k = {toml_literal(value)}")["k"]
    expected = list(value) if isinstance(value, tuple) else value
    assert read == expected


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    literal = toml_string("a\ud800b")
    assert tomllib.loads("k = " + literal)["k"] == "a\ufffdb"


@pytest.mark.parametrize("bad", [None, math.inf, math.nan, object()])
def test_what_toml_cannot_hold_is_a_type_error(bad: object) -> None:
    with pytest.raises(TypeError):
        toml_literal(bad)


def test_keys_are_bare_only_when_they_may_be() -> None:
    assert toml_key("ok_name-1") == "ok_name-1"
    for name in ("has space", "dot.ted", "", "ünï"):
        table = tomllib.loads(f"[t]\n{toml_key(name)} = 1")["t"]
        assert table == {name: 1}
