"""Attack class: a sandboxed command creates a NEW repository and plants code in it.

Bubblewrap cannot refuse the creation of a ``.git`` in the writable workspace, so the agent
can ``git init sub``, lay out ``x/.git`` by hand, clone, add a submodule, add a worktree or
make a bare repository, and fill its hooks or config. Each case runs the hostile command
under real bubblewrap (workspace-write), then the *user's own* plain git (unsandboxed, clean
environment, ``HOME`` in a temp folder) works in that repository: status, diff, add, commit,
checkout, push. The promise: a marker file outside the workspace never appears. Ordinary
use (the agent makes a project with ``git init`` and commits in it) keeps working, and the
user's global ``core.hooksPath``/``include.path`` into the workspace cannot be used either.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harnesses.shell import SubprocessShellExecutor, sandbox_available, sandbox_unavailable_reason
from tests.security._user_git import user_git

pytestmark = pytest.mark.skipif(
    not sandbox_available(), reason=f"bubblewrap unusable: {sandbox_unavailable_reason()}"
)

HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-checkout",
    "post-merge",
    "reference-transaction",
    "post-index-change",
    "pre-push",
    "pre-receive",
    "update",
    "post-receive",
    "post-update",
    "push-to-checkout",
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path

def user_session(repo: Path, home: Path) -> None:
    """What the user does next in ``repo``: every step that runs hooks, fsmonitor or filters."""
    (repo / "user.txt").write_text("user edit\n")
    for args in (
        ("status",),
        ("diff",),
        ("add", "-A"),
        ("diff", "--cached"),
        ("commit", "-q", "-m", "user commit"),
        ("checkout", "-q", "-b", "user-branch"),
        ("checkout", "-q", "-"),
        ("log", "-1", "--stat"),
    ):
        user_git(repo, home, *args)


def make_user_repo(path: Path, home: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    user_git(path, home, "init", "-q", "-b", "main", check=True)
    (path / "file.txt").write_text("one\n")
    user_git(path, home, "add", "file.txt", check=True)
    user_git(path, home, "commit", "-q", "-m", "initial", check=True)
    return path


async def agent(ws: Path, *commands: str, timeout_ms: int = 60_000) -> list[str]:
    """Run ``commands`` as the agent, sandboxed in workspace-write mode; their stderr texts."""
    executor = SubprocessShellExecutor(ws, sandbox="workspace-write")
    outputs = []
    for command in commands:
        result = await executor.run([command], timeout_ms=timeout_ms)
        entry = result.output[0]
        assert entry.provider_data is not None and entry.provider_data["sandboxed"] is True
        outputs.append(entry.stderr)
    return outputs


def plant(folder: str, marker: Path) -> str:
    """Shell text that writes every hook into ``folder`` (relative to the command's cwd)."""
    names = " ".join(HOOKS)
    return (
        f"mkdir -p {folder} && for h in {names}; do"
        f" printf '#!/bin/sh\\ntouch {marker}\\n' > {folder}/$h; chmod +x {folder}/$h; done"
    )


IDENT = "git -c user.name=A -c user.email=a@example.com"

# (agent command lines, the repository the user then works in, relative to the workspace)
Case = tuple[Callable[[Path], list[str]], str]

NEW_REPO_HOOKS: dict[str, Case] = {
    "git-init-sub-hooks": (
        lambda m: [f"git init -q sub && {plant('sub/.git/hooks', m)}"],
        "sub",
    ),
    "git-init-sub-hooks-then-commit-inside": (
        lambda m: [
            f"git init -q sub && cd sub && echo a > a && git add a && {IDENT} commit -qm a"
            f" && cd .. && {plant('sub/.git/hooks', m)}"
        ],
        "sub",
    ),
    "git-init-sub-hooks-in-later-command": (
        lambda m: ["git init -q sub", plant("sub/.git/hooks", m)],
        "sub",
    ),
    "git-init-template-dir": (
        lambda m: [f"{plant('tpl/hooks', m)} && git init -q --template=tpl sub"],
        "sub",
    ),
    "manual-dotgit-layout": (
        lambda m: [
            "mkdir -p x/.git/objects x/.git/refs/heads && echo 'ref: refs/heads/main' > x/.git/HEAD"
            " && printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n'"
            f" > x/.git/config && {plant('x/.git/hooks', m)}"
        ],
        "x",
    ),
    "manual-gitdir-file-to-hidden-dir": (
        lambda m: [
            "git init -q --bare stash/store && mkdir -p y && echo 'gitdir: ../stash/store' > y/.git"
            f" && git -C stash/store config core.bare false && {plant('stash/store/hooks', m)}"
        ],
        "y",
    ),
    "clone-workspace-into-subdir": (
        lambda m: [f"git clone -q . copy && {plant('copy/.git/hooks', m)}"],
        "copy",
    ),
    "clone-separate-git-dir-into-modules": (
        lambda m: [
            "mkdir -p .git/modules && git clone -q --separate-git-dir=.git/modules/evil . evilwt"
            f" && {plant('.git/modules/evil/hooks', m)}"
        ],
        "evilwt",
    ),
    "submodule-add-local-repo": (
        lambda m: [
            f"git init -q lib && cd lib && echo l > l && git add l && {IDENT} commit -qm l"
            " && cd .. && git init -q outer && cd outer"
            f" && git -c protocol.file.allow=always submodule -q add ../lib mod"
            f" && {IDENT} commit -qm sub && cd .. && {plant('outer/.git/modules/mod/hooks', m)}"
            f" && {plant('outer/.git/hooks', m)}"
        ],
        "outer/mod",
    ),
    "worktree-add-commondir-to-new-bare": (
        lambda m: [
            "git worktree add -q wt && git clone -q --bare . evil.git"
            f" && git -C evil.git config core.fsmonitor 'touch {m}'"
            f' && {plant("evil.git/hooks", m)} && echo "$PWD/evil.git" > .git/worktrees/wt/commondir'
        ],
        "wt",
    ),
    "worktree-add-hooks-in-worktree-git-dir": (
        lambda m: [
            f"git worktree add -q wt2 && {plant('.git/worktrees/wt2/hooks', m)}"
            f" && printf '[core]\\n\\tfsmonitor = touch {m}\\n' > .git/worktrees/wt2/config.worktree"
        ],
        "wt2",
    ),
    "nested-two-levels": (
        lambda m: [f"git init -q a && git init -q a/b/c && {plant('a/b/c/.git/hooks', m)}"],
        "a/b/c",
    ),
    "nested-deep-mkdir-p": (
        lambda m: [
            f"mkdir -p deep/x/y && cd deep/x/y && git init -q && cd - >/dev/null"
            f" && {plant('deep/x/y/.git/hooks', m)}"
        ],
        "deep/x/y",
    ),
    "nested-inside-node-modules": (
        lambda m: [
            "mkdir -p node_modules/pkg && git init -q node_modules/pkg"
            f" && {plant('node_modules/pkg/.git/hooks', m)}"
        ],
        "node_modules/pkg",
    ),
    "replace-own-new-repo-git-dir": (
        lambda m: [
            "git init -q sub",
            f"mv sub sub.old && git init -q sub && {plant('sub/.git/hooks', m)}",
        ],
        "sub",
    ),
    "hooks-dir-symlink": (
        lambda m: [
            f"{plant('evilhooks', m)} && git init -q sub && rm -rf sub/.git/hooks"
            " && ln -s ../../evilhooks sub/.git/hooks"
        ],
        "sub",
    ),
}

NEW_REPO_CONFIG: dict[str, Case] = {
    "fsmonitor-in-new-config": (
        lambda m: [f"git init -q sub && git -C sub config core.fsmonitor 'touch {m}'"],
        "sub",
    ),
    "fsmonitor-written-by-printf": (
        lambda m: [
            f"git init -q sub && printf '[core]\\n\\tfsmonitor = touch {m}\\n' >> sub/.git/config"
        ],
        "sub",
    ),
    "hookspath-in-new-config": (
        lambda m: [
            f"git init -q sub && {plant('myhooks', m)} && git -C sub config core.hooksPath ../myhooks"
        ],
        "sub",
    ),
    "clean-filter-in-new-config": (
        lambda m: [
            f"git init -q sub && git -C sub config filter.x.clean 'touch {m}; cat'"
            f" && git -C sub config filter.x.smudge 'touch {m}; cat'"
            " && echo '* filter=x' > sub/.gitattributes"
        ],
        "sub",
    ),
    "textconv-in-new-config": (
        lambda m: [
            f"git init -q sub && cd sub && echo a > user.txt && git add user.txt"
            f" && {IDENT} commit -qm a && git config diff.x.textconv 'touch {m}; cat'"
            f" && git config diff.x.command 'touch {m}' && echo '* diff=x' > .gitattributes"
        ],
        "sub",
    ),
    "include-path-in-new-config": (
        lambda m: [
            f"git init -q sub && printf '[core]\\n\\tfsmonitor = touch {m}\\n' > evil.cfg"
            " && git -C sub config include.path ../../evil.cfg"
        ],
        "sub",
    ),
    "includeif-in-new-config": (
        lambda m: [
            f"git init -q sub && printf '[core]\\n\\tfsmonitor = touch {m}\\n' > evil.cfg"
            ' && git -C sub config "includeIf.gitdir:/.path" ../../evil.cfg'
        ],
        "sub",
    ),
    "include-then-rewrite-included-file-later": (
        lambda m: [
            "git init -q sub && touch inc.cfg && git -C sub config include.path ../../inc.cfg",
            f"printf '[core]\\n\\tfsmonitor = touch {m}\\n' > inc.cfg",
        ],
        "sub",
    ),
    "alias-shadowing-in-new-config": (
        lambda m: [f"git init -q sub && git -C sub config alias.st '!touch {m}'"],
        "sub",
    ),
}


def _ids(cases: dict[str, Case]) -> list[object]:
    return [pytest.param(cmds, where, id=name) for name, (cmds, where) in cases.items()]


@pytest.mark.parametrize(("commands", "where"), _ids(NEW_REPO_HOOKS) + _ids(NEW_REPO_CONFIG))
async def test_new_repository_code_never_runs_for_the_user(
    ws: Path, home: Path, marker: Path, commands: Callable[[Path], list[str]], where: str
) -> None:
    make_user_repo(ws, home)
    await agent(ws, *commands(marker))
    repo = ws / where
    assert repo.is_dir(), f"the attack did not create {where}"
    user_session(repo, home)
    user_git(repo, home, "st")  # an alias the agent may have shadowed
    assert not marker.exists()


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(
            lambda m: f"git init -q sub && {plant('sub/.git/hooks', m)}", id="in-git-repo-ws"
        ),
        pytest.param(
            lambda m: f"git init -q sub && git -C sub config core.fsmonitor 'touch {m}'",
            id="fsmonitor-plain-folder-ws",
        ),
    ],
)
async def test_new_repository_in_a_workspace_that_is_no_repository(
    ws: Path, home: Path, marker: Path, command: Callable[[Path], str]
) -> None:
    await agent(ws, command(marker))
    user_session(ws / "sub", home)
    assert not marker.exists()


