"""Which of the user's secret files and folders the sandbox hides (PRODUCT.md "Sandbox").

The default list hides credential stores, not tool configuration: ``~/.gitconfig``,
``~/.config/git/config``, ``~/.cargo/config.toml`` or ``~/.config/pip`` stay readable so tools
keep working, while the files that hold tokens are hidden. Two judgement calls, both reversible
with ``Settings.sandbox_shown_paths``: ``~/.npmrc`` and ``~/.yarnrc.yml`` are hidden because they
often hold registry tokens (put registry *configuration* in the project's own ``.npmrc``, which
stays visible); shell histories are hidden because typed ``export TOKEN=...`` lines end up
there. Browser profiles (cookies, saved passwords) are hidden too. Shell start-up files
(``~/.bashrc``, ``~/.profile``, ``~/.zshrc``...) are hidden because ``export TOKEN=...`` lines
live there too; ``bash -c`` does not read them, so commands behave the same (an interactive
shell started by a command just starts without the user's customisations).

Sockets: a read-only bind does not stop ``connect()`` on a Unix socket, so the sandbox also
masks the sockets through which a command could act outside it (:data:`DEFAULT_SOCKET_PATHS`:
the session bus and agents under ``$XDG_RUNTIME_DIR``/``/run/user``, the system bus, the
Docker/Podman/containerd/libvirt/LXD daemons, systemd's private socket, ``/run/*.sock``).
``/run/systemd/resolve`` (where ``/etc/resolv.conf`` often points) stays visible. Abstract
sockets are only cut off when the network is (``--unshare-net``); other pathname sockets
outside the workspace (a local database's, say) stay reachable unless the user adds them to
``Settings.sandbox_hidden_paths``.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

from core.settings import APP_NAME, data_dir, settings_dir

__all__ = [
    "DEFAULT_HOME_SECRETS",
    "DEFAULT_SOCKET_PATHS",
    "HiddenPath",
    "HiddenPlan",
    "default_hidden_paths",
    "display_path",
    "needs_mask",
    "plan_hidden",
    "plan_sockets",
    "tandem_private_dirs",
]

#: Home-relative secret stores hidden by default (only those that exist are masked).
DEFAULT_HOME_SECRETS: tuple[str, ...] = (
    # keys and cloud credentials
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".oci",
    ".kube/config",
    ".docker/config.json",
    ".config/doctl",
    ".config/hcloud",
    ".config/containers/auth.json",
    ".s3cfg",
    ".boto",
    ".databrickscfg",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".terraformrc",
    ".config/sops/age",
    ".config/op",
    ".kaggle/kaggle.json",
    ".config/rclone/rclone.conf",
    # git hosting and forges
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh/hosts.yml",
    ".config/hub",
    ".config/glab-cli/config.yml",
    # package registries (tokens; their plain configuration stays readable)
    ".pypirc",
    ".npmrc",
    ".yarnrc.yml",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings-security.xml",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    # databases
    ".pgpass",
    ".my.cnf",
    # AI tools
    ".codex/auth.json",
    ".claude/.credentials.json",
    ".claude.json",
    ".gemini",
    ".config/github-copilot",
    ".cache/huggingface/token",
    ".huggingface/token",
    # password stores, keyrings, browser profiles
    ".password-store",
    ".local/share/keyrings",
    ".pki",
    ".mozilla",
    ".config/chromium",
    ".config/google-chrome",
    ".config/BraveSoftware",
    # shell histories (typed secrets)
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".local/share/fish/fish_history",
    ".psql_history",
    ".mysql_history",
    # shell start-up files (``export TOKEN=...``)
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish/fish_variables",
)

#: Unix sockets (and folders of them) outside the home masked in every sandboxed mode:
#: connecting to one of them acts outside the sandbox (``systemd-run --user`` over the session
#: bus, a container as root over ``docker.sock``, the ssh/gpg agents). Globs are expanded
#: (one level); only existing paths are masked. ``$XDG_RUNTIME_DIR`` is added at plan time.
DEFAULT_SOCKET_PATHS: tuple[str, ...] = (
    "/run/user",
    "/run/dbus",
    "/var/run/dbus",
    "/run/docker",
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/crio",
    "/run/libvirt",
    "/run/lxd",
    "/run/incus",
    "/var/lib/lxd/unix.socket",
    "/var/snap/lxd/common/lxd",
    "/run/snapd.socket",
    "/run/snapd-snap.socket",
    "/run/systemd/private",
    "/run/systemd/userdb",
    "/run/*.sock",
    "/run/*.socket",
)
#: Never masked (name resolution: ``/etc/resolv.conf`` often links into it).
_SOCKET_KEEP = (Path("/run/systemd/resolve"),)

_TMP = Path("/tmp")


@dataclass(frozen=True, slots=True)
class HiddenPath:
    """One masked path.

    Attributes:
        path: the path as listed (absolute, ``~`` expanded, not resolved).
        target: its real path (symlinks resolved): what the mask covers, so a link in the
            listed path cannot lead around it.
        kind: ``"dir"`` (masked with an empty read-only tmpfs) or ``"file"`` (masked with a
            read-only bind of an empty regular file: ``cat`` prints nothing, ``test -f`` holds).
    """

    path: Path
    target: Path
    kind: Literal["dir", "file"]


@dataclass(frozen=True, slots=True)
class HiddenPlan:
    """What the sandbox hides for one workspace.

    Attributes:
        hidden: the existing paths that are masked, in list order, without duplicate targets.
        skipped: ``(path, reason)`` for listed paths that exist but are not masked (the
            workspace is inside them, or the path is ``/``).
    """

    hidden: tuple[HiddenPath, ...]
    skipped: tuple[tuple[Path, str], ...] = ()

    def display(self, home: Path | None = None) -> list[str]:
        """The hidden paths for people: ``["~/.ssh", "~/.config/tandem", ...]``."""
        return [display_path(h.path, home) for h in self.hidden]


def tandem_private_dirs() -> list[Path]:
    """Tandem's own settings, data (journal, checkpoints), cache and state folders."""
    return [
        settings_dir(),
        data_dir(),
        Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)),
        Path(platformdirs.user_state_dir(APP_NAME, appauthor=False)),
    ]


