"""Whole distributed jobs (one trace per rank) as pandas DataFrames.

Columns are named as in ``opscope report DIR --json`` (the C++ job analysis writes the JSON;
this module lays it out): times there are in microseconds (``*_us``).
"""

import json
import os

import pandas as pd

from . import _opscope


class Job:
    """A job read by ``opscope.load(dir)`` or ``opscope.load([rank files])``."""

    def __init__(self, impl):
        self._impl = impl
        self._doc = json.loads(impl.report_json())

    def _frame(self, key):
        return pd.DataFrame(self._doc.get(key, []))

    def ranks(self):
        """A row per rank: device timeline (busy, idle, computation, communication, exposed
        communication, memcpy; us), HTA's overlap_pct, and the clock alignment fitted."""
        return self._frame("ranks")

    def collectives(self):
        """A row per collective instance (process group, seq): ranks, per-rank wait_us,
        skew_us, transfer_us, algbw/busbw (NCCL's definitions), the rank that came last."""
        return self._frame("collectives")

    def collective_summary(self):
        return self._frame("collective_summary")

    def stragglers(self):
        """Ranks that made the others wait, with the evidence (their computation before the
        collectives against the median rank's)."""
        return self._frame("stragglers")

    def ops(self):
        """Per op across ranks: min, median, max device time and the rank with the max."""
        return self._frame("ops")

    @property
    def findings(self):
        return list(self._doc.get("findings", []))

    @property
    def warnings(self):
        return list(self._doc.get("warnings", []))

    @property
    def errors(self):
        """Rank files that failed to import (file, offset, message); the job is then partial."""
        return list(self._doc.get("errors", []))

    @property
    def partial(self):
        return bool(self._doc.get("partial", False))

    @property
    def world_size(self):
        return self._doc.get("world_size", 0)

    @property
    def plot(self):
        """Matplotlib figures of this job: ``skew()`` (matplotlib is imported only here)."""
        from ._plot import JobPlots
        return JobPlots(self)

    def report(self):
        """The text ``opscope report DIR`` prints."""
        return self._impl.report()

    def report_json(self):
        """The document ``opscope report DIR --json`` prints, parsed."""
        return json.loads(self._impl.report_json())

    def __repr__(self):
        return (f"<opscope.Job: {len(self._doc.get('ranks', []))} ranks, world size "
                f"{self.world_size}{', partial' if self.partial else ''}>")


def load_job(paths, align_clocks=True):
    return Job(_opscope.load_job([os.fsdecode(os.fspath(p)) for p in paths], align_clocks))
