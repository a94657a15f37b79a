"""ShellTool / LocalShellTool: configuration, wire payloads, call coercion, outputs (spec §4)."""

from __future__ import annotations

from typing import Any

import pytest

from core.context import RunContextWrapper
from core.errors import ModelBehaviorError, UserError
from core.tools.local import ApprovalDecision, LocalCallHandler
from core.tools.shell import (
    LocalShellCommandRequest,
    LocalShellTool,
    ShellActionRequest,
    ShellCallOutcome,
    ShellCommandOutput,
    ShellCommandRequest,
    ShellResult,
    ShellTool,
    coerce_shell_call,
    render_shell_outputs,
    truncate_shell_outputs,
)

TIMEOUT_ERROR = (
    "Shell call action timeout must be a positive integer in milliseconds, zero, or None."
)


def echo_executor(request: ShellCommandRequest) -> str:
    return " ".join(request.data.action.commands)


def ctx() -> RunContextWrapper[Any]:
    return RunContextWrapper(context=None)


def call(commands: Any = ("ls",), call_id: str = "call_1", **action: Any) -> dict[str, Any]:
    act: dict[str, Any] = {"commands": list(commands) if commands is not None else None}
    act.update(action)
    return {"type": "shell_call", "id": "sh_1", "call_id": call_id, "action": act}


# -- §4.1 configuration -------------------------------------------------------------------------


def test_local_mode_requires_executor() -> None:
    with pytest.raises(
        UserError, match=r"^ShellTool with local environment requires an executor\.$"
    ):
        ShellTool()
    with pytest.raises(UserError):
        ShellTool(environment={"type": "local"})


