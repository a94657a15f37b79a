"""A small, realistic Python diff for the diff view's screenshot (``bench/diff_view.py``)."""

from __future__ import annotations

__all__ = ["SAMPLE_NEW", "SAMPLE_OLD"]

SAMPLE_OLD = '''"""Fetch and cache remote configuration."""

import json
import time
from pathlib import Path

CACHE_TTL = 300


class ConfigCache:
    """A small on-disk cache for configuration documents."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hits = 0

    def path_for(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def get(self, key: str):
        path = self.path_for(key)
        if not path.exists():
            return None
        age = time.time() - path.stat().st_mtime
        if age > CACHE_TTL:
            return None
        self.hits += 1
        return json.loads(path.read_text())

    def put(self, key: str, value) -> None:
        self.path_for(key).write_text(json.dumps(value))


def load(url, cache):
    data = cache.get(url)
    if data is None:
        data = fetch(url)
        cache.put(url, data)
    return data
'''

SAMPLE_NEW = (
    SAMPLE_OLD.replace("import json\n", "import json\nimport logging\n")
    .replace("CACHE_TTL = 300\n", "CACHE_TTL_S = 600\n_log = logging.getLogger(__name__)\n")
    .replace("def get(self, key: str):", "def get(self, key: str, *, ttl_s: float = CACHE_TTL_S):")
    .replace(
        "if age > CACHE_TTL:\n",
        'if age > ttl_s:\n            _log.debug("cache entry %s expired (%.0f s old)", key, age)\n',
    )
    .replace("path.read_text())", 'path.read_text(encoding="utf-8"))')
    .replace("def load(url, cache):", "def load(url: str, cache: ConfigCache) -> dict:")
    .replace("data = fetch(url)", "data = fetch(url, timeout_s=10)")
)
