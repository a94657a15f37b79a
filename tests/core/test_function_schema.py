"""Schema derivation and docstrings (spec §1.2, §1.3, §1.5, §12 items 1-4), vs. the reference SDK."""

from __future__ import annotations

import enum
import functools
import json
from typing import Annotated, Any, Literal, Optional

import agents
import pytest
from agents.models.openai_responses import Converter
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from core import FunctionTool, RunContextWrapper, function_tool
from core.context import ToolContext
from core.errors import UserError
from core.tools.docstrings import detect_docstring_style, generate_func_documentation
from core.tools.function_schema import function_schema


def _reference_wire(tool: Any) -> dict[str, Any]:
    """The reference SDK's ``tools`` entry for one of its FunctionTools."""
    payload, _ = Converter._convert_function_tool(tool)
    return dict(payload)


# -- seed block 4 ("Function tools"): printed output of the page -----------------------------

SEED_PRINTED = """
fetch_weather
Fetch the weather for a given location.
{
"$defs": {
  "Location": {
    "properties": {
      "lat": {"title": "Lat", "type": "number"},
      "long": {"title": "Long", "type": "number"}
    },
    "required": ["lat", "long"],
    "title": "Location",
    "type": "object"
  }
},
"properties": {
  "location": {
    "$ref": "#/$defs/Location",
    "description": "The location to fetch the weather for."
  }
},
"required": ["location"],
"title": "fetch_weather_args",
"type": "object"
}

fetch_data
Read the contents of a file.
{
"properties": {
  "path": {"description": "The path to the file to read.", "title": "Path", "type": "string"},
  "directory": {
    "anyOf": [{"type": "string"}, {"type": "null"}],
    "default": null,
    "description": "The directory to read the file from.",
    "title": "Directory"
  }
},
"required": ["path"],
"title": "fetch_data_args",
"type": "object"
}
"""


class Location(TypedDict):
    lat: float
    long: float


def _seed_tools() -> list[FunctionTool]:
    @function_tool
    async def fetch_weather(location: Location) -> str:
        """Fetch the weather for a given location.

        Args:
            location: The location to fetch the weather for.
        """
        return "sunny"

    @function_tool(name_override="fetch_data")
    def read_file(ctx: RunContextWrapper[Any], path: str, directory: str | None = None) -> str:
        """Read the contents of a file.

        Args:
            path: The path to the file to read.
            directory: The directory to read the file from.
        """
        return "<file contents>"

    return [fetch_weather, read_file]


def _parse_printed(text: str) -> list[tuple[str, str, Any]]:
    blocks = [b.strip() for b in text.strip().split("\n\n")]
    out = []
    for block in blocks:
        name, description, schema = block.split("\n", 2)
        out.append((name, description, json.loads(schema)))
    return out


def test_seed_function_tools_example_prints_the_page_output() -> None:
    expected = _parse_printed(SEED_PRINTED)
    tools = _seed_tools()
    assert [(t.name, t.description, t.params_json_schema) for t in tools] == expected
    # printing works as on the page (json.dumps of the stored schema)
    for tool, (_, _, schema) in zip(tools, expected, strict=True):
        assert json.loads(json.dumps(tool.params_json_schema, indent=2)) == schema


def test_seed_tools_wire_payload_is_strict() -> None:
    weather, data = _seed_tools()
    payload = weather.to_wire()
    assert list(payload) == ["name", "parameters", "strict", "type", "description"]
    params = payload["parameters"]
    assert params["additionalProperties"] is False
    location = params["properties"]["location"]
    assert "$ref" not in location  # $ref with a description sibling is inlined (spec §1.4)
    assert location["description"] == "The location to fetch the weather for."
    assert location["required"] == ["lat", "long"]
    data_params = data.to_wire()["parameters"]
    assert data_params["required"] == ["path", "directory"]
    assert "default" not in data_params["properties"]["directory"]
    assert "ctx" not in data_params["properties"]


# -- comparison with the reference SDK ------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    zip_code: str = Field(description="Postal code.")


class Person(BaseModel):
    name: str
    age: int = 30
    address: Address
    tags: list[str] = []
    nickname: Optional[str] = None  # noqa: UP045 - exercising typing.Optional


