"""The MILO deterministic tree (axis-aligned splits, linear leaves): its objective E and routing
(``objective``), the compiled leaf fits and split scans (``kernels``), the local search
(``local_search``), the lower bounds that certify it (``certificate``) and the mixed-integer
model (``model``, built with Pyomo and solved by :mod:`srtopt.solvers.milp`).  The estimator is
:class:`srtopt.MILOTreeRegressor`."""
