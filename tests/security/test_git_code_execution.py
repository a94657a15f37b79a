"""Attack: make Tandem's own git run code the repository (or the agent) planted.

Each case plants one technique, proves with plain git that the plant is live (the marker
appears), then runs everything Tandem does with git (checkpoint create/ensure, diff, list,
restore, undo restore, the branch badge) and asserts the planted code never ran: the marker
file outside the workspace is absent. The payloads dump their environment into the marker,
so a run would also have leaked the planted secret.
"""

from __future__ import annotations

import os
import pty
import shlex
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from harnesses.checkpoints import CheckpointStore
from harnesses.vcs import current_branch, door_environment, find_repo, run_git

SECRET = "sk-proj-planted-secret-0123456789"


@dataclass
class Scene:
    ws: Path
    outside: Path
    home: Path
    data: Path

    @property
    def store_dir(self) -> Path:
        return CheckpointStore(self.ws, data_dir=self.data).location

    @property
    def marker(self) -> Path:
        return self.outside / "ran.marker"

    def payload(self, then: str = "") -> str:
        """A shell command that dumps its environment into the marker (then ``then``)."""
        # git appends arguments to some commands ("$@"): they go to the last command
        return f"env > {shlex.quote(str(self.marker))}; {then or 'true'}"

    def script(self, path: Path, then: str = "") -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!/bin/sh\n{self.payload(then)}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return path

    def git(self, *args: str, check: bool = True) -> str:
        return subprocess.run(
            ["git", *args], cwd=self.ws, check=check, capture_output=True, text=True
        ).stdout

    def config(self, key: str, value: str, *, file: Path | None = None) -> None:
        where = ["--file", str(file)] if file else []
        self.git("config", *where, key, value)


@pytest.fixture
def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scene:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS"):
        monkeypatch.delenv(key, raising=False)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.invalid")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    scene = Scene(ws, outside, home, tmp_path / "data")
    scene.git("init", "-q", "-b", "main")
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    scene.git("add", "-A")
    scene.git("commit", "-qm", "init")
    return scene


def _attr(scene: Scene, line: str, *, info: bool = False) -> None:
    path = scene.ws / (".git/info/attributes" if info else ".gitattributes")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(line + "\n")


# -- techniques: plant(scene) and trigger(scene), where the trigger is plain (unhardened) git
# that makes the plant run, to prove it is live ------------------------------------------


def _hook(name: str) -> Callable[[Scene], None]:
    def plant(s: Scene) -> None:
        s.script(s.ws / ".git" / "hooks" / name)

    return plant


def _fsmonitor_command(s: Scene) -> None:
    s.config("core.fsmonitor", s.payload())


def _fsmonitor_hook_path(s: Scene) -> None:
    s.script(s.ws / ".git" / "hooks" / "fsmonitor-watchman")
    s.config("core.fsmonitor", ".git/hooks/fsmonitor-watchman")


def _hooks_path(s: Scene) -> None:
    hooks = s.ws / "tools" / "hooks"
    for name in ("reference-transaction", "post-index-change", "pre-commit", "post-checkout"):
        s.script(hooks / name)
    s.config("core.hooksPath", str(hooks))


def _filter(kind: str, *, info: bool = False) -> Callable[[Scene], None]:
    def plant(s: Scene) -> None:
        _attr(s, "* filter=evil", info=info)
        if kind == "process":
            s.config("filter.evil.process", s.payload("exit 1"))
        else:
            s.config(f"filter.evil.{kind}", s.payload("cat"))
        s.config("filter.evil.required", "true")

    return plant


def _filter_odd_name(s: Scene) -> None:
    _attr(s, "* filter=x=y")
    s.config("filter.x=y.clean", s.payload("cat"))


def _textconv(s: Scene) -> None:
    _attr(s, "* diff=evil")
    s.config("diff.evil.textconv", s.payload("cat"))


def _diff_command(s: Scene) -> None:
    _attr(s, "* diff=evil")
    s.config("diff.evil.command", s.payload())


