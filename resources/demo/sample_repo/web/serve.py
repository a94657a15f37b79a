"""The signup page's dev server: ``python3 web/serve.py PORT`` serves this folder on 127.0.0.1.

``python3 web/serve.py PORT --wait`` returns once the server answers (at most 10 s);
``python3 web/serve.py PORT --stop`` asks the running server to stop (GET /__stop).
"""

import functools
import http.server
import sys
import threading
import time
import urllib.request
from pathlib import Path


class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/__stop":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"stopping\n")
            threading.Thread(target=self.server.shutdown).start()
            return
        super().do_GET()

    def log_message(self, format, *args):
        print("dev server:", format % args, flush=True)


def main():
    port = int(sys.argv[1])
    if "--wait" in sys.argv:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/signup.html", timeout=1).close()
            except OSError:
                time.sleep(0.1)
            else:
                print(f"dev server is up on port {port}")
                return
        sys.exit(f"no dev server on port {port}")
    if "--stop" in sys.argv:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/__stop", timeout=5) as reply:
            print(reply.read().decode().strip())
        return
    handler = functools.partial(Handler, directory=str(Path(__file__).parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    print(f"dev server on http://127.0.0.1:{port}/signup.html", flush=True)
    server.serve_forever()
    server.server_close()
    print("dev server stopped", flush=True)


if __name__ == "__main__":
    main()
