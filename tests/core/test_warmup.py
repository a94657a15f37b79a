"""core.models.warmup: the openai stream models are complete before the first response."""

from __future__ import annotations

import subprocess
import sys

_CHECK = """
from openai.types.responses import Response, ResponseCreatedEvent, ResponseOutputItemAddedEvent
before = ResponseOutputItemAddedEvent.__pydantic_complete__
from core.models.warmup import warm_up_types
count = warm_up_types()
again = warm_up_types()
print(before, count == again and count > 50, ResponseCreatedEvent.__pydantic_complete__,
      ResponseOutputItemAddedEvent.__pydantic_complete__, Response.__pydantic_complete__)
"""


def test_warm_up_completes_the_deferred_models_in_a_fresh_process():
    result = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True", "True", "True", "True"]
