"""Reading a fitted tree: node table, text, Graphviz DOT, an HTML page and the HBP decision path.

Works for :class:`~srtopt.SoftRegressionTree` and :class:`~srtopt.ORRTRegressor`
(both have oblique splits ``omega_`` and linear leaves ``beta_`` in the scaled
space) and, for the text export, the DOT source and the decision path, for
:class:`~srtopt.MILOTreeRegressor` (axis-aligned splits).  ORRT predicts with the
probability-weighted sum of all leaves; the routing shown for it is the HBP path
of the same splits, meaningful for display only.  A :class:`~srtopt.SoftClassificationTree`
gets every writer too: its leaves show their class distribution, their training rows by class
and, for logistic leaves, their class scores.

Every writer works on the tree's :class:`~srtopt.view.FittedTree` (``model.tree_view()``, or
:func:`srtopt.persistence.read_view` of a saved model), in its own module:

* :mod:`.nodes`: what the writers share (the nodes drawn, the splits in original units, a leaf
  score's formula, ranked terms);
* :mod:`.curves`: how a leaf with curves is read (at the median row, over the 1-99% range of each feature);
* :mod:`.leaf_readers`: what differs between value leaves and class leaves, one reader per family of
  the leaf model's link (:func:`~.leaf_readers.reader_of`), and :func:`original_units`;
* :mod:`.table`: :func:`summary` and :func:`decision_path`;
* :mod:`.text`: :func:`export_text` and :func:`export_constraints`;
* :mod:`.dot`: :func:`export_graphviz`, :func:`render_graphviz` and the boxes' lines;
* :mod:`.html_page`: :func:`export_html`.

Coordinates: :mod:`srtopt.export.nodes` (module docstring).
"""

from .dot import export_graphviz, render_graphviz
from .html_page import export_html
from .leaf_readers import original_units
from .nodes import RANKING, UNITS, reachable_nodes
from .table import decision_path, summary
from .text import export_constraints, export_text

__all__ = ["RANKING", "UNITS", "decision_path", "export_constraints", "export_graphviz", "export_html", "export_text",
           "original_units", "reachable_nodes", "render_graphviz", "summary"]
