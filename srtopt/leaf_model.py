"""The leaf-model contract of a soft tree, and what a fitted leaf model predicts, in numpy alone.

E = sum_i s_i sum_l P_il R_il + the penalties (eq. obj): the splits' side of NODEC (the kernels, the working
sets, the reassignment heuristic, the BN solvers) sees a leaf model only through the losses R_il, so a leaf
model is one object that owns its whole life:

* **its design**: the basis (:mod:`srtopt.bases`) that maps a scaled row to the leaf design Xa_i, and the
  scores u_il = B_l Xa_i (K' per leaf, ``beta`` row l viewed as K' x q);
* **its targets**: whether y is standardized (``standardizes``) and the rows' targets T;
* **its training**: its start on the rows of an initial partition (``start``), R_il with its derivatives in
  the scores (``losses``, ``gradient``, ``hessian_blocks``), its CasADi and Pyomo renderings, the greedy tree
  that starts it (``partition_tree``), the fit it reports (``score``, named ``score_name``) and the leaf of all
  rows the leaf-ridge shrinkage pulls towards (``center``);
* **its solver traits**: which LN and BN routes take it: ``residual_loss`` (R_il a regression loss of the
  residual Xa_i . beta_l - T_i: the closed-form LN routes, least squares and the QP, read it; None, the
  default, leaves them out) and the solver lists "auto" tries (``ln_specs``, ``bn_specs``);
* **its predictions**: ``predict`` maps the scores through its link (:class:`Identity`: the value, in
  standardized y; :class:`Softmax`: the class probabilities);
* **its reading and file form**: ``describe`` names its outputs, ``to_json`` / :func:`leaf_model_from_json`;
* **the values the constraints average** (``mean_values``, ``mean_inputs``, ``class_values``).

A link is any object with what :class:`Identity` has (``name``, ``n_outputs``, the call from scores to outputs,
``to_json``, ``finish``, ``probabilities``, ``score_names``, ``score_units``, ``leaf_name``); one of class
probabilities also has ``n_classes``, which is how the views tell class leaves from value leaves.

:class:`LeafModel` is the contract: a training method without a default (the targets are y, the centre the start
on every row, ``fitted`` the leaf model itself) raises ``NotImplementedError`` saying what it must give. The
prediction side is implemented here once, from the basis and the link, so a leaf model read from a file predicts
and is drawn without the training layers (``srtopt.models.leaves`` implements the linear, spline, constant and
logistic leaves; a researcher's own leaf model subclasses :class:`LeafModel` and registers with
:func:`register_leaf_model`, which makes its name a value of the estimators' ``leaf`` and of ``srtopt fit
--leaf``).
"""

from __future__ import annotations

import copy

import numpy as np

from ._spec import Registry, parse_spec
from .bases import Basis, basis_from_json
from .routing import bounded_rows, class_probabilities, hbp_leaves, split_design
from .tree import Tree


class Identity:
    """The link of a leaf that predicts one value: the score itself (y standardized)."""

    name = "identity"
    n_outputs = 1

    def __call__(self, U: np.ndarray) -> np.ndarray:
        """The values (n,) of the scores U (n, 1)."""
        return U[:, 0]

    def to_json(self) -> dict:
        return {"name": self.name}

    def finish(self, outputs, scaling, y_range=None, classes=None) -> np.ndarray:
        """A regressor's predictions of the outputs: unscaled to y's units (``scaling.inverse_y``), clipped to
        ``y_range`` when given."""
        prediction = scaling.inverse_y(outputs)
        return prediction if y_range is None else np.clip(prediction, *y_range)

    def probabilities(self, outputs):
        raise ValueError("a leaf model of one value predicts numbers, not class probabilities (fit a "
                         "SoftClassificationTree)")

    def score_names(self, classes=None, scaled=False) -> list[str]:
        """How the views name the score: "y", or "y_s" in the scaled units."""
        return ["y_s" if scaled else "y"]

    def leaf_name(self, basis_kind: str) -> str:
        """The leaves' name for a basis kind: the kind itself ("linear", "spline")."""
        return basis_kind

    def score_units(self, scaling) -> tuple[float, float]:
        """(mean, std): the score in original units is mean + std u (y's)."""
        return float(scaling.y_mean), float(scaling.y_std)