@pytest.mark.parametrize("form", ["init-bare", "clone-bare", "mirror"])
async def test_bare_repository_used_with_git_dir(
    ws: Path, home: Path, marker: Path, form: str
) -> None:
    make_user_repo(ws, home)
    make = {
        "init-bare": "git init -q --bare x.git",
        "clone-bare": "git clone -q --bare . x.git",
        "mirror": "git clone -q --mirror . x.git",
    }[form]
    await agent(
        ws,
        f"{make} && {plant('x.git/hooks', marker)} && git -C x.git config core.fsmonitor 'touch {marker}'",
    )
    user_git(ws, home, "push", "-q", "x.git", "main")  # pre-receive, update, post-receive...
    tree = ws / "userwt"
    tree.mkdir()
    (tree / "n.txt").write_text("n\n")
    for args in (("status",), ("add", "-A"), ("commit", "-q", "-m", "c"), ("log", "-1")):
        user_git(tree, home, "--git-dir=../x.git", "--work-tree=.", *args)
    assert not marker.exists()


async def test_new_repository_is_reported(ws: Path, home: Path, marker: Path) -> None:
    stderr = await agent(
        ws,
        f"git init -q sub && {plant('sub/.git/hooks', marker)} && git -C sub config core.fsmonitor x",
    )
    assert "Tandem disabled 14 hooks in the new repository sub/.git" in stderr[0]
    assert "core.fsmonitor" in stderr[0]
    hooks = sorted(os.listdir(ws / "sub/.git/hooks"))
    assert "pre-commit.disabled-by-tandem" in hooks and "pre-commit" not in hooks


