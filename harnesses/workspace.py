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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from core import ApplyPatchTool, RunContextWrapper, RunHooks, ShellTool
from core.items import ModelResponse, ToolApprovalItem
from core.policy import ApprovalMode, Decision, Rule, coerce_mode, decide_command, decide_patch
from core.policy.destructive_paths import Places
from core.policy.modes import strictest
from core.tools.local import ApprovalDecision
from core.tools.shell import (
    ShellActionRequest,
    ShellCallOutcome,
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

__all__ = [
    "PendingDecision",
    "ShellCallDecision",
    "Workspace",
    "WorkspaceHooks",
    "merge_decisions",
]

logger = logging.getLogger("harnesses")

#: Bytes of a command's output kept for the model when the call sets no max_output_length.
MODEL_OUTPUT_HEAD_BYTES = 16 * 1024
MODEL_OUTPUT_TAIL_BYTES = 16 * 1024

_WRITING_CALLS = frozenset({"shell_call", "apply_patch_call", "local_shell_call"})
_SANDBOX = {"read-only": "read-only", "workspace-write": "workspace-write", "none": "off"}
#: Seconds the secret-path list given to the policy is reused (a secret created meanwhile,
#: e.g. by ``aws configure``, is judged from the next refresh on).
SECRET_PATHS_TTL_S = 5.0
#: Exit code of a command Tandem did not run (as the executor reports one it could not start).
_NOT_RUN_EXIT_CODE = 127


@dataclass(frozen=True, slots=True)
class ShellCallDecision(Decision):
    """The policy's verdict on a whole ``shell_call`` (every command of its ``commands``).

    A :class:`~core.policy.Decision` merged over the call's commands (red-team finding 4):
    ``action`` is the strictest, ``reason`` names a destructive command first,
    ``checkpoint_required`` and ``removes_unknown`` are set when any command's are,
    ``removes``/``refs`` are the union and ``git_clean`` lists every clean, in order.

    Attributes:
        git_clean_cwds: the directory each ``git_clean`` entry runs in (absolute), ``None``
            when it is only known at run time (``cd $X``, two candidate directories), so the
            checkpoint's ``git clean -n`` runs where the command will (``cd src && git
            clean -fdX ..``, ``git -C src clean -fdX ..``).
    """

    git_clean_cwds: tuple[str | None, ...] = ()


def _destructive(decision: Decision) -> bool:
    """Whether the guard found something in ``decision`` that can lose work."""
    return any(j.destructive is not None for j in decision.segments)


def _clean_cwds(decision: Decision, root: Path) -> tuple[str | None, ...]:
    """Where each ``git clean`` of one command line runs: ``cd``/``pushd``/``popd`` and
    ``git -C``/``env -C`` replayed over its segments as the guard judged them
    (``core.policy.destructive.judge_line``); ``None`` for a directory with more than one
    candidate or only known at run time."""
    base = Places.start(root)
    found: list[str | None] = []
    for judged in decision.segments:
        seg = judged.segment
        if seg is None:
            continue
        if judged.harm is not None and judged.harm.git_clean is not None:
            places = base.moved(seg.chdir).moved(seg.git_cwd)
            found.append(places.cwds[0] if len(places.cwds) == 1 else None)
        if seg.program in ("cd", "pushd"):
            ops = [w for w in seg.words[1:] if not w.startswith("-")]
            base.cd(ops[0] if ops else None, certain=seg.certain)
        elif seg.program == "popd":
            base.cd(None, certain=False)
    if len(found) != len(decision.git_clean):  # a clean the replay cannot place: widest
        return (None,) * len(decision.git_clean)
    return tuple(found)


def merge_decisions(decisions: Sequence[Decision], root: Path) -> ShellCallDecision:
    """One decision for a ``shell_call`` from its commands' decisions (in command order;
    each command starts in ``root``, as the executor runs them).

    Raises:
        ValueError: ``decisions`` is empty.
    """
    if not decisions:
        raise ValueError("a shell_call has at least one command")
    worst = strictest([d.action for d in decisions])
    picked = [d for d in decisions if d.action == worst]
    main = next((d for d in picked if _destructive(d)), picked[0])
    reason = main.reason
    if not _destructive(main):
        other = next((d for d in decisions if _destructive(d)), None)
        if other is not None:  # the destructive command is named first, whatever decided
            reason = f"{other.reason}; {main.reason}"
    base = {f.name: getattr(main, f.name) for f in fields(Decision)}
    base.update(
        action=worst,
        reason=reason,
        segments=tuple(j for d in decisions for j in d.segments),
        checkpoint_required=worst != "deny" and any(d.checkpoint_required for d in decisions),
        removes=tuple(dict.fromkeys(p for d in decisions for p in d.removes)),
        removes_unknown=any(d.removes_unknown for d in decisions),
        git_clean=tuple(c for d in decisions for c in d.git_clean),
        refs=tuple(dict.fromkeys(r for d in decisions for r in d.refs)),
    )
    cwds = tuple(c for d in decisions for c in _clean_cwds(d, root))
    return ShellCallDecision(**base, git_clean_cwds=cwds)


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
        "git_clean_cwds": tuple(getattr(decision, "git_clean_cwds", ()) or ()),
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
        started_in: the folder the user started in, ``root`` or a folder inside it (a
            subfolder of a repository opens the repository's top level, issue 16): the
            ``AGENTS.md`` files are read from ``root`` down to it. Commands start at ``root``.

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
        started_in: Path | str | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        start = Path(started_in).resolve() if started_in is not None else self.root
        #: Where the AGENTS.md chain ends (``root`` when ``started_in`` is outside it).
        self.started_in = start if start.is_relative_to(self.root) else self.root
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
        self.editor = GitAwareEditor(
            self.root,
            mode="review",
            queue=self.review_queue,
            before_overwrite=self._hold_before_write,
        )
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

    async def _hold_before_write(self, paths: list[str]) -> str | None:
        """Before apply_patch deletes or rewrites ``paths``: checkpoint the ones the latest
        checkpoint does not hold as they are (ignored files, files created or changed
        since), so a restore brings them back (red-team finding 8).

        Returns:
            ``None`` to let the write land; the model-visible refusal when the checkpoint
            failed, or (unreviewed, *auto*/*full*) when the cap left the file out of it.
        """
        try:
            unheld = await self.checkpoints.unheld(paths)
        except Exception:
            logger.warning("cannot tell whether %s is checkpointed", paths, exc_info=True)
            unheld = list(paths)
        if not unheld:
            return None
        try:
            made = await self.checkpoints.create(f"before apply_patch {unheld[0]}", removes=unheld)
        except Exception as exc:
            logger.warning("checkpoint before apply_patch failed", exc_info=True)
            return (
                f"Refused {unheld[0]}: the checkpoint that must hold it before it is deleted "
                f"or rewritten failed ({_short_error(exc)}). Nothing was written."
            )
        self.last_checkpoint = made
        over = [rel for rel, _ in made.skipped if rel in set(unheld)]
        if over and self._mode != ApprovalMode.ASK:
            return (
                f"Refused {over[0]}: it is larger than the checkpoint size cap, so deleting "
                "or rewriting it without review could not be undone. Nothing was written; "
                "ask the user to make this change."
            )
        return None

    async def recoverability(self, decision: Decision) -> Recoverability:
        """What the checkpoint before ``decision``'s command would make recoverable, for the
        approval prompt (``.summary()``: "2 ignored files, 1.3 GB, are over the cap and will
        not be recoverable").

        Never raises: when it cannot be told (git failing, a damaged repository), the
        result's ``unknown`` says why, and the command still runs only after its checkpoint
        succeeds (:meth:`_execute`)."""
        try:
            return await self.checkpoints.recoverability(**_removal(decision))
        except Exception as exc:
            logger.warning("recoverability check failed", exc_info=True)
            return Recoverability(covered=(), lost=(), unknown=_short_error(exc))

    # -- shell -------------------------------------------------------------------------------
    def decide_commands(self, commands: list[str]) -> ShellCallDecision:
        """The policy decision over a call's commands (:func:`merge_decisions`: the
        strictest action, the destructive command's reason first, what every command
        removes, each clean with its directory), each judged with the environment
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
        return merge_decisions(decisions, self.root)

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
            try:
                self.last_checkpoint = await self.checkpoints.create(
                    "before destructive command", **_removal(decision)
                )
            except Exception as exc:  # never run a destructive command unprotected (finding 5)
                logger.warning("checkpoint before a destructive command failed", exc_info=True)
                return _not_run(
                    request.data.action.commands,
                    "Tandem did not run this command: it can destroy work, and the checkpoint "
                    f"that must come before it failed ({_short_error(exc)}), so what it "
                    "destroys could not be restored. Nothing was run. Tell the user; do not "
                    "retry it in another form.",
                )
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


def _short_error(exc: BaseException) -> str:
    """One line naming ``exc`` (at most 200 characters), for a model-visible message."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def _not_run(commands: Sequence[str], message: str) -> ShellResult:
    """A ``shell_call`` result for commands Tandem refused to start: ``message`` on stderr
    of each, exit code 127 (as the executor reports a command it could not start)."""
    return ShellResult(
        output=[
            ShellCommandOutput(
                stderr=message,
                outcome=ShellCallOutcome(type="exit", exit_code=_NOT_RUN_EXIT_CODE),
                command=command,
                provider_data={"not_run": "checkpoint failed"},
            )
            for command in commands
        ]
    )
