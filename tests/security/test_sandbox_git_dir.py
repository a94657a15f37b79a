"""Attack class: a sandboxed command plants code in the repository's git dir.

Each case runs a hostile command under real bubblewrap (read-only and workspace-write), then
the *user's own* git runs outside the sandbox (status, add, commit, checkout). The promise: a
marker file the payload would create outside the workspace is absent, and the git dir's
code-execution paths (``config``, ``hooks/``, ``info/``, ``commondir``, worktree and module
git dirs, ``.git`` files) are byte-for-byte unchanged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnesses.shell import SubprocessShellExecutor, sandbox_available, sandbox_unavailable_reason

pytestmark = pytest.mark.skipif(
    not sandbox_available(), reason=f"bubblewrap unusable: {sandbox_unavailable_reason()}"
)

MODES = ["read-only", "workspace-write"]
_CODE_NAMES = {"config", "config.worktree", "commondir", "gitdir"}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The user's own git, outside any sandbox (this is what an escape would hijack)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", GIT_TERMINAL_PROMPT="0")
    return subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=check,
        timeout=60,
    )


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "User")
    git(path, "config", "user.email", "user@example.com")
    (path / "file.txt").write_text("one\n")
    git(path, "add", "file.txt")
    git(path, "commit", "-q", "-m", "initial")
    return path


def code_paths_snapshot(root: Path, checkouts: tuple[str, ...] = ("sub", "wt")) -> dict[str, str]:
    """Digest of every code-execution path of ``root``'s repository (independent of the code
    under test): in ``root/.git`` (and the ``.git`` of the ``checkouts`` folders),
    ``config``/``config.worktree``/``commondir``/``gitdir`` at any depth, everything under any
    ``hooks/`` or ``info/``, and the ``.git`` entries themselves."""
    found: dict[str, str] = {}
    for name in (".git", *(f"{c}/.git" for c in checkouts)):
        entry = root / name
        if entry.is_symlink():
            found[name] = "link:" + os.readlink(entry)
        elif entry.is_file():
            found[name] = hashlib.sha256(entry.read_bytes()).hexdigest()
        elif entry.is_dir():
            found[name] = "dir"
            found.update(_walk(root, entry))
    return found


def _walk(root: Path, top: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root)
        parts = set(rel_dir.parts)
        dirnames[:] = [d for d in dirnames if d != "objects"]
        for name in [*filenames, *dirnames]:
            full = Path(dirpath) / name
            rel = str(rel_dir / name)
            in_code_dir = bool(parts & {"hooks", "info"})
            is_code = (name in _CODE_NAMES and ".git" in str(rel_dir)) or name == ".git"
            if not (in_code_dir or is_code or name in ("hooks", "info")):
                continue
            if full.is_symlink():
                found[rel] = "link:" + os.readlink(full)
            elif full.is_file():
                found[rel] = hashlib.sha256(full.read_bytes()).hexdigest()
            elif full.is_dir():
                found[rel] = "dir"
    return found


def user_git_session(repo: Path) -> None:
    """What the user does next, unsandboxed: every step that runs hooks, fsmonitor or filters."""
    (repo / "file.txt").write_text("user edit\n")
    for args in (
        ("status",),
        ("diff",),
        ("add", "-A"),
        ("commit", "-q", "-m", "user commit"),
        ("checkout", "-q", "-b", "user-branch"),
        ("checkout", "-q", "-"),
        ("log", "-1", "--stat"),
    ):
        git(repo, *args, check=False)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside ``/tmp`` (which the sandbox replaces), so a repository outside the
    workspace stays visible, read-only, to the command."""
    path = Path(tempfile.mkdtemp(prefix="tandem-sec-git-", dir="/var/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def payload(marker: Path) -> str:
    return f"touch {marker}"


async def run_attack(workspace: Path, mode: str, command: str) -> None:
    executor = SubprocessShellExecutor(workspace, sandbox=mode)  # type: ignore[arg-type]
    result = await executor.run([command], timeout_ms=30_000)
    assert result.output[0].provider_data is not None
    assert result.output[0].provider_data["sandboxed"] is True


def _cfg(marker: Path) -> str:
    return f"printf '[core]\\n\\tfsmonitor = {payload(marker)}\\n'"


def _hook(marker: Path) -> str:
    return f"printf '#!/bin/sh\\n{payload(marker)}\\n'"


CONFIG_ATTACKS = [
    pytest.param(lambda m: f"git config core.fsmonitor '{payload(m)}'", id="git-config-fsmonitor"),
    pytest.param(lambda m: f"{_cfg(m)} >> .git/config", id="append-redirect"),
    pytest.param(lambda m: f"{_cfg(m)} > .git/config", id="truncate-redirect"),
    pytest.param(lambda m: f"{_cfg(m)} | tee -a .git/config", id="tee-append"),
    pytest.param(
        lambda m: f"sed -i '1i [core] fsmonitor = {payload(m)}' .git/config", id="sed-in-place"
    ),
    pytest.param(lambda m: f"{_cfg(m)} > evil && cp evil .git/config", id="cp-over"),
    pytest.param(lambda m: f"{_cfg(m)} > evil && mv -f evil .git/config", id="mv-over"),
    pytest.param(lambda m: f"rm -f .git/config; {_cfg(m)} > .git/config", id="rm-then-write"),
    pytest.param(lambda m: f"ln -s .git/config c && {_cfg(m)} >> c", id="symlink-in-workspace"),
    pytest.param(lambda m: f"ln .git/config h; {_cfg(m)} >> h", id="hardlink"),
    pytest.param(lambda m: f'{_cfg(m)} >> "/proc/self/root$PWD/.git/config"', id="proc-self-root"),
    pytest.param(lambda m: f"cd .git && {_cfg(m)} >> config", id="cd-into-git-dir"),
    pytest.param(lambda m: f"ln -s .git g && {_cfg(m)} >> g/config", id="symlinked-git-dir"),
    pytest.param(
        lambda m: (
            "python3 -c \"open('.git/config','a').write('[core]\\n\\tfsmonitor = "
            + payload(m)
            + "\\n')\""
        ),
        id="python-open",
    ),
    pytest.param(lambda m: "git log --output=.git/config -1", id="git-log-output"),
    pytest.param(
        lambda m: (
            "echo x >> file.txt && git stash -q && git stash list --format=%s%n%s"
            " --output=.git/config"
        ),
        id="git-stash-list-output",
    ),
    pytest.param(
        lambda m: f"git config filter.x.clean '{payload(m)}'; echo '* filter=x' > .gitattributes",
        id="clean-filter",
    ),
    pytest.param(
        lambda m: f"{_cfg(m)} > evil.cfg; git config include.path ../evil.cfg", id="include-path"
    ),
    pytest.param(
        lambda m: (
            f"mkdir -p h && {_hook(m)} > h/pre-commit && chmod +x h/pre-commit;"
            " git config core.hooksPath h"
        ),
        id="core-hookspath",
    ),
    pytest.param(
        lambda m: f"git config extensions.worktreeConfig true; {_cfg(m)} > .git/config.worktree",
        id="config-worktree",
    ),
    pytest.param(
        lambda m: (
            f"git init -q evil && git -C evil config core.fsmonitor '{payload(m)}'"
            " && echo ../evil/.git > .git/commondir"
        ),
        id="commondir-redirect",
    ),
]

HOOK_ATTACKS = [
    pytest.param(
        lambda m: f"{_hook(m)} > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        id="write-pre-commit",
    ),
    pytest.param(
        lambda m: (
            f"{_hook(m)} > .git/hooks/reference-transaction;"
            " chmod +x .git/hooks/reference-transaction"
        ),
        id="reference-transaction",
    ),
    pytest.param(
        lambda m: (
            "mv .git/hooks .git/hooks.old; mkdir -p .git/hooks;"
            f" {_hook(m)} > .git/hooks/post-commit; chmod +x .git/hooks/post-commit"
        ),
        id="mv-hooks-dir",
    ),
    pytest.param(
        lambda m: (
            "rm -rf .git/hooks; mkdir -p .git/hooks;"
            f" {_hook(m)} > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout"
        ),
        id="rm-hooks-dir",
    ),
    pytest.param(
        lambda m: f"{_hook(m)} > e.sh; chmod +x e.sh; ln -sf $PWD/e.sh .git/hooks/pre-commit",
        id="symlink-hook",
    ),
    pytest.param(
        lambda m: (
            f"mkdir -p t/hooks && {_hook(m)} > t/hooks/post-commit && chmod +x t/hooks/*"
            " && tar -C t -cf e.tar hooks && tar -C .git -xf e.tar"
        ),
        id="tar-extract",
    ),
    pytest.param(
        lambda m: (
            "python3 -c \"import os; p='.git/hooks/pre-commit';"
            f" open(p,'w').write('#!/bin/sh\\\\n{payload(m)}\\\\n'); os.chmod(p, 0o755)\""
        ),
        id="python-open",
    ),
    pytest.param(
        lambda m: f"cd .git/hooks && {_hook(m)} > post-checkout && chmod +x post-checkout",
        id="cd-into-hooks",
    ),
    pytest.param(
        lambda m: (
            f"mkdir -p .git/hooks.new && {_hook(m)} > .git/hooks.new/pre-commit"
            " && chmod +x .git/hooks.new/pre-commit && rm -f .git/hooks/*"
            " && mv -T .git/hooks.new .git/hooks"
        ),
        id="rename-over-hooks",
    ),
]

INFO_ATTACKS = [
    pytest.param(lambda m: "echo '* filter=x diff=x' > .git/info/attributes", id="attributes"),
    pytest.param(
        lambda m: "rm -rf .git/info; mkdir .git/info; echo '* filter=x' > .git/info/attributes",
        id="recreate-info",
    ),
    pytest.param(lambda m: "echo '*' >> .git/info/exclude", id="exclude-append"),
    pytest.param(lambda m: "mv .git/info .git/info.old && mkdir .git/info", id="mv-info"),
]

DOTGIT_ATTACKS = [
    pytest.param(
        lambda m: f"mv .git old; git init -q .; git config core.fsmonitor '{payload(m)}'",
        id="mv-dotgit",
    ),
    pytest.param(
        lambda m: f"rm -rf .git; git init -q .; git config core.fsmonitor '{payload(m)}'",
        id="rm-rf-dotgit",
    ),
    pytest.param(lambda m: "python3 -c \"import os; os.rename('.git', 'x')\"", id="python-rename"),
    pytest.param(lambda m: f"mv .git /tmp/g; mkdir .git; {_cfg(m)} > .git/config", id="mv-to-tmp"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("attack", CONFIG_ATTACKS + HOOK_ATTACKS + INFO_ATTACKS + DOTGIT_ATTACKS)
async def test_main_git_dir_code_paths_hold(tmp_path: Path, mode: str, attack: object) -> None:
    repo = make_repo(tmp_path / "ws")
    marker = tmp_path / "ESCAPED"
    before = code_paths_snapshot(repo)
    await run_attack(repo, mode, attack(marker))  # type: ignore[operator]
    assert code_paths_snapshot(repo) == before
    user_git_session(repo)
    assert not marker.exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "attack",
    [
        pytest.param("mkdir -p .git/hooks && {hook} > .git/hooks/pre-commit", id="hooks"),
        pytest.param("mkdir -p .git/info && echo '* filter=x' > .git/info/attributes", id="info"),
    ],
)
async def test_missing_hooks_and_info_dirs_hold(tmp_path: Path, mode: str, attack: str) -> None:
    repo = make_repo(tmp_path / "ws")
    shutil.rmtree(repo / ".git" / "hooks")
    shutil.rmtree(repo / ".git" / "info")
    marker = tmp_path / "ESCAPED"
    command = attack.format(hook=_hook(marker)) + "; chmod +x .git/hooks/pre-commit"
    await run_attack(repo, mode, command)
    for name in ("hooks", "info"):  # created empty (workspace-write) or still missing
        folder = repo / ".git" / name
        assert not folder.exists() or os.listdir(folder) == []
    user_git_session(repo)
    assert not marker.exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(
            lambda m: "git init -q evil && echo 'gitdir: evil/.git' > .git", id="rewrite-file"
        ),
        pytest.param(lambda m: "rm -f .git && git init -q .", id="rm-file-then-init"),
        pytest.param(lambda m: "mv .git gitfile && git init -q .", id="mv-file-then-init"),
        pytest.param(lambda m: "git init -q evil && ln -sf evil/.git .git", id="replace-by-link"),
    ],
)
async def test_dotgit_file_holds(outside: Path, mode: str, attack: object) -> None:
    main = make_repo(outside / "main")
    git(main, "worktree", "add", "-q", str(outside / "ws"), "-b", "wt")
    ws = outside / "ws"
    marker = outside / "ESCAPED"
    before = (ws / ".git").read_bytes()
    command = attack(marker)  # type: ignore[operator]
    command += f"; git -C evil config core.fsmonitor '{payload(marker)}' 2>/dev/null"
    command += f"; git config core.fsmonitor '{payload(marker)}'"
    await run_attack(ws, mode, command)
    assert (ws / ".git").read_bytes() == before
    user_git_session(ws)
    assert not marker.exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "target",
    [
        pytest.param("commondir", id="worktree-commondir"),
        pytest.param("gitdir", id="worktree-gitdir"),
        pytest.param("config.worktree", id="worktree-config-worktree"),
    ],
)
async def test_linked_worktree_git_dirs_hold(tmp_path: Path, mode: str, target: str) -> None:
    repo = make_repo(tmp_path / "ws")
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "worktree", "add", "-q", str(repo / "wt"), "-b", "wt")
    git(repo, "config", "--worktree", "user.name", "Main User")
    git(repo / "wt", "config", "--worktree", "user.name", "Worktree User")
    marker = tmp_path / "ESCAPED"
    evil = "git init -q evil; git -C evil config core.fsmonitor '" + payload(marker) + "'"
    wt_dir = ".git/worktrees/wt"
    command = (
        f"{evil}; echo $PWD/evil/.git > {wt_dir}/{target};"
        f" {_cfg(marker)} > {wt_dir}/{target}.new; mv -f {wt_dir}/{target}.new {wt_dir}/{target}"
    )
    before = code_paths_snapshot(repo)
    await run_attack(repo, mode, command)
    assert code_paths_snapshot(repo) == before
    user_git_session(repo / "wt")
    assert not marker.exists()