class Point(TypedDict):
    x: int
    y: int


def sig_basic(city: str, days: int = 3, unit: Literal["c", "f"] | None = None) -> str:
    """Get the weather.

    Args:
        city: The city name.
    """
    return ""


def sig_models(person: Person, where: Address | None = None, color: Color = Color.RED) -> str:
    """Store a person.

    Args:
        person: Who.
        where: Optional place.
        color: Favourite colour.
    """
    return ""


def sig_typed_dict(points: list[Point], origin: Point, scale: float = 1.5) -> str:
    """Sum points."""
    return ""


def sig_star_args(prefix: str, *values: int, sep: str = ",", flag: bool = False) -> str:
    """Join values.

    Args:
        prefix: Leading text.
        *values: The numbers.
        sep: Separator.
    """
    return ""


def sig_context(ctx: ToolContext[Any], query: Annotated[str, "The query."], limit: int = 10) -> str:
    return ""


def sig_untyped(first, second: int):
    return ""


def sig_numpy(a: int, b: list[float] | None = None) -> str:
    """Compute a thing.

    Parameters
    ----------
    a : int
        The a value.
    b : list of float
        The b values.

    Returns
    -------
    str
        Result.
    """
    return ""


def sig_sphinx(a: int, b: str = "x") -> str:
    """Compute with sphinx docs.

    :param a: The a value.
    :param b: The b value.
    :return: Result.
    """
    return ""


def sig_google_glued(a: int, mode: Literal["x", "y"] = "x") -> str:
    """Do the thing.
    Args:
        a: The a value.
        mode: The mode.
    """
    return ""


def sig_field_default(score: int = Field(..., ge=0, le=100, description="Score")) -> str:
    return ""


def sig_field_annotated(
    score: Annotated[int, Field(ge=0, le=100, description="Score from 0 to 100")],
    name: Annotated[str, Field(min_length=2, pattern="^[a-z]+$")] = "ab",
) -> str:
    """Score it.

    Args:
        score: Docstring wins.
    """
    return ""


def sig_nested_lists(matrix: list[list[int]], lookup: tuple[str, int]) -> str:
    return ""


async def sig_async(a: int) -> str:
    """Async tool."""
    return ""


class CallableTool:
    """A callable class tool."""

    def __call__(self, x: int, y: str = "q") -> str:
        """Call.

        Args:
            x: The x.
        """
        return ""


SIGNATURES = [
    sig_basic,
    sig_models,
    sig_typed_dict,
    sig_star_args,
    sig_untyped,
    sig_numpy,
    sig_sphinx,
    sig_google_glued,
    sig_field_default,
    sig_field_annotated,
    sig_nested_lists,
    sig_async,
    CallableTool(),
]


def _label(func: Any) -> str:
    return getattr(func, "__name__", type(func).__name__)


@pytest.mark.parametrize("func", SIGNATURES, ids=_label)
@pytest.mark.parametrize("strict", [True, False], ids=["strict", "loose"])
def test_wire_payload_matches_reference_sdk(func: Any, strict: bool) -> None:
    ours = function_tool(func, strict_mode=strict)
    theirs = agents.function_tool(func, strict_mode=strict)
    reference = _reference_wire(theirs)
    assert ours.to_wire() == reference
    assert list(ours.to_wire()) == list(reference)
    if strict:
        # The reference keeps the strict form in params_json_schema; Tandem keeps the derived
        # schema there (seed README) and derives the same strict form for the wire.
        assert ours.params_json_schema == function_schema(func).params_json_schema
    else:
        assert ours.params_json_schema == theirs.params_json_schema


@pytest.mark.parametrize("style", ["google", "numpy", "sphinx"])
@pytest.mark.parametrize("func", [sig_basic, sig_numpy, sig_sphinx], ids=_label)
def test_forced_docstring_style_matches_reference(func: Any, style: str) -> None:
    ours = function_tool(func, docstring_style=style)  # type: ignore[call-overload]
    theirs = agents.function_tool(func, docstring_style=style)  # type: ignore[call-overload]
    assert ours.to_wire() == _reference_wire(theirs)