class Softmax:
    """The link of a classification leaf: the class probabilities softmax(u) (n, K) of its K' free scores
    (K' = 1 for two classes, the logit of the second class)."""

    name = "softmax"

    def __init__(self, n_classes: int):
        if int(n_classes) < 2:
            raise ValueError(f"a classification leaf needs at least 2 classes, got {n_classes!r}")
        self.n_classes = int(n_classes)
        self.n_outputs = 1 if self.n_classes == 2 else self.n_classes

    def __call__(self, U):
        return class_probabilities(U, self.n_classes)

    def to_json(self) -> dict:
        return {"name": self.name, "n_classes": self.n_classes}

    def finish(self, outputs, scaling=None, y_range=None, classes=None) -> np.ndarray:
        """A classifier's predictions of the outputs (class probabilities): the most probable class, a label
        of ``classes``."""
        return np.asarray(classes)[np.argmax(outputs, axis=1)]

    def probabilities(self, outputs):
        return outputs

    def score_names(self, classes=None, scaled=False) -> list[str]:
        """"logit p(B)" of two classes, else "score(c)" per class (in both units)."""
        names = [str(c) for c in classes] if classes is not None else [f"class {k}" for k in range(self.n_classes)]
        return [f"logit p({names[1]})"] if self.n_classes == 2 else [f"score({name})" for name in names]

    def score_units(self, scaling) -> tuple[float, float]:
        """(0, 1): a class score has no units."""
        return 0.0, 1.0

    def leaf_name(self, basis_kind: str) -> str:
        """The leaves' name for a basis kind: a linear basis makes logistic leaves."""
        return "logistic" if basis_kind == "linear" else basis_kind


LINKS = {"identity": lambda doc: Identity(), "softmax": lambda doc: Softmax(doc["n_classes"])}