def _diff_external(s: Scene) -> None:
    s.config("diff.external", s.payload())


def _pager(key: str) -> Callable[[Scene], None]:
    def plant(s: Scene) -> None:
        s.config(key, s.payload("cat"))

    return plant


def _ssh_command(s: Scene) -> None:
    s.config("core.sshCommand", s.payload("exit 1"))
    s.config("remote.origin.url", "ssh://example.invalid/repo.git")
    s.config("remote.origin.promisor", "true")
    s.config("extensions.partialClone", "origin")


def _ext_transport(s: Scene) -> None:
    s.config("protocol.ext.allow", "always")
    s.config("remote.origin.url", f"ext::{s.script(s.outside / 'ext.sh', 'exit 1')}")
    s.config("remote.origin.promisor", "true")
    s.config("extensions.partialClone", "origin")


def _include(form: str) -> Callable[[Scene], None]:
    def plant(s: Scene) -> None:
        included = s.outside / "evil.config"
        _attr(s, "* filter=evil")
        s.config("filter.evil.clean", s.payload("cat"), file=included)
        s.config("core.fsmonitor", s.payload(), file=included)
        key = "include.path" if form == "path" else f"includeIf.gitdir:{s.ws}/.git.path"
        s.config(key, str(included))

    return plant


def _global(where: str) -> Callable[[Scene], None]:
    def plant(s: Scene) -> None:
        if where == "home":
            cfg = s.home / ".gitconfig"
        else:
            cfg = s.home / ".config" / "git" / "config"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        s.config("filter.evil.clean", s.payload("cat"), file=cfg)
        s.config("core.fsmonitor", s.payload(), file=cfg)
        attrs = s.home / ".config" / "git" / "attributes"  # the default core.attributesFile
        attrs.parent.mkdir(parents=True, exist_ok=True)
        attrs.write_text("* filter=evil\n")

    return plant


def _system_config(s: Scene) -> None:
    cfg = s.outside / "system.gitconfig"
    s.config("core.fsmonitor", s.payload(), file=cfg)
    os.environ["GIT_CONFIG_SYSTEM"] = str(cfg)  # restored by the monkeypatch below
    os.environ.pop("GIT_CONFIG_NOSYSTEM", None)


def _env_config(s: Scene) -> None:
    """Tandem's own environment carries config (an inherited GIT_CONFIG_* set)."""
    os.environ["GIT_CONFIG_COUNT"] = "1"
    os.environ["GIT_CONFIG_KEY_0"] = "core.fsmonitor"
    os.environ["GIT_CONFIG_VALUE_0"] = s.payload()


def _env_parameters(s: Scene) -> None:
    os.environ["GIT_CONFIG_PARAMETERS"] = f"'core.fsmonitor'='{s.payload()}'"


def _worktree_config(s: Scene) -> None:
    s.config("extensions.worktreeConfig", "true")
    s.git("config", "--worktree", "core.fsmonitor", s.payload())


def _store_hook(s: Scene) -> None:
    """The agent reached the checkpoint store itself (e.g. with the sandbox off)."""
    s.script(s.store_dir / "hooks" / "reference-transaction")
    s.script(s.store_dir / "hooks" / "post-index-change")


def _store_config(s: Scene) -> None:
    _attr(s, "* filter=evil")
    cfg = s.store_dir / "config"
    s.config("filter.evil.clean", s.payload("cat"), file=cfg)
    s.config("filter.evil.smudge", s.payload("cat"), file=cfg)
    s.config("core.fsmonitor", s.payload(), file=cfg)
    (s.store_dir / "info" / "attributes").write_text("* filter=evil\n")


def _status(s: Scene) -> None:
    (s.ws / "a.txt").write_text("alpha changed\n")
    s.git("status", "--porcelain", check=False)


def _add(s: Scene) -> None:
    (s.ws / "a.txt").write_text("alpha changed\n")
    s.git("add", "-A", check=False)


