"""Resource variables: VAR_HANDLE, READ_VARIABLE and ASSIGN_VARIABLE.

The variables live in the interpreter (shared by all subgraphs, kept across invokes),
keyed by resource id; VAR_HANDLE maps (container, shared_name) to an id. These ops have no
array reference function (their result is that state, which outlives the node): the invoke is the
reference.
"""

from __future__ import annotations

import numpy as np

from accelsim.runtime import work
from accelsim.runtime.kernels.common import check
from accelsim.runtime.registration import Registration


def _var_handle_init(ctx, options) -> int:
    """var_handle.cc Init: the id of (container, shared_name), new ids counting up from 0."""
    key = (options.container or "", options.shared_name or "")
    ids = ctx.interpreter.resource_ids
    return ids.setdefault(key, len(ids))


def _var_handle_prepare(ctx, node) -> None:
    check(len(node.outputs) == 1, f"VAR_HANDLE has one output, got {len(node.outputs)}")
    out = ctx.output(node, 0)
    check(out.type in ("RESOURCE", "INT32"), f"VAR_HANDLE output must be RESOURCE or INT32, got {out.type}")
    # var_handle.cc Prepare: the handle is a scalar whatever shape the model declares.
    ctx.resize_tensor(out, ())


def _var_handle_invoke(ctx, node) -> None:
    out = ctx.output(node, 0)
    out.data = np.full(out.shape, node.user_data, dtype=out.dtype)


def _check_resource_input(ctx, node, op: str) -> None:
    handle = ctx.input(node, 0)
    check(handle is not None, f"{op} needs a resource input")
    check(handle.type in ("RESOURCE", "INT32"), f"{op} input 0 must be RESOURCE or INT32, got {handle.type}")
    size = int(np.prod(handle.shape, dtype=np.int64))
    check(size == 1, f"{op} input 0 must hold one resource id, got shape {list(handle.shape)}")


def _resource_id(ctx, node) -> int:
    return int(ctx.input(node, 0).data.reshape(-1)[0])


def _read_prepare(ctx, node) -> None:
    check(len(node.inputs) == 1 and len(node.outputs) == 1, "READ_VARIABLE takes one input and one output")
    _check_resource_input(ctx, node, "READ_VARIABLE")
    out = ctx.output(node, 0)
    # read_variable.cc: only a rank-0 output (a scalar or an unknown shape) takes the variable's
    # shape; any other output keeps its declared shape.
    if not out.shape:
        ctx.set_dynamic(out)


def _read_invoke(ctx, node) -> None:
    rid = _resource_id(ctx, node)
    value = ctx.interpreter.resources.get(rid)
    check(value is not None, f"READ_VARIABLE: resource {rid} was read before any ASSIGN_VARIABLE gave it a value")
    out = ctx.output(node, 0)
    check(value.dtype == out.dtype,
          f"READ_VARIABLE: resource {rid} holds {value.dtype.name} but the output is {out.type}")
    if out.dynamic:
        # A copy, as read_variable.cc memcpy's: the output must not alias the variable.
        out.data = value.copy()
        return
    # The output's own byte count is copied from the variable's start (LiteRT reads past the end of
    # a smaller variable; that is an error here).
    size = int(np.prod(out.shape, dtype=np.int64))
    check(value.size >= size, f"READ_VARIABLE: resource {rid} holds {value.size} elements but the output "
                              f"{list(out.shape)} needs {size}")
    out.data = value.reshape(-1)[:size].reshape(out.shape).copy()


def _assign_prepare(ctx, node) -> None:
    check(len(node.inputs) == 2 and not node.outputs, "ASSIGN_VARIABLE takes two inputs and no outputs")
    _check_resource_input(ctx, node, "ASSIGN_VARIABLE")


def _assign_invoke(ctx, node) -> None:
    # resource_variable.cc AssignFrom: the variable takes the value's type, shape and data.
    ctx.interpreter.resources[_resource_id(ctx, node)] = np.array(ctx.input(node, 1).data, copy=True)


def register(resolver) -> None:
    # The variable ops have no fast path and no array function (they read and write the interpreter's
    # resource variables): each invoke is the plain rule and its own reference.
    resolver.add_builtin("VAR_HANDLE", Registration(_var_handle_invoke, _var_handle_prepare, _var_handle_init,
                                                           reference=_var_handle_invoke, work=work.move), 1, 1)
    resolver.add_builtin("READ_VARIABLE", Registration(_read_invoke, _read_prepare, reference=_read_invoke,
                                                       work=work.move), 1, 1)
    resolver.add_builtin("ASSIGN_VARIABLE", Registration(_assign_invoke, _assign_prepare, reference=_assign_invoke,
                                                         work=work.move),
                         1, 1)
