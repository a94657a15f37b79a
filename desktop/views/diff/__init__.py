"""The diff review view, split by concern (issue 15, Build item 1).

* :mod:`.model`: files, hunks, lines, decisions and display rows (no Qt);
* :mod:`.lines`: a hunk's lines, stored compactly, read as ``DiffLine`` values (no Qt);
* :mod:`.build`: building hunks with git's line diff, whole or in chunks (no Qt);
* :mod:`.stream`: builds in a process of their own (:mod:`.process`, running :mod:`.worker`;
  frames in :mod:`.wire`, decoded in steps by :mod:`.decode`) or on worker threads, delivered
  in time-bounded slices;
* :mod:`.rows`: the virtual row model; :mod:`.painter` / :mod:`.files`: the painters;
* :mod:`.view`: :class:`~desktop.views.diff.view.DiffView` (with the :mod:`.layout`,
  :mod:`.keys`, :mod:`.actions`, :mod:`.status`, :mod:`.streaming` and :mod:`.applied`
  mixins) and :mod:`.palette`.

``desktop.views.diff_view`` and ``desktop.views.diff_model`` re-export the old names.
"""

from __future__ import annotations

__all__: list[str] = []
