"""The interpreter's LiteRT-compatible API: detail dicts, set/get/resize semantics, errors, signatures."""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter as LiteRT
from support import FIXTURES, Spec, const, single_op_model

from accelsim.runtime import Interpreter, MutableOpResolver, Registration, load_model
from accelsim.runtime.errors import InterpreterStateError

FIXTURE_FILES = sorted(FIXTURES.glob("*.tflite"))
# LiteRT cannot even construct a model whose custom op it lacks, so ops details are compared on the rest.
LITERT_CONSTRUCTIBLE = [f for f in FIXTURE_FILES if f.stem != "atan_custom"]


def _noop(context, node):
    raise AssertionError("API tests never invoke")


def placeholder_resolver(path) -> MutableOpResolver:
    """A kernel-less resolver holding every (op, version) of the model: the API does not depend on kernels."""
    resolver = MutableOpResolver()
    for sg in load_model(path).subgraphs:
        for op in sg.operators:
            if op.op == "CUSTOM":
                resolver.add_custom(op.custom_code, Registration(invoke=_noop), op.version, op.version)
            else:
                resolver.add_builtin(op.op, Registration(invoke=_noop), op.version, op.version)
    return resolver


def _same_details(ours: dict, ref: dict) -> None:
    assert ours.keys() == ref.keys()
    for key in ("name", "index", "dtype", "quantization"):
        assert ours[key] == ref[key], key
    for key in ("shape", "shape_signature"):
        np.testing.assert_array_equal(ours[key], ref[key])
        assert ours[key].dtype == ref[key].dtype
    oq, rq = ours["quantization_parameters"], ref["quantization_parameters"]
    assert oq.keys() == rq.keys()
    np.testing.assert_array_equal(oq["scales"], rq["scales"])
    np.testing.assert_array_equal(oq["zero_points"], rq["zero_points"])
    assert oq["scales"].dtype == rq["scales"].dtype and oq["zero_points"].dtype == rq["zero_points"].dtype
    assert oq["quantized_dimension"] == rq["quantized_dimension"]
    assert ours["sparsity_parameters"].keys() == ref["sparsity_parameters"].keys()


@pytest.mark.slow
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_input_output_and_tensor_details_match_litert(path):
    ours = Interpreter(model_path=path, op_resolver=placeholder_resolver(path))
    ref = LiteRT(model_path=str(path))
    for o, r in zip(ours.get_input_details(), ref.get_input_details(), strict=True):
        _same_details(o, r)
    for o, r in zip(ours.get_output_details(), ref.get_output_details(), strict=True):
        _same_details(o, r)
    ref_tensors = {d["index"]: d for d in ref.get_tensor_details()}
    our_tensors = {d["index"]: d for d in ours.get_tensor_details()}
    assert set(ref_tensors) <= set(our_tensors)
    for idx, r in ref_tensors.items():
        _same_details(our_tensors[idx], r)
    assert ours.get_signature_list() == ref.get_signature_list()


@pytest.mark.slow
@pytest.mark.parametrize("path", LITERT_CONSTRUCTIBLE, ids=lambda p: p.stem)
def test_ops_details_match_litert_before_delegation(path):
    from ai_edge_litert.interpreter import OpResolverType

    ours = Interpreter(model_path=path, op_resolver=placeholder_resolver(path))._get_ops_details()
    ref = LiteRT(model_path=str(path),
                 experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)._get_ops_details()
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert (o["index"], o["op_name"]) == (r["index"], r["op_name"])
        np.testing.assert_array_equal(o["inputs"], r["inputs"])
        np.testing.assert_array_equal(o["outputs"], r["outputs"])
        assert o["operand_types"] == r["operand_types"] and o["result_types"] == r["result_types"]


@pytest.fixture
def reshape_model():
    return single_op_model("RESHAPE", [Spec((2, 3), name="x", shape_signature=(-1, 3)),
                                       const(np.array([-1, 2], np.int32))], [Spec((3, 2), name="y")])


def _both(model):
    ours, ref = Interpreter(model_content=model), LiteRT(model_content=model)
    return ours, ref


def _same_error(call, ours, ref, exc_type):
    with pytest.raises(exc_type) as ref_err:
        call(ref)
    with pytest.raises(exc_type) as our_err:
        call(ours)
    return str(our_err.value), str(ref_err.value)


def test_set_tensor_before_allocate_is_refused_like_litert(reshape_model):
    ours, ref = _both(reshape_model)
    msg, ref_msg = _same_error(lambda it: it.set_tensor(0, np.zeros((2, 3), np.float32)), ours, ref, ValueError)
    assert msg == ref_msg


@pytest.mark.parametrize("value", [
    np.zeros((2, 3)),  # float64
    np.zeros((2, 4), np.float32),  # wrong dimension
    np.zeros((3,), np.float32),  # wrong rank
    [[1, 2, 3], [4, 5, 6]],  # a list becomes int64
], ids=["dtype", "dim", "rank", "list"])
def test_set_tensor_errors_have_litert_wording(reshape_model, value):
    ours, ref = _both(reshape_model)
    ours.allocate_tensors()
    ref.allocate_tensors()
    msg, ref_msg = _same_error(lambda it: it.set_tensor(0, value), ours, ref, ValueError)
    assert msg == ref_msg


