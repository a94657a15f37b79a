"""Static word expansion and option abbreviations (core.policy.expand, core.policy.options)."""

from __future__ import annotations

import pytest

from core.policy.expand import expand_word
from core.policy.options import TOOLS, resolve_long, scan

ENV = {"HOME": "/home/u", "SPACED": "a b"}


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("~", "/home/u"),
        ("~/x", "/home/u/x"),
        ("$HOME/x", "/home/u/x"),
        ("${HOME}/x", "/home/u/x"),
        ('"$HOME"/x', "/home/u/x"),
        ("'$HOME'", "$HOME"),
        ('"~/x"', "~/x"),
        ("\\~/x", "~/x"),
        ("a'b'\"c\"", "abc"),
        ("~+/r", "/w/r"),
        ("$PWD/r", "/w/r"),
        ("--file=~/k", "--file=/home/u/k"),
        ("X=~/k", "X=/home/u/k"),
        ("<(ls)", "/dev/fd/63"),
        ('"$SPACED"', "a b"),
        ("cost$", "cost$"),
    ],
)
def test_expands_like_bash(raw: str, text: str):
    value = expand_word(raw, ENV, cwd="/w")
    assert value.unresolved is None, value.unresolved
    assert value.text == text


@pytest.mark.parametrize(
    "raw",
    ["$RANDOM", "$1", "$@", "${HOME:-/}", "${!x}", "$(pwd)", "`pwd`", "~other/x", "$NOPE",
     "$SPACED", "{a,b}", "x{1..3}", "$'\\x2e'", "~-"],
)  # fmt: skip
def test_unknown_values_are_unresolved(raw: str):
    assert expand_word(raw, ENV, cwd="/w").unresolved is not None


def test_globs_keep_quoted_parts_literal():
    value = expand_word("'a*'b*", ENV)
    assert value.pattern == "a[*]b*"
    assert expand_word("'a*'", ENV).pattern is None


@pytest.mark.parametrize(
    ("tool", "name", "full"),
    [
        ("sort", "outp", "output"),
        ("sort", "o", "output"),
        ("sort", "output", "output"),
        ("cut", "output", "output-delimiter"),
        ("grep", "fi", None),  # ambiguous: file, files-with-matches, fixed-strings…
        ("grep", "nope", None),
        ("rg", "pr", None),  # ripgrep accepts no abbreviations
    ],
)
def test_long_options_resolve_as_getopt_long(tool: str, name: str, full: str | None):
    assert resolve_long(TOOLS[tool], name) == full


def test_short_option_clusters_and_attached_values():
    found = scan(TOOLS["sort"], ["-rnoout", "in"])
    assert found.writes == ["out"] and found.paths == ["in"]
    found = scan(TOOLS["sort"], ["-k", "2", "-t", "o", "in"])  # `o` is -t's argument
    assert not found.problems and found.paths == ["in"]
    found = scan(TOOLS["grep"], ["-e", "x", "--", "-o"])
    assert found.paths == ["-o"]
