"""Streams and pipelines: invariants that no calibration can move, libcoral's rules, bad input, the command line."""

from __future__ import annotations

import dataclasses
import json
import lzma
from functools import cache
from pathlib import Path

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from accelsim.cli.help import STREAM_SEGMENTATIONS
from accelsim.cli.main import main
from accelsim.experiments.experiment import SHIPPED_CONFIGS
from accelsim.hardware.config import System, load_hardware
from accelsim.runtime.read import load_model
from accelsim.simulation.analysis import simulate_model
from accelsim.workloads import segments
from accelsim.workloads.segments import OpOrder, Profile, SegmentError, compiler_counts, pipeline
from accelsim.workloads.streams import StreamError, StreamSpec, Workload, _Shared, prepare, run, simulate_streams

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "fixtures" / "models"
SMALL = MODELS / "mobilenet_v2_035_96_int8.tflite"
MNV2 = MODELS / "mobilenet_v2_100_224_int8.tflite"
CORAL = ROOT / "benchmarks" / "coral_fit_rows"


@cache
def usb(host: str = "host_cpu", accel: str = "edgetpu_usb") -> System:
    return System(load_hardware(SHIPPED_CONFIGS / f"{host}.yaml"), (load_hardware(SHIPPED_CONFIGS / f"{accel}.yaml"),))


@cache
def phone() -> System:
    return System(load_hardware(SHIPPED_CONFIGS / "kryo385_cpu.yaml"),
                  tuple(load_hardware(SHIPPED_CONFIGS / f"{n}.yaml") for n in ("adreno630_gpu", "hexagon_dsp")))


@cache
def coral(key: str):
    return load_model(lzma.decompress((CORAL / f"{key}_int8.tflite.xz").read_bytes()))


@cache
def plans(model: Path, system_name: str, mode: str = "single", count: int = 1, segmentation: str = "compiler"):
    system = phone() if system_name == "phone" else usb(accel=system_name)
    w = Workload((StreamSpec("s", str(model)),), mode=mode, count=count, segmentation=segmentation)
    return system, prepare(w, system)


def rerun(system, prepared, mode="single", count=1, **spec):
    """The prepared stream run again with other arrival settings (what a stream's steps do not depend on)."""
    w = Workload((dataclasses.replace(prepared[0].spec, **spec),), mode=mode, count=count)
    return run(w, [dataclasses.replace(prepared[0], spec=w.streams[0])], system)


# -- 4: checks that cannot be tuned


@pytest.mark.parametrize("model,system_name", [(SMALL, "edgetpu_usb"), (MNV2, "edgetpu_pcie"), (SMALL, "phone")])
def test_one_frame_in_flight_is_the_single_inference(model, system_name):
    system, prepared = plans(model, system_name)
    single = simulate_model(str(model), system)
    for spec in ({"frames": 30, "max_in_flight": 1}, {"frames": 30, "rate": 0.5 / single.latency}):
        result = rerun(system, prepared, **spec)
        s = result.streams[0]
        assert s.completed == 30 and s.dropped == 0
        assert s.latencies[0] == single.latency  # the first frame: bit for bit
        assert s.latencies == pytest.approx([single.latency] * 30, rel=1e-12)
        assert s.single_latency_s == single.latency
        for u in result.units:  # every unit as busy per frame as in the single inference
            if u.name in single.result.busy and not u.name.endswith(".link"):
                assert u.busy_s == pytest.approx(30 * (single.result.busy[u.name] + single.result.busy.get(
                    f"{u.name}.link", 0.0)), rel=1e-9)
    back_to_back = rerun(system, prepared, frames=30, max_in_flight=1).streams[0]
    assert back_to_back.throughput_per_s == pytest.approx(1 / single.latency, rel=1e-9)


def _busiest_per_frame(single) -> float:
    """The busiest unit's time per frame in one inference alone (an accelerator holds its link's time too)."""
    busy: dict[str, float] = {}
    for name, b in single.result.busy.items():
        unit = name.removesuffix(".link")
        busy[unit] = busy.get(unit, 0.0) + b
    return max(busy.values())


@settings(max_examples=25, deadline=None)
@given(frames=st.integers(1, 40), rate_factor=st.floats(0.2, 5.0), in_flight=st.one_of(st.none(), st.integers(1, 4)),
       queue=st.integers(0, 2), system_name=st.sampled_from(["edgetpu_usb", "phone"]))
