"""Control flow: WHILE, IF and CALL_ONCE, which run other subgraphs of the model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from runtime.errors import KernelError
from runtime.kernels.common import check
from runtime.resolver import Registration


def _subgraph(ctx, index: int, role: str):
    """The subgraph a control-flow node names, checked to exist and not to be the node's own."""
    count = ctx.interpreter.num_subgraphs()
    check(0 <= index < count,
          f"{role} subgraph index {index} out of range: the model has {count} subgraphs")
    check(index != ctx.subgraph_index, f"{role} subgraph {index} is the subgraph the node is in")
    return ctx.interpreter.subgraph(index)


def _check_arity(graph, role: str, inputs: int, outputs: int) -> None:
    check(len(graph.inputs) == inputs and len(graph.outputs) == outputs,
          f"{role} subgraph {graph.index} takes {len(graph.inputs)} inputs and gives {len(graph.outputs)} "
          f"outputs; the node needs {inputs} and {outputs}")


def _resize_inputs(graph, role: str, sources: Sequence) -> bool:
    """Give the graph's inputs the shapes of `sources` (CopyTensorsShapeAndType); True if one changed.

    Types cannot change here, so a type mismatch is an error rather than a silent retype.
    """
    changed = False
    for i, (ti, src) in enumerate(zip(graph.inputs, sources)):
        t = graph.tensors[ti]
        if t.dtype != src.dtype:  # runs every iteration: the message is only built on failure
            raise KernelError(f"{role} subgraph {graph.index} input {i} is {t.type} but is given "
                              f"{np.dtype(src.dtype).name}")
        if t.shape != tuple(src.shape):
            graph.context.resize_tensor(t, src.shape)
            changed = True
    return changed


def _run(graph, role: str, values: Sequence[np.ndarray], resize: bool = True) -> list[np.ndarray]:
    """Invoke `graph` on `values` and return its outputs.

    With `resize`, an input whose shape changed is resized and the graph re-prepared (while.cc
    Eval_dynamic); without, the graph keeps its prepared shapes and takes the values' bytes
    (CopyTensorsData), which only need the same element count.
    """
    if (resize and _resize_inputs(graph, role, values)) or not graph.prepared:
        graph.prepare()
    for i, (ti, v) in enumerate(zip(graph.inputs, values)):
        t = graph.tensors[ti]
        t.data = v if v.shape == t.shape else _same_size_reshape(v, t, f"{role} subgraph {graph.index} input {i}")
    graph.invoke()
    return [graph.tensors[ti].data for ti in graph.outputs]


def _same_size_reshape(value: np.ndarray, tensor, what: str) -> np.ndarray:
    """CopyTensorsData into a tensor of fixed shape: the byte counts must agree."""
    check(value.size == int(np.prod(tensor.shape, dtype=np.int64)),
          f"{what} has shape {list(tensor.shape)} but is given {list(value.shape)}")
    return value.reshape(tensor.shape)


def _has_dynamic_tensors(graph) -> bool:
    return any(t.dynamic for t in graph.tensors)


def _check_cond_output(graph, tensor) -> None:
    """while.cc CheckCondOutput: a BOOL scalar or a BOOL of shape [1]."""
    if tensor.type != "BOOL" or tensor.shape not in ((), (1,)):
        raise KernelError(f"cond subgraph {graph.index} output must be a BOOL scalar or [1], got {tensor.type} "
                          f"{list(tensor.shape)}")


def _set_outputs_shape(ctx, node, dynamic: bool, shapes: Sequence[tuple[int, ...]]) -> None:
    for i, shape in enumerate(shapes):
        out = ctx.output(node, i)
        if dynamic:
            ctx.set_dynamic(out)
        else:
            ctx.resize_tensor(out, shape)


# -- WHILE ----------------------------------------------------------------------------------------


def _while_graphs(ctx, node):
    opts = node.options
    check(opts.cond_subgraph_index != opts.body_subgraph_index,
          f"WHILE cond and body are the same subgraph {opts.cond_subgraph_index}")
    return _subgraph(ctx, opts.cond_subgraph_index, "cond"), _subgraph(ctx, opts.body_subgraph_index, "body")


def _while_prepare(ctx, node) -> None:
    n = len(node.inputs)
    check(len(node.outputs) == n, f"WHILE has {n} inputs but {len(node.outputs)} outputs")
    cond, body = _while_graphs(ctx, node)
    _check_arity(cond, "cond", n, 1)
    _check_arity(body, "body", n, n)
    inputs = [ctx.input(node, i) for i in range(n)]
    _resize_inputs(cond, "cond", inputs)
    cond.prepare()
    flag = cond.tensors[cond.outputs[0]]
    if not flag.dynamic:
        _check_cond_output(cond, flag)
    _resize_inputs(body, "body", inputs)
    body.prepare()
    body_outputs = [body.tensors[ti] for ti in body.outputs]
    for i, (t_in, t_out) in enumerate(zip(inputs, body_outputs)):
        check(t_in.dtype == t_out.dtype,
              f"body subgraph {body.index} output {i} is {t_out.type} but loop variable {i} is {t_in.type}")
        check(ctx.output(node, i).dtype == t_in.dtype,
              f"WHILE output {i} is {ctx.output(node, i).type} but loop variable {i} is {t_in.type}")
    # while.cc: a body with dynamic tensors, or whose outputs differ in shape from its inputs,
    # makes every WHILE output dynamic (the loop variables may grow each iteration).
    dynamic = _has_dynamic_tensors(body) or any(t.dynamic for t in inputs) or any(
        _loop_shape_changes(t_in.shape, t_out.shape) for t_in, t_out in zip(inputs, body_outputs))
    node.user_data = dynamic
    _set_outputs_shape(ctx, node, dynamic, [t.shape for t in body_outputs])


