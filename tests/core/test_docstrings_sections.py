"""Docstring sections that carry parameter descriptions into tool schemas (issue 13, item 5).

openai-agents 0.24 reads parameter descriptions only from ``Args``/``Parameters`` sections:
Google ``Keyword Args:``/``Other Parameters:`` and NumPy ``Other Parameters`` are dropped, and a
docstring that opens with ``Args:`` on its first line (no summary) loses every description.
Both are public Agents SDK bug reports, fixed there after 0.24; ``core`` keeps them.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.tools import function_tool
from core.tools.docstrings import generate_func_documentation, parse_docstring


def _properties(tool: Any) -> dict[str, Any]:
    props: dict[str, Any] = tool.params_json_schema["properties"]
    return {name: prop.get("description") for name, prop in props.items()}


def google_keyword_args(city: str, units: str = "metric", days: int = 1) -> str:
    """Forecast for a city.

    Args:
        city: the city name.

    Keyword Args:
        units: metric or imperial.

    Other Parameters:
        days: how many days ahead.
    """
    return city


def numpy_other_parameters(city: str, units: str = "metric") -> str:
    """Forecast for a city.

    Parameters
    ----------
    city : str
        the city name.

    Other Parameters
    ----------------
    units : str
        metric or imperial.
    """
    return city


def args_on_first_line(a: int, b: int = 0) -> int:
    """Args:
    a: the first addend.
    b: the second addend.
    """
    return a + b


def args_on_first_line_indented(a: int, b: int = 0) -> int:
    return a + b


# Set directly: a formatter would re-indent this layout (entries deeper than the closing quotes).
args_on_first_line_indented.__doc__ = """Args:
        a: the first addend.
        b: the second addend.
    """


def args_first_then_returns(a: int) -> int:
    """Args:
        a: the number.

    Returns:
        the number doubled.
    """
    return 2 * a


def args_after_blank_first_line(a: int) -> int:
    """
    Args:
        a: the number.
    """
    return a


def test_google_keyword_args_and_other_parameters_reach_the_schema() -> None:
    # openai-agents 0.24: param_descriptions == {"city": ...}; units/days are dropped.
    tool = function_tool(google_keyword_args)
    assert _properties(tool) == {
        "city": "the city name.",
        "units": "metric or imperial.",
        "days": "how many days ahead.",
    }
    assert tool.description == "Forecast for a city."


def test_numpy_other_parameters_reach_the_schema() -> None:
    # openai-agents 0.24: the NumPy "Other Parameters" section is dropped.
    tool = function_tool(numpy_other_parameters)
    assert _properties(tool) == {"city": "the city name.", "units": "metric or imperial."}


@pytest.mark.parametrize("func", [args_on_first_line, args_on_first_line_indented])
def test_docstring_opening_with_args_keeps_descriptions(func: Any) -> None:
    # openai-agents 0.24: description "Args:\na: ...", param_descriptions None.
    doc = generate_func_documentation(func)
    assert doc.description is None
    assert doc.param_descriptions == {"a": "the first addend.", "b": "the second addend."}
    tool = function_tool(func)
    assert _properties(tool) == {"a": "the first addend.", "b": "the second addend."}
    assert tool.description == ""


def test_opening_args_followed_by_another_section() -> None:
    doc = generate_func_documentation(args_first_then_returns)
    assert doc.description is None
    assert doc.param_descriptions == {"a": "the number."}


def test_args_after_a_blank_first_line_matches_the_reference() -> None:
    # openai-agents 0.24 handles this one: description None, {"a": "the number."}.
    doc = generate_func_documentation(args_after_blank_first_line)
    assert (doc.description, doc.param_descriptions) == (None, {"a": "the number."})


def test_args_wins_over_other_parameters_for_the_same_name() -> None:
    doc = "Do it.\n\nOther Parameters:\n    x: from other.\n\nArgs:\n    x: from args.\n"
    assert parse_docstring(doc, "google")[1] == {"x": "from args."}
    doc = "Do it.\n\nArgs:\n    x: from args.\n\nKeyword Args:\n    x: from keyword.\n"
    assert parse_docstring(doc, "google")[1] == {"x": "from args."}


def test_summary_text_is_not_mistaken_for_a_section() -> None:
    description, params = parse_docstring("Returns the sum: a plus b.\n\nArgs:\n    a: x.\n")
    assert description == "Returns the sum: a plus b."
    assert params == {"a": "x."}