def ref_sig_context(
    ctx: agents.RunContextWrapper[Any], query: Annotated[str, "The query."], limit: int = 10
) -> str:
    return ""


@pytest.mark.parametrize("use_docs", [True, False])
def test_context_signature_matches_reference(use_docs: bool) -> None:
    ours = function_tool(sig_context, use_docstring_info=use_docs)
    theirs = agents.function_tool(
        ref_sig_context, name_override="sig_context", use_docstring_info=use_docs
    )
    assert ours.to_wire() == _reference_wire(theirs)


def test_use_docstring_info_false_keeps_annotated_descriptions() -> None:
    ours = function_tool(sig_context, use_docstring_info=False)
    assert ours.params_json_schema["properties"]["query"]["description"] == "The query."
    bare = function_tool(sig_basic, use_docstring_info=False)
    assert bare.description == ""
    assert "description" not in bare.params_json_schema["properties"]["city"]


def test_overrides_and_defer_loading_and_callers_on_the_wire() -> None:
    tool = function_tool(
        sig_basic,
        name_override="weather",
        description_override="Weather lookup.",
        defer_loading=True,
        allowed_callers=["direct", "programmatic"],
    )
    payload = tool.to_wire()
    assert list(payload) == [
        "name",
        "parameters",
        "strict",
        "type",
        "description",
        "defer_loading",
        "allowed_callers",
    ]
    assert payload["name"] == "weather" and payload["description"] == "Weather lookup."
    assert payload["parameters"]["title"] == "weather_args"
    assert payload["defer_loading"] is True
    assert payload["allowed_callers"] == ["direct", "programmatic"]
    theirs = agents.function_tool(
        sig_basic,
        name_override="weather",
        description_override="Weather lookup.",
        defer_loading=True,
        allowed_callers=["direct", "programmatic"],
    )
    assert payload == _reference_wire(theirs)


def test_verified_example_from_spec() -> None:
    payload = function_tool(sig_basic, name_override="get_weather").to_wire()
    assert payload == {
        "type": "function",
        "name": "get_weather",
        "description": "Get the weather.",
        "strict": True,
        "parameters": {
            "title": "get_weather_args",
            "type": "object",
            "additionalProperties": False,
            "required": ["city", "days", "unit"],
            "properties": {
                "city": {"title": "City", "type": "string", "description": "The city name."},
                "days": {"title": "Days", "type": "integer", "default": 3},
                "unit": {
                    "title": "Unit",
                    "anyOf": [{"type": "string", "enum": ["c", "f"]}, {"type": "null"}],
                },
            },
        },
    }


# -- rules of §1.2 --------------------------------------------------------------------------


def test_dict_and_kwargs_rejected_in_strict_mode_accepted_otherwise() -> None:
    def takes_dict(d: dict[str, int]) -> str:
        return ""

    def takes_kwargs(**extra: int) -> str:
        return ""

    for func in (takes_dict, takes_kwargs):
        with pytest.raises(UserError, match="additionalProperties"):
            function_tool(func)
        loose = function_tool(func, strict_mode=False)
        assert loose.to_wire()["strict"] is False
        assert loose.to_wire() == _reference_wire(agents.function_tool(func, strict_mode=False))


def test_context_parameter_excluded_only_in_first_position() -> None:
    def with_ctx(ctx: RunContextWrapper[Any], a: int) -> str:
        return ""

    def with_tool_ctx(ctx: ToolContext[Any], a: int) -> str:
        return ""

    for func in (with_ctx, with_tool_ctx):
        schema = function_schema(func)
        assert schema.takes_context
        assert list(schema.params_json_schema["properties"]) == ["a"]

    def late(a: int, ctx: RunContextWrapper[Any]) -> str:
        return ""

    with pytest.raises(UserError, match="non-first position in function late"):
        function_tool(late)


def test_unannotated_first_parameter_is_a_field() -> None:
    schema = function_schema(sig_untyped)
    assert not schema.takes_context
    assert schema.params_json_schema["properties"]["first"] == {"title": "First"}