def _with_submodule(tmp_path: Path) -> Path:
    upstream = make_repo(tmp_path / "upstream")
    repo = make_repo(tmp_path / "ws")
    git(repo, "submodule", "add", "-q", str(upstream), "sub")
    git(repo, "commit", "-q", "-m", "add sub")
    git(repo / "sub", "config", "user.name", "User")
    git(repo / "sub", "config", "user.email", "user@example.com")
    return repo


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(lambda m: f"{_cfg(m)} >> .git/modules/sub/config", id="module-config"),
        pytest.param(
            lambda m: f"cd sub && git config core.fsmonitor '{payload(m)}'", id="git-config-in-sub"
        ),
        pytest.param(
            lambda m: (
                f"{_hook(m)} > .git/modules/sub/hooks/post-commit;"
                " chmod +x .git/modules/sub/hooks/post-commit"
            ),
            id="module-hook",
        ),
        pytest.param(
            lambda m: "echo '* filter=x' > .git/modules/sub/info/attributes", id="module-info"
        ),
        pytest.param(
            lambda m: (
                f"git init -q evil && git -C evil config core.fsmonitor '{payload(m)}'"
                ' && echo "gitdir: $PWD/evil/.git" > sub/.git'
            ),
            id="rewrite-submodule-dotgit",
        ),
        pytest.param(
            lambda m: (
                f"git init -q evil && git -C evil config core.fsmonitor '{payload(m)}'"
                " && echo ../../../evil/.git > .git/modules/sub/commondir"
            ),
            id="module-commondir",
        ),
        pytest.param(lambda m: "mv .git/modules/sub .git/modules/old", id="mv-module-dir"),
    ],
)
async def test_submodule_git_dirs_hold(tmp_path: Path, mode: str, attack: object) -> None:
    repo = _with_submodule(tmp_path)
    marker = tmp_path / "ESCAPED"
    before = code_paths_snapshot(repo)
    await run_attack(repo, mode, attack(marker))  # type: ignore[operator]
    assert code_paths_snapshot(repo) == before
    user_git_session(repo / "sub")
    user_git_session(repo)
    assert not marker.exists()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(lambda m: f"{_cfg(m)} >> ../.git/config", id="parent-config"),
        pytest.param(lambda m: f"git config core.fsmonitor '{payload(m)}'", id="git-config"),
        pytest.param(lambda m: f"{_hook(m)} > ../.git/hooks/pre-commit", id="parent-hook"),
    ],
)
async def test_workspace_inside_repository(outside: Path, mode: str, attack: object) -> None:
    repo = make_repo(outside / "repo")
    ws = repo / "pkg"
    ws.mkdir()
    marker = outside / "ESCAPED"
    before = code_paths_snapshot(repo)
    await run_attack(ws, mode, attack(marker))  # type: ignore[operator]
    assert code_paths_snapshot(repo) == before
    user_git_session(repo)
    assert not marker.exists()


