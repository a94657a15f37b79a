"""Record and replay (issue 16, Build item 3): a session exported to a scripted-session file.

- :mod:`.record`: what a live run journals so it can be exported (each model response, the
  repository's recorded state);
- :mod:`.manifest`: the repository state (HEAD and the dirty files as a patch) and a replay
  checkout built from it;
- :mod:`.export`: a journaled session as an export file (``ScriptedModel``-loadable turns,
  the tools' results, the user's decisions, a manifest), secrets removed;
- :mod:`.compare`: where a replay's tool results differ from the recording.

No Qt, no event loop: the window (``desktop.controller``) and ``tandem run`` call it.
"""

from __future__ import annotations

from .compare import Mismatch, compare_results, mask_volatile
from .export import (
    EXPORT_FORMAT,
    ExportError,
    build_export,
    export_session,
    load_export,
    write_export,
)
from .manifest import (
    RecordingError,
    apply_in_place,
    capture_base,
    prepare_checkout,
    tandem_version,
)
from .record import (
    MODEL_RESPONSE,
    RECORDING_BASE,
    model_response_payload,
    recording_base_payload,
)

__all__ = [
    "EXPORT_FORMAT",
    "MODEL_RESPONSE",
    "RECORDING_BASE",
    "ExportError",
    "Mismatch",
    "RecordingError",
    "apply_in_place",
    "build_export",
    "capture_base",
    "compare_results",
    "export_session",
    "load_export",
    "mask_volatile",
    "model_response_payload",
    "prepare_checkout",
    "recording_base_payload",
    "tandem_version",
    "write_export",
]
