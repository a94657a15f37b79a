"""Structured function-tool outputs and the ``function_call_output`` input item (spec §1.6, §1.8)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired

from pydantic import BaseModel, TypeAdapter, ValidationError, model_validator
from typing_extensions import TypedDict

__all__ = [
    "ToolOutputFileContent",
    "ToolOutputFileContentDict",
    "ToolOutputImage",
    "ToolOutputImageDict",
    "ToolOutputText",
    "ToolOutputTextDict",
    "function_call_output_item",
    "tool_output_content",
]

ImageDetail = Literal["low", "high", "auto"]


class ToolOutputText(BaseModel):
    """A text part of a tool output, sent as ``{"type": "input_text", "text": ...}``."""

    type: Literal["text"] = "text"
    text: str


class ToolOutputImage(BaseModel):
    """An image part of a tool output, sent as ``{"type": "input_image", ...}``.

    Raises:
        pydantic.ValidationError: neither ``image_url`` nor ``file_id`` is given.
    """

    type: Literal["image"] = "image"
    image_url: str | None = None
    file_id: str | None = None
    detail: ImageDetail | None = None

    @model_validator(mode="after")
    def _needs_a_source(self) -> ToolOutputImage:
        if self.image_url is None and self.file_id is None:
            raise ValueError("At least one of image_url or file_id must be provided")
        return self


class ToolOutputFileContent(BaseModel):
    """A file part of a tool output, sent as ``{"type": "input_file", ...}``.

    Raises:
        pydantic.ValidationError: none of ``file_data``, ``file_url``, ``file_id`` is given.
    """

    type: Literal["file"] = "file"
    file_data: str | None = None
    file_url: str | None = None
    file_id: str | None = None
    filename: str | None = None

    @model_validator(mode="after")
    def _needs_a_source(self) -> ToolOutputFileContent:
        if self.file_data is None and self.file_url is None and self.file_id is None:
            raise ValueError("At least one of file_data, file_url, or file_id must be provided")
        return self


class ToolOutputTextDict(TypedDict):
    """Dict form of :class:`ToolOutputText`: ``{"type": "text", "text": ...}``."""

    type: Literal["text"]
    text: str


class ToolOutputImageDict(TypedDict):
    """Dict form of :class:`ToolOutputImage` (``type`` ``"image"``)."""

    type: Literal["image"]
    image_url: NotRequired[str]
    file_id: NotRequired[str]
    detail: NotRequired[ImageDetail]


class ToolOutputFileContentDict(TypedDict):
    """Dict form of :class:`ToolOutputFileContent` (``type`` ``"file"``)."""

    type: Literal["file"]
    file_data: NotRequired[str]
    file_url: NotRequired[str]
    file_id: NotRequired[str]
    filename: NotRequired[str]


_StructuredOutput = ToolOutputText | ToolOutputImage | ToolOutputFileContent
_DICT_ADAPTER: TypeAdapter[_StructuredOutput] = TypeAdapter(_StructuredOutput)
_MODELS = (ToolOutputText, ToolOutputImage, ToolOutputFileContent)


def _as_structured(value: Any) -> _StructuredOutput | None:
    """``value`` as a structured output model, or ``None`` when it is not one (spec §1.8)."""
    if isinstance(value, _MODELS):
        return value
    if isinstance(value, Mapping) and "type" in value:
        try:
            return _DICT_ADAPTER.validate_python(dict(value))
        except ValidationError:
            return None
    return None


def _content_part(output: _StructuredOutput) -> dict[str, Any]:
    if isinstance(output, ToolOutputText):
        return {"type": "input_text", "text": output.text}
    if isinstance(output, ToolOutputImage):
        part: dict[str, Any] = {"type": "input_image"}
        keys: tuple[str, ...] = ("image_url", "file_id", "detail")
    else:
        part = {"type": "input_file"}
        keys = ("file_data", "file_url", "file_id", "filename")
    for key in keys:
        value = getattr(output, key)
        if value is not None:
            part[key] = value
    return part


def tool_output_content(value: Any) -> str | list[dict[str, Any]]:
    """The ``output`` field for a tool's return value (spec §1.8).

    Args:
        value: whatever the tool returned.

    Returns:
        ``value`` itself for a ``str``; a list of ``input_text``/``input_image``/``input_file``
        content parts for one structured output or a non-empty list/tuple made only of them;
        otherwise ``str(value)`` (the Python repr for dicts, lists, ``None``...).
    """
    if isinstance(value, str):
        return value
    single = _as_structured(value)
    if single is not None:
        return [_content_part(single)]
    if isinstance(value, (list, tuple)) and value:
        parts = [_as_structured(item) for item in value]
        if all(part is not None for part in parts):
            return [_content_part(part) for part in parts if part is not None]
    return str(value)


def function_call_output_item(call: Mapping[str, Any] | Any, value: Any) -> dict[str, Any]:
    """The ``function_call_output`` input item answering ``call`` (spec §1.6).

    Args:
        call: the model's ``function_call`` item (a dict, or an object with attributes).
        value: the tool's return value, converted by :func:`tool_output_content`.

    Returns:
        ``{"call_id", "output", "type": "function_call_output"}`` plus ``caller`` when the call
        carried one.
    """
    get = call.get if isinstance(call, Mapping) else lambda key: getattr(call, key, None)
    item: dict[str, Any] = {
        "call_id": get("call_id"),
        "output": tool_output_content(value),
        "type": "function_call_output",
    }
    caller = get("caller")
    if caller is not None:
        item["caller"] = (
            caller.model_dump(exclude_none=True) if isinstance(caller, BaseModel) else caller
        )
    return item
