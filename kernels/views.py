"""Views of arrays that own nothing: numba's reference counts kept out of the hot loops.

numba counts the references to an array's buffer with atomic operations, and around a call it did
not inline, or a branch it cannot prove balanced, it keeps the count of every view a loop takes:
the action and reward rows a batch loop hands to the rules, the observation tuple handed to an
agent, the tree's arrays handed to each step of a search. Those counts cost a third of a random
self-play ply and more than a search's selection arithmetic. A borrowed view has no owner (a null
meminfo), so its counts are tests of a null pointer.
"""

from numba.core import cgutils, ir_utils, types
from numba.extending import intrinsic


def _strip(context, builder, typ, value):
    if isinstance(typ, types.Array):
        ary = context.make_array(typ)(context, builder, value=value)
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()
    if isinstance(typ, types.BaseTuple):
        items = [
            _strip(context, builder, t, builder.extract_value(value, k)) for k, t in enumerate(typ)
        ]
        return context.make_tuple(builder, typ, items)
    context.nrt.incref(builder, typ, value)  # returned as a new reference, as the arrays are
    return value


@intrinsic
def borrowed(typingctx, value):
    """``value`` (an array, or a tuple of arrays, tuples and other values) as views of the same
    memory that own none of it.

    Only for arrays the caller holds for the whole call (a driver's arguments). In numba's
    parallel loops, borrow each array by itself (``a = borrowed(a)``) and only arrays the loop
    reads or writes inside a call it makes: the loops decide which writes in their body are dead
    from an alias analysis that depends on the order of the body's blocks; borrowing shifts that
    order, and writes inlined into the loop body (an inlined rules step, say) then get dropped.
    The analysis sees through this call (``_borrowed_aliases``), not through unpacking a tuple.
    """

    def codegen(context, builder, signature, args):
        return _strip(context, builder, signature.args[0], args[0])

    return value(value), codegen


def _borrowed_aliases(lhs, args, alias_map, arg_aliases):
    """A borrowed array is its argument: without this, a parallel loop takes it for a fresh
    array nobody reads and drops the writes into it as dead code."""
    for arg in args:
        ir_utils._add_alias(lhs, arg.name, alias_map, arg_aliases)


ir_utils.alias_func_extensions[("borrowed", __name__)] = _borrowed_aliases


@intrinsic
def pointer(typingctx, address):
    """An address (an int) as a pointer, for ``nb.carray``: a view of memory the caller holds,
    counted by nothing."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))

    return types.voidptr(types.int64), codegen
