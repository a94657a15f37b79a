"""The approval policy engine: decide whether a shell command or a patch runs, asks or is denied."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .command_parser import ParsedCommand, Segment, parse_command
from .defaults import DEFAULT_RULES
from .destructive import judge_line
from .harm import Harm
from .modes import Action, ApprovalMode, SandboxKind, coerce_mode, strictest
from .reach import Reach, analyse
from .rules import (
    CONFINEMENT_GUARD,
    DESTRUCTIVE_GUARD,
    PRIVILEGE_GUARD,
    Rule,
    matches_command,
    matches_path,
    normalize_patch_path,
)

__all__ = ["Decision", "SegmentDecision", "decide_command", "decide_patch"]

_MAX_SHOWN = 80


@dataclass(frozen=True, slots=True)
class SegmentDecision:
    """The verdict on one simple command of a line, or on one path of a patch.

    Attributes:
        text: the command's source text, or the patch path.
        action: ``"allow"``, ``"ask"`` or ``"deny"``.
        reason: human text, e.g. ``"allowed by rule `grep *` (default)"``.
        rule: the rule (or built-in guard) that decided, ``None`` when none applied.
        destructive: what makes the command destructive or possibly destructive
            (``"deletes untracked files"``), else ``None``.
        segment: the parsed command (``None`` for patch paths).
        harm: the guard's full verdict (:class:`~core.policy.harm.Harm`: what it removes,
            whether it is certain), else ``None``.
    """

    text: str
    action: Action
    reason: str
    rule: Rule | None = None
    destructive: str | None = None
    segment: Segment | None = None
    harm: Harm | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with a shell command or a patch.

    Attributes:
        action: ``"allow"`` (run without asking), ``"ask"`` (a human approves first) or
            ``"deny"`` (refuse; tell the model why).
        reason: human text for the prompt and the log, naming the rule that applied or saying
            none did, e.g. ``"asked because `rm -rf src` is destructive: it deletes files
            recursively (rule: destructive-guard)"``.
        rule: the rule (or built-in guard) behind ``reason``, ``None`` when no rule applied.
        segments: one entry per simple command (or per patch path), in order.
        checkpoint_required: take a checkpoint before running: set when a command is
            destructive or possibly destructive, or when a patch lands without review.
        sandbox: where the command should run: ``"read-only"``, ``"workspace-write"`` or
            ``"none"`` (always ``"none"`` for patches).
        removes: files and folders the line's destructive commands delete or overwrite
            (absolute, globs expanded, when the workspace is known; else as written), for
            the checkpoint to capture even when ignored (``rm .env``, ``: > data.db``).
        removes_unknown: some command removes what is only known at run time
            (``xargs rm``, ``find -delete``, ``git clean``, inline code, ``$CMD``): the
            checkpoint should cover all it could reach, ignored files included.
        git_clean: the arguments after ``git clean`` of each clean in the line
            (``("-fdx", "-e", ".env")``), so the checkpoint can list exactly what it
            would delete with ``git clean -n`` and the same arguments.
        refs: refs the line deletes or moves (``"refs/stash"``, ``"stash@{0}"``,
            ``"refs/heads/feature"``), as written.
    """

    action: Action
    reason: str
    rule: Rule | None
    segments: tuple[SegmentDecision, ...]
    checkpoint_required: bool
    sandbox: SandboxKind
    removes: tuple[str, ...] = ()
    removes_unknown: bool = False
    git_clean: tuple[tuple[str, ...], ...] = ()
    refs: tuple[str, ...] = ()

    @property
    def rule_id(self) -> str | None:
        """The id of :attr:`rule`, or ``None``."""
        return self.rule.id if self.rule is not None else None

    @property
    def allowed(self) -> bool:
        """Whether the call may run without asking."""
        return self.action == "allow"


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_SHOWN else flat[: _MAX_SHOWN - 1] + "…"


def _sandbox(mode: ApprovalMode, available: bool) -> SandboxKind:
    if not available:
        return "none"
    if mode is ApprovalMode.READ_ONLY:
        return "read-only"
    if mode is ApprovalMode.AUTO:
        return "workspace-write"
    return "none"


def _first(rules: Sequence[Rule], action: Action, seg: Segment, *, loose: bool) -> Rule | None:
    for rule in rules:
        if rule.action != action:
            continue
        if matches_command(rule, seg.argv, loose_program=loose):
            return rule
        if seg.full_argv != seg.argv and matches_command(rule, seg.full_argv, loose_program=loose):
            return rule
    return None