def test_throughput_never_beats_the_busiest_unit(frames, rate_factor, in_flight, queue, system_name):
    system, prepared = plans(SMALL, system_name)
    single = prepared[0].single
    result = rerun(system, prepared, frames=frames, rate=rate_factor / single.latency, max_in_flight=in_flight,
                   max_in_queue=queue)
    s = result.streams[0]
    assert s.completed + s.dropped == s.offered == frames
    if s.completed > 1:
        assert s.throughput_per_s <= 1 / _busiest_per_frame(single) * (1 + 1e-9)
    assert min(s.latencies) >= single.latency * (1 - 1e-12)  # contention only ever delays
    busiest = max(result.units, key=lambda u: u.busy_s)
    assert result.bottleneck == busiest.name
    assert all(0 <= u.utilization <= 1 + 1e-9 for u in result.units)


@pytest.mark.parametrize("segmentation", segments.SEGMENTATIONS)
@pytest.mark.parametrize("count", [2, 4])
def test_pipeline_latency_is_at_least_its_segments(segmentation, count):
    system, prepared = plans(MNV2, "edgetpu_usb", "pipeline", count, segmentation)
    segs = prepared[0].segments
    assert len(segs) == count and sum(len(g.nodes) for g in segs) == 65
    for spec in ({"frames": 50, "max_in_flight": count}, {"frames": 50, "rate": 2000.0}, {"frames": 20,
                                                                                           "max_in_flight": 1}):
        s = rerun(system, prepared, "pipeline", count, **spec).streams[0]
        assert min(s.latencies) >= sum(g.time_s for g in segs) * (1 - 1e-12)
        assert s.throughput_per_s <= 1 / max(g.time_s for g in segs) * (1 + 1e-9)


@settings(max_examples=8, deadline=None)
@given(count=st.integers(2, 4), in_flight=st.integers(1, 6), system_name=st.sampled_from(["edgetpu_usb",
                                                                                         "edgetpu_pcie"]))
def test_replicas_scale_at_most_linearly(count, in_flight, system_name):
    one_system, one = plans(SMALL, system_name)
    system, many = plans(SMALL, system_name, "replicas", count)
    base = rerun(one_system, one, frames=40, max_in_flight=1).streams[0].throughput_per_s
    s = rerun(system, many, "replicas", count, frames=40, max_in_flight=in_flight).streams[0]
    assert s.throughput_per_s <= count * base * (1 + 1e-9)
    assert s.throughput_per_s >= base * (1 - 1e-9)  # another copy never slows the stream
    assert min(s.latencies) >= many[0].single.latency * (1 - 1e-12)


def test_frames_overlap_on_different_units_in_the_trace():
    system, prepared = plans(MNV2, "edgetpu_usb", "pipeline", 4, "compiler")
    result = rerun(system, prepared, "pipeline", 4, frames=10, max_in_flight=4)
    spans = [(e["start_us"], e["end_us"], e["label"].split(":")[0], e["resource"]) for e in result.events]
    overlapping = {(a[2], b[2]) for a in spans for b in spans
                   if a[2] != b[2] and a[3] != b[3] and a[0] < b[1] and b[0] < a[1]}
    assert overlapping  # two frames at once on two units


# -- 2: segmentations, caches


def test_compiler_rule_on_a_hand_made_order():
    # libcoral: average = 35 // 2 + 1 = 18; segment 0 takes ops while its bytes stay <= 18 (10, 0, then 10 breaks)
    order = OpOrder(order=(0, 1, 2, 3, 4), param_bytes=(10, 0, 10, 10, 5), first_output=4)
    assert compiler_counts(order, 2) == (2, 3)
    # the position cap: segment i ends at first_output - (N - 1 - i) at the latest
    order = OpOrder(order=(0, 1, 2, 3), param_bytes=(0, 0, 0, 0), first_output=2)
    assert compiler_counts(order, 3) == (1, 1, 2)
    with pytest.raises(SegmentError, match="would be empty"):
        compiler_counts(OpOrder(order=(0, 1, 2), param_bytes=(1, 100, 1), first_output=2), 3)