def test_set_tensor_accepts_non_contiguous_arrays_and_copies(reshape_model):
    it = Interpreter(model_content=reshape_model)
    it.allocate_tensors()
    x = np.arange(6, dtype=np.float32).reshape(3, 2).T
    it.set_tensor(0, x)
    x[0, 0] = 100
    it.invoke()
    np.testing.assert_array_equal(it.get_tensor(it.get_output_details()[0]["index"]),
                                  np.array([[0, 2], [4, 1], [3, 5]], np.float32))


def test_get_tensor_bad_index_has_litert_wording(reshape_model):
    ours, ref = _both(reshape_model)
    for bad in (99, -1):
        msg, ref_msg = _same_error(lambda it, bad=bad: it.get_tensor(bad), ours, ref, ValueError)
        assert msg == ref_msg


def test_invoke_before_allocate_and_after_resize(reshape_model):
    it = Interpreter(model_content=reshape_model)
    with pytest.raises(RuntimeError, match="Invoke called on model that is not ready"):
        it.invoke()
    it.allocate_tensors()
    it.resize_tensor_input(0, [4, 3])
    with pytest.raises(InterpreterStateError, match="not ready"):
        it.invoke()
    it.allocate_tensors()
    assert tuple(it.get_output_details()[0]["shape"]) == (6, 2)
    it.set_tensor(0, np.ones((4, 3), np.float32))
    it.invoke()
    assert it.get_tensor(it.get_output_details()[0]["index"]).shape == (6, 2)


def test_resize_errors(reshape_model):
    it = Interpreter(model_content=reshape_model)
    with pytest.raises(ValueError, match="is not an input"):
        it.resize_tensor_input(2, [1, 6])
    with pytest.raises(ValueError, match="negative dimension"):
        it.resize_tensor_input(0, [-1, 3])
    with pytest.raises(ValueError, match="only allows mutating unknown dimensions"):
        it.resize_tensor_input(0, [2, 4], strict=True)
    it.resize_tensor_input(0, [5, 3], strict=True)


def test_intermediates_are_freed_unless_preserved():
    # x -> RESHAPE -> t -> RESHAPE -> y: t is freed after its last reader unless preserve-all is on.
    from accelsim.runtime.ir import Model, Subgraph, Tensor, make_operator
    from accelsim.runtime.read import load_model
    from accelsim.runtime.write import save_model

    tensors = (Tensor("x", "FLOAT32", (2, 3)), Tensor("s1", "INT32", (1,), buffer=1),
               Tensor("t", "FLOAT32", (6,)), Tensor("s2", "INT32", (2,), buffer=2), Tensor("y", "FLOAT32", (3, 2)))
    ops = (make_operator("RESHAPE", [0, 1], [2]), make_operator("RESHAPE", [2, 3], [4]))
    model = Model((Subgraph(tensors, (0,), (4,), ops),),
                  (b"", np.array([6], np.int32).tobytes(), np.array([3, 2], np.int32).tobytes()))
    raw = save_model(model)
    assert load_model(raw) == model
    for preserve in (False, True):
        it = Interpreter(model_content=raw, experimental_preserve_all_tensors=preserve)
        it.allocate_tensors()
        it.set_tensor(0, np.arange(6, dtype=np.float32).reshape(2, 3))
        it.invoke()
        np.testing.assert_array_equal(it.get_tensor(4), np.arange(6, dtype=np.float32).reshape(3, 2))
        if preserve:
            np.testing.assert_array_equal(it.get_tensor(2), np.arange(6, dtype=np.float32))
        else:
            with pytest.raises(ValueError, match="experimental_preserve_all_tensors"):
                it.get_tensor(2)


def test_signature_runner_matches_litert():
    path = FIXTURES / "mobilenet_v2_035_96_float.tflite"
    ours = Interpreter(model_path=path, op_resolver=placeholder_resolver(path))
    ref = LiteRT(model_path=str(path))
    assert ours.get_signature_list() == ref.get_signature_list()
    key = next(iter(ref.get_signature_list()))
    runner = ours.get_signature_runner(key)
    (name, detail), = runner.get_input_details().items()
    assert name == next(iter(ref.get_signature_runner(key).get_input_details()))
    with pytest.raises(ValueError, match="missing"):
        runner()
    with pytest.raises(ValueError, match="Invalid signature_key"):
        ours.get_signature_runner("nope")


def test_constructor_arguments_are_checked(reshape_model):
    with pytest.raises(ValueError, match="exactly one"):
        Interpreter()
    with pytest.raises(ValueError, match="exactly one"):
        Interpreter(model_path="a", model_content=reshape_model)
    with pytest.raises(ValueError, match="num_threads"):
        Interpreter(model_content=reshape_model, num_threads=0)
