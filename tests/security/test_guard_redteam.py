"""Attack class: red-team spellings that slipped past the destructive guard (Trust II).

Findings 1, 2, 3, 7 and 10b of the red-team report: shells reading their script from
standard input, git running code from configuration or the environment, git option
semantics (abbreviations, ``--no-X``, last-one-wins), in-place rewrites and downloads onto
ignored files, and the ref/index spellings git offers besides the obvious ones. The
promise: each asks in full mode, asks in auto mode too (a possibly destructive one runs
sandboxed there after a checkpoint covering everything it could reach), and requires a
checkpoint; where it can be run
here, one restore of that checkpoint brings back what the command destroyed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.policy.destructive_git import KNOWN_GIT_SUBCOMMANDS, installed_git_commands
from harnesses.workspace import Workspace
from tests.security._damage import ENV, git, make_repo, state

ASKS = [
    # 1. shells reading their script from stdin
    pytest.param("bash <<< 'rm -f .env build/out.bin'", id="bash-herestring"),
    pytest.param("sh -s <<EOF\nrm -f .env\nEOF", id="sh-s-heredoc"),
    pytest.param("bash <<EOF\nrm -f .env\nEOF", id="bash-heredoc"),
    pytest.param("echo 'rm -f .env' | sh", id="pipe-into-sh"),
    pytest.param("cat <<< 'rm -f .env' | bash", id="herestring-pipe-into-bash"),
    pytest.param("bash < <(echo rm -f .env)", id="bash-from-process-substitution"),
    pytest.param("bash <(echo rm -f .env)", id="bash-process-substitution-operand"),
    pytest.param("zsh - <<< 'rm -f .env'", id="zsh-dash-herestring"),
    pytest.param("dash /dev/stdin <<< 'rm -f .env'", id="dash-dev-stdin"),
    pytest.param("source /dev/stdin <<< 'rm -f .env'", id="source-dev-stdin"),
    pytest.param(". <(echo rm -f .env)", id="dot-process-substitution"),
    pytest.param("bash /dev/fd/3 3<<< 'rm -f .env'", id="bash-dev-fd"),
    # 2. git running code from config or the environment
    pytest.param("git -c core.fsmonitor='rm -f .env; false' status", id="git-c-fsmonitor"),
    pytest.param("git -c core.pager='rm -f .env' -p log", id="git-c-pager"),
    pytest.param("git --config-env=core.pager=P log", id="git-config-env"),
    pytest.param("GIT_EXTERNAL_DIFF='rm -f .env #' git diff", id="git-external-diff-env"),
    pytest.param(
        "GIT_CONFIG_PARAMETERS=\"'alias.gui=!rm -f .env'\" git gui", id="git-config-parameters"
    ),
    pytest.param(
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.gui GIT_CONFIG_VALUE_0='!rm -f .env' git gui",
        id="git-config-count",
    ),
    pytest.param("env GIT_PAGER='rm -f .env' git -p log", id="env-git-pager"),
    pytest.param("GIT_EDITOR='rm -f .env #' git commit --amend", id="git-editor-env"),
    pytest.param("HOME=. git log", id="home-changed"),
    pytest.param("export XDG_CONFIG_HOME=.; git log", id="xdg-config-home-exported"),
    pytest.param("git --exec-path=. status", id="git-exec-path"),
    pytest.param("git config alias.gui '!rm -f .env' && git gui", id="git-config-alias-then-use"),
    pytest.param("git config core.pager 'rm -f .env' && git -p log", id="git-config-then-use"),
    pytest.param("export GIT_PAGER='rm -f .env'; git -p log", id="git-pager-exported-earlier"),
    pytest.param('GIT_PAGER="$P" git -p log', id="git-pager-computed"),
    # 3. git option semantics
    pytest.param("git clean -n --no-dry-run -fdX", id="clean-no-dry-run-after-n"),
    pytest.param("git clean -fdX -n --no-dry-run", id="clean-no-dry-run-last"),
    pytest.param("git reset --soft --hard", id="reset-last-mode-wins-hard"),
    pytest.param("git reset --soft --merge", id="reset-last-mode-wins-merge"),
    pytest.param("git reset --soft --keep", id="reset-last-mode-wins-keep"),
    pytest.param("git reset --har", id="reset-abbreviated-hard"),
    pytest.param("git read-tree -n --no-dry-run -u --reset HEAD", id="read-tree-no-dry-run"),
    pytest.param("git branch --del --forc feature", id="branch-abbreviated-delete-force"),
    pytest.param("git branch --mov --forc feature main", id="branch-abbreviated-move-force"),
    pytest.param("git switch --disc main", id="switch-abbreviated-discard"),
    pytest.param("git checkout --forc main", id="checkout-abbreviated-force"),
    pytest.param("git worktree remove --forc wt", id="worktree-abbreviated-force"),
    pytest.param("git gc --prun=now", id="gc-abbreviated-prune"),
    pytest.param("git tag --del v1", id="tag-abbreviated-delete"),
    pytest.param("git symbolic-ref --del HEAD", id="symbolic-ref-abbreviated-delete"),
    pytest.param("git checkout --discard main", id="unknown-long-option"),
    # 7. in-place rewrites and downloads onto ignored files
    pytest.param("sed -i d .env", id="sed-in-place-ignored"),
    pytest.param("sed --in-place -e d .env", id="sed-long-in-place-ignored"),
    pytest.param("sort -o .env /dev/null", id="sort-output-ignored"),
    pytest.param("perl -pi -e 's/.*//' .env", id="perl-in-place-ignored"),
    pytest.param("perl -i -pe 's/.*//' .env", id="perl-in-place-clustered-code"),
    pytest.param("ls | perl -lne 'unlink $_'", id="perl-clustered-inline-code"),
    pytest.param("find . -name .env -fprint .env", id="find-fprint-ignored"),
    pytest.param("curl -o .env http://127.0.0.1:9/x", id="curl-output-ignored"),
    pytest.param("curl -O http://127.0.0.1:9/.env", id="curl-remote-name-ignored"),
    pytest.param("wget -O .env http://127.0.0.1:9/x", id="wget-output-document-ignored"),
    pytest.param("tar -xf t.tar", id="tar-extract-over-ignored"),
    pytest.param("unzip -o t.zip", id="unzip-overwrite-ignored"),
    # 10b. kin of the spellings that already asked
    pytest.param("git checkout -B main HEAD", id="checkout-B-existing-branch"),
    pytest.param("git switch -C main HEAD", id="switch-C-existing-branch"),
    pytest.param("git update-index --force-remove README.md", id="update-index-force-remove"),
    pytest.param("git submodule deinit -f --all", id="submodule-deinit-force"),
    pytest.param("git notes remove HEAD", id="notes-remove"),
    pytest.param("git sparse-checkout set src", id="sparse-checkout-set"),
]

QUIET = [
    "git status", "git diff", "git log --oneline -5", "git -c color.ui=always log",
    "git -c user.name=x -c user.email=y commit -m z", "git checkout -b fresh", "git switch -c fresh",
    "git checkout -B fresh", "git branch -a", "git stash list", "git clean -fdX --no-dry-run -n",
    "git clean --dry-r -fdX", "git reset --hard --soft", "sed -n 1p .env", "sed -i s/x/y/ README.md",
    "sort .env", "sort -o new.out README.md", "curl -o newfile http://127.0.0.1:9/x",
    "wget -O new.txt http://127.0.0.1:9/x", "find . -name '*.py'", "tar -tf t.tar", "unzip -l t.zip",
    "tar -xf missing.tar", "bash run.sh", "bash < run.sh", "bash <<< 'ls -la'", "sh -c 'echo hi'",
    "source .venv/bin/activate", "GIT_PAGER=cat git log", "env GIT_PAGER=cat git log",
    "export GIT_PAGER=cat; git log", "GIT_EDITOR=true git commit --amend", "git --no-pager log",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _git_env(git_env: None) -> None:
    """Plain git for the test's own commands (see :func:`tests.security._damage.git_env`)."""