def default_hidden_paths(home: Path | None = None) -> list[Path]:
    """Every default secret path (existing or not): Tandem's folders, then :data:`DEFAULT_HOME_SECRETS`.

    Args:
        home: the home folder (default ``Path.home()``, i.e. ``$HOME``).
    """
    base = home if home is not None else Path.home()
    return [*tandem_private_dirs(), *(base / rel for rel in DEFAULT_HOME_SECRETS)]


def display_path(path: Path, home: Path | None = None) -> str:
    """``path`` with the home folder written ``~`` (``/home/u/.ssh`` -> ``~/.ssh``)."""
    base = home if home is not None else Path.home()
    try:
        rel = path.relative_to(base)
    except ValueError:
        return str(path)
    return "~" if str(rel) == "." else f"~/{rel}"


def _absolute(path: Path, home: Path) -> Path:
    text = str(path)
    if text == "~" or text.startswith("~/"):
        path = home / text[2:]
    elif not path.is_absolute():
        path = home / path
    return Path(os.path.normpath(os.path.abspath(path)))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def plan_hidden(
    workspace: Path | None = None,
    *,
    extra: Iterable[Path] = (),
    shown: Iterable[Path] = (),
    home: Path | None = None,
) -> HiddenPlan:
    """Decide which secret paths to mask for a command in ``workspace``.

    Args:
        workspace: the workspace (resolved); a listed path that contains it is skipped
            (masking it would hide the workspace). A listed path inside it is masked.
        extra: paths the user adds (``~`` allowed; relative paths are taken from ``home``).
        shown: default or extra paths the user takes back out (compared after ``~``
            expansion; a listed path is also left out when it is inside a shown folder).
            Tandem's own folders (:func:`tandem_private_dirs`) cannot be taken out.
        home: the home folder (default ``Path.home()``).

    Returns:
        The :class:`HiddenPlan`; only paths that exist now are in it. File reads only
        (``lstat``/``realpath``): nothing is created.
    """
    base = home if home is not None else Path.home()
    ws = Path(os.path.realpath(workspace)) if workspace is not None else None
    out: list[HiddenPath] = []
    skipped: list[tuple[Path, str]] = []
    taken_out = [_absolute(Path(p), base) for p in shown]
    own = [_absolute(p, base) for p in tandem_private_dirs()]
    seen: set[Path] = set()
    for listed in [*default_hidden_paths(base), *extra]:
        path = _absolute(Path(listed), base)
        if path not in own and any(_within(path, s) for s in taken_out):
            continue
        if not os.path.lexists(path):
            continue
        target = Path(os.path.realpath(path))
        if target == Path("/") or path == Path("/"):
            skipped.append((path, "the whole file system cannot be hidden"))
            continue
        if ws is not None and (_within(ws, target) or _within(ws, path)):
            skipped.append((path, "the workspace is inside it"))
            continue
        if target in seen:
            continue
        seen.add(target)
        kind: Literal["dir", "file"] = "dir" if target.is_dir() else "file"
        out.append(HiddenPath(path=path, target=target, kind=kind))
    return HiddenPlan(hidden=tuple(out), skipped=tuple(skipped))