@settings(max_examples=40, deadline=None)
@given(times=st.lists(st.floats(1e-5, 5e-3), min_size=4, max_size=30), n=st.integers(2, 4), data=st.data())
def test_balanced_never_worse_than_either_on_additive_profiles(times, n, data):
    params = data.draw(st.lists(st.integers(0, 1000), min_size=len(times), max_size=len(times)))
    order = OpOrder(tuple(range(len(times))), tuple(params), len(times) - 1)

    def latency(start, count):
        return sum(times[start:start + count])

    seeds = []
    try:
        seeds.append(compiler_counts(order, n))
    except SegmentError:
        pass
    prof = segments.profiled_counts(order, n, latency)
    seeds.append(prof)
    for counts in (prof, segments.balanced_counts(order, n, latency, seeds)):
        assert sum(counts) == len(times) and min(counts) >= 1 and len(counts) == n
    bal = max(segments.segment_times(segments.balanced_counts(order, n, latency, seeds), latency))
    assert all(bal <= max(segments.segment_times(c, latency)) for c in seeds)


@pytest.mark.parametrize("accel", ["edgetpu_usb", "edgetpu_pcie"])
@pytest.mark.parametrize("key", ["mobilenet_v2", "resnet50_299"])
def test_balanced_never_worse_and_profile_equals_the_assembled_pipeline(key, accel):
    model, system = coral(key), usb(accel=accel)
    profile = Profile(model, system.host, system.accelerators[0])
    for n in (2, 3, 4):
        built = {s: pipeline(model, system, n, s, profile) for s in segments.SEGMENTATIONS}
        for p in built.values():  # the profile's time per segment is the assembled pipeline's
            assert [g.time_s for g in p.segments] == pytest.approx(segments.segment_times(p.counts, profile),
                                                                   rel=1e-12)
        worst = {s: max(g.time_s for g in p.segments) for s, p in built.items()}
        assert worst["balanced"] <= min(worst["compiler"], worst["profiled"])


def test_each_segment_caches_its_own_weights_superlinear_speed_up():
    model, system = coral("resnet50_299"), usb()
    one = simulate_streams(Workload((StreamSpec("r", model, frames=60),), mode="single"), system)
    four = simulate_streams(Workload((StreamSpec("r", model, frames=60),), mode="pipeline", count=4,
                                     segmentation="balanced"), system)
    segs = four.streams[0].segments
    single = one.streams[0]
    # one Edge TPU caches 3.8 MB of ResNet-50's 25.6 MB and streams the rest over USB every frame
    assert sum(g.cached_bytes for g in segs) > 3 * 3.8e6
    assert four.streams[0].throughput_per_s > 4 * single.throughput_per_s  # more than linear
    assert sum(g.time_s for g in segs) < single.single_latency_s  # even one frame is faster split


# -- dependencies, flow limit, shared links


def test_landmark_depends_on_detector_and_the_flow_limit_drops():
    system = phone()
    detector = StreamSpec("detector", str(SMALL), frames=60, rate=5000.0, max_in_flight=1)
    landmark = StreamSpec("landmark", str(MODELS / "interleaved_int8.tflite"), frames=60, depends_on=("detector",),
                          max_in_flight=1, max_in_queue=1)
    result = simulate_streams(Workload((detector, landmark)), system)
    d, m = result.streams
    assert d.dropped > 0 and d.completed + d.dropped == d.offered == 60
    assert m.offered == d.completed  # one landmark frame per finished detector frame
    assert m.completed + m.dropped == m.offered
    # a landmark frame's end-to-end latency runs from its detector frame's arrival: at least both alone
    assert m.end_to_end_p50_s >= d.single_latency_s + m.single_latency_s - 1e-12
    assert d.end_to_end_p50_s == d.latency_p50_s
    # the detector's limit covers its landmark (MediaPipe's FINISHED back edge): one detector+landmark at a time
    assert d.throughput_per_s <= 1 / (d.single_latency_s + m.single_latency_s) * (1 + 1e-9)
    queued = simulate_streams(Workload((dataclasses.replace(detector, max_in_queue=1), landmark)), system)
    assert queued.streams[0].dropped <= d.dropped


def test_a_link_is_shared_not_each_transfer_getting_all_of_it():
    env = simpy.Environment()
    link = _Shared(env)
    done = {}

    def transfer(name, seconds, at):
        yield env.timeout(at)
        yield link.use(seconds)
        done[name] = env.now

    for name, seconds, at in (("a", 1.0, 0.0), ("b", 1.0, 0.0), ("c", 1.0, 2.0)):
        env.process(transfer(name, seconds, at))
    env.run()
    assert done == pytest.approx({"a": 2.0, "b": 2.0, "c": 3.0})
    assert link.busy == pytest.approx(3.0)


# -- bad input: one clear error before anything runs