def _diff(s: Scene) -> None:
    (s.ws / "a.txt").write_text("alpha changed\n")
    s.git("diff", check=False)


def _diff_on_a_terminal(s: Scene) -> None:
    """``git diff`` with stdout on a pseudo-terminal, where git starts its pager."""
    (s.ws / "a.txt").write_text("alpha changed\n")
    leader, follower = pty.openpty()
    try:
        subprocess.run(
            ["git", "diff"], cwd=s.ws, stdout=follower, stderr=follower, check=False, timeout=30
        )
    finally:
        os.close(follower)
        os.close(leader)


def _smudge(s: Scene) -> None:
    (s.ws / "a.txt").unlink()
    s.git("checkout-index", "-f", "a.txt", check=False)


def _fetch(s: Scene) -> None:
    s.git("fetch", "-q", "origin", check=False)


def _store_add(s: Scene) -> None:
    (s.ws / "a.txt").write_text("alpha changed\n")
    env = {**os.environ, "GIT_DIR": str(s.store_dir), "GIT_WORK_TREE": str(s.ws)}
    subprocess.run(["git", "add", "-A"], cwd=s.ws, env=env, capture_output=True, check=False)
    subprocess.run(
        ["git", "update-ref", "refs/x", "HEAD~0"], cwd=s.ws, env=env, capture_output=True
    )


def _trigger(*args: str) -> Callable[[Scene], None]:
    def run(s: Scene) -> None:
        s.git(*args, check=False)

    return run


def _door(s: Scene, *args: str) -> None:
    (s.ws / "a.txt").write_text("alpha changed by the door test\n")
    run_git(args, cwd=s.ws, git_dir=s.ws / ".git", work_tree=s.ws, check=False)


# what the door itself runs against the user's repository, the operation that would start
# the planted code in plain git (``None``: the technique has no such operation in the door)
def ADD(s: Scene) -> None:
    _door(s, "add", "-A")


def UPDATE_REF(s: Scene) -> None:
    _door(s, "update-ref", "refs/heads/door-test", "HEAD")


def CHECKOUT_INDEX(s: Scene) -> None:
    (s.ws / "a.txt").unlink()
    run_git(
        ["checkout-index", "-f", "a.txt"],
        cwd=s.ws,
        git_dir=s.ws / ".git",
        work_tree=s.ws,
        check=False,
    )


def DIFF(s: Scene) -> None:
    _door(s, "diff")  # deliberately without --no-ext-diff/--no-textconv


def LAZY_FETCH(s: Scene) -> None:
    _door(s, "cat-file", "-p", "1234567890123456789012345678901234567890")