def _loop_shape_changes(before: tuple[int, ...], after: tuple[int, ...]) -> bool:
    """Whether the body changes a loop variable's shape, as while.cc Prepare_impl decides it.

    A scalar against a shape whose first dimension is 1 counts as unchanged: LiteRT adds the
    first dimensions (0 for a scalar) and keeps the loop static when the sum is 1, then copies
    the bytes between the two shapes.
    """
    if before == after:
        return False
    firsts = (before[0] if before else 0) + (after[0] if after else 0)
    return firsts != 1


def _copy_into_aliased_outputs(current: list[np.ndarray], body_outputs: list[np.ndarray], body) -> list[np.ndarray]:
    """while.cc Eval_static's last copy: the WHILE outputs after one body run.

    The body's inputs share memory with the WHILE outputs, and the body outputs are copied into
    them one at a time; a body output that is one of the body's inputs is read from that shared
    memory, which an earlier copy of the same step may already have overwritten (so a body that
    swaps two loop variables ends with both holding one value, as in LiteRT).
    """
    values = list(current)
    position = {ti: j for j, ti in enumerate(body.inputs)}
    for k, ti in enumerate(body.outputs):
        j = position.get(ti)
        values[k] = body_outputs[k] if j is None else values[j]
    return values


def _while_invoke(ctx, node) -> None:
    cond, body = _while_graphs(ctx, node)
    dynamic = node.user_data
    # `values` are the WHILE outputs, which the body reads; the cond reads the body's last outputs.
    values = [ctx.input(node, i).data for i in range(len(node.inputs))]
    cond_values = values
    while True:
        (flag,) = _run(cond, "cond", cond_values, resize=dynamic)
        _check_cond_output(cond, cond.tensors[cond.outputs[0]])
        if not bool(flag.reshape(-1)[0]):
            break
        cond_values = _run(body, "body", values, resize=dynamic)
        values = cond_values if dynamic else _copy_into_aliased_outputs(values, cond_values, body)
    for i, v in enumerate(values):
        out = ctx.output(node, i)
        out.data = v if dynamic or v.shape == out.shape else _same_size_reshape(v, out, f"WHILE output {i}")


# -- IF -------------------------------------------------------------------------------------------


def _if_branches(ctx, node):
    opts = node.options
    return _subgraph(ctx, opts.then_subgraph_index, "then"), _subgraph(ctx, opts.else_subgraph_index, "else")


def _if_prepare(ctx, node) -> None:
    check(len(node.inputs) > 0, "IF needs a condition input")
    cond = ctx.input(node, 0)
    size = int(np.prod(cond.shape, dtype=np.int64))
    check(cond.type == "BOOL" and size == 1,
          f"IF condition must be a single BOOL, got {cond.type} {list(cond.shape)}")
    inputs = [ctx.input(node, i) for i in range(1, len(node.inputs))]
    then_graph, else_graph = _if_branches(ctx, node)
    dynamic = any(t.dynamic for t in inputs)
    for graph, role in ((then_graph, "then"), (else_graph, "else")):
        _check_arity(graph, role, len(inputs), len(node.outputs))
        _resize_inputs(graph, role, inputs)
        graph.prepare()
        dynamic |= _has_dynamic_tensors(graph)
        for i, ti in enumerate(graph.outputs):
            out, branch_out = ctx.output(node, i), graph.tensors[ti]
            check(out.dtype == branch_out.dtype,
                  f"{role} subgraph {graph.index} output {i} is {branch_out.type} but IF output {i} is {out.type}")
    then_shapes = [then_graph.tensors[ti].shape for ti in then_graph.outputs]
    else_shapes = [else_graph.tensors[ti].shape for ti in else_graph.outputs]
    # if.cc: branches with different static output shapes make the outputs dynamic.
    dynamic |= then_shapes != else_shapes
    _set_outputs_shape(ctx, node, dynamic, then_shapes)


def _if_invoke(ctx, node) -> None:
    then_graph, else_graph = _if_branches(ctx, node)
    taken = then_graph if bool(ctx.input(node, 0).data.reshape(-1)[0]) else else_graph
    role = "then" if taken is then_graph else "else"
    values = [ctx.input(node, i).data for i in range(1, len(node.inputs))]
    for i, v in enumerate(_run(taken, role, values)):
        ctx.output(node, i).data = v


# -- CALL_ONCE ------------------------------------------------------------------------------------


def _call_once_prepare(ctx, node) -> None:
    index = node.options.init_subgraph_index
    check(index != ctx.subgraph_index, f"CALL_ONCE cannot call its own subgraph {index}")
    # call_once.cc: once the init subgraph has run, nothing more is checked.
    if index in ctx.interpreter.initialized_subgraphs:
        return
    check(not node.inputs and not node.outputs,
          f"CALL_ONCE takes no inputs or outputs, got {len(node.inputs)} and {len(node.outputs)}")
    init = _subgraph(ctx, index, "init")
    _check_arity(init, "init", 0, 0)


def _call_once_invoke(ctx, node) -> None:
    done = ctx.interpreter.initialized_subgraphs
    index = node.options.init_subgraph_index
    if index in done:
        return
    init = ctx.interpreter.subgraph(index)
    if not init.prepared:
        init.prepare()
    init.invoke()
    done.add(index)


def register(resolver) -> None:
    resolver.add_builtin("WHILE", Registration(_while_invoke, _while_prepare), 1, 1)
    resolver.add_builtin("IF", Registration(_if_invoke, _if_prepare), 1, 1)
    resolver.add_builtin("CALL_ONCE", Registration(_call_once_invoke, _call_once_prepare), 1, 1)
