"""opscope.explore: the Explorer served from this process, for notebooks."""

import html

from . import _opscope


class ExplorerSession:
    """A running Explorer on loopback: ``.url``, ``.stop()``, a context manager, and an IFrame
    in a notebook cell (``_repr_html_``)."""

    def __init__(self, paths, port=0, height=720):
        self._impl = _opscope.ExplorerServer([str(p) for p in paths], int(port))
        self.height = height

    @property
    def url(self):
        return self._impl.url

    @property
    def port(self):
        return self._impl.port

    @property
    def running(self):
        return self._impl.running

    def stop(self):
        """Stops the server (idempotent)."""
        self._impl.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _repr_html_(self):
        if not self.running:
            return "<p>opscope Explorer (stopped)</p>"
        url = html.escape(self.url, quote=True)
        return (f'<iframe src="{url}" width="100%" height="{int(self.height)}" '
                f'style="border: 1px solid #ccc"></iframe>'
                f'<p><a href="{url}" target="_blank">open the Explorer in a tab</a></p>')

    def __repr__(self):
        return f"<opscope Explorer at {self.url}>" if self.running else "<opscope Explorer stopped>"


def explore(paths, port=0):
    """Serves the Explorer for one trace or several (compared) on 127.0.0.1 in this process.
    ``port`` 0 picks a free one. Traces are imported without the GIL; raises TraceError."""
    if isinstance(paths, (str, bytes)) or hasattr(paths, "__fspath__"):
        paths = [paths]
    resolved = []
    for p in paths:
        path = getattr(p, "metadata", None)
        resolved.append(path["path"] if path else str(p))
    return ExplorerSession(resolved, port)
