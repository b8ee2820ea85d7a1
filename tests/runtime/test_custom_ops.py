"""Custom operators: TFLite's init/free/prepare/invoke lifecycle, FlexBuffer options, versions, errors."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from flatbuffers import flexbuffers
from support import FIXTURES, Spec, single_op_model

from accelsim.runtime import (
    BuiltinOpResolver,
    Interpreter,
    KernelError,
    MutableOpResolver,
    OpResolutionError,
    Registration,
)
from accelsim.runtime.custom import decode_options, encode_options
from accelsim.runtime.errors import ModelError


class Recorder:
    """A custom 'Scale' op (y = x * factor) that logs every hook call."""

    def __init__(self, fail_in: str | None = None):
        self.calls: list[tuple] = []
        self.fail_in = fail_in
        self.live: set[int] = set()

    def registration(self) -> Registration:
        return Registration(init=self.init, free=self.free, prepare=self.prepare, invoke=self.invoke)

    def init(self, context, buffer):
        self.calls.append(("init", buffer))
        if self.fail_in == "init":
            raise ValueError("init refused")
        data = {"options": decode_options(buffer), "id": len(self.calls)}
        self.live.add(data["id"])
        return data

    def free(self, context, user_data):
        self.calls.append(("free", user_data["id"]))
        self.live.discard(user_data["id"])

    def prepare(self, context, node):
        self.calls.append(("prepare", context.input(node, 0).shape))
        if self.fail_in == "prepare" and context.input(node, 0).shape[-1] == 3:
            context.report_error("Scale: the last dimension must not be 3")
            return False
        node.temporaries = context.add_tensors(1, "FLOAT32", context.input(node, 0).shape)
        context.resize_tensor(context.output(node, 0), context.input(node, 0).shape)

    def invoke(self, context, node):
        self.calls.append(("invoke", node.user_data["options"]["factor"]))
        if self.fail_in == "invoke":
            raise ArithmeticError("overflow in Scale")
        scratch = context.tensor(node.temporaries[0])
        scratch.data = context.input(node, 0).data * np.float32(node.user_data["options"]["factor"])
        context.output(node, 0).data = scratch.data.copy()


def scale_model(factor=2.5, shape=(1, 4), version=1, options=None):
    opts = encode_options({"factor": factor}) if options is None else options
    return single_op_model("CUSTOM", [Spec(shape, shape_signature=(-1, shape[1]))], [Spec(shape)],
                           custom_code="Scale", custom_options=opts, version=version)


def resolver_with(recorder, min_version=1, max_version=1):
    r = BuiltinOpResolver()
    r.add_custom("Scale", recorder.registration(), min_version, max_version)
    return r


def test_lifecycle_init_prepare_invoke_free():
    rec = Recorder()
    it = Interpreter(model_content=scale_model(), op_resolver=resolver_with(rec))
    assert [c[0] for c in rec.calls] == ["init"]
    assert decode_options(rec.calls[0][1]) == {"factor": 2.5}
    it.allocate_tensors()
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), x * 2.5)
    # prepare runs again after every resize, init does not
    it.resize_tensor_input(it.get_input_details()[0]["index"], [2, 4])
    it.allocate_tensors()
    assert [c[0] for c in rec.calls] == ["init", "prepare", "invoke", "prepare"]
    assert rec.calls[-1] == ("prepare", (2, 4))
    it.close()
    assert rec.calls[-1][0] == "free" and not rec.live


def test_every_init_is_matched_by_one_free_even_when_the_interpreter_is_dropped():
    rec = Recorder()
    it = Interpreter(model_content=scale_model(), op_resolver=resolver_with(rec))
    del it
    gc.collect()
    assert [c[0] for c in rec.calls].count("free") == 1 and not rec.live


def test_unresolved_custom_op_fails_at_allocate_with_tflite_wording():
    it = Interpreter(model_content=scale_model())
    with pytest.raises(OpResolutionError, match=r"^Encountered unresolved custom op: Scale\."):
        it.allocate_tensors()


def test_atan_fixture_from_the_tensorflow_converter():
    from custom_op_atan import atan_resolver

    path = FIXTURES / "atan_custom.tflite"
    with pytest.raises(OpResolutionError, match=r"Encountered unresolved custom op: Atan\."):
        Interpreter(model_path=path).allocate_tensors()
    it = Interpreter(model_path=path, op_resolver=atan_resolver())
    it.allocate_tensors()
    x = np.array([[-3.0, -1.0, 0.0, 2.0]], dtype=np.float32)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    y = it.get_tensor(it.get_output_details()[0]["index"])
    np.testing.assert_allclose(y, np.arctan(x + 1.0), atol=1e-6)


def test_atan_model_built_with_our_writer():
    from custom_op_atan import atan_resolver, build_model

    it = Interpreter(model_content=build_model(offset=0.5, size=6), op_resolver=atan_resolver())
    it.allocate_tensors()
    x = np.linspace(-4, 4, 6, dtype=np.float32).reshape(1, 6)
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), np.arctan(x + 0.5), atol=1e-6)


def test_custom_op_versions_are_matched_exactly():
    rec = Recorder()
    model_v2 = scale_model(version=2)
    it = Interpreter(model_content=model_v2, op_resolver=resolver_with(rec, 1, 2))
    it.allocate_tensors()
    expected = r"custom op for name 'Scale' version '3'; registered versions: \[1, 2\]"
    with pytest.raises(OpResolutionError, match=expected):
        Interpreter(model_content=scale_model(version=3), op_resolver=resolver_with(Recorder(), 1, 2))


def test_undecodable_custom_options_name_the_node():
    with pytest.raises(KernelError, match=r"Node number 0 \(Scale\) failed to init.*not a valid FlexBuffer"):
        Interpreter(model_content=scale_model(options=b"\x01"), op_resolver=resolver_with(Recorder()))
    with pytest.raises(ModelError, match="expected a map"):
        decode_options(bytes(flexbuffers.Dumps([1, 2])))


def test_failing_init_frees_what_was_initialised():
    rec = Recorder(fail_in="init")
    with pytest.raises(KernelError, match=r"Node number 0 \(Scale\) failed to init.*init refused"):
        Interpreter(model_content=scale_model(), op_resolver=resolver_with(rec))
    assert not rec.live


def test_prepare_error_reports_and_interpreter_stays_usable():
    rec = Recorder(fail_in="prepare")
    it = Interpreter(model_content=scale_model(shape=(1, 3)), op_resolver=resolver_with(rec))
    with pytest.raises(KernelError, match=r"Node number 0 \(Scale\) failed to prepare.*last dimension must not be 3"):
        it.allocate_tensors()
    with pytest.raises(RuntimeError, match="allocate_tensors"):
        it.invoke()
    # fix the input and carry on with the same interpreter
    it.resize_tensor_input(0, [1, 5])
    it.allocate_tensors()
    it.set_tensor(0, np.ones((1, 5), np.float32))
    it.invoke()
    np.testing.assert_allclose(it.get_tensor(it.get_output_details()[0]["index"]), np.full((1, 5), 2.5))


def test_invoke_error_names_node_and_leaves_interpreter_usable():
    rec = Recorder(fail_in="invoke")
    it = Interpreter(model_content=scale_model(), op_resolver=resolver_with(rec))
    it.allocate_tensors()
    with pytest.raises(KernelError, match=r"Node number 0 \(Scale\) failed to invoke.*ArithmeticError: overflow"):
        it.invoke()
    rec.fail_in = None
    it.invoke()


def test_selective_resolver_registration_list():
    from accelsim.runtime import resolver_for_model
    from accelsim.runtime.read import load_model

    model = load_model(scale_model())
    base = resolver_with(Recorder())
    r = resolver_for_model(model, base)
    assert r.registrations() == [("Scale", True, 1, 1)]
    assert isinstance(r, MutableOpResolver)


def test_flexbuffer_options_round_trip():
    opts = {"factor": 1.5, "name": "scale", "axes": [1, 2], "flag": True}
    assert decode_options(encode_options(opts)) == opts
    assert decode_options(None) == {} and decode_options(b"") == {}
