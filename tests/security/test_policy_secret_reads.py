"""Attack class: secret reads through commands the built-in read-only rules allow (issue 11).

Each case is a line an agent could send in *ask* or *read-only* mode to print a secret from
the user's home (``~/.ssh/id_rsa``, Tandem's own settings, cloud credentials). First the
line is run unjudged, to prove the spelling really reads the secret; then it goes through
the policy gate (it runs only if allowed without a prompt), and the promise is that the
secret is absent from what the agent gets.
"""

from __future__ import annotations

import pytest

from core.policy import decide_command
from tests.security._policy_box import ASKING_MODES, SECRET, Box, make_box

READS = [
    # the four
    pytest.param("cat $HOME/.ssh/id_rsa", id="dollar-home"),
    pytest.param("cat < ~/.ssh/id_rsa", id="input-redirect-tilde"),
    pytest.param("cd $HOME && cat .ssh/id_rsa", id="cd-home-then-relative"),
    pytest.param("grep -r api_key $HOME/.config", id="grep-recursive-config"),
    # variable and tilde spellings
    pytest.param("cat ${HOME}/.ssh/id_rsa", id="braced-home"),
    pytest.param('cat "$HOME/.ssh/id_rsa"', id="double-quoted-home"),
    pytest.param('cat "${HOME}"/.ssh/id_rsa', id="quoted-braced-home-concatenated"),
    pytest.param("cat ~/.ssh/id_rsa", id="tilde"),
    pytest.param("cat ~/.config/tandem/settings.toml", id="tandem-settings"),
    pytest.param("head -n 5 ~/.aws/credentials", id="head-aws-credentials"),
    pytest.param("tail ~/.netrc", id="tail-netrc"),
    pytest.param("nl ~/.config/gh/hosts.yml", id="nl-gh-hosts"),
    pytest.param("cut -c1- ~/.git-credentials", id="cut-git-credentials"),
    pytest.param("sort ~/.ssh/id_rsa", id="sort-operand"),
    pytest.param("cat -- ~/.ssh/id_rsa", id="after-double-dash"),
    pytest.param("cat {home}/.ssh/id_rsa", id="absolute-path"),
    pytest.param("cat ../home/.ssh/id_rsa", id="dotdot"),
    pytest.param("cat src/../../home/.ssh/id_rsa", id="dotdot-through-subfolder"),
    pytest.param("cat ~+/../home/.ssh/id_rsa", id="tilde-plus"),
    pytest.param("cat $PWD/../home/.ssh/id_rsa", id="dollar-pwd"),
    pytest.param("cat ~/.ssh/*", id="glob-outside"),
    pytest.param("cat ~/.ssh/id_rs?", id="question-glob-outside"),
    pytest.param("cat $(echo ~/.ssh/id_rsa)", id="command-substitution-path"),
    pytest.param("echo $(< ~/.ssh/id_rsa)", id="substitution-of-a-bare-redirect"),
    pytest.param("cat /proc/self/root/{home_rel}/.ssh/id_rsa", id="proc-self-root"),
    # cd tracking
    pytest.param("cd ~ && cat .git-credentials", id="cd-tilde"),
    pytest.param("cd && cat .ssh/id_rsa", id="bare-cd-goes-home"),
    pytest.param("cd ~/.ssh; cat id_rsa", id="cd-semicolon"),
    pytest.param("cd / && cat {home_rel}/.ssh/id_rsa", id="cd-root-then-relative"),
    pytest.param("cd .. && cat home/.ssh/id_rsa", id="cd-dotdot"),
    pytest.param("cd src; cd ../..; cat home/.ssh/id_rsa", id="cd-twice"),
    pytest.param("true && cd ~ ; cat .netrc", id="conditional-cd"),
    pytest.param("cd ~ | true; cd ~ && cat .netrc", id="cd-in-pipeline-then-cd"),
    pytest.param("env -C ~ cat .ssh/id_rsa", id="env-chdir"),
    pytest.param("env --ch=$HOME cat .ssh/id_rsa", id="env-chdir-abbreviated"),
    # redirections
    pytest.param("cat 0<~/.ssh/id_rsa", id="fd0-redirect"),
    pytest.param("{ cat; } < ~/.ssh/id_rsa", id="group-redirect"),
    pytest.param("tr -d x < ~/.ssh/id_rsa", id="tr-redirect"),
    pytest.param("while read -r l; do echo $l; done < ~/.ssh/id_rsa", id="while-read-redirect"),
    # wrappers and inner shells
    pytest.param("timeout 5 cat ~/.ssh/id_rsa", id="timeout"),
    pytest.param("nice -n 5 cat ~/.ssh/id_rsa", id="nice"),
    pytest.param("nohup cat ~/.ssh/id_rsa", id="nohup"),
    pytest.param("command cat ~/.ssh/id_rsa", id="command-builtin"),
    pytest.param("exec cat ~/.ssh/id_rsa", id="exec"),
    pytest.param("stdbuf -o0 cat ~/.ssh/id_rsa", id="stdbuf"),
    pytest.param("env -i cat {home}/.ssh/id_rsa", id="env-i"),
    pytest.param("bash -c 'cat ~/.ssh/id_rsa'", id="bash-c"),
    pytest.param("sh -c 'cat \"$0\"' ~/.ssh/id_rsa", id="sh-c-positional"),
    pytest.param("eval 'cat ~/.ssh/id_rsa'", id="eval"),
    pytest.param("echo ~/.ssh/id_rsa | xargs cat", id="xargs-hidden-args"),
    pytest.param("xargs -a ~/.ssh/id_rsa echo", id="xargs-arg-file"),
    pytest.param("find ~/.ssh -type f -exec cat {} +", id="find-exec"),
    # readers with file options
    pytest.param("jq -n --rawfile k ~/.ssh/id_rsa '$k'", id="jq-rawfile"),
    pytest.param("diff ~/.ssh/id_rsa /dev/null", id="diff-operand"),
    pytest.param("git diff --no-index ~/.ssh/id_rsa /dev/null", id="git-diff-no-index"),
    pytest.param("git -C ~ diff --no-index .ssh/id_rsa /dev/null", id="git-C-home"),
]


