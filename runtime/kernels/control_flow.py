"""Control flow: WHILE, IF and CALL_ONCE, which run other subgraphs of the model.

They have no array reference function: what they compute is which subgraphs the interpreter
invokes and how values pass between them, so their reference is their invoke (under
`Interpreter(reference=True)` the subgraphs' own nodes run their references).

Their work is the work of the subgraphs they run, times how often they run them: counted by
the last invoke when there was one, else folded from the model (a WHILE counter with a constant
start and step against a constant or shape-derived bound; an IF condition fixed by constants),
else left unknown for `accelsim.runtime.work.resolve_trips` to take from an override or a default.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from accelsim.runtime.errors import KernelError
from accelsim.runtime.kernels.common import check, tensor_values
from accelsim.runtime.registration import Registration
from accelsim.runtime.work import Folded, NodeWork, fold, measured, subgraph_work, where


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
        if t.dtype != src.dtype:
            raise KernelError(f"{role} subgraph {graph.index} input {i} is {t.type} but is given "
                              f"{np.dtype(src.dtype).name}")
        if t.shape != tuple(src.shape):
            graph.context.resize_tensor(t, src.shape)
            changed = True
    return changed


def _hand_over(graph, role: str, inputs: Sequence, values: Sequence[np.ndarray]) -> None:
    """CopyTensorsData into inputs of fixed shape: each takes a value of the same element count.

    The arrays are handed over, not copied: no kernel writes into its inputs, and every output is a
    fresh array, so a value shared by two tensors is never changed through one of them. Types were
    matched at prepare.
    """
    for i, (t, v) in enumerate(zip(inputs, values)):
        if v.shape != t.shape:
            v = _same_size_reshape(v, t, f"{role} subgraph {graph.index} input {i}")
        t.unchecked_data = v


def _hand_over_resizing(graph, inputs: Sequence, values: Sequence[np.ndarray]) -> None:
    """DeepCopyTensorsShapeTypeData: inputs take the values' shapes, and the graph is prepared again
    only when one changed (ResizeInputTensor of the same shape is a no-op; while.cc Eval_dynamic)."""
    changed = False
    for t, v in zip(inputs, values):
        if t.shape != v.shape:
            graph.context.resize_tensor(t, v.shape)
            changed = True
        t.unchecked_data = v
    if changed or not graph.prepared:
        graph.prepare()  # a prepare resizes no graph input, so the values handed over stay


def _run(graph, role: str, values: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Invoke `graph` on `values`, its inputs taking their shapes, and return its outputs (IF)."""
    if _resize_inputs(graph, role, values) or not graph.prepared:
        graph.prepare()
    _hand_over(graph, role, [graph.tensors[ti] for ti in graph.inputs], values)
    graph.invoke_nested()
    return [graph.tensors[ti].data for ti in graph.outputs]


def _same_size_reshape(value: np.ndarray, tensor, what: str) -> np.ndarray:
    """CopyTensorsData into a tensor of fixed shape: the byte counts must agree."""
    check(value.size == int(np.prod(tensor.shape, dtype=np.int64)),
          f"{what} has shape {list(tensor.shape)} but is given {list(value.shape)}")
    return value.reshape(tensor.shape)


def _has_dynamic_tensors(graph) -> bool:
    return any(t.dynamic for t in graph.tensors)


_FLAG_SHAPES = ((), (1,))


def _check_cond_output(graph, tensor) -> None:
    """while.cc CheckCondOutput: a BOOL scalar or a BOOL of shape [1]."""
    if tensor.type != "BOOL" or tensor.shape not in _FLAG_SHAPES:
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


class _WhilePlan:
    """What a WHILE invoke needs, fixed by its prepare: the subgraphs and every tensor it moves values between."""

    __slots__ = ("cond", "body", "inputs", "outputs", "cond_inputs", "body_inputs", "body_outputs", "flag",
                 "dynamic", "overwritten", "trips")

    def __init__(self, ctx, node, cond, body, dynamic: bool):
        n = len(node.inputs)
        self.cond, self.body, self.dynamic = cond, body, dynamic
        self.trips: int | None = None  # body runs in the last invoke (None: not invoked since prepare)
        self.inputs = [ctx.input(node, i) for i in range(n)]
        self.outputs = [ctx.output(node, i) for i in range(n)]
        self.cond_inputs = [cond.tensors[ti] for ti in cond.inputs]
        self.body_inputs = [body.tensors[ti] for ti in body.inputs]
        self.body_outputs = [body.tensors[ti] for ti in body.outputs]
        self.flag = cond.tensors[cond.outputs[0]]
        # Body output k that is body input j < k reads loop variable j after its copy (_as_loop_variables).
        position = {ti: j for j, ti in enumerate(body.inputs)}
        self.overwritten = tuple((k, position[ti]) for k, ti in enumerate(body.outputs)
                                 if position.get(ti, k) < k)


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
    node.user_data = _WhilePlan(ctx, node, cond, body, dynamic)
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