TECHNIQUES = [
    pytest.param(
        _hook("reference-transaction"),
        _trigger("branch", "x"),
        UPDATE_REF,
        id="hook-reference-transaction",
    ),
    pytest.param(
        _hook("post-checkout"), _trigger("checkout", "-q", "-b", "y"), None, id="hook-post-checkout"
    ),
    pytest.param(
        _hook("pre-commit"),
        _trigger("commit", "--allow-empty", "-qm", "x"),
        None,
        id="hook-pre-commit",
    ),
    pytest.param(
        _hook("post-commit"),
        _trigger("commit", "--allow-empty", "-qm", "x"),
        None,
        id="hook-post-commit",
    ),
    pytest.param(_hook("post-index-change"), _add, ADD, id="hook-post-index-change"),
    pytest.param(_hooks_path, _trigger("branch", "x"), UPDATE_REF, id="core-hooksPath-dir"),
    pytest.param(_fsmonitor_command, _status, ADD, id="fsmonitor-command"),
    pytest.param(_fsmonitor_hook_path, _status, ADD, id="fsmonitor-hook-path"),
    pytest.param(_filter("clean"), _add, ADD, id="filter-clean-gitattributes"),
    pytest.param(_filter("clean", info=True), _add, ADD, id="filter-clean-info-attributes"),
    pytest.param(_filter("smudge"), _smudge, CHECKOUT_INDEX, id="filter-smudge-gitattributes"),
    pytest.param(
        _filter("smudge", info=True),
        _smudge,
        CHECKOUT_INDEX,
        id="filter-smudge-info-attributes",
    ),
    pytest.param(_filter("process"), _add, ADD, id="filter-process-gitattributes"),
    pytest.param(_filter_odd_name, _add, ADD, id="filter-name-with-equals"),
    pytest.param(_textconv, _diff, DIFF, id="diff-textconv"),
    pytest.param(_diff_command, _diff, DIFF, id="diff-driver-command"),
    pytest.param(_diff_external, _diff, DIFF, id="diff-external"),
    pytest.param(_pager("core.pager"), _diff_on_a_terminal, None, id="core-pager"),
    pytest.param(_pager("pager.diff"), _diff_on_a_terminal, None, id="pager-diff"),
    pytest.param(_ssh_command, _fetch, LAZY_FETCH, id="core-sshCommand"),
    pytest.param(_ext_transport, _fetch, LAZY_FETCH, id="ext-transport-promisor"),
    pytest.param(_include("path"), _add, ADD, id="include-path"),
    pytest.param(_include("if"), _add, ADD, id="includeIf-gitdir"),
    pytest.param(_global("home"), _add, ADD, id="global-home-gitconfig"),
    pytest.param(_global("xdg"), _add, ADD, id="global-xdg-config"),
    pytest.param(_system_config, _status, ADD, id="system-config-env"),
    pytest.param(_env_config, _status, ADD, id="inherited-GIT_CONFIG_COUNT"),
    pytest.param(_env_parameters, _status, ADD, id="inherited-GIT_CONFIG_PARAMETERS"),
    pytest.param(_worktree_config, _status, ADD, id="worktree-config"),
    pytest.param(_store_hook, _store_add, None, id="store-hooks"),
    pytest.param(_store_config, _store_add, None, id="store-config-filter"),
]


async def _tandem_git(s: Scene) -> None:
    """Everything Tandem does with git: checkpoints, diffs, list, restore, undo, badge."""
    store = CheckpointStore(s.ws, data_dir=s.data)
    first = await store.create("before turn 1", turn=1)
    (s.ws / "a.txt").write_text("alpha, edited by the agent\n")
    (s.ws / "c.txt").write_text("new\n")
    second = await store.ensure("before turn 2", turn=2)
    assert "edited by the agent" in await store.diff(first, second)
    await store.diff(first)
    assert "c.txt" in await store.files_changed(first)
    assert len(await store.list()) == 2
    await store.restore(first)
    assert (s.ws / "a.txt").read_bytes() == b"alpha\n" and not (s.ws / "c.txt").exists()
    await store.undo_restore()
    assert (s.ws / "a.txt").read_text() == "alpha, edited by the agent\n"
    current_branch(s.ws)
    find_repo(s.ws)


@pytest.mark.parametrize(("plant", "trigger", "door_op"), TECHNIQUES)
async def test_planted_code_never_runs_in_tandems_git(
    scene: Scene,
    monkeypatch: pytest.MonkeyPatch,
    plant: Callable[[Scene], None],
    trigger: Callable[[Scene], None],
    door_op: Callable[[Scene], None] | None,
) -> None:
    # the store exists before the plant (for the store-* techniques)
    await CheckpointStore(scene.ws, data_dir=scene.data).list()
    for name in (
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_CONFIG_VALUE_0",
        "GIT_CONFIG_PARAMETERS",
    ):
        # set, then delete: monkeypatch records the variable as absent and removes what a
        # plant sets later (a bare delenv of an absent name records nothing)
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")  # restored after plants that change it
    plant(scene)
    trigger(scene)
    assert scene.marker.exists(), "the plant is not live: plain git did not run it"
    assert SECRET in scene.marker.read_text()  # and it would have seen the key
    scene.marker.unlink()
    (scene.ws / "a.txt").write_text("alpha\n")

    await _tandem_git(scene)
    assert not scene.marker.exists(), "Tandem's git ran planted code"

    if door_op is not None:  # the door on its own, right in the user's repository
        door_op(scene)
        assert not scene.marker.exists(), "the git door ran planted code"