@pytest.fixture
def box(tmp_path) -> Box:
    return make_box(tmp_path)


@pytest.mark.parametrize("template", READS)
def test_secret_read_is_held(box: Box, template: str):
    line = box.fill(template)
    assert SECRET in box.run(line), "the spelling must really read the secret"
    for mode in (*ASKING_MODES, "auto"):  # auto without a sandbox falls back to the rules
        decision = box.decide(line, mode)
        assert decision.action != "allow", (mode, decision.reason)
        assert SECRET not in box.gate(line, mode), mode


def test_symlink_in_the_workspace_to_a_secret_is_held(box: Box):
    (box.root / "notes").symlink_to(box.home / ".ssh")
    line = "cat notes/id_rsa"
    assert SECRET in box.run(line)
    for mode in ASKING_MODES:
        assert SECRET not in box.gate(line, mode), mode


def test_glob_matching_a_symlink_out_is_held(box: Box):
    (box.root / "src" / "key.txt").symlink_to(box.home / ".ssh" / "id_rsa")
    line = "cat src/*.txt"
    assert SECRET in box.run(line)
    for mode in ASKING_MODES:
        assert SECRET not in box.gate(line, mode), mode


def test_argv_form_is_held(box: Box):
    argv = ["cat", str(box.home / ".ssh" / "id_rsa")]
    for mode in ASKING_MODES:
        decision = decide_command(argv, mode, sandbox_available=False, workspace=box.root)
        assert decision.action != "allow", decision.reason


def test_full_access_mode_keeps_its_meaning(box: Box):
    """Full access asks only for destructive commands (PRODUCT.md): reads are not judged."""
    assert box.decide("cat ~/.ssh/id_rsa", "full").action == "allow"


# -- globs of programs that read no file (red-team hole 10) ------------------------------------
# echo/printf/basename/tr read no file, but the shell expands their glob operands first, so
# the names in a folder outside the workspace (or in a hidden secret path) reach the agent.
# Each case names a file the listing reveals; run unjudged it is printed, gated it is not.