def test_description_precedence_docstring_then_annotated_then_field() -> None:
    def f(
        a: Annotated[int, "ann a"],
        b: Annotated[int, "ann b", Field(description="field b")],
        c: Annotated[int, Field(description="field c")],
    ) -> str:
        """Doc.

        Args:
            a: doc a.
        """
        return ""

    props = function_schema(f).params_json_schema["properties"]
    assert props["a"]["description"] == "doc a."
    assert props["b"]["description"] == "ann b"
    assert props["c"]["description"] == "field c"


def test_field_constraints_in_schema_seed_block_6() -> None:
    @function_tool
    def score_a(score: int = Field(..., ge=0, le=100, description="Score from 0 to 100")) -> str:
        return f"Score recorded: {score}"

    @function_tool
    def score_b(
        score: Annotated[int, Field(..., ge=0, le=100, description="Score from 0 to 100")],
    ) -> str:
        return f"Score recorded: {score}"

    for tool in (score_a, score_b):
        prop = tool.params_json_schema["properties"]["score"]
        assert prop == {
            "description": "Score from 0 to 100",
            "maximum": 100,
            "minimum": 0,
            "title": "Score",
            "type": "integer",
        }
        assert tool.params_json_schema["required"] == ["score"]


def test_star_args_and_kwargs_binding() -> None:
    def f(a: int, *rest: int, k: str = "x", **extra: float) -> str:
        return ""

    schema = function_schema(f, strict_json_schema=False)
    model = schema.params_pydantic_model
    parsed = model.model_validate({"a": 1, "rest": [2, 3], "extra": {"z": 1.5}})
    assert schema.to_call_args(parsed) == ([1, 2, 3], {"k": "x", "z": 1.5})
    assert schema.params_json_schema["required"] == ["a"]


def test_callable_instances_and_rejections() -> None:
    tool = function_tool(CallableTool())
    assert tool.name == "CallableTool"
    assert tool.description == "A callable class tool."

    class Bad:
        def __call__(self, x: int) -> str:
            return ""

    Bad.__name__ = "Bad name!"
    with pytest.raises(UserError, match="name_override"):
        function_tool(Bad())
    assert function_tool(Bad(), name_override="ok").name == "ok"

    def g(a: int, b: str) -> str:
        return ""

    with pytest.raises(UserError, match="partial"):
        function_tool(functools.partial(g, 1))

    class Wrapper:
        def __init__(self) -> None:
            self.__wrapped__ = g

        def __call__(self, *a: Any) -> str:
            return ""

    with pytest.raises(UserError, match="__wrapped__"):
        function_tool(Wrapper())


def test_tool_name_is_not_sanitized_for_functions() -> None:
    assert function_tool(lambda x: x).name == "<lambda>"


# -- docstrings (§1.3) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "style"),
    [
        ("Plain text.", "google"),
        ("Text.\n\nArgs:\n    a: x\n\nReturns:\n    y", "google"),
        ("Text.\n\n:param a: x\n:return: y", "sphinx"),
        ("Text.\n\nParameters\n----------\na : int\n    x", "numpy"),
        # ties resolve sphinx > numpy > google
        ("Text.\n\nArgs:\n    a: x\n:param a: x", "sphinx"),
        ("Text.\n\nParameters\n---\na : int\nArgs:\n    a: y", "numpy"),
        ("Text.\n\n:param a: x\n:type a: int\nParameters\n---\nReturns\n---", "sphinx"),
        ("Text.\n\nParameters\n---\nReturns\n---\n:param a: x", "numpy"),
    ],
)
def test_style_detection(doc: str, style: str) -> None:
    assert detect_docstring_style(doc) == style


def test_descriptions_flow_into_schema_for_each_style() -> None:
    for func in (sig_numpy, sig_sphinx, sig_google_glued):
        doc = generate_func_documentation(func)
        assert doc.param_descriptions["a"] == "The a value."
        assert function_schema(func).params_json_schema["properties"]["a"]["description"] == (
            "The a value."
        )
    assert generate_func_documentation(sig_google_glued).description == "Do the thing."
    star = generate_func_documentation(sig_star_args)
    assert star.param_descriptions["values"] == "The numbers."


def test_no_docstring_means_empty_description() -> None:
    def nodoc(x: int) -> str:
        return ""

    assert generate_func_documentation(nodoc).description is None
    assert function_tool(nodoc).to_wire()["description"] == ""
