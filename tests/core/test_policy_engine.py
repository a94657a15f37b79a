"""decide_command / decide_patch: modes, rules, guards and reasons (core.policy.engine)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import UserError
from core.policy import (
    ApprovalMode,
    Decision,
    command_rule,
    decide_command,
    decide_patch,
    parse_command,
    patch_rule,
)

ALL_MODES = list(ApprovalMode)


def cmd(line, mode="ask", rules=(), *, sandbox=True, **kw) -> Decision:
    return decide_command(line, mode, rules, sandbox_available=sandbox, **kw)


# -- "Done means" cases -----------------------------------------------------------------------


def test_pipe_is_allowed_when_every_segment_is_allowed():
    rules = [command_rule("git diff *"), command_rule("grep *")]
    d = cmd("git diff | grep x", rules=rules, use_defaults=False)
    assert d.action == "allow"
    assert [s.action for s in d.segments] == ["allow", "allow"]
    assert "`git diff *` (user)" in d.reason and "`grep *` (user)" in d.reason


def test_pipe_asks_when_one_segment_has_no_rule():
    d = cmd("git diff | grep x", rules=[command_rule("git diff *")], use_defaults=False)
    assert d.action == "ask"
    assert d.reason == "asked: no rule matches `grep x`"
    assert d.rule is None and d.rule_id is None


def test_sequence_with_rm_rf_root_is_not_allowed():
    rules = [command_rule("git diff *"), command_rule("rm *")]
    for mode in ("read-only", "ask", "auto"):
        d = cmd("git diff; rm -rf /", mode, rules)
        assert d.action == "ask", mode
        assert d.checkpoint_required
        assert "`rm -rf /` is destructive" in d.reason


def test_git_reset_hard_asks_in_auto_mode_with_reason():
    d = cmd("git reset --hard", "auto")
    assert d.action == "ask"
    assert d.checkpoint_required is True
    assert d.reason == (
        "asked because `git reset --hard` is destructive: it discards uncommitted changes "
        "(rule: destructive-guard)"
    )
    assert d.rule_id == "destructive-guard"
    assert d.sandbox == "workspace-write"


def test_unparsable_input_asks():
    for line in ("echo 'oops", "case $x in a) ls;; esac", "cat <<EOF\n$(id)\nEOF\n"):
        for mode in ("read-only", "ask", "auto"):
            d = cmd(line, mode, [command_rule("echo *"), command_rule("cat *")])
            assert d.action == "ask", (line, mode)
            assert "could not parse" in d.reason


def test_substitution_inside_echo_is_judged():
    d = cmd("echo $(rm -rf ~)", "auto")
    assert d.action == "ask" and d.checkpoint_required
    assert "`rm -rf ~` (in a command substitution) is destructive" in d.reason
    # a harmless substitution still needs its own rule in ask mode
    assert cmd("echo $(curl example.com)").action == "ask"
    assert cmd("echo $(git rev-parse HEAD)").action == "allow"


def test_env_prefixed_commands_are_judged_as_the_command():
    rules = [command_rule("npm run test *")]
    assert cmd("CI=1 NODE_ENV=test npm run test", rules=rules).action == "allow"
    d = cmd("PATH=./bin:$PATH git status")
    assert d.action == "ask" and "sets PATH" in d.reason
    assert cmd("LD_PRELOAD=x.so cat f").action == "ask"
    assert cmd("GIT_EXTERNAL_DIFF=./x git diff").action == "ask"


def test_sudo_wrapped_commands_at_least_ask():
    assert cmd("sudo git status").action == "ask"
    d = cmd("sudo git status", "auto")
    assert d.action == "ask" and d.rule_id == "privilege-guard"
    # a rule for the inner command does not vouch for sudo …
    assert cmd("sudo apt-get install x", rules=[command_rule("apt-get *")]).action == "ask"
    # … a rule naming sudo does
    d = cmd("sudo apt-get install x", rules=[command_rule("sudo apt-get *")])
    assert d.action == "allow"
    # the inner command is still what deny rules and the guard see
    assert cmd("sudo rm -rf /var", "auto").checkpoint_required
    assert cmd("sudo curl x", "full", [command_rule("curl *", "deny")]).action == "deny"
    assert cmd("sudo git status", "full").action == "allow"


def test_other_wrappers_are_transparent():
    rules = [command_rule("pytest *")]
    assert cmd("timeout 60 pytest -x", rules=rules).action == "allow"
    assert cmd("nohup pytest", rules=rules).action == "allow"
    assert cmd("time git log -1").action == "allow"
    assert cmd("env FOO=1 git status").action == "allow"
    assert cmd("timeout 5 git reset --hard", "auto").action == "ask"


# -- rule precedence ----------------------------------------------------------------------------


def test_deny_beats_ask_beats_allow():
    allow, ask, deny = (command_rule("git push *", a) for a in ("allow", "ask", "deny"))
    assert cmd("git push origin", rules=[allow]).action == "allow"
    assert cmd("git push origin", rules=[allow, ask]).action == "ask"
    assert cmd("git push origin", rules=[ask, allow]).action == "ask"
    d = cmd("git push origin", rules=[allow, ask, deny])
    assert d.action == "deny" and d.rule is deny
    assert d.reason == "denied by rule `git push *` (user): `git push origin`"


def test_user_deny_overrides_default_allow():
    d = cmd("cat secrets.env", rules=[command_rule("cat *", "deny")])
    assert d.action == "deny"
    assert cmd("cat secrets.env").action == "allow"


def test_deny_in_any_segment_denies_the_line():
    d = cmd("ls; curl x | sh", "full", [command_rule("curl *", "deny")])
    assert d.action == "deny"
    # `| sh` runs a script from its input the guard cannot see: it asks even in full
    assert [s.action for s in d.segments] == ["allow", "deny", "ask"]


def test_deny_rules_match_program_paths_but_allow_rules_do_not():
    assert cmd("/usr/bin/curl x", rules=[command_rule("curl *", "deny")]).action == "deny"
    d = cmd("./ls -la")
    assert d.action == "ask" and "no rule matches" in d.reason


def test_deny_rules_are_not_dodged_by_git_global_options():
    rules = [command_rule("git push *", "deny")]
    assert cmd("git -C . --no-pager push origin", "full", rules).action == "deny"


def test_destructive_guard_cannot_be_allowed_by_a_rule():
    d = cmd("git clean -fdx", rules=[command_rule("git clean *")])
    assert d.action == "ask" and d.rule_id == "destructive-guard"


def test_allowed_reason_names_the_rule_and_its_source():
    d = cmd("git diff --stat")
    assert d.action == "allow"
    assert d.reason == "allowed by rule `git diff *` (default)"
    assert d.rule is not None and d.rule.source == "default"
    user = command_rule("make test", rule_id="r-make")
    d = cmd("make test", rules=[user])
    assert d.reason == "allowed by rule `make test` (user)" and d.rule_id == "r-make"


def test_exact_rules_reject_extra_arguments():
    rules = [command_rule("make test")]
    assert cmd("make test", rules=rules).action == "allow"
    assert cmd("make test install", rules=rules).action == "ask"


def test_unless_arguments_stop_default_rules():
    assert cmd("find . -name x").action == "allow"
    assert cmd("find . -name x -exec cat {} ;").action == "ask"
    assert cmd("git diff --output=patch.txt").action == "ask"
    assert cmd("sort -o out.txt in.txt").action == "ask"
    assert cmd("rg --pre ./evil foo").action == "ask"


def test_git_config_override_asks_even_with_a_rule():
    d = cmd("git -c core.pager=evil log")
    assert d.action == "ask" and "git -c" in d.reason


def test_output_redirection_asks_in_ask_mode(tmp_path):
    d = cmd("echo hi > notes.txt", workspace=tmp_path)
    assert d.action == "ask" and "writes to `notes.txt`" in d.reason
    assert cmd("echo hi > /dev/null 2>&1").action == "allow"


def test_opaque_commands_ask_even_in_auto():
    for line in ("$CMD -rf x", 'eval "$X"', 'bash -c "$SCRIPT"'):
        d = cmd(line, "auto")
        assert d.action == "ask", line
        assert "only known at run time" in d.reason
    # cannot be analysed, so possibly destructive: asks even in full access (issue 12)
    d = cmd("$CMD", "full")
    assert d.action == "ask" and "may be destructive" in d.reason and d.checkpoint_required
    d = cmd("$CMD x", "full", [command_rule("curl *", "deny")])
    assert d.action == "ask" and "only known at run time" in d.reason


def test_empty_and_comment_lines():
    assert cmd("").action == "ask"
    assert cmd("   ").action == "ask"
    assert cmd("# nothing").action == "allow"
    assert cmd("x=1").action == "allow"


def test_argv_commands():
    assert cmd(["git", "status"]).action == "allow"
    assert cmd(["bash", "-lc", "git status && rm -rf src"]).action == "ask"
    assert cmd(["rm", "-rf", "src"], "auto").checkpoint_required


def test_parsed_command_can_be_passed_in():
    parsed = parse_command("git log -1")
    assert cmd(parsed).action == "allow"


def test_unknown_mode_is_a_user_error():
    with pytest.raises(UserError, match="unknown approval mode"):
        cmd("ls", "yolo")
    assert cmd("ls", "full-access").action == "allow"
    assert cmd("ls", ApprovalMode.READ_ONLY).sandbox == "read-only"


# -- mode matrix --------------------------------------------------------------------------------

# (line, read-only, ask, auto, full) with a sandbox available and the rules below.
RULES = [
    command_rule("npm run test *"),
    command_rule("curl *", "deny"),
    command_rule("git push *", "ask"),
]
MATRIX = [
    ("git status", "allow", "allow", "allow", "allow"),
    ("ls -la | wc -l", "allow", "allow", "allow", "allow"),
    ("npm run test", "allow", "allow", "allow", "allow"),
    ("make build", "ask", "ask", "allow", "allow"),
    ("python script.py", "ask", "ask", "allow", "allow"),
    ("echo x > f.txt", "deny", "ask", "allow", "allow"),
    ("ls | tee listing.txt", "deny", "ask", "allow", "allow"),
    ("curl https://example.com", "deny", "deny", "deny", "deny"),
    ("git push origin main", "ask", "ask", "ask", "allow"),
    ("git reset --hard", "ask", "ask", "ask", "ask"),
    ("rm -rf src", "ask", "ask", "ask", "ask"),
    ("rm -rf node_modules", "ask", "ask", "allow", "allow"),
    ("sudo ls", "ask", "ask", "ask", "allow"),
    ("echo 'unbalanced", "ask", "ask", "ask", "ask"),
    ("curl x; echo 'unbalanced", "deny", "deny", "deny", "deny"),
]


@pytest.mark.parametrize(("line", "ro", "ask", "auto", "full"), MATRIX)
def test_mode_matrix(line: str, ro: str, ask: str, auto: str, full: str, tmp_path):
    modes = ("read-only", "ask", "auto", "full")
    # a write target is judged against the workspace: there `f.txt` is a new file
    ws = tmp_path if (">" in line or "tee" in line) else None
    got = [cmd(line, m, RULES, workspace=ws).action for m in modes]
    assert got == [ro, ask, auto, full]


def test_sandbox_per_mode():
    expected = {"read-only": "read-only", "ask": "none", "auto": "workspace-write", "full": "none"}
    for mode, sandbox in expected.items():
        assert cmd("make", mode).sandbox == sandbox
        assert cmd("make", mode, sandbox=False).sandbox == "none"


def test_auto_without_sandbox_asks_for_unvetted_commands():
    d = cmd("make build", "auto", sandbox=False)
    assert d.action == "ask"
    assert "without a sandbox" in d.reason
    assert cmd("git status", "auto", sandbox=False).action == "allow"


def test_checkpoint_required_only_for_destructive_commands():
    assert not cmd("make", "full").checkpoint_required
    assert cmd("git clean -fd", "full").checkpoint_required
    d = cmd("git clean -fd", "full")
    assert d.action == "ask" and "deletes untracked files" in d.reason
    denied = cmd("rm -rf src", "full", [command_rule("rm *", "deny")])
    assert denied.action == "deny" and not denied.checkpoint_required


def test_segment_details_are_exposed():
    d = cmd("git diff | grep x; rm -rf src", "auto")
    assert [s.text for s in d.segments] == ["git diff", "grep x", "rm -rf src"]
    assert d.segments[2].destructive == "deletes src and everything under it"
    assert d.segments[2].segment is not None and d.segments[2].segment.program == "rm"


# -- patches ------------------------------------------------------------------------------------


def test_patch_mode_matrix():
    expected = {"read-only": "deny", "ask": "ask", "auto": "allow", "full": "allow"}
    for mode, action in expected.items():
        d = decide_patch(["src/app.py"], mode)
        assert d.action == action, mode
        assert d.sandbox == "none"
        assert d.checkpoint_required is (action == "allow")


def test_patch_allow_rules_in_ask_mode():
    rules = [patch_rule("docs/**"), patch_rule("**/*.md")]
    assert decide_patch(["docs/a/b.txt"], "ask", rules).action == "allow"
    assert decide_patch(["README.md", "pkg/NOTES.md"], "ask", rules).action == "allow"
    d = decide_patch(["docs/x.md", "src/app.py"], "ask", rules)
    assert d.action == "ask" and d.reason == "asked: no rule matches `src/app.py`"
    d = decide_patch(["docs/x.md"], "ask", [patch_rule("docs/")])
    assert d.action == "allow" and d.reason == "allowed by rule `docs/**` (user)"


def test_patch_precedence():
    rules = [patch_rule("**"), patch_rule("secrets/**", "deny"), patch_rule("ci/**", "ask")]
    assert decide_patch(["src/a.py"], "ask", rules).action == "allow"
    assert decide_patch(["ci/x.yml"], "auto", rules).action == "ask"
    assert decide_patch(["ci/x.yml"], "full", rules).action == "allow"
    d = decide_patch(["src/a.py", "secrets/key"], "full", rules)
    assert d.action == "deny" and "denied by rule `secrets/**` (user)" in d.reason


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.txt", "a/../../b", ".git/config", ""])
def test_patches_outside_the_workspace_are_denied(path: str):
    for mode in ALL_MODES:
        d = decide_patch([path], mode, [patch_rule("**")])
        assert d.action == "deny"
        assert d.rule_id == "confinement"


def test_absolute_paths_inside_the_workspace_are_relativized(tmp_path):
    inside = str(tmp_path / "docs" / "a.md")
    d = decide_patch([inside], "ask", [patch_rule("docs/**")], workspace=tmp_path)
    assert d.action == "allow"


def test_patch_without_paths_asks():
    assert decide_patch([], "auto").action == "ask"


def test_command_rules_do_not_affect_patches_and_vice_versa():
    assert decide_patch(["x.py"], "ask", [command_rule("x.py")]).action == "ask"
    assert cmd("x.py", rules=[patch_rule("x.py")]).action == "ask"


# -- properties ---------------------------------------------------------------------------------

SAFE = ["git status", "git diff --stat", "ls -la", "grep -rn foo .", "cat README.md", "echo hi"]
DANGEROUS = ["rm -rf src", "git reset --hard", "git clean -fdx", "git push -f", "dd if=a of=b"]
JOINS = ["{a}; {b}", "{a} && {b}", "{a} || {b}", "{a} | {b}", "{a}\n{b}", "({a}; {b})",
         "{a} $({b})", "{a} \"$({b})\"", "{a} `{b}`", "{a} <({b})", "bash -c '{a}; {b}'",
         "{a} && sudo {b}", "FOO=1 {b}", "timeout 5 {b}", "{a} | xargs -0 echo; {b}"]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(SAFE),
    st.sampled_from(DANGEROUS),
    st.sampled_from(JOINS),
    st.sampled_from(["read-only", "ask", "auto"]),
)
def test_a_destructive_command_is_never_allowed_whatever_surrounds_it(
    safe: str, bad: str, join: str, mode: str
):
    line = join.format(a=safe, b=bad)
    d = cmd(line, mode, [command_rule("rm *"), command_rule("git *"), command_rule("dd *")])
    assert d.action == "ask", line
    assert d.checkpoint_required, line


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(SAFE), min_size=1, max_size=4), st.sampled_from(["&&", ";", "|"]))
def test_lines_of_read_only_commands_are_allowed(parts: list[str], op: str):
    line = f" {op} ".join(parts)
    for mode in ("read-only", "ask"):
        d = cmd(line, mode)
        assert d.action == "allow", (line, d.reason)
        assert len(d.segments) == len(parts)


def test_default_read_only_rules_stop_at_the_workspace(tmp_path):
    inside = tmp_path / "notes.txt"
    for command in ("cat /etc/shadow", "ls ~", "cat ../../etc/passwd", "head -n 3 /root/.bashrc"):
        decision = decide_command(command, "ask", sandbox_available=False, workspace=tmp_path)
        assert decision.action == "ask", command
        assert "outside the workspace" in decision.reason
    for command in (f"cat {inside}", "cat notes.txt", "ls src/..", "grep -r TODO ."):
        assert (
            decide_command(command, "ask", sandbox_available=False, workspace=tmp_path).action
            == "allow"
        ), command
    # a user rule still vouches for an outside path
    from core.policy import command_rule

    decision = decide_command(
        "cat /etc/hosts",
        "ask",
        [command_rule("cat *")],
        sandbox_available=False,
        workspace=tmp_path,
    )
    assert decision.action == "allow"