@pytest.mark.parametrize("streams,match", [
    ((StreamSpec("a", str(SMALL), depends_on=("b",)), StreamSpec("b", str(SMALL), depends_on=("a",))),
     "cycle: a -> b -> a"),
    ((StreamSpec("a", str(SMALL), rate=0),), "rate: must be > 0"),
    ((StreamSpec("a", str(SMALL), rate=-30.0),), "rate: must be > 0"),
    ((StreamSpec("a", str(SMALL), depends_on=("nope",)),), "unknown stream 'nope'"),
    ((StreamSpec("a", str(SMALL), max_in_flight=0),), "max_in_flight: must be"),
])
def test_bad_streams_are_refused_before_anything_runs(streams, match):
    with pytest.raises(StreamError, match=match):
        prepare(Workload(streams), usb())


def test_more_segments_than_ops_and_a_model_no_unit_runs():
    with pytest.raises(StreamError, match="70 segments for a model of 65 ops"):
        prepare(Workload((StreamSpec("a", str(MNV2)),), mode="pipeline", count=70), usb())
    with pytest.raises(StreamError, match="edgetpu_usb runs none of the model's ops"):
        prepare(Workload((StreamSpec("f", str(MODELS / "mobilenet_v2_035_96_float.tflite")),), mode="replicas",
                         count=2), usb())


