"""TFLite's documented op-versioning example, end to end: dilation on DEPTHWISE_CONV_2D.

An old converter wrote depthwise options without dilation fields; new models with
dilation need version 2. Old models must keep working (defaults), new models must
run on a resolver that registers versions 1-2, and fail clearly, before anything
runs, on a resolver that only knows version 1.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import Spec, check_against_litert, const, random_inputs, single_op_model

from accelsim.runtime import BuiltinOpResolver, Interpreter, MutableOpResolver, OpResolutionError, load_model
from accelsim.runtime.versioning import stamp_versions
from accelsim.runtime.write import save_model
from accelsim.schema.tflite.DepthwiseConv2DOptions import DepthwiseConv2DOptions
from accelsim.schema.tflite.Model import Model as RawModel

TFLITE_WORDING = (r"Didn't find op for builtin opcode 'DEPTHWISE_CONV_2D' version '2'\. An older version of "
                  r"this builtin might be supported\. Are you using an old TFLite binary with a newer model\?")


def depthwise_model(dilation: int, version: int = 1) -> bytes:
    rng = np.random.default_rng(7)
    weights = rng.standard_normal((1, 3, 3, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    out_hw = 9 - 2 * dilation
    return single_op_model(
        "DEPTHWISE_CONV_2D", [Spec((1, 9, 9, 4)), const(weights), const(bias)], [Spec((1, out_hw, out_hw, 4))],
        version=version, padding=1, stride_w=1, stride_h=1, depth_multiplier=1,
        dilation_w_factor=dilation, dilation_h_factor=dilation)


def resolver_up_to(max_version: int) -> MutableOpResolver:
    builtin = BuiltinOpResolver()
    resolver = MutableOpResolver()
    resolver.add_builtin("DEPTHWISE_CONV_2D", builtin.find_op("DEPTHWISE_CONV_2D", 1), min_version=1,
                         max_version=max_version)
    return resolver


def _options_table(model_bytes: bytes) -> DepthwiseConv2DOptions:
    raw = RawModel.GetRootAs(model_bytes, 0)
    table = raw.Subgraphs(0).Operators(0).BuiltinOptions()
    opts = DepthwiseConv2DOptions()
    opts.Init(table.Bytes, table.Pos)
    return opts


def test_old_model_without_dilation_fields_loads_with_defaults_and_computes_as_v1():
    old = depthwise_model(dilation=1)
    opts = _options_table(old)
    # Fields 5 and 6 (dilation; vtable slots 4 + 2 * id) are absent, as an old converter wrote them,
    # while a field that is set (stride, id 1) is present.
    assert opts._tab.Offset(14) == 0 and opts._tab.Offset(16) == 0
    assert opts._tab.Offset(6) != 0
    op = load_model(old).subgraphs[0].operators[0]
    assert (op.options.dilation_w_factor, op.options.dilation_h_factor) == (1, 1)
    inputs = random_inputs(Interpreter(model_content=old).get_input_details())
    on_v1 = Interpreter(model_content=old, op_resolver=resolver_up_to(1))
    on_v1.allocate_tensors()
    on_v1.set_tensor(0, inputs[0])
    on_v1.invoke()
    ours = check_against_litert(old, inputs)
    np.testing.assert_array_equal(on_v1.get_tensor(on_v1.get_output_details()[0]["index"]), ours[0])


def test_dilated_model_is_stamped_v2_and_runs_on_a_v1_to_v2_resolver():
    stamped = save_model(stamp_versions(load_model(depthwise_model(dilation=2))))
    model = load_model(stamped)
    assert model.subgraphs[0].operators[0].version == 2
    assert model.metadata_value("min_runtime_version").rstrip(b"\0") == b"1.12.0"
    it = Interpreter(model_content=stamped, op_resolver=resolver_up_to(2))
    it.allocate_tensors()
    check_against_litert(stamped)


def test_dilated_model_fails_on_a_v1_only_resolver_before_anything_runs():
    stamped = save_model(stamp_versions(load_model(depthwise_model(dilation=2))))
    with pytest.raises(OpResolutionError, match=TFLITE_WORDING):
        Interpreter(model_content=stamped, op_resolver=resolver_up_to(1))


def _registered_ranges():
    rows = BuiltinOpResolver().registrations()
    by_op: dict[str, int] = {}
    for name, custom, _lo, hi in rows:
        if not custom:
            by_op[name] = max(by_op.get(name, 0), hi)
    return sorted(by_op.items())


@pytest.mark.parametrize(("op", "max_version"), _registered_ranges(), ids=lambda v: str(v))
def test_every_builtin_refuses_the_version_above_what_it_implements(op, max_version):
    from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator

    operator = make_operator(op, [0], [1], version=max_version + 1)
    tensors = (Tensor("x", "FLOAT32", (1,)), Tensor("y", "FLOAT32", (1,)))
    # IR, not a file: control-flow ops here name subgraphs this one-op model does not have.
    model = Model((Subgraph(tensors, (0,), (1,), (operator,)),), (b"",))
    with pytest.raises(OpResolutionError, match=rf"builtin opcode '{op}' version '{max_version + 1}'"):
        Interpreter(model=model)