def _exact_allow(rules: Sequence[Rule], seg: Segment) -> Rule | None:
    """A user or session allow rule naming exactly this command as written (no ``*``;
    wrappers and git's global options included), if any."""
    for rule in rules:
        if rule.action != "allow" or rule.any_args or rule.source == "default":
            continue
        if matches_command(rule, seg.full_argv or seg.argv):
            return rule
    return None


def _allow_rule(rules: Sequence[Rule], seg: Segment) -> Rule | None:
    for rule in rules:
        if rule.action != "allow":
            continue
        if seg.privileged:
            # Only a rule that names the wrapper itself (`sudo apt-get *`) vouches for it.
            if matches_command(rule, seg.full_argv):
                return rule
        elif matches_command(rule, seg.argv) or matches_command(rule, seg.full_argv):
            return rule
    return None


def _judge(
    seg: Segment,
    mode: ApprovalMode,
    rules: Sequence[Rule],
    sandbox: bool,
    parse_error: str | None,
    reach: Reach | None = None,
    harm: Harm | None = None,
) -> SegmentDecision:
    text = _short(seg.text) or "(empty)"
    where = f" (in a {seg.context})" if seg.context.endswith("substitution") else ""

    def out(action: Action, reason: str, rule: Rule | None = None):
        if harm is not None and action == "allow" and not reason.endswith("checkpoint first)"):
            reason = f"{reason} (it {harm.reason}; checkpoint first)"
        return SegmentDecision(
            seg.text, action, reason, rule, harm.reason if harm else None, seg, harm
        )

    rule = _first(rules, "deny", seg, loose=True)
    if rule is not None:
        return out("deny", f"denied by rule {rule.label}: `{text}`{where}", rule)
    if harm is not None:
        exact = _exact_allow(rules, seg)
        if exact is not None:
            return out(
                "allow",
                f"allowed by rule {exact.label}, which names this exact command "
                f"(it {harm.reason}; checkpoint first)",
                exact,
            )
        if harm.certain or mode is not ApprovalMode.AUTO or not sandbox:
            verb = "is destructive" if harm.certain else "may be destructive"
            return out(
                "ask",
                f"asked because `{text}`{where} {verb}: it {harm.reason} "
                f"(rule: {DESTRUCTIVE_GUARD.id})",
                DESTRUCTIVE_GUARD,
            )
        # possibly destructive in sandboxed auto mode: judged as usual, checkpointed first
    if mode is ApprovalMode.READ_ONLY and seg.writes:
        return out("deny", f"denied: read-only mode, and `{text}` writes to `{seg.writes[0]}`")
    if mode is not ApprovalMode.FULL:
        rule = _first(rules, "ask", seg, loose=True)
        if rule is not None:
            return out("ask", f"asked by rule {rule.label}: `{text}`{where}", rule)
    if parse_error is not None:
        if mode is ApprovalMode.FULL:
            return out("allow", "allowed: full access mode (command not fully parsed)")
        return out("ask", f"asked: could not parse the command ({parse_error})")
    if mode is ApprovalMode.FULL:
        if seg.opaque is not None and any(r.action == "deny" for r in rules):
            return out(
                "ask", f"asked: {seg.opaque}, so `{text}` cannot be checked against your deny rules"
            )
        return out("allow", "allowed: full access mode")
    if seg.opaque is not None:
        return out("ask", f"asked: {seg.opaque}, so `{text}` cannot be judged before it runs")
    allow = _allow_rule(rules, seg)
    if seg.privileged and allow is None:
        return out(
            "ask",
            f"asked: `{text}` runs with {seg.wrappers[0] if seg.wrappers else 'sudo'} "
            f"(rule: {PRIVILEGE_GUARD.id})",
            PRIVILEGE_GUARD,
        )
    if mode is ApprovalMode.AUTO and sandbox:
        return out("allow", f"allowed: auto mode runs `{text}` in the workspace-write sandbox")
    no_sandbox = " (auto mode without a sandbox asks)" if mode is ApprovalMode.AUTO else ""
    if not seg.argv:
        if seg.writes:
            return out("ask", f"asked: `{text}` writes to `{seg.writes[0]}`{no_sandbox}")
        if reach is not None and reach.redirect is not None:
            return out("ask", f"asked: `{text}` {reach.redirect}{no_sandbox}")
        if seg.unvetted:
            return out(
                "ask",
                f"asked: `{text}` {seg.unvetted[0]}, which changes what later "
                f"commands run{no_sandbox}",
            )
        if seg.env:
            return out("allow", f"allowed: `{text}` only sets a variable")
        return out("allow", f"allowed: `{text}` runs no program")
    if allow is None:
        return out("ask", f"asked: no rule matches `{text}`{where}{no_sandbox}")
    if seg.unvetted:
        return out(
            "ask",
            f"asked: `{text}` {seg.unvetted[0]}, so rule {allow.label} cannot vouch for it"
            f"{no_sandbox}",
            allow,
        )
    if seg.writes:
        return out("ask", f"asked: `{text}` writes to `{seg.writes[0]}`{no_sandbox}", allow)
    if reach is not None and reach.redirect is not None:
        return out("ask", f"asked: `{text}` {reach.redirect}{no_sandbox}", allow)
    if reach is not None and reach.problem is not None and allow.source == "default":
        if reach.secret is not None:
            return out(
                "ask",
                f"asked: `{text}` {reach.problem}; the built-in read-only rules never "
                f"vouch for what the sandbox hides{no_sandbox}",
                allow,
            )
        return out(
            "ask",
            f"asked: `{text}` {reach.problem}; the built-in read-only rules only cover "
            f"commands that read inside the workspace{no_sandbox}",
            allow,
        )
    return out("allow", f"allowed by rule {allow.label}", allow)