def _cond_holds(plan: _WhilePlan) -> bool:
    """Run the cond subgraph (its inputs already set) and read its flag, checked as CheckCondOutput."""
    cond = plan.cond
    if not cond.prepared:
        cond.prepare()
    cond.invoke_nested()
    flag = plan.flag
    if flag.type != "BOOL" or flag.shape not in _FLAG_SHAPES:
        _check_cond_output(cond, flag)
    return bool(flag.data)


def _as_loop_variables(plan: _WhilePlan, results: list[np.ndarray]) -> list[np.ndarray]:
    """The WHILE outputs after a body run, which the next body run reads.

    In LiteRT the body's inputs share memory with the WHILE outputs (Eval_static; Eval_dynamic's
    shallow step 4), and the body outputs are copied into those one at a time: a body output that is
    an earlier body input reads the value just copied over it (a body swapping two loop variables
    ends with both holding one value). The cond reads the body outputs before those copies.
    """
    if not plan.overwritten:
        return results
    values = list(results)
    for k, j in plan.overwritten:
        values[k] = values[j]
    return values


def _static_loop(plan: _WhilePlan, values: list[np.ndarray]) -> list[np.ndarray]:
    """while.cc Eval_static: shapes stay as prepared; values are handed over between the subgraphs."""
    cond, body = plan.cond, plan.body
    cond_inputs, body_inputs, body_outputs = plan.cond_inputs, plan.body_inputs, plan.body_outputs
    _hand_over(cond, "cond", cond_inputs, values)
    trips = 0
    while _cond_holds(plan):
        _hand_over(body, "body", body_inputs, values)
        if not body.prepared:
            body.prepare()
        body.invoke_nested()
        results = [t.data for t in body_outputs]
        _hand_over(cond, "cond", cond_inputs, results)
        values = _as_loop_variables(plan, results)
        trips += 1
    plan.trips = trips
    return values


def _dynamic_loop(plan: _WhilePlan, values: list[np.ndarray]) -> list[np.ndarray]:
    """while.cc Eval_dynamic: every copy carries the shape, re-preparing a subgraph whose inputs changed."""
    cond, body = plan.cond, plan.body
    cond_inputs, body_inputs, body_outputs = plan.cond_inputs, plan.body_inputs, plan.body_outputs
    _hand_over_resizing(cond, cond_inputs, values)
    trips = 0
    while _cond_holds(plan):
        _hand_over_resizing(body, body_inputs, values)
        body.invoke_nested()
        results = [t.data for t in body_outputs]
        _hand_over_resizing(cond, cond_inputs, results)
        values = _as_loop_variables(plan, results)
        trips += 1
    plan.trips = trips
    return values


def _while_invoke(ctx, node) -> None:
    plan: _WhilePlan = node.user_data
    values = [tensor_values(t) for t in plan.inputs]
    if plan.dynamic:
        for out, v in zip(plan.outputs, _dynamic_loop(plan, values)):
            out.data = v
        return
    for i, (out, v) in enumerate(zip(plan.outputs, _static_loop(plan, values))):
        out.data = v if v.shape == out.shape else _same_size_reshape(v, out, f"WHILE output {i}")


# The comparisons a cond subgraph bounds its counter with, and the same test with its sides swapped.
_SWAPPED = {"LESS": "GREATER", "LESS_EQUAL": "GREATER_EQUAL", "GREATER": "LESS", "GREATER_EQUAL": "LESS_EQUAL",
            "NOT_EQUAL": "NOT_EQUAL"}


def _scalar(value: np.ndarray) -> int | None:
    """The integer a single-element value holds, else None (loop counters are int32 scalars)."""
    if value.size != 1 or value.dtype.kind not in "iu":
        return None
    return int(value.reshape(-1)[0])