class LeafModel:
    """The leaf-model contract (module docstring): a basis, a link, and the training methods a subclass
    implements.

    Parameters
    ----------
    basis : Basis
        The leaf design (:mod:`srtopt.bases`).
    link : Identity or Softmax
        What the scores predict.
    """

    #: the registry name (:func:`register_leaf_model`), also the file form's "kind"
    kind = "leaf"
    #: whether y is standardized before training (a value leaf of the squared loss); False: y as given
    standardizes = False
    #: the LN solvers' trait: the regression loss ``loss`` (:mod:`srtopt.models.terms.losses`) when R_il =
    #: loss(Xa_i . beta_l - T_i), one score per leaf: exact least squares takes the leaves of the squared loss,
    #: the QP those of a loss with a QP form.  None: R_il of the leaf model's own, which the general routes solve
    #: (Newton's method on the Hessian of ``losses``, IPOPT, the proximal gradient).  A subclass that redefines
    #: ``losses`` and not ``residual_loss`` has None (:meth:`__init_subclass__`)
    residual_loss = None
    #: the LN and BN solver specs "auto" tries, in order (None: those of :data:`srtopt.solvers.AUTO`)
    ln_specs = None
    bn_specs = None
    #: the name of what :meth:`score` measures, as the progress lines say it ("R^2", "accuracy")
    score_name = "score"

    def __init__(self, basis: Basis, link):
        self.basis, self.link = basis, link

    def __init_subclass__(cls, **kwargs):
        """A subclass that writes its own ``losses`` and no ``residual_loss`` gets None: the closed-form LN routes
        of the class it derives from do not solve its R_il."""
        super().__init_subclass__(**kwargs)
        if "losses" in vars(cls) and "residual_loss" not in vars(cls):
            cls.residual_loss = None

    # ------------------------------------------------------------------ design and predictions
    @property
    def n_outputs(self) -> int:
        """K': scores per leaf."""
        return self.link.n_outputs

    @property
    def n_classes(self):
        """K of a classification leaf (None for a value leaf)."""
        return getattr(self.link, "n_classes", None)

    def design(self, Xs: np.ndarray) -> np.ndarray:
        """Xa (n, q) of the scaled rows Xs."""
        return self.basis.design(Xs)

    def scores(self, Xa: np.ndarray, beta: np.ndarray) -> np.ndarray:
        """u_i (n, K') of row i at the leaf ``beta[i]`` (beta row-aligned with Xa: (n, K' q))."""
        return np.einsum("iq,ikq->ik", Xa, np.reshape(beta, (len(Xa), self.n_outputs, Xa.shape[1])))

    def predict(self, Xa: np.ndarray, beta: np.ndarray) -> np.ndarray:
        """What row i predicts at the leaf ``beta[i]``: a value in the training units (n,), or class
        probabilities (n, K)."""
        return self.link(self.scores(Xa, beta))

    def hbp_outputs(self, Xs: np.ndarray, omega: np.ndarray, beta: np.ndarray, tree: Tree) -> np.ndarray:
        """What each scaled row predicts at the leaf of its HBP path (eq. prediction_model), as :meth:`predict`:
        the estimator's and a model file's predictions, the link of :meth:`hbp_scores`."""
        return self.link(self.hbp_scores(Xs, omega, beta, tree))

    def hbp_predict(self, Xs, omega, beta, tree: Tree, scaling, y_range=None, classes=None) -> np.ndarray:
        """``predict()`` of the scaled rows Xs (eq. prediction_model), for the estimators and a model file alike:
        :meth:`hbp_outputs` finished by the link (a value unscaled and clipped to ``y_range`` when given, a
        class label of ``classes``)."""
        return self.link.finish(self.hbp_outputs(Xs, omega, beta, tree), scaling, y_range, classes)

    def hbp_scores(self, Xs: np.ndarray, omega: np.ndarray, beta: np.ndarray, tree: Tree) -> np.ndarray:
        """The scores u_i (n, K') of each scaled row at the leaf of its HBP path.  The rows are taken C-ordered
        and within +-:data:`~srtopt.routing.SCALED_BOUND` (:func:`~srtopt.routing.bounded_rows`: the same
        numbers for any memory layout, finite ones for any finite row), the scores leaf by leaf."""
        Xa, rows = self._hbp_design(Xs, omega, tree)
        B = self.coefficients(beta)
        U = np.empty((len(Xa), self.n_outputs))
        for leaf in np.unique(rows):
            at = rows == leaf
            U[at] = np.einsum("iq,kq->ik", Xa[at], B[leaf])
        return U

    def hbp_losses(self, Xs: np.ndarray, T: np.ndarray, omega: np.ndarray, beta: np.ndarray, tree: Tree):
        """R_i (n,) of each scaled row with targets T at the leaf of its HBP path (:meth:`losses`): the loss
        training minimises there, which scores held-out rows (the leaf-ridge comparison)."""
        Xa, rows = self._hbp_design(Xs, omega, tree)
        R = np.empty(len(Xa))
        for leaf in np.unique(rows):
            at = rows == leaf
            R[at] = self.losses(Xa[at], T[at], beta[leaf:leaf + 1])[:, 0]
        return R

    def _hbp_design(self, Xs, omega, tree) -> tuple[np.ndarray, np.ndarray]:
        """(Xa of the bounded rows, each row's HBP leaf as a row of beta)."""
        Xs = bounded_rows(Xs)
        return self.design(Xs), tree.leaf_rows(hbp_leaves(split_design(Xs), omega, tree))

    def with_basis(self, basis: Basis) -> "LeafModel":
        """A copy of this leaf model on another (fitted) basis."""
        out = copy.copy(self)
        out.basis = basis
        return out

    @property
    def key(self) -> tuple:
        """What identifies the leaf model for the formulations and the remembered starts."""
        return (self.kind, self.basis.key, self.link.to_json()["name"], self.n_classes)

    # ------------------------------------------------------------------ reading
    def coefficients(self, beta: np.ndarray) -> np.ndarray:
        """The leaves' score vectors (m, K', q) of ``beta`` (m, K' q)."""
        return np.reshape(beta, (len(beta), self.n_outputs, -1))

    def linear_part(self, beta: np.ndarray) -> np.ndarray:
        """(m, K', 1 + p) of the intercepts and each feature's linear weight (0 where the basis has no linear
        term: a constant leaf gives (m, K', 1))."""
        return self.basis.linear_part(self.coefficients(beta))

    def curved(self, beta: np.ndarray) -> list[int]:
        """The features whose terms are not a line in some leaf (a spline basis's wiggle, step or pair weights not
        all 0)."""
        B, basis = self.coefficients(beta), self.basis
        return [j for j in range(basis.n_features)
                if np.any(B[..., np.r_[basis.feature_columns(j)[1:], basis.pair_columns_of(j)]] != 0)]

    # ------------------------------------------------------------------ file form
    def to_json(self) -> dict:
        """The file form: {"kind", "basis", "link"} (and what a subclass adds); a basis not yet fitted is its
        spec (a string)."""
        basis = self.basis if isinstance(self.basis, str) else self.basis.to_json()
        return {"kind": self.kind, "basis": basis, "link": self.link.to_json()}

    @classmethod
    def from_json(cls, doc: dict) -> "LeafModel":
        """The leaf model of its file form, as far as predicting and reading go."""
        return cls(basis_from_json(doc["basis"]), LINKS[doc["link"]["name"]](doc["link"]))

    def fitted(self, Xs, targets, weights, lambda_b) -> "LeafModel":
        """This leaf model prepared on the scaled training rows (e.g. a spline basis's knots and smoothing);
        itself by default."""
        return self

    # ------------------------------------------------------------------ training (subclasses)
    def targets(self, y: np.ndarray) -> np.ndarray:
        """The rows' targets T (n,) or (n, width) of y in the training units: y itself by default."""
        return y

    def target_width(self) -> int:
        """The columns of T: 1 by default."""
        return 1

    def start(self, problem, rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__}.start(problem, rows) must give a leaf's coefficients "
                                  f"(K' q,) fitted to the training rows ``rows`` of an initial partition")

    def losses(self, Xa, T, beta, order: int = 0):
        raise NotImplementedError(f"{type(self).__name__}.losses(Xa, T, beta, order) must give R (n, m) of the rows "
                                  f"at the leaves beta (m, K' q), with order 1 also dR/du (K', n, m), with 2 also "
                                  f"d^2R/du^2 (K', K', n, m)")

    def gradient(self, Xa, W, D) -> np.ndarray:
        """sum_i W_il D_kil Xa_i: the gradient in beta (m, K' q) of sum_il W_il R_il, D = dR/du (K', n, m)."""
        n, m = W.shape
        WD = (W[None] * D).transpose(2, 0, 1).reshape(m * self.n_outputs, n)  # (m K', n), leaf-major
        return (WD @ Xa).reshape(m, -1)

    def casadi(self, Xa, T, B):
        raise NotImplementedError(f"{type(self).__name__}.casadi(Xa, T, B) must give R (n x m CasADi MX) of the "
                                  f"rows at the leaves B (m x K' q)")

    def pyomo(self, xa, t, b):
        raise NotImplementedError(f"{type(self).__name__}.pyomo(xa, t, b) must give R of one row at one leaf as a "
                                  f"Pyomo expression of its coefficients b")

    def partition_tree(self, **options):
        raise NotImplementedError(f"{type(self).__name__}.partition_tree(**options) must give the scikit-learn "
                                  f"CART estimator whose splits start the tree (init='cart')")

    def score(self, outputs, y, s) -> float:
        raise NotImplementedError(f"{type(self).__name__}.score(outputs, y, s) must give the fit of predictions "
                                  f"``outputs`` to y, weighted by s, that score_name names (e.g. 0.9 of 'R^2')")

    def center(self, problem) -> np.ndarray:
        """The leaf (K' q,) that leaf_ridge's shrinkage pulls every leaf towards (``leaf_center="linear"``): by
        default :meth:`start` on every training row, the leaf model's own fit of all rows."""
        return self.start(problem, np.arange(len(problem.y)))

    def mean_values(self, term) -> "LeafModel":
        raise NotImplementedError(f"{type(self).__name__}.mean_values(term) must give the leaf model whose R_il is "
                                  f"the value a soft-mean constraint averages (e.g. the prediction)")

    def mean_output(self, prediction) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__}.mean_output(prediction) must give the value a group's "
                                  f"mean compares, per row of predict()")

    def mean_inputs(self, prediction, y, term) -> tuple:
        raise NotImplementedError(f"{type(self).__name__}.mean_inputs(prediction, y, term) must give the arguments "
                                  f"(yhat, y) of a soft mean's value v for every row of predict()")

    def class_values(self, code: int) -> "LeafModel":
        raise ValueError("this constraint bounds a class's probability: it needs a classifier "
                         "(SoftClassificationTree)")

    @property
    def leaf_name(self) -> str:
        """The leaves' name, as an estimator's ``leaf`` parameter names them: "linear", "spline", "constant",
        "logistic"."""
        return self.link.leaf_name(self.basis.kind)

    def describe(self) -> str:
        """How a title names the leaves: "linear leaves", "logistic leaves", ..."""
        return f"{self.leaf_name} leaves"