def _combine(
    judged: Sequence[SegmentDecision], sandbox: SandboxKind, *, patch: bool = False
) -> Decision:
    action = strictest([j.action for j in judged])
    picked = [j for j in judged if j.action == action]
    main = next((j for j in picked if j.destructive), picked[0])
    reason = main.reason
    if action == "allow" and len(judged) > 1 and not main.destructive:
        reason = _allow_summary(judged)
    if patch:
        checkpoint = action == "allow"
    else:
        checkpoint = action != "deny" and any(j.destructive for j in judged)
    harms = [j.harm for j in judged if j.harm is not None]
    return Decision(
        action,
        reason,
        main.rule,
        tuple(judged),
        checkpoint,
        sandbox,
        removes=tuple(dict.fromkeys(p for h in harms for p in h.removes)),
        removes_unknown=any(h.removes_unknown for h in harms),
        git_clean=tuple(h.git_clean for h in harms if h.git_clean is not None),
        refs=tuple(dict.fromkeys(r for h in harms for r in h.refs)),
    )


def _allow_summary(judged: Sequence[SegmentDecision]) -> str:
    """One line for a fully allowed multi-command line."""
    reasons = list(dict.fromkeys(j.reason for j in judged))
    if len(reasons) == 1:
        return reasons[0]
    labels = list(dict.fromkeys(j.rule.label for j in judged if j.rule is not None))
    if labels and all(j.rule is not None for j in judged):
        return "allowed by rules " + ", ".join(labels)
    if all(j.reason.startswith("allowed: auto mode") for j in judged):
        return "allowed: auto mode runs every command in the workspace-write sandbox"
    if all(j.reason.startswith("allowed: full access mode") for j in judged):
        return "allowed: full access mode"
    return "; ".join(reasons)


def _command_rules(rules: Iterable[Rule], use_defaults: bool) -> list[Rule]:
    chosen = [r for r in rules if r.kind == "command"]
    if use_defaults:
        known = {r.id for r in chosen}
        chosen.extend(r for r in DEFAULT_RULES if r.id not in known)
    return chosen


