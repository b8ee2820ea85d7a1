"""The report's sweep plots: a numeric axis in the smallest value's unit, a log scale for wide spans, spots on
their points."""

from __future__ import annotations

from accelsim.reports import plots

BANDWIDTH = "edgetpu_usb.link.bandwidth"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_sweep_axis_is_numeric_in_the_smallest_values_unit():
    axis = plots.sweep_axis(BANDWIDTH, ["1 GB/s", "40 MB/s", "320 MB/s"])
    assert axis.positions == {"1 GB/s": 1000.0, "40 MB/s": 40.0, "320 MB/s": 320.0}
    assert axis.label == f"{BANDWIDTH} (MB/s)" and axis.log
    assert plots.sweep_axis("compute.rows", [16, 32]).label == "compute.rows"
    categorical = plots.sweep_axis("schedule", ["sequential", "dataflow"])
    assert categorical.positions == {"dataflow": 0.0, "sequential": 1.0} and not categorical.log


def _two_models(speedup: bool) -> tuple[list[plots.SweepLine], plots.SweepAxis]:
    """A 3 µs model and a 5 ms model swept over the same bandwidths, with their CPU-only baselines."""
    values = ("40 MB/s", "320 MB/s", "1 GB/s")
    lines = [plots.SweepLine(model="tiny", label="tiny | usb", values=values, latency_us=(3.0, 2.5, 2.4),
                             overhead_pct=(50.0, 40.0, 38.0),
                             speedup=(2.0, 2.4,
                                      2.5) if speedup else (), names=tuple(f"tiny | usb | bw={v}" for v in values)),
             plots.SweepLine(model="big", label="big | usb", values=values, latency_us=(5300.0, 1980.0, 1660.0),
                             overhead_pct=(75.0, 34.0, 21.0),
                             speedup=(1.09, 2.92,
                                      3.48) if speedup else (), names=tuple(f"big | usb | bw={v}" for v in values)),
             plots.SweepLine(model="tiny", label="tiny | cpu_only", values=(), latency_us=(6.0,), overhead_pct=(0.0,),
                             speedup=(1.0,) if speedup else (),
                             names=("tiny | cpu_only",), flat=True)]
    return lines, plots.sweep_axis("usb.link.bandwidth", list(values))


def test_sweep_plot_turns_logarithmic_when_latencies_span_more_than_30x():
    lines, axis = _two_models(speedup=True)
    fig, placed = plots.sweep_figure("usb.link.bandwidth", lines, axis)
    latency, speedup, overhead = fig.axes
    assert latency.get_yscale() == "log" and speedup.get_yscale() == "linear" and overhead.get_yscale() == "linear"
    assert "speed-up vs CPU only" in speedup.get_ylabel()
    assert len(placed) == 3 + 3 + 1 + 3 + 3  # latency points, the baseline, speed-up points
    near, _ = plots.sweep_figure("usb.link.bandwidth", lines[:1], axis)
    assert near.axes[0].get_yscale() == "linear" and len(near.axes) == 3
    without, _ = plots.sweep_figure("usb.link.bandwidth", _two_models(speedup=False)[0], axis)
    assert len(without.axes) == 2  # no baseline, no speed-up panel


def test_sweep_plot_spots_land_on_their_points():
    lines, axis = _two_models(speedup=True)
    picture = plots.sweep_png("usb.link.bandwidth", lines, axis)
    assert picture.png.startswith(PNG_SIGNATURE)
    spots: dict[str, plots.Spot] = {}
    for spot in picture.spots:  # the latency panel's come first, then the speed-up panel's
        spots.setdefault(spot.label.split("\n")[0], spot)
    assert all(0 < s.x < 1 and 0 < s.y < 1 for s in picture.spots)
    tiny, big = spots["tiny | usb | bw=40 MB/s"], spots["big | usb | bw=40 MB/s"]
    assert tiny.x == big.x and tiny.y - big.y > 0.1  # the 3 µs point is far below the 5 ms one, not flattened
    assert spots["tiny | usb | bw=1 GB/s"].x > spots["tiny | usb | bw=320 MB/s"].x > tiny.x
    assert "5,300.00 µs, 1.09× vs CPU only" in big.label