def test_environment_without_type_is_local() -> None:
    tool = ShellTool(executor=echo_executor, environment={})
    assert tool.environment == {"type": "local"}
    assert not tool.is_hosted
    assert tool.name == "shell"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"executor": echo_executor},
            "ShellTool with hosted environment does not accept an executor.",
        ),
        (
            {"needs_approval": True},
            "ShellTool with hosted environment does not support needs_approval or on_approval.",
        ),
        (
            {"on_approval": lambda c, i: {"approve": True}},
            "ShellTool with hosted environment does not support needs_approval or on_approval.",
        ),
    ],
)
@pytest.mark.parametrize(
    "environment",
    [{"type": "container_auto"}, {"type": "container_reference", "container_id": "cntr_1"}],
)
def test_hosted_mode_forbids_local_options(
    kwargs: dict[str, Any], message: str, environment: dict[str, Any]
) -> None:
    with pytest.raises(UserError) as info:
        ShellTool(environment=environment, **kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("limit", ["1g", "4g", "16g", "64g"])
def test_memory_limit_accepted(limit: str) -> None:
    tool = ShellTool(environment={"type": "container_auto", "memory_limit": limit})
    assert tool.to_wire()["environment"]["memory_limit"] == limit


@pytest.mark.parametrize("limit", ["2g", "8g", "4G", "", 4])
def test_memory_limit_rejected(limit: Any) -> None:
    with pytest.raises(UserError, match="memory_limit"):
        ShellTool(environment={"type": "container_auto", "memory_limit": limit})


@pytest.mark.parametrize(
    "environment",
    [
        {"type": "container_reference"},
        {"type": "container_auto", "network_policy": {"type": "open"}},
        {"type": "container_auto", "skills": [{"type": "zip"}]},
        {"type": "kubernetes"},
    ],
)
def test_invalid_hosted_environments(environment: dict[str, Any]) -> None:
    with pytest.raises(UserError):
        ShellTool(environment=environment)


# -- §4.2 wire payloads -------------------------------------------------------------------------


def test_local_wire_payload_and_name_not_sent() -> None:
    tool = ShellTool(executor=echo_executor, name="my_shell")
    assert tool.to_wire(None) == {"type": "shell", "environment": {"type": "local"}}


def test_local_skills_go_to_the_wire_as_given() -> None:
    skills = [{"name": "csv", "description": "CSV helpers", "path": "/skills/csv"}]
    tool = ShellTool(executor=echo_executor, environment={"type": "local", "skills": skills})
    assert tool.to_wire("gpt-5") == {
        "type": "shell",
        "environment": {"type": "local", "skills": skills},
    }


def test_container_auto_payload_matches_spec_example() -> None:
    environment = {
        "type": "container_auto",
        "network_policy": {
            "type": "allowlist",
            "allowed_domains": ["pypi.org"],
            "domain_secrets": [{"domain": "pypi.org", "name": "TOKEN", "value": "..."}],
        },
        "skills": [{"type": "skill_reference", "skill_id": "skill_1", "version": "1"}],
        "file_ids": ["file_1"],
        "memory_limit": "4g",
    }
    tool = ShellTool(environment=environment)
    assert tool.is_hosted
    assert tool.to_wire() == {"type": "shell", "environment": environment}


def test_container_auto_disabled_network_and_inline_skill() -> None:
    inline = {
        "type": "inline",
        "name": "tool",
        "description": "d",
        "source": {"type": "base64", "media_type": "application/zip", "data": "UEsDBA=="},
    }
    environment: dict[str, Any] = {
        "type": "container_auto",
        "network_policy": {"type": "disabled"},
        "skills": [inline],
    }
    tool = ShellTool(environment=environment)
    assert tool.to_wire()["environment"] == environment


def test_container_reference_payload_and_allowed_callers() -> None:
    tool = ShellTool(
        environment={"type": "container_reference", "container_id": "cntr_1"},
        allowed_callers=["code_interpreter"],
    )
    assert tool.to_wire() == {
        "type": "shell",
        "environment": {"type": "container_reference", "container_id": "cntr_1"},
        "allowed_callers": ["code_interpreter"],
    }


def test_memory_limit_none_is_omitted() -> None:
    tool = ShellTool(environment={"type": "container_auto", "memory_limit": None})
    assert tool.to_wire()["environment"] == {"type": "container_auto"}


def test_tools_implement_the_local_call_handler_protocol() -> None:
    shell = ShellTool(executor=echo_executor)
    legacy = LocalShellTool(executor=lambda r: "")
    assert isinstance(shell, LocalCallHandler)
    assert isinstance(legacy, LocalCallHandler)
    assert shell.call_item_types == ("shell_call",)
    assert legacy.call_item_types == ("local_shell_call",)


# -- §4.4 coerce_shell_call ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"action": {"commands": ["ls"]}}, "Shell call is missing call_id."),
        ({"id": "sh", "action": {"commands": ["ls"]}}, "Shell call is missing call_id."),
        ({"call_id": "c"}, "Shell call is missing an action payload."),
        (
            {"call_id": "c", "action": {"commands": "ls"}},
            "Shell call action commands must be a sequence of command strings.",
        ),
        (
            {"call_id": "c", "action": {}},
            "Shell call action commands must be a sequence of command strings.",
        ),
        (
            {"call_id": "c", "action": {"commands": {"ls": 1}}},
            "Shell call action commands must be a sequence of command strings.",
        ),
        (
            {"call_id": "c", "action": {"commands": []}},
            "Shell call action must include at least one command.",
        ),
        (
            {"call_id": "c", "action": {"commands": [None, None]}},
            "Shell call action must include at least one command.",
        ),
    ],
)
def test_malformed_calls(raw: dict[str, Any], message: str) -> None:
    tool = ShellTool(executor=echo_executor)
    with pytest.raises(ModelBehaviorError) as info:
        tool.validate_call(raw)
    assert str(info.value) == message


def test_commands_drop_none_and_stringify() -> None:
    data = coerce_shell_call(call([None, 1, "x"]))
    assert data.action.commands == ["1", "x"]
    assert data.call_id == "call_1"


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ({}, None),
        ({"timeout_ms": 0}, None),
        ({"timeout_ms": None}, None),
        ({"timeout_ms": 250}, 250),
        ({"timeout_ms": 0, "timeoutMs": 500}, 500),
        ({"timeout_ms": None, "timeout": 7}, 7),
        ({"timeoutMs": 9, "timeout": 7}, 9),
    ],
)
def test_timeout_coercion(action: dict[str, Any], expected: int | None) -> None:
    assert coerce_shell_call(call(**action)).action.timeout_ms == expected


@pytest.mark.parametrize("bad", [-1, 1.5, 2.0, "5", True])
def test_invalid_timeouts(bad: Any) -> None:
    with pytest.raises(ModelBehaviorError) as info:
        coerce_shell_call(call(timeout_ms=bad))
    assert str(info.value) == TIMEOUT_ERROR


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ({"max_output_length": 5}, 5),
        ({"maxOutputLength": 5.7}, 5),
        ({"max_output_length": "5"}, None),
        ({"max_output_length": -4}, -4),
        ({}, None),
    ],
)
def test_max_output_length_coercion(action: dict[str, Any], expected: int | None) -> None:
    assert coerce_shell_call(call(**action)).action.max_output_length == expected


