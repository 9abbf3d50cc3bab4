"""The math namespaces a term's formula is written over, and the replay of CasADi expression graphs.

A formula written once over a namespace (:data:`NUMPY`, :data:`CASADI`, :func:`pyomo_ops`) gives the
numpy, CasADi and Pyomo renderings of a term; :func:`replay` evaluates a CasADi graph (a user's loss)
with numpy or Pyomo operations."""

from __future__ import annotations

from types import SimpleNamespace

import casadi as ca
import numpy as np

NUMPY = SimpleNamespace(abs=np.abs, sqrt=np.sqrt, log=np.log, exp=np.exp, maximum=np.maximum, name="numpy")
CASADI = SimpleNamespace(abs=ca.fabs, sqrt=ca.sqrt, log=ca.log, exp=ca.exp, maximum=ca.fmax, name="casadi")


def pyomo_ops() -> SimpleNamespace:
    """The Pyomo namespace (Pyomo is imported on first use: it takes a second)."""
    import pyomo.environ as pyo

    return SimpleNamespace(abs=abs, sqrt=pyo.sqrt, log=pyo.log, exp=pyo.exp, name="pyomo")



def _operations(names: dict, module) -> dict:
    """{CasADi operation code: function of ``module``} for the names ``module`` has."""
    return {getattr(ca, f"OP_{op}"): getattr(module, name) if isinstance(name, str) else name
            for op, name in names.items() if hasattr(ca, f"OP_{op}") and (not isinstance(name, str)
                                                                          or hasattr(module, name))}


_ARITHMETIC = {"ADD": lambda a, b: a + b, "SUB": lambda a, b: a - b, "MUL": lambda a, b: a * b,
               "DIV": lambda a, b: a / b, "POW": lambda a, b: a**b, "CONSTPOW": lambda a, b: a**b,
               "NEG": lambda a: -a, "SQ": lambda a: a * a, "TWICE": lambda a: 2 * a, "INV": lambda a: 1.0 / a}
_FUNCTIONS = {op: op.lower() for op in ("SQRT", "EXP", "LOG", "SIN", "COS", "TAN", "SINH", "COSH", "TANH")}
_INVERSE = {"ASIN": "arcsin", "ACOS": "arccos", "ATAN": "arctan", "ASINH": "arcsinh", "ACOSH": "arccosh",
            "ATANH": "arctanh"}

#: CasADi operations on numpy arrays, elementwise
NUMPY_OPERATIONS = {
    **_operations(_ARITHMETIC, np), **_operations(_FUNCTIONS, np), **_operations(_INVERSE, np),
    **_operations({"FABS": "abs", "SIGN": "sign", "FMIN": "fmin", "FMAX": "fmax", "LOG1P": "log1p",
                   "EXPM1": "expm1", "HYPOT": "hypot", "ATAN2": "arctan2", "COPYSIGN": "copysign",
                   "FLOOR": "floor", "CEIL": "ceil", "LT": "less", "LE": "less_equal", "EQ": "equal",
                   "NE": "not_equal", "NOT": "logical_not", "AND": "logical_and", "OR": "logical_or",
                   "IF_ELSE_ZERO": lambda c, a: np.where(c, a, 0.0)}, np),
}


def pyomo_operations() -> dict:
    """CasADi operations on Pyomo expressions (Pyomo is imported on first use)."""
    import pyomo.environ as pyo

    return {**_operations(_ARITHMETIC, pyo), **_operations(_FUNCTIONS, pyo),
            **_operations({op: op.lower() for op in _INVERSE}, pyo),
            **_operations({"FABS": abs, "LOG1P": lambda a: pyo.log(1 + a), "EXPM1": lambda a: pyo.exp(a) - 1}, pyo)}


def replay(function: ca.Function, x, operations: dict):
    """The (first) output of a scalar SX ``function`` of scalar inputs at ``x`` (the input, or a tuple
    of one per input): CasADi's instruction list replayed with ``operations`` ({operation code:
    function}), e.g. :data:`NUMPY_OPERATIONS` (x arrays: elementwise, broadcast) or
    :func:`pyomo_operations` (x Pyomo expressions).  An operation missing from ``operations`` raises
    NotImplementedError."""
    inputs = x if isinstance(x, tuple) else (x,)
    work = {}
    for k in range(function.n_instructions()):
        op, out, args = function.instruction_id(k), function.instruction_output(k), function.instruction_input(k)
        if op == ca.OP_INPUT:
            work[out[0]] = inputs[args[0]]
        elif op == ca.OP_OUTPUT:
            if out[0] == 0:
                return work[args[0]]
        elif op == ca.OP_CONST:
            work[out[0]] = float(function.instruction_constant(k))
        elif op in operations:  # the arguments of a unary or binary operation
            work[out[0]] = operations[op](*(work[a] for a in args))
        else:
            raise NotImplementedError(f"CasADi operation {op} of the user formula has no counterpart here")
    if function.sparsity_out(0).nnz() == 0:  # a structural zero (e.g. the second derivative of a linear formula)
        return 0.0
    raise ValueError("the CasADi function has no first output")


class CasadiFormula:
    """A user's formula f(a, b, ...) of scalars, written once as a callable of CasADi symbols (e.g.
    ``lambda r: ca.log(ca.cosh(r))``), in every backend: CasADi's AD gives its first and second
    derivatives in the first argument as expression graphs; the numpy values of the three
    (elementwise, the hot path) and the Pyomo expression replay those graphs (:func:`replay`).
    An operation numpy has no counterpart for in :data:`NUMPY_OPERATIONS` is evaluated by CasADi.

    Parameters
    ----------
    function : callable
        Maps ``n_inputs`` scalar CasADi SX symbols to a CasADi expression; called once, here.
    n_inputs : int, default=1
        The number of arguments.
    """

    def __init__(self, function, n_inputs: int = 1):
        self.n_inputs = n_inputs
        symbols = [ca.SX.sym(f"a{k}") for k in range(n_inputs)]
        e = function(*symbols)
        first = symbols[0]
        self._graphs = [ca.Function(f"user_formula_{order}", symbols, [expression])
                        for order, expression in enumerate((e, ca.gradient(e, first), ca.hessian(e, first)[0]))]

    def numpy(self, order: int, *args) -> np.ndarray:
        """The formula (``order`` 0) or its first or second derivative in the first argument, elementwise
        over numpy arrays (broadcast together)."""
        args = np.broadcast_arrays(*(np.asarray(a, float) for a in args))
        try:
            out = replay(self._graphs[order], tuple(args), NUMPY_OPERATIONS)
        except NotImplementedError:
            rows = [ca.DM(a.reshape(1, -1)) for a in args]
            out = np.asarray(self._graphs[order](*rows)).reshape(args[0].shape)
        return np.broadcast_to(np.asarray(out, float), args[0].shape).copy()

    def casadi(self, *args):
        """The formula, elementwise, over CasADi matrices of one shape."""
        rows, cols = args[0].shape
        flat = [ca.reshape(a, 1, rows * cols) for a in args]
        return ca.reshape(self._graphs[0](*flat), rows, cols)

    def pyomo(self, *args):
        """The formula over Pyomo expressions (one point)."""
        return replay(self._graphs[0], tuple(args), pyomo_operations())

    def expression(self, ops, *args):
        """The formula over the namespace ``ops`` (:data:`NUMPY`, :data:`CASADI` or :func:`pyomo_ops`)."""
        if ops is NUMPY:
            return self.numpy(0, *args)
        return self.casadi(*args) if ops is CASADI else self.pyomo(*args)