def _repo(tmp_path: Path) -> Path:
    """:func:`make_repo` plus a tar and a zip holding a new ``.env``, a tag and a note."""
    ws = tmp_path / "repo"
    make_repo(ws)
    src = tmp_path / "archive"
    src.mkdir()
    (src / ENV).write_text("FROM_ARCHIVE=1\n")
    subprocess.run(["tar", "-cf", str(ws / "t.tar"), "-C", str(src), ENV], check=True)
    import zipfile

    with zipfile.ZipFile(ws / "t.zip", "w") as zf:
        zf.write(src / ENV, ENV)
    git(ws, "tag", "v1")
    return ws


@pytest.mark.parametrize("mode", ["auto", "full"])
@pytest.mark.parametrize("command", ASKS)
def test_redteam_spelling_asks_with_a_checkpoint(tmp_path: Path, command: str, mode: str):
    ws = _repo(tmp_path)
    workspace = Workspace(ws, mode=mode, data_dir=tmp_path / "data")
    decision = workspace.decide_commands([command])
    if decision.action == "allow":  # possibly destructive: auto runs it sandboxed after a
        # checkpoint that holds everything it could reach, ignored files included
        assert mode == "auto" and decision.removes_unknown, (command, decision.reason)
    else:
        assert decision.action == "ask", (command, mode, decision.reason)
    assert decision.checkpoint_required, (command, decision.reason)