def decide_command(
    command: str | Sequence[str] | ParsedCommand,
    mode: ApprovalMode | str,
    rules: Iterable[Rule] = (),
    *,
    sandbox_available: bool,
    use_defaults: bool = True,
    workspace: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    secret_paths: Collection[str | os.PathLike[str]] = (),
) -> Decision:
    """Decide whether a shell command runs, asks or is denied (PRODUCT.md "Safety model").

    ``workspace`` (the repository root, where commands start) limits the built-in
    read-only rules to what they can reach inside it (:func:`~core.policy.reach.analyse`):
    ``cat /etc/shadow``, ``cat $HOME/.ssh/id_rsa``, ``cd / && cat etc/shadow``,
    ``git -C /elsewhere log`` or ``sort --outp=x`` ask in *ask* and *read-only* modes, and
    so does anything whose reach cannot be resolved statically (``cat $(pick)``,
    ``cat ~other/x``). An input redirection outside the workspace (``cat < ~/.ssh/id_rsa``)
    asks whatever rule allowed the command.

    ``secret_paths`` (what the sandbox hides: ``~/.ssh``, Tandem's settings…) are out of
    the built-in rules' reach even when the workspace contains them (a workspace that is
    the home folder): ``cat .ssh/id_rsa``, ``cd .ssh && cat id_rsa``, ``git -C .ssh log``,
    a link to them, or a recursive read above them (``grep -r token .``, ``find .``,
    ``du``) asks, with a reason that names the secret ("reads a hidden secret path
    (~/.ssh)"); so does an input redirection from one (``cat < .aws/credentials``),
    whatever rule allowed the command.

    The line is split into simple commands (:func:`~core.policy.command_parser.parse_command`)
    and each is judged; the line gets the strictest verdict (deny > ask > allow), so it is
    allowed only when every command is. Per command, in order:

    1. a matching deny rule denies (every mode);
    2. a destructive command (:func:`~core.policy.destructive.judge_line`, judged in
       ``workspace``: a path checkout, any reset but ``--soft``, ``rm .env``, ``>`` onto an
       existing file…) asks in **every** mode, *full* included (PRODUCT.md "whatever the
       mode"), unless a user or session allow rule names that exact command as written (no
       ``*``: see :func:`~core.policy.suggest.suggest_rule`); either way it sets
       ``checkpoint_required`` and fills ``removes``/``removes_unknown``/``git_clean``/
       ``refs``. A *possibly* destructive one (what the guard cannot analyse: inline
       interpreter code, aliases, ``$CMD``, a line that does not parse) asks the same way,
       except in *auto* with a sandbox, where it goes on to the steps below and runs, if
       they allow it, only after a checkpoint covering all it could reach;
    3. *read-only*: a command that writes a file (``>``, ``>>``, ``tee``) is denied;
    4. a matching ask rule asks (every mode but *full*);
    5. a line that could not be parsed asks (every mode: it is possibly destructive);
    6. *full*: allowed;
    7. a command only known at run time (``$CMD``, ``eval "$x"``) asks; so does one run
       with ``sudo``/``doas`` unless an allow rule names the wrapper (``sudo apt-get *``);
    8. *auto* with a sandbox: allowed, to run in the workspace-write sandbox;
    9. otherwise (*ask*, *read-only*, *auto* without a sandbox) an allow rule, user or
       built-in read-only (:data:`~core.policy.defaults.DEFAULT_RULES`), allows, unless the
       command sets a variable that changes what runs (``PATH=…``, ``GIT_PAGER=…``), uses
       ``git -c``, redirects output to a file, or reads a file outside the workspace
       through an input redirection; a built-in rule also needs the command's reach
       (:func:`~core.policy.reach.analyse`) to stay inside the workspace and write or
       run nothing; else it asks.

    Deny and ask rules also match the program's basename (``/bin/rm`` for ``rm``) and the
    command with its wrappers; allow rules need the exact program word.

    Args:
        command: a command line, an argv list (run without a shell), or a parse result.
        mode: the session's approval mode (an ``ApprovalMode`` or its string).
        rules: user and session rules; patch rules are ignored here.
        sandbox_available: whether the executor can sandbox commands (bubblewrap on Linux).
            Without one, *auto* asks like *ask* for commands no rule allows.
        use_defaults: also apply the built-in read-only allow list (default True).
        workspace: the workspace root (also the commands' working directory); ``None``
            counts relative paths as inside and absolute or home paths as outside, and
            reads nothing from disk (no symlink or git-config checks); the destructive
            guard then cannot tell a new file from an existing one or a branch from a
            path, and counts every target as existing (fails closed).
        env: variables the command will see, used to expand ``$NAME``/``${NAME}``
            (default: only ``HOME`` from ``os.environ``); names not in it, or assigned in
            the line itself, are unresolvable.
        secret_paths: files and folders hidden from commands (absolute, or ``~/…``
            expanded with ``env["HOME"]``); one that contains the workspace is ignored.

    Returns:
        The :class:`Decision`; ``sandbox`` is ``"read-only"`` in *read-only* mode and
        ``"workspace-write"`` in *auto* mode when a sandbox is available, else ``"none"``.

    Raises:
        UserError: ``mode`` names no approval mode.
    """
    mode = coerce_mode(mode)
    parsed = command if isinstance(command, ParsedCommand) else parse_command(command)
    chosen = _command_rules(rules, use_defaults)
    sandbox = _sandbox(mode, sandbox_available)
    if not parsed.source.strip():
        empty = SegmentDecision("", "ask", "asked: the command is empty")
        return Decision("ask", empty.reason, None, (empty,), False, sandbox)
    root = os.fspath(workspace) if workspace is not None else None
    if env is None:
        env = {"HOME": os.environ["HOME"]} if "HOME" in os.environ else {}
    trusted = mode is ApprovalMode.FULL or (mode is ApprovalMode.AUTO and sandbox_available)
    reaches: list[Reach | None] = (
        [None] * len(parsed.segments) if trusted else list(analyse(parsed, root, env, secret_paths))
    )
    harms = judge_line(parsed, root)
    judged = [
        _judge(s, mode, chosen, sandbox_available, parsed.error, r, h)
        for s, r, h in zip(parsed.segments, reaches, harms, strict=True)
    ]
    if parsed.error is not None:
        unknown = Harm(f"cannot be analysed ({parsed.error})", certain=False, removes_unknown=True)
        judged.append(
            SegmentDecision(
                parsed.source,
                "ask",
                f"asked: could not parse the command ({parsed.error}), so the guard cannot "
                f"tell what it could destroy (rule: {DESTRUCTIVE_GUARD.id})",
                DESTRUCTIVE_GUARD,
                unknown.reason,
                None,
                unknown,
            )
        )
    if not judged:
        nothing = SegmentDecision(parsed.source, "allow", "allowed: the command runs nothing")
        return Decision("allow", nothing.reason, None, (nothing,), False, sandbox)
    return _combine(judged, sandbox)


