"""opscope's Python exceptions."""


class TraceError(Exception):
    """A trace that cannot be read: missing, unreadable, corrupt gzip or JSON.

    ``str(error)`` is the message ``opscope report`` prints (it names the file, the byte offset
    in the uncompressed JSON and, inside traceEvents, the entry index). The same facts are
    attributes for programs:

    - ``file``: the path the error is about ("" when loaded from bytes),
    - ``offset``: byte offset of the error in the uncompressed input (0 when not an input error),
    - ``code``: "invalid input", "not found", "I/O error", ... (opscope::Status's code),
    - ``trace``: the events read before the error, as an ``opscope.Trace`` (None when nothing
      could be read), so a truncated file still shows what it has.
    """

    def __init__(self, message, file="", offset=0, code="", trace=None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.offset = offset
        self.code = code
        self._partial = trace

    @property
    def trace(self):
        if self._partial is None:
            return None
        from ._frames import Trace  # late: _frames imports the extension

        return Trace(self._partial)
