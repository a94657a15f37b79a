"""Shared test set-up: the local Responses server fixtures and a clean environment."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import openai
import pytest
import pytest_asyncio

from core import OpenAIResponsesModel
from tests.support.fixtures import openai_client, responses_server  # noqa: F401

__all__ = ["model"]


@pytest.fixture(autouse=True)
def _clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test may reach the real OpenAI service or write to the real config/data dirs."""
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "CODEX_API_KEY",
        "OPENAI_ORG_ID",
        "CODEX_PATH",
        "CODEX_HOME",
        "OPENAI_AGENTS_CODEX_SUBPROCESS_STREAM_LIMIT_BYTES",
        "TANDEM_CHROMIUM",
    ):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))


@pytest.fixture(autouse=True)
def _forget_registered_secrets() -> object:
    """Secrets registered for redaction by one test (settings keys...) do not leak into the next."""
    yield
    from core.redaction import forget_secrets

    forget_secrets()


@pytest_asyncio.fixture
async def model(openai_client: openai.AsyncOpenAI) -> AsyncIterator[OpenAIResponsesModel]:  # noqa: F811
    """An :class:`OpenAIResponsesModel` on the local Responses server."""
    yield OpenAIResponsesModel("test-model", openai_client)


def _descendants(root: int) -> list[tuple[int, str]]:
    """Live (non-zombie) processes below ``root``, from /proc: ``(pid, command line)``."""
    import os

    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                continue
            parents[int(entry)] = int(fields[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                names[int(entry)] = f.read().replace(b"\0", b" ").decode(errors="replace")[:120]
        except (OSError, IndexError, ValueError):
            continue
    found = []
    for pid in parents:
        parent = parents.get(pid)
        while parent is not None and parent not in (0, 1):
            if parent == root:
                found.append((pid, names.get(pid, "?")))
                break
            parent = parents.get(parent)
    return found


class _LeakedTasks(logging.Handler):
    """Collects asyncio's "Task was destroyed but it is pending!" reports (a leaked task)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.reports: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "Task was destroyed but it is pending" in message:
            self.reports.append(message.splitlines()[0][:300])


_leaked_tasks = _LeakedTasks()
logging.getLogger("asyncio").addHandler(_leaked_tasks)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test left a subprocess (shell, Chromium, Codex...) or an asyncio
    task behind."""
    import gc
    import os

    gc.collect()  # pending tasks that were dropped are reported when collected
    leaked = _descendants(os.getpid())
    if leaked:
        print("\nleaked subprocesses after the test run:")
        for pid, cmdline in leaked:
            print(f"  {pid}: {cmdline}")
        session.exitstatus = 1
    if _leaked_tasks.reports:
        print("\nleaked asyncio tasks (destroyed while pending):")
        for report in _leaked_tasks.reports[:20]:
            print(f"  {report}")
        session.exitstatus = 1


#: Set by ``scripts/test.sh`` (the README's test command and ``.ci/run``): there every
#: prerequisite (bubblewrap, Chromium, the Codex CLI, fonts, the reference SDK) is installed by
#: the bootstrap, so a skipped test is a check that silently did not run: it fails instead.
NO_SKIPS_ENV = "TANDEM_NO_SKIPS"


def _skip_as_failure(report: pytest.TestReport | pytest.CollectReport) -> None:
    import os

    if os.environ.get(NO_SKIPS_ENV) != "1" or not report.skipped:
        return
    if getattr(report, "wasxfail", None) is not None:
        return  # an expected failure is not a skipped check
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped, and {NO_SKIPS_ENV}=1 does not allow skips: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    """A skip during a test's set-up or call fails it under ``TANDEM_NO_SKIPS=1``."""
    outcome = yield
    _skip_as_failure(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    """A module skipped at collection (``allow_module_level``) fails under ``TANDEM_NO_SKIPS=1``."""
    outcome = yield
    _skip_as_failure(outcome.get_result())
