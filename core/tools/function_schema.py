"""Argument schema of a Python callable, derived with Pydantic (spec §1.2)."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from ..context import RunContextWrapper
from ..errors import UserError
from .docstrings import DocstringStyle, generate_func_documentation, is_callable_instance
from .strict_schema import ensure_strict_json_schema

__all__ = ["FuncSchema", "bound_call", "function_schema", "validate_tool_callable"]

_GENERATED_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MISSING = object()


@dataclass(slots=True)
class FuncSchema:
    """A callable's tool contract.

    Attributes:
        name: the tool name (``name_override`` or the callable's name).
        description: the docstring description or ``description_override`` (``None`` if neither).
        params_pydantic_model: the ``<name>_args`` model that validates the arguments.
        params_json_schema: that model's ``model_json_schema()`` (the non-strict form).
        signature: the callable's signature (the context parameter included).
        takes_context: whether the first parameter receives the run/tool context.
        strict_json_schema: whether the strict form is used on the wire.
        strict_params_json_schema: the strict form (``None`` when not strict).
        return_annotation: the callable's return annotation.
    """

    name: str
    description: str | None
    params_pydantic_model: type[BaseModel]
    params_json_schema: dict[str, Any]
    signature: inspect.Signature
    takes_context: bool = False
    strict_json_schema: bool = True
    strict_params_json_schema: dict[str, Any] | None = None
    return_annotation: Any = None

    def to_call_args(self, data: BaseModel) -> tuple[list[Any], dict[str, Any]]:
        """Split validated arguments into ``(positional, keyword)`` for calling (spec §1.2).

        Parameters before ``*args`` go positionally, ``*args`` is expanded, keyword-only
        parameters go by keyword and ``**kwargs`` is merged into the keywords. The context
        parameter is not included.
        """
        positional: list[Any] = []
        keyword: dict[str, Any] = {}
        for index, (name, param) in enumerate(self.signature.parameters.items()):
            if index == 0 and self.takes_context:
                continue
            value = getattr(data, name, None)
            if param.kind is inspect.Parameter.VAR_POSITIONAL:
                positional.extend(value or ())
            elif param.kind is inspect.Parameter.VAR_KEYWORD:
                keyword.update(value or {})
            elif param.kind is inspect.Parameter.KEYWORD_ONLY:
                keyword[name] = value
            else:
                positional.append(value)
        return positional, keyword


def bound_call(func: Any) -> Callable[..., Any]:
    """What calling ``func`` runs: for a callable instance, its class's ``__call__`` bound to it.

    Functions, methods and other routines are returned unchanged.

    Python calls ``type(obj).__call__``, never an instance attribute named ``__call__``; the
    reference resolves the method from the class MRO the same way (openai-agents 0.24
    ``_normalize_function_tool_callable``), so an instance attribute cannot redirect the call.
    """
    if not is_callable_instance(func):
        return func
    owner = next((k for k in type(func).__mro__ if "__call__" in k.__dict__), None)
    call = owner.__dict__["__call__"] if owner is not None else None
    if call is None or not hasattr(call, "__get__"):
        return func  # not callable through its class: validate_tool_callable reports it
    bound: Callable[..., Any] = call.__get__(func, type(func))
    return bound


def validate_tool_callable(func: Any, name_override: str | None = None) -> None:
    """Reject callables whose contract cannot be inferred (spec §1.2 item 3).

    Raises:
        UserError: ``func`` is a ``functools.partial``, a callable instance carrying
            ``__wrapped__``, or a callable instance whose class name is not a valid tool name
            (``[A-Za-z0-9_-]{1,64}``) while no ``name_override`` is given.
    """
    if isinstance(func, functools.partial):
        raise UserError(
            "function_tool cannot infer the arguments of a functools.partial object. "
            "Use an explicit wrapper function."
        )
    if not callable(func):
        raise UserError(f"function_tool needs a callable, got {type(func).__name__}.")
    if is_callable_instance(func):
        # getattr_static: a class ``__getattr__`` answers every name (openai-agents 0.24 too).
        if inspect.getattr_static(func, "__wrapped__", _MISSING) is not _MISSING:
            raise UserError(
                "function_tool only infers plain callable instances, not wrapper objects "
                "(the object has __wrapped__). Use an explicit wrapper function."
            )
        class_name = type(func).__name__
        if name_override is None and not _GENERATED_NAME.fullmatch(class_name):
            raise UserError(
                f"Cannot derive a function tool name from callable class {class_name!r}: a "
                "name must be 1-64 ASCII letters, digits, underscores or hyphens. Pass "
                "name_override to function_tool()."
            )


def function_schema(
    func: Callable[..., Any],
    docstring_style: DocstringStyle | None = None,
    name_override: str | None = None,
    description_override: str | None = None,
    use_docstring_info: bool = True,
    strict_json_schema: bool = True,
) -> FuncSchema:
    """Derive the tool name, description and argument schema of ``func`` (spec §1.2).

    Args:
        func: a function, bound method or callable class instance.
        docstring_style: forced docstring style; detected when ``None``.
        name_override: the tool name to use instead of the callable's name.
        description_override: the description to use instead of the docstring's.
        use_docstring_info: read descriptions from the docstring (``Annotated`` string
            descriptions are used either way).
        strict_json_schema: also compute the strict form (raising on dict-typed parameters).

    Returns:
        A :class:`FuncSchema`; its ``params_json_schema`` is the Pydantic schema whose
        root ``title`` is ``<name>_args``.

    Raises:
        UserError: an unsupported callable (see :func:`validate_tool_callable`), a context
            parameter anywhere but first, or a schema that cannot be made strict.
    """
    validate_tool_callable(func, name_override)
    doc = generate_func_documentation(func, docstring_style if use_docstring_info else None)
    param_docs = doc.param_descriptions if use_docstring_info else {}
    description = description_override or (doc.description if use_docstring_info else None)
    name = name_override or doc.name

    target = bound_call(func)
    hints = get_type_hints(target, include_extras=True)
    signature = inspect.signature(target)
    params = list(signature.parameters.items())

    takes_context = False
    if params and params[0][0] in hints and _is_context_annotation(hints[params[0][0]]):
        takes_context = True
        params = params[1:]
    for param_name, _ in params:
        if param_name in hints and _is_context_annotation(hints[param_name]):
            raise UserError(
                "RunContextWrapper/ToolContext param found at non-first position in function "
                f"{getattr(func, '__name__', doc.name)}"
            )

    fields: dict[str, Any] = {}
    has_var_keyword = False
    for param_name, param in params:
        field_type, field_info = _field_definition(
            param, hints.get(param_name, Any), param_docs.get(param_name)
        )
        has_var_keyword |= param.kind is param.VAR_KEYWORD
        fields[param_name] = (field_type, field_info)

    # **kwargs are their own field, so other unknown keys are refused (as the reference does).
    config = ConfigDict(extra="forbid") if has_var_keyword else None
    model = create_model(f"{name}_args", __config__=config, **fields)
    raw_schema = model.model_json_schema()
    return FuncSchema(
        name=name,
        description=description,
        params_pydantic_model=model,
        params_json_schema=raw_schema,
        signature=signature,
        takes_context=takes_context,
        strict_json_schema=strict_json_schema,
        strict_params_json_schema=(
            ensure_strict_json_schema(raw_schema) if strict_json_schema else None
        ),
        return_annotation=hints.get("return", signature.return_annotation),
    )


def _is_context_annotation(annotation: Any) -> bool:
    base = _split_annotated(annotation)[0]
    origin = get_origin(base) or base
    return isinstance(origin, type) and issubclass(origin, RunContextWrapper)


def _split_annotated(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    """``(base type, metadata)`` of an ``Annotated[...]`` hint; ``(hint, ())`` otherwise."""
    if get_origin(annotation) is Annotated:
        return annotation.__origin__, tuple(annotation.__metadata__)
    return annotation, ()


def _field_definition(
    param: inspect.Parameter, annotation: Any, doc_description: str | None
) -> tuple[Any, FieldInfo]:
    """The Pydantic ``(type, FieldInfo)`` for one parameter (spec §1.2 item 5)."""
    base, metadata = _split_annotated(annotation)
    annotated_description = next((m for m in metadata if isinstance(m, str)), None)
    kept = tuple(m for m in metadata if not isinstance(m, str))
    field_type: Any = Annotated[(base, *kept)] if kept else base
    description = doc_description or annotated_description
    described: dict[str, Any] = {"description": description} if description else {}

    if param.kind is param.VAR_POSITIONAL:
        element = field_type if param.annotation is not param.empty else Any
        return list[element], Field(default_factory=list, **described)  # type: ignore[valid-type]
    if param.kind is param.VAR_KEYWORD:
        if param.annotation is param.empty:
            return dict[str, Any], Field(default_factory=dict, **described)
        mapping = field_type if get_origin(base) is dict else dict[str, field_type]
        return mapping, Field(default_factory=dict, **described)

    default = param.default
    if isinstance(default, FieldInfo):
        info = FieldInfo.merge_field_infos(default, **described) if described else default
        return field_type, info
    if default is param.empty:
        return field_type, Field(**described)
    return field_type, Field(default=default, **described)
