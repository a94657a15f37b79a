"""Test pages for the Playwright computer, served over HTTP on 127.0.0.1 (an ephemeral port)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["PAGES", "PageServer", "serve_pages"]

_STYLE = "<style>body{margin:0;font:16px sans-serif} .a{position:absolute}</style>"

PAGES: dict[str, str] = {
    # A form: the field at (20..320, 20..60), the button at (20..140, 80..120).
    "/form": _STYLE
    + """
<form id="f" onsubmit="document.getElementById('out').textContent =
  'Hello, ' + document.getElementById('name').value; return false;">
  <input id="name" class="a" style="left:20px;top:20px;width:300px;height:40px">
  <button id="btn" type="button" class="a" style="left:20px;top:80px;width:120px;height:40px"
    onclick="document.getElementById('out').textContent='clicked'">Go</button>
</form>
<div id="out" class="a" style="left:20px;top:140px">idle</div>""",
    # Records mouse buttons, double clicks, keys and drags in window.log.
    "/events": _STYLE
    + """
<div id="pad" class="a" style="left:0;top:0;width:600px;height:400px;background:#eef"></div>
<script>
window.log = [];
const pad = document.getElementById('pad');
pad.addEventListener('mousedown', e => log.push(['down', e.button, e.clientX, e.clientY,
  e.shiftKey, e.ctrlKey]));
pad.addEventListener('mouseup', e => log.push(['up', e.button, e.clientX, e.clientY]));
pad.addEventListener('mousemove', e => { if (e.buttons) log.push(['drag', e.clientX, e.clientY]); });
pad.addEventListener('dblclick', e => log.push(['dblclick', e.clientX, e.clientY]));
pad.addEventListener('contextmenu', e => e.preventDefault());
pad.addEventListener('auxclick', e => e.preventDefault());
document.addEventListener('keydown', e => log.push(['key', e.key, e.ctrlKey, e.shiftKey,
  e.altKey, e.metaKey]));
</script>""",
    # A tall page to scroll.
    "/tall": _STYLE
    + '<div style="height:5000px;width:3000px;background:linear-gradient(#fff,#000)"></div>',
    # An animated page for the screencast.
    "/animated": _STYLE
    + """
<div id="box" class="a" style="left:0;top:0;width:100px;height:100px;background:red"></div>
<script>
let t = 0;
function step() { t++; const b = document.getElementById('box');
  b.style.left = (t * 5 % 800) + 'px'; b.style.background = 'hsl(' + (t * 7 % 360) + ',80%,50%)';
  requestAnimationFrame(step); }
requestAnimationFrame(step);
</script>""",
    # Stores a value in localStorage and a persistent cookie when loaded with ?set=<v>.
    "/storage": _STYLE
    + """
<div id="out">none</div>
<script>
const v = new URLSearchParams(location.search).get('set');
if (v) { localStorage.setItem('k', v); document.cookie = 'c=' + v + '; max-age=86400; path=/'; }
document.getElementById('out').textContent = (localStorage.getItem('k') || 'none') + '|' +
  (document.cookie || 'nocookie');
</script>""",
    "/other": _STYLE + "<h1>Other page</h1>",
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGES.get(self.path.split("?", 1)[0])
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        data = f"<!doctype html><html><body>{body}</body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


class PageServer:
    """The running server: ``url(path)`` gives ``http://127.0.0.1:<port><path>``."""

    def __init__(self, server: ThreadingHTTPServer) -> None:
        self._server = server

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextmanager
def serve_pages() -> Iterator[PageServer]:
    """Serve :data:`PAGES` on 127.0.0.1 (ephemeral port) in a thread; shut down on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield PageServer(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
