"""torch.profiler's spelling for opscope's profiler.

    from opscope.profiler import profile, ProfilerActivity, ProfileMode, NeuronConfig, schedule

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
                 schedule=schedule(wait=1, warmup=1, active=2),
                 record_shapes=True,
                 experimental_config=NeuronConfig(modes=[ProfileMode.DEVICE, ProfileMode.RUNTIME],
                                                  correlate_device_time=True)) as prof:
        for _ in range(4):
            with record_function("step"):
                y = model(x)
            opscope.neuron.synchronize()
            prof.step()
    print(prof.key_averages().table(sort_by="self_privateuse1_time_total", row_limit=10))

One session records at a time (ProfilerError otherwise). step(), stop() and export release the
GIL; on_trace_ready is called with the profile object, as torch calls it.
"""

import functools

from . import _opscope
from ._frames import KeyAverages

ProfilerActivity = _opscope.ProfilerActivity
ProfileMode = _opscope.ProfileMode
ProfilerError = _opscope.ProfilerError

__all__ = ["profile", "schedule", "record_function", "ProfilerActivity", "ProfileMode",
           "NeuronConfig", "ProfilerError", "tensorboard_trace_handler"]


def schedule(*, wait, warmup, active, repeat=0, skip_first=0):
    """torch.profiler.schedule: after skip_first steps, cycles of wait idle steps, warmup
    steps and active recorded steps, repeat times (0 = forever)."""
    return _opscope.Schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                             skip_first=skip_first)


def NeuronConfig(modes=None, correlate_device_time=True, profile_output_dir=None,
                 max_events_per_nc=None, capture_enabled_for_nc=None, sample_period_ms=None,
                 flush_device_on_stop=None):
    """torch_neuronx's NeuronConfig, passed as ``experimental_config``.

    modes: ProfileMode.DEVICE (engine-level activity), RUNTIME, CPU_UTIL, HOST_MEMORY;
    profile_output_dir: without on_trace_ready, each window is written to
    ``<dir>/<host>_pid_<pid>/<timestamp>/trace.json``; capture_enabled_for_nc: "0,2-3".
    """
    config = _opscope.DeviceConfig()
    if modes is not None:
        config.modes = list(modes)
    config.correlate_device_time = bool(correlate_device_time)
    if profile_output_dir is not None:
        config.profile_output_dir = str(profile_output_dir)
    if max_events_per_nc is not None:
        config.max_events_per_nc = int(max_events_per_nc)
    if capture_enabled_for_nc is not None:
        config.capture_enabled_for_nc = str(capture_enabled_for_nc)
    if sample_period_ms is not None:
        config.sample_period_ms = int(sample_period_ms)
    if flush_device_on_stop is not None:
        config.flush_device_on_stop = bool(flush_device_on_stop)
    return config


class profile:
    """torch.profiler.profile over opscope's session (opscope::Profiler)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, experimental_config=None):
        if activities is None:
            activities = [ProfilerActivity.CPU]
        self._on_trace_ready = on_trace_ready
        callback = (lambda: on_trace_ready(self)) if on_trace_ready is not None else None
        self._impl = _opscope.Profiler(list(activities), bool(record_shapes), schedule,
                                       callback, experimental_config, bool(profile_memory))

    def start(self):
        self._impl.start()

    def stop(self):
        self._impl.stop()

    def step(self):
        """Advances the schedule by one step (torch's prof.step())."""
        self._impl.step()

    @property
    def step_num(self):
        return self._impl.step_num

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def key_averages(self, group_by_input_shape=False):
        """The last recorded window's per-op table (``.table(sort_by=, row_limit=)``,
        ``.to_pandas()``)."""
        return KeyAverages(self._impl.key_averages(group_by_input_shape))

    def export_chrome_trace(self, path):
        """Writes the last window as Kineto JSON (gzip when the name ends in .gz), atomically;
        it opens in Perfetto UI and in ``opscope.load``."""
        self._impl.export_chrome_trace(str(path))

    def export_perfetto(self, path):
        """Writes the last window as a Perfetto protobuf trace (``.pftrace``; gzip when the name
        ends in .gz), atomically: Perfetto UI opens it, and ``opscope.load`` reads it back to the
        same trace."""
        self._impl.export_perfetto(str(path))


class record_function:
    """A user-annotation range, as a context manager or a decorator."""

    def __init__(self, name):
        self.name = name
        self._range = None

    def __enter__(self):
        self._range = _opscope.RecordRange(self.name)
        self._range.enter()
        return self

    def __exit__(self, *exc):
        self._range.exit()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)

        return wrapped


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """torch.profiler.tensorboard_trace_handler: on_trace_ready writing
    ``<dir>/<worker>.<ms since epoch>.pt.trace.json[.gz]`` for each window."""
    import os
    import socket
    import time

    def handler(prof):
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        os.makedirs(dir_name, exist_ok=True)
        suffix = ".pt.trace.json.gz" if use_gzip else ".pt.trace.json"
        prof.export_chrome_trace(os.path.join(dir_name, f"{name}.{int(time.time() * 1000)}{suffix}"))

    return handler