LISTINGS = [
    pytest.param("echo ~/.ssh/*", "id_rsa", id="echo-tilde-glob"),
    pytest.param("echo {home}/.ssh/*", "id_rsa", id="echo-absolute-glob"),
    pytest.param("echo $HOME/.ssh/id_*", "id_rsa", id="echo-dollar-home-prefix-glob"),
    pytest.param('echo "$HOME"/.aws/*', "credentials", id="echo-quoted-home-then-glob"),
    pytest.param("printf '%s\\n' ~/.ssh/*", "id_rsa", id="printf-tilde-glob"),
    pytest.param("printf '%s ' ~/.config/*/*", "hosts.yml", id="printf-two-level-glob"),
    pytest.param("cd ~/.ssh; echo *", "id_rsa", id="cd-then-bare-star"),
    pytest.param("cd ~ && echo .ss?/*", "id_rsa", id="cd-home-question-glob"),
    pytest.param("cd ~/.ssh && printf '%s\\n' ?d_rsa", "id_rsa", id="cd-then-printf-glob"),
    pytest.param("echo ~/.[s]sh/*", "id_rsa", id="bracket-glob-folder"),
    pytest.param("echo {outside}/*", "target.txt", id="echo-outside-folder"),
    pytest.param("echo ../outside/*", "target.txt", id="echo-dotdot-glob"),
    pytest.param("echo src/../../outside/*", "target.txt", id="echo-dotdot-through-subfolder"),
    pytest.param("basename -a ~/.ssh/*", "id_rsa", id="basename-glob"),
    pytest.param("tr a b ~/.ssh/*", "id_rsa", id="tr-extra-operand-error"),
    pytest.param("echo hi; echo ~/.ssh/*", "id_rsa", id="second-segment"),
    pytest.param("echo ~/.ssh/* | cat", "id_rsa", id="in-a-pipeline"),
    pytest.param("command echo ~/.ssh/*", "id_rsa", id="command-wrapper"),
    pytest.param("bash -c 'echo ~/.ssh/*'", "id_rsa", id="inner-shell"),
]


@pytest.mark.parametrize(("template", "name"), LISTINGS)
def test_glob_listing_outside_is_held(box: Box, template: str, name: str):
    line = box.fill(template)
    assert name in box.run(line), "the glob must really list the folder"
    for mode in (*ASKING_MODES, "auto"):  # auto without a sandbox falls back to the rules
        decision = box.decide(line, mode)
        assert decision.action != "allow", (mode, decision.reason)
        assert name not in box.gate(line, mode), mode


def test_glob_through_a_workspace_link_out_is_held(box: Box):
    (box.root / "keys").symlink_to(box.home / ".ssh")
    line = "echo keys/*"
    assert "id_rsa" in box.run(line)
    for mode in ASKING_MODES:
        assert "id_rsa" not in box.gate(line, mode), mode


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("echo .ssh/*", id="relative-glob"),
        pytest.param("cd .ssh; echo *", id="cd-secret-then-star"),
        pytest.param("printf '%s\\n' .ss*/*", id="glob-folder-then-glob"),
        pytest.param("echo .*/*", id="dot-star-folder"),
    ],
)
def test_glob_into_a_secret_path_of_a_home_workspace_is_held(tmp_path, line: str):
    """The workspace is the home folder: ``~/.ssh`` is inside it but hidden."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SECRET)
    for mode in ASKING_MODES:
        decision = decide_command(
            line,
            mode,
            sandbox_available=False,
            workspace=home,
            env={"HOME": str(home)},
            secret_paths=[home / ".ssh"],
        )
        assert decision.action != "allow", (mode, decision.reason)


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("echo *", id="star-in-workspace"),
        pytest.param("echo src/*", id="subfolder-glob"),
        pytest.param("printf '%s\\n' *.md", id="printf-suffix-glob"),
        pytest.param("echo '~/.ssh/*'", id="quoted-glob-is-text"),
        pytest.param("echo ~/.ssh", id="a-path-without-glob-is-text"),
    ],
)
def test_globs_inside_the_workspace_still_run(box: Box, line: str):
    """Listing the workspace itself needs no prompt (a link in it names only itself)."""
    (box.root / "elsewhere").symlink_to(box.outside)
    assert box.decide(line, "ask").action == "allow", box.decide(line, "ask").reason
