"""``Workspace``: one repository folder with its shell, editor, checkpoints and approval policy.

It is the seam the desktop controller and ``tandem run`` share. It builds the agent's local
tools (``ShellTool`` on the subprocess executor, ``ApplyPatchTool`` on the Git-aware editor),
judges every command with the policy engine (PRODUCT.md "Safety model"), runs it in the
sandbox the decision names, routes patches through the review queue in *ask* mode, and
checkpoints the working tree before each model turn that can write (``RunHooks.on_llm_end``).
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import ApplyPatchTool, RunContextWrapper, RunHooks, ShellTool
from core.items import ModelResponse, ToolApprovalItem
from core.policy import ApprovalMode, Decision, Rule, coerce_mode, decide_command, decide_patch
from core.policy.modes import strictest
from core.tools.local import ApprovalDecision
from core.tools.shell import (
    ShellActionRequest,
    ShellCommandOutput,
    ShellCommandRequest,
    ShellResult,
)
from core.tools.shell_patch import ShellPatch, detect_shell_patches, parse_shell_patch

from .checkpoints import (
    DEFAULT_CAP_BYTES,
    DEFAULT_RETENTION,
    Checkpoint,
    CheckpointStore,
    Recoverability,
    Retention,
)
from .editor import GitAwareEditor, ReviewQueue
from .editor.envelope import EnvelopeResult, apply_envelope, envelope_paths
from .shell import ShellListener, SubprocessShellExecutor, sandbox_available
from .shell.git_paths import disarm_planted
from .shell.sandbox import SandboxMode, SandboxSummary, describe_sandbox
from .shell.secret_paths import plan_hidden
from .spawn import ServiceRegistry

__all__ = ["PendingDecision", "Workspace", "WorkspaceHooks"]

logger = logging.getLogger("harnesses")

#: Bytes of a command's output kept for the model when the call sets no max_output_length.
MODEL_OUTPUT_HEAD_BYTES = 16 * 1024
MODEL_OUTPUT_TAIL_BYTES = 16 * 1024

_WRITING_CALLS = frozenset({"shell_call", "apply_patch_call", "local_shell_call"})
_SANDBOX = {"read-only": "read-only", "workspace-write": "workspace-write", "none": "off"}
#: Seconds the secret-path list given to the policy is reused (a secret created meanwhile,
#: e.g. by ``aws configure``, is judged from the next refresh on).
SECRET_PATHS_TTL_S = 5.0


@dataclass(slots=True)
class PendingDecision:
    """The policy's verdict on one call, kept for the approval prompt ("asked because ...")."""

    call_id: str
    kind: str
    decision: Decision
    commands: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def _can_write(item: dict[str, Any]) -> bool:
    """Whether an output item may change the working tree (shell, patch, a Codex delegation)."""
    if item.get("type") in _WRITING_CALLS:
        return True
    name = str(item.get("name", ""))
    return item.get("type") == "function_call" and (name == "codex" or name.startswith("codex_"))


def _removal(decision: Decision | None) -> dict[str, Any]:
    """What a decision says its command removes, as checkpoint arguments."""
    return {
        "removes": tuple(getattr(decision, "removes", ()) or ()),
        "removes_unknown": bool(getattr(decision, "removes_unknown", False)),
        "git_clean": tuple(getattr(decision, "git_clean", ()) or ()),
    }