def test_door_environment_holds_no_secret(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "x" * 36)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='evil'")
    env = door_environment(git_dir=tmp_path, work_tree=tmp_path)
    assert SECRET not in "".join(env.values()) and "GITHUB_TOKEN" not in env
    assert "GIT_CONFIG_PARAMETERS" not in env and "OPENAI_API_KEY" not in env
    assert set(env) - {"PATH", "LANG", "LC_ALL", "HOME"} <= {k for k in env if k.startswith("GIT_")}
    assert env["HOME"] == "/dev/null" and env["GIT_CONFIG_GLOBAL"] == "/dev/null"


async def test_the_git_process_itself_gets_no_secret(
    scene: Scene, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A ``git`` wrapper first on PATH records the environment the door really gives git."""
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True)
    wrapper = tmp_path / "bin" / "git"
    dumps = tmp_path / "git-envs"
    dumps.mkdir()
    wrapper.parent.mkdir()
    wrapper.write_text(
        f'#!/bin/sh\nenv > "{dumps}/$$.env"\nexec {shlex.quote(real.stdout.strip())} "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{os.environ['PATH']}")
    await _tandem_git(scene)
    seen = [p.read_text() for p in dumps.iterdir()]
    assert len(seen) >= 10  # every git run went through the wrapper
    for text in seen:
        assert SECRET not in text
        names = {line.split("=", 1)[0] for line in text.splitlines() if "=" in line}
        assert "OPENAI_API_KEY" not in names


async def test_a_nested_repositorys_code_never_runs_while_the_tree_is_walked(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A nested repository (a gitlink in the snapshot) with a dirty work tree and its own
    ``core.fsmonitor``: git asks a nested repository whether it is dirty by starting
    ``git status`` inside it, with the door's command-scope config dropped (git clears
    ``GIT_CONFIG_COUNT`` for a submodule's process), so that config would run. The next
    checkpoint's walk (``diff-files --ignore-submodules=dirty``) looks only at its HEAD."""
    from harnesses.checkpoints import _incremental
    from harnesses.vcs import runner

    monkeypatch.setattr(_incremental, "RACY_NS", -(10**12))  # the kept stat cache at once
    monkeypatch.setattr(runner, "_RACY_NS", -(10**12))
    nested = scene.ws / "vendor" / "lib"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    (nested / "lib.txt").write_text("lib\n")
    subprocess.run(["git", "-C", str(nested), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(nested), "commit", "-qm", "lib"], check=True)
    store = CheckpointStore(scene.ws, data_dir=scene.data)
    await store.create("first")
    await store.create("second")  # from here on: the walk of the kept index
    subprocess.run(["git", "-C", str(nested), "config", "core.fsmonitor", scene.payload()])
    (nested / "lib.txt").write_text("lib, dirty\n")
    plain = {**os.environ, "GIT_DIR": str(store.location), "GIT_WORK_TREE": str(scene.ws)}
    subprocess.run(  # the plant is live: plain diff-files asks the nested repository
        ["git", "diff-files"], cwd=scene.ws, env=plain, capture_output=True, check=False
    )
    assert scene.marker.exists(), "the nested repository's fsmonitor did not run in plain git"
    scene.marker.unlink()
    (scene.ws / "a.txt").write_text("alpha, edited\n")
    made = await store.create("walked")
    assert made.files_touched == ("a.txt",)
    assert not scene.marker.exists(), "the walk ran the nested repository's code"
    (nested / "lib.txt").write_text("lib, dirty again\n")
    await CheckpointStore(scene.ws, data_dir=scene.data).create("full path")  # no kept cache
    assert not scene.marker.exists(), "a full snapshot ran the nested repository's code"