async def test_agent_can_still_make_a_project_and_commit(ws: Path, home: Path) -> None:
    """Ordinary use: git init, commit, and commit again in a later command; nothing changed."""
    first = await agent(
        ws,
        f"git init -q proj && cd proj && echo a > a && git add a && {IDENT} commit -qm first",
    )
    config = (ws / "proj/.git/config").read_bytes()
    second = await agent(
        ws,
        f"cd proj && echo b > b && git add b && {IDENT} commit -qm second && git log --oneline",
    )
    assert "Tandem" not in first[0] + second[0]
    assert (ws / "proj/.git/config").read_bytes() == config
    log = user_git(ws / "proj", home, "log", "--format=%s")
    assert log.split() == ["second", "first"]
    assert sorted(os.listdir(ws / "proj/.git/hooks")) == sorted(
        n for n in os.listdir(ws / "proj/.git/hooks") if n.endswith(".sample")
    )


async def test_agent_can_still_clone_and_work_in_the_clone(ws: Path, home: Path) -> None:
    make_user_repo(ws, home)
    await agent(ws, "git clone -q . copy")
    out = await agent(ws, f"cd copy && echo c > c && git add c && {IDENT} commit -qm c")
    assert "Tandem" not in out[0]
    assert user_git(ws / "copy", home, "log", "-1", "--format=%s").strip() == "c"
    remote = user_git(ws / "copy", home, "config", "remote.origin.url").strip()
    assert os.path.normpath(remote) == str(ws)