def _relative(path: str, workspace: str | os.PathLike[str] | None) -> str:
    if workspace is None or not os.path.isabs(path):
        return path
    root = os.path.abspath(workspace)
    full = os.path.abspath(path)
    if os.path.commonpath([root, full]) != root:
        return path
    return os.path.relpath(full, root)


def decide_patch(
    paths: Sequence[str],
    mode: ApprovalMode | str,
    rules: Iterable[Rule] = (),
    *,
    workspace: str | os.PathLike[str] | None = None,
) -> Decision:
    """Decide whether an apply_patch operation on ``paths`` lands, asks or is denied.

    Per path: outside the workspace (absolute, ``..``, ``.git/``) → deny (rule
    ``confinement``); a deny rule → deny; *read-only* → deny; an ask rule → ask (not in
    *full*); *full* and *auto* → allow; *ask* → allow when a patch allow rule matches, else
    ask. The patch gets the strictest verdict over its paths.

    Args:
        paths: the files the operation creates, updates or deletes, relative to the workspace
            (absolute paths inside ``workspace`` are made relative first).
        mode: the session's approval mode.
        rules: user and session rules; command rules are ignored here.
        workspace: the workspace root, used only to relativize absolute paths.

    Returns:
        The :class:`Decision`; ``checkpoint_required`` is True when it lands without review
        (allowed), ``sandbox`` is ``"none"``.

    Raises:
        UserError: ``mode`` names no approval mode.
    """
    mode = coerce_mode(mode)
    chosen = [r for r in rules if r.kind == "patch"]
    if not paths:
        none = SegmentDecision("", "ask", "asked: the patch names no files")
        return Decision("ask", none.reason, None, (none,), False, "none")
    judged: list[SegmentDecision] = []
    for raw in paths:
        path = normalize_patch_path(_relative(str(raw), workspace))
        shown = _short(str(raw))
        if path is None:
            judged.append(
                SegmentDecision(
                    str(raw),
                    "deny",
                    f"denied: `{shown}` is outside the workspace (rule: {CONFINEMENT_GUARD.id})",
                    CONFINEMENT_GUARD,
                )
            )
            continue
        judged.append(_judge_path(path, mode, chosen))
    return _combine(judged, "none", patch=True)


def _judge_path(path: str, mode: ApprovalMode, rules: Sequence[Rule]) -> SegmentDecision:
    def find(action: Action) -> Rule | None:
        return next((r for r in rules if r.action == action and matches_path(r, path)), None)

    shown = _short(path)
    rule = find("deny")
    if rule is not None:
        return SegmentDecision(path, "deny", f"denied by rule {rule.label}: `{shown}`", rule)
    if mode is ApprovalMode.READ_ONLY:
        return SegmentDecision(path, "deny", f"denied: read-only mode does not edit `{shown}`")
    if mode is not ApprovalMode.FULL:
        rule = find("ask")
        if rule is not None:
            return SegmentDecision(path, "ask", f"asked by rule {rule.label}: `{shown}`", rule)
    if mode is ApprovalMode.FULL:
        return SegmentDecision(path, "allow", "allowed: full access mode")
    if mode is ApprovalMode.AUTO:
        return SegmentDecision(
            path, "allow", "allowed: auto mode applies patches at once (checkpointed, reviewable)"
        )
    rule = find("allow")
    if rule is not None:
        return SegmentDecision(path, "allow", f"allowed by rule {rule.label}", rule)
    return SegmentDecision(path, "ask", f"asked: no rule matches `{shown}`")