#: the names of ``leaf`` that the estimators build themselves (no leaf model of one's own takes one)
OWN_LEAVES = ("linear", "spline", "constant", "logistic")
#: kind -> leaf-model class: how a file's leaf model is read back (:func:`leaf_model_from_json`)
LEAF_MODELS: dict = {}
#: name -> leaf-model class of one's own: the names the estimators' ``leaf`` and ``srtopt fit --leaf`` take beside
#: :data:`OWN_LEAVES` (:func:`register_leaf_model`, or an installed package's entry point ``NAME = "module:Class"``
#: in the group "srtopt.leaf_models", the class's ``kind`` its name)
LEAF_NAMES = Registry("leaf model", plugins="srtopt.leaf_models")


def register_leaf_model(name, cls=None):
    """Register a leaf model of one's own: ``register_leaf_model("poisson", PoissonLeaves)`` makes ``leaf="poisson"``
    (and ``"poisson:basis=spline"``: ``PoissonLeaves(basis="spline")``) a leaf of SoftRegressionTree, of
    SoftClassificationTree (which adds ``n_classes=K``) and of ``srtopt fit --leaf``, and a model file that holds it
    read back by the class.  A class that declares no ``kind`` takes ``name`` as its kind (the file form's name
    of it).  As a decorator, ``@register_leaf_model`` registers a class under its ``kind``.

    Raises
    ------
    ValueError
        If ``cls`` is not a LeafModel subclass, ``name`` is empty, holds ":" or is one of :data:`OWN_LEAVES`, the
        class declares another kind, or (as a decorator) none.
    """
    if cls is None:
        name, cls = getattr(name, "kind", None), name
    if not (isinstance(cls, type) and issubclass(cls, LeafModel)):
        raise ValueError(f"register_leaf_model takes a LeafModel subclass, got {cls!r}")
    if name == LeafModel.kind:
        raise ValueError(f"{cls.__name__} declares no kind: register it by name, register_leaf_model('name', "
                         f"{cls.__name__})")
    if not isinstance(name, str) or not name.strip() or ":" in name:
        raise ValueError(f"a leaf model's name must be a non-empty string without ':', got {name!r}")
    name = name.strip().lower()
    if name in OWN_LEAVES:
        raise ValueError(f"leaf={name!r} is one of the estimators' own leaves ({', '.join(OWN_LEAVES)}): register "
                         f"{cls.__name__} under another name")
    if cls.kind == LeafModel.kind:
        cls.kind = name
    elif cls.kind != name:
        raise ValueError(f"{cls.__name__} declares kind = {cls.kind!r}: register it under that name, the one its "
                         f"model files carry")
    LEAF_NAMES.register(name, cls)
    LEAF_MODELS[name] = cls
    return cls