def _counter_trips(op: str, start: int, step: int, bound: int) -> int | None:
    """Body runs of a loop while `counter op bound`, the counter going start, start+step, ...; None if endless."""
    gap = bound - start
    if op == "NOT_EQUAL":
        return gap // step if step and gap % step == 0 and gap // step >= 0 else None
    if op in ("GREATER", "GREATER_EQUAL"):  # counting down is counting up on the negated values
        op, gap, step = ("LESS" if op == "GREATER" else "LESS_EQUAL"), -gap, -step
    if gap <= 0 if op == "LESS" else gap < 0:
        return 0
    if step <= 0:
        return None
    return -(-gap // step) if op == "LESS" else gap // step + 1


def _counter_step(body, index: int) -> int | None:
    """The constant a body adds to loop variable `index` each run (ADD or SUB of a constant), else None."""
    source, result = body.inputs[index], body.outputs[index]
    producer = next((body.nodes[ni] for ni in body.execution_plan if result in body.nodes[ni].outputs), None)
    if producer is None or producer.operator is None or producer.operator.op not in ("ADD", "SUB"):
        return None
    if producer.options is not None and int(producer.options.get("fused_activation_function", 0) or 0):
        return None
    a, b = producer.inputs[:2]
    other = b if a == source else a if b == source and producer.operator.op == "ADD" else None
    step = fold(body, other) if other is not None else None
    value = _scalar(step.value) if step is not None else None
    if value is None:
        return None
    return -value if producer.operator.op == "SUB" else value


def _bound_trips(cond, tensor: int, counters: dict, invariants: dict) -> tuple[int, bool] | None:
    """(trips, whether a shape fixed them) of the cond flag `tensor`, or None when the model does not fix it."""
    producer = next((cond.nodes[ni] for ni in cond.execution_plan if tensor in cond.nodes[ni].outputs), None)
    if producer is None or producer.operator is None:
        return None
    op = producer.operator.op
    if op == "LOGICAL_AND":
        sides = [_bound_trips(cond, t, counters, invariants) for t in producer.inputs]
        if any(side is None for side in sides):
            return None
        return min(t for t, _ in sides), any(shape for _, shape in sides)
    if op not in _SWAPPED:
        return None
    a, b = producer.inputs[:2]
    if a not in counters:
        a, b, op = b, a, _SWAPPED[op]
    bound = fold(cond, b, invariants) if a in counters else None
    value = _scalar(bound.value) if bound is not None else None
    if value is None:
        return None
    (start, start_from_shape), step = counters[a]
    trips = _counter_trips(op, start, step, value)
    return None if trips is None else (trips, start_from_shape or bound.from_shape)


def _folded_trips(ctx, node, cond, body) -> tuple[int | None, str]:
    """A WHILE's trip count from its model alone: (trips, "constant" | "shape"), or (None, "")."""
    parent = ctx.interpreter.subgraph(ctx.subgraph_index)
    counters: dict[int, tuple[tuple[int, bool], int]] = {}
    invariants: dict[int, Folded] = {}
    for k, t in enumerate(node.inputs):
        start = fold(parent, t) if t >= 0 else None
        if start is None:
            continue
        if body.outputs[k] == body.inputs[k]:
            invariants[cond.inputs[k]] = start
            continue
        step, first = _counter_step(body, k), _scalar(start.value)
        if step is not None and first is not None:
            counters[cond.inputs[k]] = ((first, start.from_shape), step)
    found = _bound_trips(cond, cond.outputs[0], counters, invariants)
    if found is None:
        return None, ""
    return found[0], "shape" if found[1] else "constant"


def _while_work(ctx, node) -> NodeWork:
    """The cond and body work of one iteration, times the trips the last invoke ran (else the folded count)."""
    cond, body = _while_graphs(ctx, node)
    counted = getattr(node.user_data, "trips", None)
    trips, source = (counted, "run") if counted is not None else _folded_trips(ctx, node, cond, body)
    cond_work = subgraph_work(ctx.interpreter, cond.index)
    return measured(ctx, node, "control", 0, body=cond_work + subgraph_work(ctx.interpreter, body.index),
                    once=cond_work, trips=trips, trips_from=source, where=where(ctx, node))


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
    node.user_data = None  # no branch has run since this prepare


def _if_work(ctx, node) -> NodeWork:
    """The branch the last invoke took; else the one a constant condition picks; else the costlier one."""
    then_graph, else_graph = _if_branches(ctx, node)
    branches = {g.index: subgraph_work(ctx.interpreter, g.index) for g in (then_graph, else_graph)}
    taken, source = node.user_data, "run"
    if taken is None:
        condition = fold(ctx.interpreter.subgraph(ctx.subgraph_index), node.inputs[0])
        if condition is not None:
            taken = then_graph.index if bool(condition.value.reshape(-1)[0]) else else_graph.index
            source = "shape" if condition.from_shape else "constant"
        else:
            # Stated in every report that shows trips: without a run, the worse case is assumed.
            taken = max(branches, key=lambda g: sum([w.total_ops for w in branches[g]]))
            source = "branch"
    return measured(ctx, node, "control", 0, body=branches[taken], trips=1, trips_from=source,
                    where=where(ctx, node))


def _if_invoke(ctx, node) -> None:
    then_graph, else_graph = _if_branches(ctx, node)
    taken = then_graph if bool(ctx.input(node, 0).data.reshape(-1)[0]) else else_graph
    node.user_data = taken.index  # for the work hook: the branch the last invoke ran
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


def _call_once_work(ctx, node) -> NodeWork:
    """The init subgraph's work, run once: by the first invoke, not by any after it."""
    index = node.options.init_subgraph_index
    ran = index in ctx.interpreter.initialized_subgraphs
    return measured(ctx, node, "control", 0, body=subgraph_work(ctx.interpreter, index), trips=0 if ran else 1,
                    trips_from="run" if ran else "constant", where=where(ctx, node))


def register(resolver) -> None:
    # The control-flow ops run their subgraphs (whose nodes run references under reference=True): each
    # invoke is the plain rule and its own reference; no function of arrays alone can state it.
    resolver.add_builtin("WHILE", Registration(_while_invoke, _while_prepare, reference=_while_invoke,
                                               work=_while_work),
                         1, 1)
    resolver.add_builtin("IF", Registration(_if_invoke, _if_prepare, reference=_if_invoke, work=_if_work), 1, 1)
    resolver.add_builtin("CALL_ONCE", Registration(_call_once_invoke, _call_once_prepare, reference=_call_once_invoke,
                                                   work=_call_once_work), 1, 1)
