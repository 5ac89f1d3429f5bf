"""opscope.compile: torch.compile's spelling for opscope's compile()."""

from . import _opscope


def compile(fn=None, *, backend="cpu", cache_dir=None, disk_cache=True):
    """Captures ``fn``'s op calls through the dispatcher (on meta tensors), fuses them and runs
    them as generated kernels on ``backend`` ("cpu" or "neuron"). Use as ``compile(fn,
    backend="neuron")`` or as a decorator ``@compile(backend="neuron")``.

    ``fn`` takes tensors as positional arguments and returns a tensor or a tuple/list of
    tensors; the compiled function returns the same. It is recaptured when input shapes,
    strides or devices change; a function that cannot be compiled runs eagerly (the reason is
    printed once and kept in ``.last.fallback_reason``). Calls release the GIL.
    """
    if fn is None:
        return lambda f: compile(f, backend=backend, cache_dir=cache_dir, disk_cache=disk_cache)
    return CompiledFunction(fn, backend, cache_dir or "", disk_cache)


class CompiledFunction:
    def __init__(self, fn, backend, cache_dir, disk_cache):
        self._fn = fn
        self._single = True

        def flat(*tensors):
            out = fn(*tensors)
            self._single = isinstance(out, _opscope.Tensor)
            return [out] if self._single else list(out)

        self._impl = _opscope.compile(flat, backend, cache_dir, disk_cache)
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "compiled")

    def __call__(self, *tensors):
        for t in tensors:
            if not isinstance(t, _opscope.Tensor):
                raise TypeError(f"compiled functions take tensors only, got {type(t).__name__}")
        outs = self._impl(list(tensors))
        return outs[0] if self._single else tuple(outs)

    @property
    def stats(self):
        """calls, compiles, recompiles, memory_hits, disk_hits, cxx_runs, eager_calls."""
        return self._impl.stats

    @property
    def last(self):
        """What the latest call ran: region_name, graph, fusion, memory, kernels, cache,
        fallback_reason, ..."""
        return self._impl.last
