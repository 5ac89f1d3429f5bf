#!/usr/bin/env python3
"""Writes the expected key_averages tables for tests/profiler/key_averages_golden_test.cc.

The rows below are computed by hand from the synthetic traces that the test builds (see the
comments there); the layout is torch/autograd/profiler_util.py _build_table, restated here with
Python's own str.format so that widths, padding and rounding are Python's, not opscope's.
Run: python3 make_golden.py  (rewrites the .txt files beside it).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


class Row:
    def __init__(self, key, count, self_cpu, cpu_total, self_dev=0, dev_total=0,
                 is_device=False, is_user_annotation=False, shapes="[]"):
        # times in ns, as in the trace
        self.key = key
        self.count = count
        self.self_cpu_time_total = self_cpu / 1000.0
        self.cpu_time_total = cpu_total / 1000.0
        self.self_device_time_total = self_dev / 1000.0
        self.device_time_total = dev_total / 1000.0
        self.is_device = is_device
        self.is_user_annotation = is_user_annotation
        self.input_shapes = shapes
        self.cpu_time = self.cpu_time_total / count
        self.device_time = self.device_time_total / count
        self.cpu_memory_usage = 0
        self.flops = 0


def _format_time(time_us):
    if time_us >= 1000.0 * 1000.0:
        return f"{time_us / (1000.0 * 1000.0):.3f}s"
    if time_us >= 1000.0:
        return f"{time_us / 1000.0:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        assert time_us == 0
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def build_table(events, device, sort_by=None, row_limit=100, grouped=False, footer_extra=()):
    max_name_column_width, max_shapes_column_width = 55, 80
    has_device_time = any(e.self_device_time_total > 0 for e in events)
    has_input_shapes = grouped and any(e.input_shapes not in ("", "[]") for e in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    name_column_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    shapes_column_width = min(max(len(e.input_shapes) for e in events) + 4, max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        headers += [f"Self {device}", f"Self {device} %", f"{device} total", f"{device} time avg"]
    headers.append("# of Calls")
    row_format, header_sep = "", ""

    def add_column(padding):
        nonlocal row_format, header_sep
        row_format += "{: >" + str(padding) + "}  "
        header_sep += "-" * padding + "  "

    add_column(name_column_width)
    for _ in headers[1:]:
        add_column(12)
    if has_input_shapes:
        headers.append("Input Shapes")
        add_column(shapes_column_width)
    out = []
    sum_self_cpu = sum(e.self_cpu_time_total for e in events)
    sum_self_dev = sum(e.self_device_time_total for e in events
                       if e.is_device and not e.is_user_annotation)
    out += [header_sep, row_format.format(*headers), header_sep]
    limit = 0
    for e in events:
        if limit == row_limit:
            break
        limit += 1
        name = e.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        values = [name, _format_time_share(e.self_cpu_time_total, sum_self_cpu),
                  _format_time(e.self_cpu_time_total),
                  _format_time_share(e.cpu_time_total, sum_self_cpu),
                  _format_time(e.cpu_time_total), _format_time(e.cpu_time)]
        if has_device_time:
            values += [_format_time(e.self_device_time_total),
                       _format_time_share(e.self_device_time_total, sum_self_dev),
                       _format_time(e.device_time_total), _format_time(e.device_time)]
        values.append(e.count)
        if has_input_shapes:
            values.append(e.input_shapes[:shapes_column_width])
        out.append(row_format.format(*values))
    out.append(header_sep)
    out.append(f"Self CPU time total: {_format_time(sum_self_cpu)}")
    if has_device_time:
        out.append(f"Self {device} time total: {_format_time(sum_self_dev)}")
    out += list(footer_extra)  # opscope's own lines (drops, unlinked activity)
    return "".join(line + "\n" for line in out)


LONG = "aten::_scaled_dot_product_flash_attention_for_cpu_backward_x"  # 60 characters

# The device trace (see MakeDeviceTrace in key_averages_golden_test.cc).
DEVICE_ROWS = [
    Row("ProfilerStep*", 1, 299_500, 2_500_000, 0, 1_100_000, is_user_annotation=True),
    Row("aten::linear", 1, 200_000, 1_200_000, 0, 800_000),
    Row("aten::matmul", 1, 600_000, 1_000_000, 800_000, 800_000),
    Row("nrta_execute_schedule", 2, 500_000, 500_000),
    Row("nc_exec_running", 2, 0, 0, 1_100_000, 1_100_000, is_device=True),
    Row("aten::mul", 2, 300_500, 400_500, 300_000, 300_000),
    Row(LONG, 1, 600_000, 600_000),
]
DEVICE_ROWS_BY_SHAPE = [
    Row("ProfilerStep*", 1, 299_500, 2_500_000, 0, 1_100_000, is_user_annotation=True),
    Row("aten::linear", 1, 200_000, 1_200_000, 0, 800_000, shapes="[[8, 16], [32, 16], [32]]"),
    Row("aten::matmul", 1, 600_000, 1_000_000, 800_000, 800_000, shapes="[[8, 16], [16, 32]]"),
    Row("nrta_execute_schedule", 2, 500_000, 500_000),
    Row("nc_exec_running", 2, 0, 0, 1_100_000, 1_100_000, is_device=True),
    Row("aten::mul", 1, 50_000, 150_000, 300_000, 300_000, shapes="[[8, 32], []]"),
    Row("aten::mul", 1, 250_500, 250_500, shapes="[[8, 32], [8, 32]]"),
    Row(LONG, 1, 600_000, 600_000),
]
# The CPU-only trace (see MakeCpuTrace): nested same-name ops merge, one filtered op, >1 s.
CPU_ROWS = [
    Row("aten::conv2d", 1, 1_000_000, 1_500_000_000),
    Row("\u03bc-op", 1, 999, 999),
    Row("aten::convolution", 1, 499_000_000, 1_499_000_000),
    Row("aten::_convolution", 1, 1_000_000_000, 1_000_000_000),
]

SORT_KEYS = ["self_cpu_time_total", "cpu_time_total", "cpu_time", "self_privateuse1_time_total",
             "privateuse1_time_total", "self_cuda_time_total", "cuda_time_total",
             "self_device_time_total", "device_time_total", "device_time", "cuda_time",
             "self_xpu_time_total", "count", "key", "cpu_memory_usage"]


def write(name, text):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        f.write(text)


def main():
    write("device_table.txt", build_table(DEVICE_ROWS, "NEURON"))
    for key in SORT_KEYS:
        write(f"device_table_sort_{key}.txt", build_table(DEVICE_ROWS, "NEURON", sort_by=key))
    write("device_table_top3_self_cpu.txt",
          build_table(DEVICE_ROWS, "NEURON", sort_by="self_cpu_time_total", row_limit=3))
    write("device_table_by_shape.txt", build_table(DEVICE_ROWS_BY_SHAPE, "NEURON", grouped=True))
    write("device_table_by_shape_sort_cpu_time_total.txt",
          build_table(DEVICE_ROWS_BY_SHAPE, "NEURON", sort_by="cpu_time_total", grouped=True))
    write("cpu_table.txt", build_table(CPU_ROWS, "NEURON", footer_extra=[
        "Events dropped while recording: 3"]))


if __name__ == "__main__":
    main()