class WorkspaceHooks(RunHooks[Any]):
    """Checkpoints the working tree before a response's shell or apply_patch calls run."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._turn = 0

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Any, response: ModelResponse
    ) -> None:
        self._turn += 1
        if any(_can_write(item) for item in response.output):
            await self._workspace.checkpoint(f"before turn {self._turn}", turn=self._turn)


class Workspace:
    """A repository folder the agent works in.

    Args:
        root: the folder (a Git repository or not).
        mode: approval mode, ``read-only`` | ``ask`` | ``auto`` | ``full``.
        rules: user rules (allow/ask/deny) in addition to the built-in read-only defaults.
        sandbox_enabled: use bubblewrap when it is available (the decision says which mode).
        listener: receives the shell executor's typed events (terminal view).
        data_dir: where shadow checkpoint repositories live for non-Git folders.
        hidden_paths / shown_paths: secret paths the sandbox hides besides the defaults /
            defaults it shows again (``Settings.sandbox_hidden_paths`` / ``..._shown_paths``).
        checkpoint_cap_bytes: cap on the untracked + ignored bytes a checkpoint copies
            (``Settings.checkpoint_cap_bytes``).
        checkpoint_retention: checkpoint retention (from ``Settings.checkpoint_keep_*``).

    Attributes:
        executor, editor, review_queue, checkpoints: the parts, for the GUI to subscribe to.
        decisions: the latest :class:`PendingDecision` per call id.
        last_checkpoint: the checkpoint taken before the latest writing turn.
    """

    def __init__(
        self,
        root: Path | str,
        *,
        mode: ApprovalMode | str = "ask",
        rules: Iterable[Rule] = (),
        sandbox_enabled: bool = True,
        listener: ShellListener | None = None,
        data_dir: Path | None = None,
        hidden_paths: Iterable[Path] = (),
        shown_paths: Iterable[Path] = (),
        checkpoint_cap_bytes: int = DEFAULT_CAP_BYTES,
        checkpoint_retention: Retention | None = DEFAULT_RETENTION,
    ) -> None:
        self.root = Path(root).resolve()
        #: The start-up sweep: git redirections planted while no sweep ran, disarmed (for the window).
        self.startup_repairs: list[str] = disarm_planted(self.root)
        self.rules: list[Rule] = list(rules)
        self.sandbox_enabled = sandbox_enabled
        #: Background services the agent started (``cmd &``): listed in the window, killed on exit.
        self.services = ServiceRegistry()
        # What the model sees of one command's output is capped (head and tail kept); the
        # terminal view still receives every chunk through the listener.
        self.executor = SubprocessShellExecutor(
            self.root,
            listener=listener,
            services=self.services,
            head_bytes=MODEL_OUTPUT_HEAD_BYTES,
            tail_bytes=MODEL_OUTPUT_TAIL_BYTES,
            hidden_paths=list(hidden_paths),
            shown_paths=list(shown_paths),
        )
        self.review_queue = ReviewQueue()
        self.checkpoints = CheckpointStore(
            self.root,
            data_dir=data_dir,
            cap_bytes=checkpoint_cap_bytes,
            retention=checkpoint_retention,
        )
        self.editor = GitAwareEditor(self.root, mode="review", queue=self.review_queue)
        self.decisions: dict[str, PendingDecision] = {}
        self.last_checkpoint: Checkpoint | None = None
        self._secret_paths: tuple[Path, ...] = ()
        self._secret_paths_at: float | None = None
        self._mode = coerce_mode(mode)
        self.set_mode(self._mode)

    # -- configuration -----------------------------------------------------------------------
    @property
    def mode(self) -> ApprovalMode:
        return self._mode

    def set_mode(self, mode: ApprovalMode | str) -> None:
        """Switch the approval mode; *ask* reviews patches, *auto*/*full* apply them at once."""
        self._mode = coerce_mode(mode)
        self.editor.mode = "review" if self._mode == ApprovalMode.ASK else "immediate"

    @property
    def sandbox_available(self) -> bool:
        """Whether commands can be sandboxed here (enabled and ``bwrap`` works)."""
        return self.sandbox_enabled and sandbox_available()

    def set_sandbox_paths(self, hidden: Iterable[Path], shown: Iterable[Path]) -> None:
        """Change the user's hidden / shown-again paths; applies from the next command."""
        self.executor.hidden_paths = list(hidden)
        self.executor.shown_paths = list(shown)
        self._secret_paths_at = None

    def secret_paths(self) -> tuple[Path, ...]:
        """The secret paths the sandbox hides here (``plan_hidden`` over the user's settings),
        which the policy also keeps out of the built-in rules' reach; cached for
        :data:`SECRET_PATHS_TTL_S` seconds and refreshed by :meth:`set_sandbox_paths`."""
        now = time.monotonic()
        at = self._secret_paths_at
        if at is None or now - at >= SECRET_PATHS_TTL_S:
            plan = plan_hidden(
                self.root, extra=self.executor.hidden_paths, shown=self.executor.shown_paths
            )
            self._secret_paths = tuple(h.path for h in plan.hidden)
            self._secret_paths_at = now
        return self._secret_paths

    def sandbox_summary(self) -> SandboxSummary:
        """What the sandbox does in the current approval mode (for the window and the CLI)."""
        mode: SandboxMode
        if not self.sandbox_enabled or self._mode == ApprovalMode.FULL:
            mode = "off"
        elif self._mode == ApprovalMode.READ_ONLY:
            mode = "read-only"
        else:
            mode = "workspace-write"
        return describe_sandbox(
            mode,
            self.root,
            network=self.executor.network,
            hidden_extra=self.executor.hidden_paths,
            hidden_shown=self.executor.shown_paths,
        )

    def tools(self) -> list[Any]:
        """The agent's local tools bound to this workspace."""
        shell = ShellTool(
            executor=self._execute,
            needs_approval=self._shell_needs_approval,
            on_approval=self._on_approval,
        )
        patch = ApplyPatchTool(
            editor=self.editor,
            needs_approval=self._patch_needs_approval,
            on_approval=self._on_approval,
        )
        return [shell, patch]

    def hooks(self) -> WorkspaceHooks:
        """Run hooks that checkpoint before each writing turn (pass as ``Runner.run(hooks=...)``)."""
        return WorkspaceHooks(self)

    async def checkpoint(
        self, label: str, *, turn: int | None = None, decision: Decision | None = None
    ) -> Checkpoint | None:
        """Snapshot the working tree, index, refs and stash now; failures are logged and
        reported as ``None``.

        Args:
            label: shown in the checkpoint list.
            turn: the agent turn it precedes.
            decision: the destructive command's decision: what it removes
                (``removes``, ``removes_unknown``, ``git_clean``) is held too, ignored files
                included, within the size cap.
        """
        try:
            self.last_checkpoint = await self.checkpoints.create(
                label, turn=turn, **_removal(decision)
            )
        except Exception:
            logger.exception("checkpoint %r failed", label)
            return None
        return self.last_checkpoint

    async def recoverability(self, decision: Decision) -> Recoverability:
        """What the checkpoint before ``decision``'s command would make recoverable, for the
        approval prompt (``.summary()``: "2 ignored files, 1.3 GB, are over the cap and will
        not be recoverable")."""
        return await self.checkpoints.recoverability(**_removal(decision))

    # -- shell -------------------------------------------------------------------------------
    def decide_commands(self, commands: list[str]) -> Decision:
        """The strictest policy decision over a call's commands, judged with the environment
        the executor gives them (``executor.command_env``: no ``CDPATH``, ``OLDPWD``,
        secrets…; sandboxed unless full access or no sandbox, as :meth:`_execute` runs
        them), so ``$NAME`` and ``cd`` expand as they will run."""
        secrets = self.secret_paths()
        available = self.sandbox_available
        env = self.executor.command_env(sandboxed=available and self._mode != ApprovalMode.FULL)
        decisions = [
            decide_command(
                c,
                self._mode,
                self.rules,
                sandbox_available=available,
                workspace=self.root,
                env=env,
                secret_paths=secrets,
            )
            for c in commands
        ]
        worst = strictest([d.action for d in decisions])
        for decision in decisions:
            if decision.action == worst:
                return decision
        return decisions[0]

    async def _shell_needs_approval(
        self, ctx: RunContextWrapper[Any], action: ShellActionRequest, call_id: str
    ) -> bool:
        patches = detect_shell_patches(action.commands)
        if patches is not None:  # apply_patch through the shell: judged as a patch
            return self._shell_patch_needs_approval(call_id, patches)
        decision = self.decide_commands(list(action.commands))
        self.decisions[call_id] = PendingDecision(
            call_id, "command", decision, commands=list(action.commands)
        )
        return decision.action != "allow"

    async def _execute(self, request: ShellCommandRequest) -> ShellResult:
        patches = detect_shell_patches(request.data.action.commands)
        if patches is not None:  # not run: applied through the editor (review, confinement)
            return await self.apply_shell_patches(patches, request.ctx_wrapper)
        call_id = request.data.call_id
        pending = self.decisions.get(call_id)
        decision = (
            pending.decision
            if pending
            else self.decide_commands(list(request.data.action.commands))
        )
        sandbox = _SANDBOX[decision.sandbox] if self.sandbox_enabled else "off"
        if self.sandbox_enabled and self._mode == ApprovalMode.READ_ONLY:
            sandbox = "read-only"
        elif self.sandbox_enabled and self._mode == ApprovalMode.ASK and self.sandbox_available:
            sandbox = "workspace-write"  # approved commands still run confined to the workspace
        if decision.checkpoint_required:
            await self.checkpoint("before destructive command", decision=decision)
        self.executor.sandbox = sandbox  # type: ignore[assignment]
        return await self.executor(request)

    # -- patches -----------------------------------------------------------------------------
    def _shell_patch_needs_approval(self, call_id: str, patches: list[ShellPatch]) -> bool:
        """The patch policy over every path the shell-invoked envelopes touch; as for an
        ``apply_patch_call``, only a refusal stops the call (the review queue is the
        approval in *ask* mode). An envelope that does not parse writes nothing and needs
        no approval: running it reports the parse error."""
        paths: list[str] = []
        for patch in patches:
            paths.extend(envelope_paths(patch.patch, patch.workdir))
        if not paths:
            return False
        decision = decide_patch(paths, self._mode, self.rules, workspace=self.root)
        self.decisions[call_id] = PendingDecision(call_id, "patch", decision, paths=paths)
        return decision.action == "deny"

    async def apply_shell_patches(
        self, patches: list[ShellPatch], ctx_wrapper: RunContextWrapper[Any] | None = None
    ) -> ShellResult:
        """Apply shell-invoked ``apply_patch`` envelopes through the editor, in order.

        Returns:
            One entry per invocation, shaped like the Codex CLI's ``apply_patch`` output:
            ``"Success. Updated the following files:\\nM a.py\\n"`` and exit code 0, or the
            reasons on stderr and exit code 1 (see :func:`~harnesses.editor.envelope.apply_envelope`).
        """
        outputs: list[ShellCommandOutput] = []
        for patch in patches:
            result = await apply_envelope(
                self.editor, patch.patch, workdir=patch.workdir, ctx_wrapper=ctx_wrapper
            )
            outputs.append(result.to_shell_output(patch.command))
        return ShellResult(output=outputs)

    async def apply_pasted_patch(self, text: str) -> EnvelopeResult:
        """Apply a ``*** Begin Patch`` envelope the user pasted (the composer), through the
        patch policy, a checkpoint and the editor (review in *ask* mode).

        Returns:
            The :class:`~harnesses.editor.envelope.EnvelopeResult`; a policy refusal comes
            back as a failure, with nothing written.
        """
        found = parse_shell_patch(text)  # pasted as `apply_patch <<'EOF'` … `EOF` too
        patch, workdir = (found.patch, found.workdir) if found else (text, None)
        paths = envelope_paths(patch, workdir)
        if paths:
            decision = decide_patch(paths, self._mode, self.rules, workspace=self.root)
            if decision.action == "deny":
                return EnvelopeResult(failures=[f"Refused by policy: {decision.reason}"])
            await self.checkpoint("before pasted patch")
        return await apply_envelope(self.editor, patch, workdir=workdir)

    async def _patch_needs_approval(
        self, ctx: RunContextWrapper[Any], operation: Any, call_id: str
    ) -> bool:
        paths = [p for p in (operation.path, getattr(operation, "move_to", None)) if p]
        decision = decide_patch(paths, self._mode, self.rules, workspace=self.root)
        self.decisions[call_id] = PendingDecision(call_id, "patch", decision, paths=paths)
        # In *ask* mode the review queue is the approval; only a refusal stops the call here.
        return decision.action == "deny"

    # -- approvals ---------------------------------------------------------------------------
    async def _on_approval(
        self, ctx: RunContextWrapper[Any], item: ToolApprovalItem
    ) -> ApprovalDecision | None:
        pending = self.decisions.get(item.call_id)
        if pending is not None and pending.decision.action == "deny":
            return ApprovalDecision(
                approve=False, reason=f"Refused by policy: {pending.decision.reason}"
            )
        return None

    def kill_process_group(self, pid: int) -> bool:
        """Terminate a running command's process group (``pid`` from ``ShellCommandStarted``).

        Returns:
            ``False`` when the group no longer exists.
        """
        try:
            os.killpg(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def reason_for(self, call_id: str) -> str | None:
        """Why the call needs a decision (for the approval prompt), if known."""
        pending = self.decisions.get(call_id)
        return pending.decision.reason if pending else None
