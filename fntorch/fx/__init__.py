"""fntorch.fx: the language. dtypes, abstract values, primitives, traces and graphs."""

from . import dtypes
from .core import (
    ConcretizationError,
    EvalTrace,
    Primitive,
    ShapedArray,
    Tensor,
    Trace,
    Tracer,
    UnexpectedTracerError,
    abstract_eval_rules,
    bind,
    current_trace,
    get_aval,
)
from .graph import Eqn, Graph, GraphTrace, Literal, Var, eval_graph, pp_graph
from .serialize import deserialize