def test_status_and_raw_carried() -> None:
    raw = call(["a", "b"]) | {"status": "completed"}
    data = coerce_shell_call(raw)
    assert data.status == "completed"
    assert data.raw is raw


# -- §4.4 output construction -------------------------------------------------------------------


async def test_str_result_becomes_one_exit_zero_entry() -> None:
    tool = ShellTool(executor=lambda r: "shell output")
    result = await tool.execute(ctx(), call())
    assert result.input_item == {
        "type": "shell_call_output",
        "call_id": "call_1",
        "output": [
            {"stdout": "shell output", "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}
        ],
    }
    assert result.output == "shell output"


async def test_async_executor_receives_the_request() -> None:
    seen: list[ShellCommandRequest] = []

    async def executor(request: ShellCommandRequest) -> str:
        seen.append(request)
        return "ok"

    context = ctx()
    await ShellTool(executor=executor).execute(context, call(["a", "b"], timeout_ms=30))
    assert seen[0].ctx_wrapper is context
    assert seen[0].data.action == ShellActionRequest(commands=["a", "b"], timeout_ms=30)


async def test_empty_str_result_yields_empty_output() -> None:
    result = await ShellTool(executor=lambda r: "").execute(ctx(), call())
    assert result.input_item["output"] == []
    assert result.output == "(no output)"


async def test_str_result_cut_to_action_max_length() -> None:
    tool = ShellTool(executor=lambda r: "abcdefghij")
    result = await tool.execute(ctx(), call(max_output_length=4))
    assert result.input_item["max_output_length"] == 4
    assert result.input_item["output"][0]["stdout"] == "abcd"


async def test_shell_result_spec_example() -> None:
    def executor(request: ShellCommandRequest) -> ShellResult:
        return ShellResult(
            output=[
                ShellCommandOutput(
                    stdout="partial", stderr="err", outcome=ShellCallOutcome("timeout")
                ),
                ShellCommandOutput(
                    stdout="x" * 15, stderr="yyy", outcome=ShellCallOutcome("exit", 2)
                ),
            ]
        )

    result = await ShellTool(executor=executor).execute(
        ctx(), call(["a", "b"], call_id="call_2", max_output_length=20)
    )
    assert result.input_item == {
        "type": "shell_call_output",
        "call_id": "call_2",
        "max_output_length": 20,
        "output": [
            {"stdout": "partial", "stderr": "err", "outcome": {"type": "timeout"}},
            {"stdout": "xxxxxxxxxx", "stderr": "", "outcome": {"type": "exit", "exit_code": 2}},
        ],
    }


@pytest.mark.parametrize(
    ("result_max", "action_max", "expected"),
    [(3, 10, 3), (10, 3, 3), (None, 5, 5), (6, None, 6), (-2, None, 0), (None, None, None)],
)
async def test_effective_max_length_is_the_minimum(
    result_max: int | None, action_max: int | None, expected: int | None
) -> None:
    def executor(request: ShellCommandRequest) -> ShellResult:
        return ShellResult(
            output=[ShellCommandOutput(stdout="0123456789", outcome=ShellCallOutcome("exit", 0))],
            max_output_length=result_max,
        )

    extra: dict[str, Any] = {} if action_max is None else {"max_output_length": action_max}
    item = (await ShellTool(executor=executor).execute(ctx(), call(**extra))).input_item
    assert item.get("max_output_length") == expected
    assert item["output"][0]["stdout"] == "0123456789"[: expected if expected is not None else 10]


async def test_exit_code_none_is_sent_as_null_and_mappings_are_accepted() -> None:
    def executor(request: ShellCommandRequest) -> ShellResult:
        return ShellResult(
            output=[
                ShellCommandOutput(stdout="a"),
                {"stdout": "b", "stderr": "c", "outcome": {"type": "exit", "exit_code": 4}},  # type: ignore[list-item]
            ]
        )

    item = (await ShellTool(executor=executor).execute(ctx(), call())).input_item
    assert item["output"] == [
        {"stdout": "a", "stderr": "", "outcome": {"type": "exit", "exit_code": None}},
        {"stdout": "b", "stderr": "c", "outcome": {"type": "exit", "exit_code": 4}},
    ]


async def test_executor_exception_goes_to_stdout_with_exit_code_1() -> None:
    def boom(request: ShellCommandRequest) -> str:
        raise RuntimeError("disk on fire")

    result = await ShellTool(executor=boom).execute(ctx(), call())
    assert result.input_item["output"] == [
        {"stdout": "disk on fire", "stderr": "", "outcome": {"type": "exit", "exit_code": 1}}
    ]
    assert result.output == "disk on fire\nexit code: 1"


async def test_exception_without_message_uses_class_name() -> None:
    async def boom(request: ShellCommandRequest) -> str:
        raise ValueError

    result = await ShellTool(executor=boom).execute(ctx(), call())
    assert result.input_item["output"][0]["stdout"] == "ValueError"


async def test_output_value_is_the_rendering() -> None:
    def executor(request: ShellCommandRequest) -> ShellResult:
        return ShellResult(
            output=[
                ShellCommandOutput(
                    stdout="one\n", command="echo one", outcome=ShellCallOutcome("exit", 0)
                ),
                ShellCommandOutput(
                    stderr="bad\n", command="false", outcome=ShellCallOutcome("exit", 3)
                ),
                ShellCommandOutput(command="sleep 9", outcome=ShellCallOutcome("timeout")),
            ]
        )

    result = await ShellTool(executor=executor).execute(ctx(), call())
    assert result.output == (
        "$ echo one\none\n\n$ false\n\nstderr:\nbad\nexit code: 3\n\n$ sleep 9\nstatus: timeout"
    )


async def test_hosted_tool_is_not_executed_locally() -> None:
    tool = ShellTool(environment={"type": "container_auto"})
    tool.validate_call({"type": "shell_call"})  # server-side calls are not coerced
    assert await tool.needs_approval(ctx(), call()) is False
    with pytest.raises(UserError):
        await tool.execute(ctx(), call())


def test_render_shell_outputs_edge_cases() -> None:
    assert render_shell_outputs([]) == "(no output)"
    assert render_shell_outputs([ShellCommandOutput(), ShellCommandOutput(stdout="z")]) == (
        "(no output)\n\nz"
    )
    assert render_shell_outputs([ShellCommandOutput(stderr="x")]) == "stderr:\nx"


def test_truncate_keeps_entries_and_clamps_negative() -> None:
    outputs = [ShellCommandOutput(stdout="abcdef", stderr="xyz"), ShellCommandOutput(stdout="12")]
    cut = truncate_shell_outputs(outputs, 7)
    assert [(o.stdout, o.stderr) for o in cut] == [("abcdef", "x"), ("", "")]
    assert [(o.stdout, o.stderr) for o in truncate_shell_outputs(outputs, -3)] == [
        ("", ""),
        ("", ""),
    ]


def test_rendering_and_truncation_match_reference_sdk() -> None:
    """Compare with the reference SDK, black-box, when it is installed."""
    te = pytest.importorskip("agents.run_internal.tool_execution")
    ref_tool = pytest.importorskip("agents.tool")
    cases: list[list[tuple[str, str, Any, int | None, str | None]]] = [
        [("a\n", "b\n", "exit", 0, "ls")],
        [("  a  \n", "  y  ", "exit", 2, None), ("", "", "timeout", None, "sleep")],
        [("\n a", "\n b", "exit", None, "")],
        [("", "", "exit", 3, None), ("o", "", "timeout", 3, "x")],
        [("   ", "  ", "exit", 0, None), ("a\n\n", "", "exit", 0, "c")],
    ]
    for case in cases:
        ours = [ShellCommandOutput(s, e, ShellCallOutcome(t, c), cmd) for s, e, t, c, cmd in case]
        theirs = [
            ref_tool.ShellCommandOutput(s, e, ref_tool.ShellCallOutcome(t, c), cmd)
            for s, e, t, c, cmd in case
        ]
        assert render_shell_outputs(ours) == te.render_shell_outputs(theirs)
        for budget in (0, 1, 3, 6):
            mine = [(o.stdout, o.stderr) for o in truncate_shell_outputs(ours, budget)]
            ref = [(o.stdout, o.stderr) for o in te.truncate_shell_outputs(theirs, budget)]
            assert mine == ref


# -- §4.5 approvals -----------------------------------------------------------------------------


async def test_needs_approval_bool() -> None:
    assert await ShellTool(executor=echo_executor).needs_approval(ctx(), call()) is False
    assert await ShellTool(executor=echo_executor, needs_approval=True).needs_approval(
        ctx(), call()
    )


async def test_needs_approval_sync_callable_gets_action_and_call_id() -> None:
    seen: list[tuple[Any, ShellActionRequest, str]] = []

    def rule(run_context: Any, action: ShellActionRequest, call_id: str) -> bool:
        seen.append((run_context, action, call_id))
        return "rm" in action.commands[0]

    tool = ShellTool(executor=echo_executor, needs_approval=rule)
    context = ctx()
    assert await tool.needs_approval(context, call(["rm -rf build"])) is True
    assert await tool.needs_approval(context, call(["ls"], call_id="call_9")) is False
    assert seen[1] == (context, ShellActionRequest(commands=["ls"]), "call_9")


async def test_needs_approval_async_callable() -> None:
    async def rule(run_context: Any, action: ShellActionRequest, call_id: str) -> bool:
        return call_id == "call_x"

    tool = ShellTool(executor=echo_executor, needs_approval=rule)
    assert await tool.needs_approval(ctx(), call(call_id="call_x")) is True
    assert await tool.needs_approval(ctx(), call(call_id="call_y")) is False


async def test_on_approval_sync_and_async() -> None:
    item: Any = object()
    tool = ShellTool(executor=echo_executor, on_approval=lambda c, i: {"approve": True})
    assert await tool.on_approval(ctx(), item) == ApprovalDecision(approve=True)

    async def deny(run_context: Any, approval_item: Any) -> dict[str, Any]:
        assert approval_item is item
        return {"approve": False, "reason": "not on my watch"}

    tool = ShellTool(executor=echo_executor, on_approval=deny)
    assert await tool.on_approval(ctx(), item) == ApprovalDecision(False, "not on my watch")


async def test_on_approval_undecided_or_absent_is_none() -> None:
    item: Any = object()
    assert await ShellTool(executor=echo_executor).on_approval(ctx(), item) is None
    tool = ShellTool(executor=echo_executor, on_approval=lambda c, i: None)
    assert await tool.on_approval(ctx(), item) is None
    tool = ShellTool(executor=echo_executor, on_approval=lambda c, i: {"reason": "?"})
    assert await tool.on_approval(ctx(), item) is None


def test_rejection_output_default_and_custom() -> None:
    tool = ShellTool(executor=echo_executor)
    result = tool.rejection(call(call_id="call_2"), "Tool execution was not approved.")
    assert result.input_item == {
        "type": "shell_call_output",
        "call_id": "call_2",
        "output": [
            {
                "stdout": "",
                "stderr": "Tool execution was not approved.",
                "outcome": {"type": "exit", "exit_code": 1},
            }
        ],
    }
    custom = tool.rejection(call(call_id="call_3"), "Use git status instead.")
    assert custom.input_item["output"][0]["stderr"] == "Use git status instead."
    assert tool.rejection(call(), "").input_item["output"][0]["stderr"] == (
        "Tool execution was not approved."
    )


# -- §4.6 LocalShellTool ------------------------------------------------------------------------


def local_call() -> dict[str, Any]:
    return {
        "type": "local_shell_call",
        "id": "lsh_1",
        "call_id": "call_7",
        "status": "completed",
        "action": {"type": "exec", "command": ["ls", "-la"], "env": {}},
    }


async def test_local_shell_tool_round_trip() -> None:
    seen: list[LocalShellCommandRequest] = []

    async def executor(request: LocalShellCommandRequest) -> str:
        seen.append(request)
        return "total 0"

    tool = LocalShellTool(executor=executor)
    assert tool.to_wire(None) == {"type": "local_shell"}
    raw = local_call()
    tool.validate_call(raw)
    assert await tool.needs_approval(ctx(), raw) is False
    result = await tool.execute(ctx(), raw)
    assert result.input_item == {
        "type": "local_shell_call_output",
        "call_id": "call_7",
        "output": "total 0",
    }
    assert seen[0].data is raw


async def test_local_shell_tool_exceptions_fail_the_run() -> None:
    def executor(request: LocalShellCommandRequest) -> str:
        raise OSError("no shell")

    with pytest.raises(OSError, match="no shell"):
        await LocalShellTool(executor=executor).execute(ctx(), local_call())


def test_local_shell_call_without_id_is_malformed() -> None:
    with pytest.raises(ModelBehaviorError):
        LocalShellTool(executor=lambda r: "").validate_call({"type": "local_shell_call"})