# --- the user's own global/system config points into the workspace ---------------------------


def _global(home: Path, text: str) -> None:
    (home / ".gitconfig").write_text(text)


GLOBAL_CASES = {
    "global-hookspath-absolute": (
        lambda ws, m: f"[core]\n\thooksPath = {ws}/.githooks\n",
        lambda m: plant(".githooks", m),
    ),
    "global-hookspath-absolute-missing-dir": (
        lambda ws, m: f"[core]\n\thooksPath = {ws}/tools/hooks\n",
        lambda m: plant("tools/hooks", m),
    ),
    "global-hookspath-relative": (
        lambda ws, m: "[core]\n\thooksPath = .githooks\n",
        lambda m: plant(".githooks", m),
    ),
    "global-hookspath-tilde": (
        lambda ws, m: "[core]\n\thooksPath = ~/../ws/.githooks\n",  # HOME is a sibling
        lambda m: plant(".githooks", m),
    ),
    "global-hookspath-parent-renamed-away": (
        lambda ws, m: f"[core]\n\thooksPath = {ws}/tools/hooks\n",
        lambda m: f"mv tools tools.old; {plant('tools/hooks', m)}",
    ),
    "global-include-into-workspace": (
        lambda ws, m: f"[include]\n\tpath = {ws}/.gitconfig.local\n",
        lambda m: f"printf '[core]\\n\\tfsmonitor = touch {m}\\n' >> .gitconfig.local",
    ),
    "global-includeif-into-workspace": (
        lambda ws, m: f'[includeIf "gitdir:{ws}/"]\n\tpath = {ws}/conf/extra.cfg\n',
        lambda m: f"mkdir -p conf; printf '[core]\\n\\tfsmonitor = touch {m}\\n' > conf/extra.cfg",
    ),
    "global-include-chain-into-workspace": (
        lambda ws, m: f"[include]\n\tpath = {ws.parent}/home/second.cfg\n",
        lambda m: f"printf '[core]\\n\\tfsmonitor = touch {m}\\n' > second-target.cfg",
    ),
}


@pytest.mark.parametrize("case", list(GLOBAL_CASES), ids=list(GLOBAL_CASES))
async def test_user_global_config_pointing_into_workspace(
    ws: Path, home: Path, marker: Path, case: str
) -> None:
    config, attack = GLOBAL_CASES[case]
    make_user_repo(ws, home)
    _global(home, config(ws, marker))
    if case == "global-include-chain-into-workspace":
        (home / "second.cfg").write_text(f"[include]\n\tpath = {ws}/second-target.cfg\n")
    await agent(ws, attack(marker))
    user_session(ws, home)
    assert not marker.exists()


# --- the post-command sweep runs on timeout and on cancellation ------------------------------


async def test_sweep_runs_after_timeout(ws: Path, home: Path, marker: Path) -> None:
    make_user_repo(ws, home)
    await agent(
        ws,
        f"git init -q sub && {plant('sub/.git/hooks', marker)} && echo sub/.git > .git/commondir;"
        " sleep 30",
        timeout_ms=1500,
    )
    assert not (ws / ".git/commondir").exists()
    user_session(ws / "sub", home)
    user_session(ws, home)
    assert not marker.exists()


async def test_sweep_runs_after_cancellation(ws: Path, home: Path, marker: Path) -> None:
    make_user_repo(ws, home)
    executor = SubprocessShellExecutor(ws, sandbox="workspace-write")
    command = (
        f"git init -q sub && {plant('sub/.git/hooks', marker)} && echo sub/.git > .git/commondir"
        " && touch ready; sleep 30"
    )
    task = asyncio.ensure_future(executor.run([command], timeout_ms=60_000))
    for _ in range(300):
        if (ws / "ready").exists():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not (ws / ".git/commondir").exists()
    user_session(ws / "sub", home)
    user_session(ws, home)
    assert not marker.exists()


async def test_sandbox_cannot_unmount_its_read_only_binds(
    ws: Path, home: Path, marker: Path
) -> None:
    """Run as root, bwrap keeps capabilities unless dropped: umount would undo every bind."""
    make_user_repo(ws, home)
    await agent(
        ws,
        f"umount .git/config 2>/dev/null; umount -l .git/hooks 2>/dev/null;"
        f" printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> .git/config;"
        f" {plant('.git/hooks', marker)}",
    )
    user_session(ws, home)
    assert not marker.exists()