def readable_leaf_model(cls):
    """Read a model file's leaf model of ``cls.kind`` back by ``cls`` (a decorator of the built-in leaf models,
    which the estimators name themselves: their kinds are no ``leaf`` names)."""
    LEAF_MODELS[cls.kind] = cls
    return cls


def make_leaf_model(spec: str, **options) -> LeafModel:
    """The registered leaf model of ``spec``, "name" or "name:key=value" (:data:`LEAF_NAMES`), given ``options`` too
    (a classifier's ``n_classes``); a model file holding it is then read back by its class.

    Raises
    ------
    ValueError
        If the name is not registered, the class refuses the options, or an entry point's factory gives no
        LeafModel.
    """
    model = LEAF_NAMES.make(spec, **options)
    if not isinstance(model, LeafModel):
        raise ValueError(f"leaf model {parse_spec(spec)[0]!r} gives a {type(model).__name__}, not a LeafModel")
    LEAF_MODELS.setdefault(model.kind, type(model))
    return model


def _reading_class(kind) -> type:
    """The class that reads a file's leaf model of ``kind``: registered, or an installed package's entry point of
    that name; else :class:`LeafModel` (it predicts and reads)."""
    if isinstance(kind, str) and kind not in LEAF_MODELS:
        try:
            factory = LEAF_NAMES.factory(kind)
        except ValueError:
            return LeafModel
        if isinstance(factory, type) and issubclass(factory, LeafModel) and factory.kind == kind:
            LEAF_MODELS[kind] = factory
    return LEAF_MODELS.get(kind, LeafModel)


def leaf_model_from_json(doc) -> LeafModel:
    """The leaf model of its file form: its registered class's ``from_json`` (:func:`register_leaf_model`, an
    installed package's entry point), else, for a kind this process does not know, a :class:`LeafModel` that
    predicts and reads (the basis and link are enough)."""
    if (not isinstance(doc, dict) or not isinstance(doc.get("basis"), (dict, str))
            or not isinstance(doc.get("link"), dict)):
        raise ValueError(f"malformed leaf model {str(doc)[:80]!r}: expected an object with basis and link")
    cls = _reading_class(doc.get("kind"))
    if cls is LeafModel and doc["link"].get("name") not in LINKS:
        raise ValueError(f"unknown leaf link {doc['link'].get('name')!r} of a {doc.get('kind')!r} leaf model; "
                         f"expected one of {', '.join(LINKS)} (a leaf model of your own: import the module that "
                         f"registers it, register_leaf_model, or install the package that declares it, before "
                         f"loading)")
    try:
        model = cls.from_json(doc)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"malformed leaf model: {exc}") from None
    if cls is LeafModel:
        model.kind = str(doc.get("kind"))  # a kind this process has not registered: saved again as it was
    if model.link.to_json() != doc["link"]:
        raise ValueError(f"a {doc.get('kind')!r} leaf model has the link {model.link.to_json()}, the file says "
                         f"{doc['link']}")
    return model