def test_cli_stream_json_and_errors(capsys, tmp_path):
    trace = tmp_path / "t.json"
    assert main(["stream", str(MNV2), "--hw", "edgetpu_usb", "--count", "4", "--mode", "pipeline",
                 "--segmentation", "compiler", "--frames", "30", "--json", "--trace", str(trace)]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("throughput_per_s", "latency_p50_s", "latency_p99_s", "dropped", "segments", "bottleneck", "units"):
        assert key in data
    assert [set(g) >= {"first_node", "last_node", "parameter_bytes", "cached_bytes", "time_s"}
            for g in data["segments"]] == [True] * 4
    assert json.loads(trace.read_text())["traceEvents"]
    assert main(["stream", str(MNV2), "--hw", "edgetpu_usb", "--rate", "0"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rate: must be > 0" in err


# -- experiments: the streams: block


def _experiment(tmp_path, streams: str, sweeps: str = "") -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(f"""name: s
models: [{MNV2}]
host: host_cpu
variants: [{{name: usb, accelerators: [edgetpu_usb]}}]
traces: none
reports: [md, json]
{sweeps}
streams:
{streams}
""")
    return path


@pytest.mark.parametrize("streams,sweeps,message", [
    ("  rate: 0", "", "streams.rate: must be > 0"),
    ("  mode: pipe", "", "streams.mode: 'pipe' is not one of"),
    ("  graph:\n    - {name: a, model: " + str(SMALL) + ", depends_on: [b]}\n    - {name: b, model: " + str(SMALL)
     + ", depends_on: [a]}", "", "the dependencies form a cycle: a -> b -> a"),
    ("  mode: pipeline", "sweeps: {streams.count: [1, 0]}", "sweeps.streams.count: expected a whole number >= 1"),
    ("  colour: red", "", "streams.colour: unknown key"),
])
def test_experiment_streams_block_errors_name_file_line_and_key(tmp_path, streams, sweeps, message):
    from accelsim.experiments.experiment import load_experiment
    from accelsim.hardware.config_yaml import ConfigError

    path = _experiment(tmp_path, streams, sweeps)
    with pytest.raises(ConfigError) as err:
        load_experiment(path)
    assert any(e.startswith(f"{path}:") and message in e for e in err.value.errors), err.value.errors


def test_experiment_streams_fail_before_any_point_runs(tmp_path):
    from accelsim.experiments.experiment import load_experiment
    from accelsim.experiments.run import run_experiment
    from accelsim.hardware.config_yaml import ConfigError

    path = _experiment(tmp_path, "  mode: pipeline\n  count: 70")
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="70 segments for a model of 65 ops"):
        run_experiment(load_experiment(path), out, jobs=1)
    assert not (out / "points.sqlite").exists()


@pytest.mark.slow
def test_experiment_streams_sweep_writes_the_streams_section(tmp_path):
    from accelsim.experiments.experiment import load_experiment
    from accelsim.experiments.run import run_experiment

    path = _experiment(tmp_path, "  mode: pipeline\n  frames: 40", "sweeps: {streams.count: [2, 4], "
                       "streams.segmentation: [compiler, balanced]}")
    outcome = run_experiment(load_experiment(path), tmp_path / "out", jobs=1)
    runs = json.loads((tmp_path / "out" / "streams.json").read_text())
    assert len(runs) == 4 and all(r["result"]["streams"][0]["completed"] == 40 for r in runs)
    best = {(r["combo"]["count"], r["combo"]["segmentation"]): r["result"]["throughput_per_s"] for r in runs}
    assert best[(4, "balanced")] >= best[(4, "compiler")]
    md = (tmp_path / "out" / "report.md").read_text()
    assert "## Streams" in md and "plots/streams_latency.png" in md and "plots/streams_utilisation.png" in md
    assert {"streams.json", "streams.csv", "plots/streams_latency.png"} <= set(outcome.outputs)


@pytest.mark.slow
def test_readme_streams_tables_are_the_benchmarks_output():
    """README: its Coral rows of MobileNet v2 and ResNet-50 and its phone table are benchmarks/streams.py's output."""
    from accelsim.ops import load_op_modules, using_ops
    from benchmarks.streams import CACHE, HOSTS, cell, config, coral_models, phone_table

    readme = (ROOT / "README.md").read_text().split("### Streams, replicas and pipelines", 1)[1].split("\n### ", 1)[0]
    models = coral_models(CACHE, ["mobilenet_v2", "resnet50_299"])
    checked = 0
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != 7 or cells[0].split(" ")[0] not in models or cells[1] != "edgetpu_usb":
            continue
        model = models[cells[0].split(" ")[0]][1]
        system = System(config(HOSTS["edgetpu_usb"]), (config("edgetpu_usb"),))
        n = int(cells[2])
        for col, text in zip(("replicas", *segments.SEGMENTATIONS), cells[3:]):
            if text == "=":
                continue
            got = cell(model, system, "replicas" if col == "replicas" else "pipeline", n,
                       "compiler" if col == "replicas" else col, 200)
            assert text == (f"{got[0]:.1f}/s, {got[1]:.2f} ms" if isinstance(got, tuple) else got), (line, col)
            checked += 1
    assert checked == 26
    with using_ops(load_op_modules(["accelsim.ops.mediapipe"])):
        assert "\n".join(phone_table(200)) in readme


def test_dataflow_frames_alone_are_the_single_dataflow_inference():
    system = usb()
    single = simulate_model(str(SMALL), system, "dataflow")
    w = Workload((StreamSpec("s", str(SMALL), frames=10, max_in_flight=1),), schedule="dataflow")
    s = simulate_streams(w, system).streams[0]
    assert s.latencies[0] == single.latency
    assert s.latencies == pytest.approx([single.latency] * 10, rel=1e-12)


def test_two_apps_sharing_the_phone_slow_each_other_only_through_shared_units():
    """Two independent streams on the phone: DRAM-bound steps share DRAM, so frames take longer than alone."""
    system = phone()
    a = StreamSpec("int8", str(MNV2), frames=40, max_in_flight=1)
    b = StreamSpec("float", str(MODELS / "mobilenet_v2_035_96_float.tflite"), frames=40, max_in_flight=1)
    both = simulate_streams(Workload((a, b)), system)
    alone = {s.name: simulate_streams(Workload((s,)), system).streams[0] for s in (a, b)}
    dram = next(u for u in both.units if u.name == "dram")
    assert dram.busy_s > 0 and dram.queueing_s > 0  # they met on DRAM
    for s in both.streams:
        assert min(s.latencies) >= alone[s.name].single_latency_s * (1 - 1e-12)
        assert s.latency_mean_s > alone[s.name].latency_mean_s


def test_copies_on_one_shared_link_contend_for_it():
    system = usb()
    own = Workload((StreamSpec("m", str(MNV2), frames=80),), mode="replicas", count=4)
    shared = dataclasses.replace(own, shared_link=True)
    a, b = simulate_streams(own, system), simulate_streams(shared, system)
    assert b.streams[0].throughput_per_s < a.streams[0].throughput_per_s
    links = [u for u in b.units if u.name.endswith(".link")]
    assert [u.name for u in links] == ["edgetpu_usb.link"] and links[0].queueing_s > 0
    assert links[0].bytes == sum(u.bytes for u in a.units if u.name.endswith(".link"))


def test_the_command_lines_segmentations_are_the_workloads():
    """`accelsim stream --segmentation` names its choices in cli/help.py (parsing imports no simulation): the same."""
    assert STREAM_SEGMENTATIONS == segments.SEGMENTATIONS