def plan_sockets(
    workspace: Path | None = None,
    *,
    patterns: Iterable[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[HiddenPath, ...]:
    """The socket paths to mask for a command in ``workspace`` (see :data:`DEFAULT_SOCKET_PATHS`).

    Args:
        workspace: the resolved workspace; a path containing it is left out (one inside it,
            e.g. a ``$XDG_RUNTIME_DIR`` there, is masked).
        patterns: absolute paths or one-level globs (default :data:`DEFAULT_SOCKET_PATHS`).
        environ: where ``XDG_RUNTIME_DIR`` is read (default ``os.environ``); an absolute
            value other than ``/`` is masked too.

    Returns:
        Existing paths only, without duplicates and without a path inside another one listed
        (masking the outer one already hides it). ``kind`` is ``"dir"`` for folders and
        ``"file"`` for sockets and other files. File reads only.
    """
    env = os.environ if environ is None else environ
    listed = list(DEFAULT_SOCKET_PATHS if patterns is None else patterns)
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime.startswith("/") and os.path.normpath(runtime) != "/":
        listed.append(runtime)
    ws = Path(os.path.realpath(workspace)) if workspace is not None else None
    keep = [Path(os.path.realpath(k)) for k in _SOCKET_KEEP]
    candidates: list[HiddenPath] = []
    seen: set[Path] = set()
    for pattern in listed:
        for text in sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]:
            path = Path(os.path.normpath(text))
            if not os.path.lexists(path):
                continue
            target = Path(os.path.realpath(path))
            if target == Path("/") or target in seen:
                continue
            if ws is not None and (_within(ws, target) or _within(ws, path)):
                continue
            if any(_within(k, target) or _within(target, k) for k in keep):
                continue
            seen.add(target)
            kind: Literal["dir", "file"] = "dir" if target.is_dir() else "file"
            candidates.append(HiddenPath(path=path, target=target, kind=kind))
    dirs = [c.target for c in candidates if c.kind == "dir"]
    return tuple(
        c for c in candidates if not any(d != c.target and _within(c.target, d) for d in dirs)
    )


def needs_mask(hidden: HiddenPath, workspace: Path) -> bool:
    """Whether a mount is needed: paths under ``/tmp`` outside the workspace are already gone
    (the sandbox's ``/tmp`` is a fresh tmpfs)."""
    return not _within(hidden.target, _TMP) or _within(hidden.target, workspace)