@pytest.mark.parametrize("command", QUIET)
def test_everyday_commands_stay_quiet_in_full(tmp_path: Path, command: str):
    ws = _repo(tmp_path)
    decision = Workspace(ws, mode="full", data_dir=tmp_path / "data").decide_commands([command])
    assert decision.action == "allow", (command, decision.reason)
    assert not decision.checkpoint_required, (command, decision.reason)


def test_a_known_git_command_not_installed_here_may_be_an_alias(tmp_path: Path):
    missing = sorted(KNOWN_GIT_SUBCOMMANDS - installed_git_commands())
    if not missing:
        pytest.skip("every git command the guard knows is installed here")
    ws = _repo(tmp_path)
    for mode in ("auto", "full"):
        decision = Workspace(ws, mode=mode, data_dir=tmp_path / "data").decide_commands(
            [f"git {missing[0]}"]
        )
        assert decision.checkpoint_required and decision.removes_unknown, decision.reason
        assert "alias" in decision.reason
        assert decision.action == "ask" or mode == "auto", decision.reason
    status = Workspace(ws, mode="full", data_dir=tmp_path / "data").decide_commands(["git status"])
    assert status.action == "allow" and "status" in installed_git_commands()


RESTORE = [
    pytest.param("bash <<< 'rm -f .env build/out.bin'", id="bash-herestring"),
    pytest.param("echo 'rm -f .env' | sh", id="pipe-into-sh"),
    pytest.param("bash < <(echo rm -f .env)", id="bash-process-substitution"),
    pytest.param("git clean -n --no-dry-run -fdX", id="clean-no-dry-run"),
    pytest.param("git reset --soft --hard", id="reset-soft-hard"),
    pytest.param("sed -i d .env", id="sed-in-place"),
    pytest.param("sort -o .env /dev/null", id="sort-output"),
    pytest.param("perl -i -pe 's/.*//' .env", id="perl-in-place"),
    pytest.param("find . -name .env -fprint .env", id="find-fprint"),
    pytest.param("tar -xf t.tar", id="tar-extract"),
    pytest.param("git -c core.fsmonitor='rm -f .env; false' status", id="git-c-fsmonitor"),
]


@pytest.mark.parametrize("command", RESTORE)
async def test_one_restore_brings_back_what_it_destroyed(tmp_path: Path, command: str):
    ws = _repo(tmp_path)
    before = state(ws)
    workspace = Workspace(ws, mode="full", data_dir=tmp_path / "data")
    decision = workspace.decide_commands([command])
    assert decision.action == "ask" and decision.checkpoint_required, decision.reason
    checkpoint = await workspace.checkpoint("before destructive command", decision=decision)
    assert checkpoint is not None
    subprocess.run(["bash", "-c", command], cwd=ws, capture_output=True, timeout=60)
    damaged = state(ws)
    assert damaged != before, f"{command!r} should have destroyed something"
    await workspace.checkpoints.restore(checkpoint.id)
    after = state(ws)
    for key in before:
        assert after[key] == before[key], f"{key} not restored byte for byte"