async def test_planted_commondir_is_removed_and_reported(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    executor = SubprocessShellExecutor(repo, sandbox="workspace-write")
    result = await executor.run(["git init -q evil && echo ../evil/.git > .git/commondir"])
    assert not (repo / ".git" / "commondir").exists()
    assert "removed planted" in result.output[0].stderr
    assert git(repo, "rev-parse", "--git-common-dir").stdout.strip() == ".git"


@pytest.mark.parametrize(
    "layout", [pytest.param("tmp", id="under-tmp"), pytest.param("var-tmp", id="outside-tmp")]
)
async def test_git_add_and_commit_still_work_in_auto_mode(
    tmp_path: Path, outside: Path, layout: str
) -> None:
    repo = make_repo((tmp_path if layout == "tmp" else outside) / "ws")
    config = (repo / ".git" / "config").read_bytes()
    executor = SubprocessShellExecutor(repo, sandbox="workspace-write")
    result = await executor.run(
        [
            "echo new > new.txt && git add new.txt && git commit -q -m 'from sandbox' && echo ok",
            "git checkout -q -b feature && git stash list && git tag v1 && echo ok",
            "git status --porcelain",
        ]
    )
    assert [o.stdout for o in result.output] == ["ok\n", "ok\n", ""], result.output
    assert git(repo, "log", "-1", "--format=%s", "main").stdout == "from sandbox\n"
    assert (repo / ".git" / "config").read_bytes() == config


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "attack",
    [
        pytest.param(lambda m: f"git config core.fsmonitor '{payload(m)}'", id="git-config"),
        pytest.param(lambda m: f"{_hook(m)} > hooks/pre-receive", id="hook"),
        pytest.param(lambda m: "echo /elsewhere > commondir", id="commondir"),
    ],
)
async def test_bare_repository_as_workspace(tmp_path: Path, mode: str, attack: object) -> None:
    make_repo(tmp_path / "src")
    bare = tmp_path / "repo.git"
    git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "src"), str(bare))
    marker = tmp_path / "ESCAPED"
    before = {p: p.read_bytes() for p in (bare / "config", bare / "HEAD")}
    hooks = sorted(os.listdir(bare / "hooks"))
    await run_attack(bare, mode, attack(marker))  # type: ignore[operator]
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(os.listdir(bare / "hooks")) == hooks
    assert not (bare / "commondir").exists()
    git(bare, "log", "-1", check=False)
    assert not marker.exists()
