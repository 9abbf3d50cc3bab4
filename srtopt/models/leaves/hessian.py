"""The Hessian of a leaf model's losses in its coefficients: one block per leaf, sum_i C_abil Xa_i Xa_i^T over
the leaf's score pairs (a, b), the second derivatives C of R_il in the scores weighted by the rows' P_il."""

from __future__ import annotations

import numpy as np

KRONECKER_ENTRIES = 1 << 24  # largest n q (q + 1) / 2 for which leaf_hessian forms the rows' outer products at once


def row_outer_products(Xa) -> np.ndarray | None:
    """The upper triangles of the rows' Xa_i Xa_i^T (``np.triu_indices(q)`` order) as an n x q (q + 1) / 2
    matrix, or None above :data:`KRONECKER_ENTRIES` entries."""
    n, q = Xa.shape
    if n * q * (q + 1) // 2 > KRONECKER_ENTRIES:
        return None
    columns, products, start = np.ascontiguousarray(Xa.T), np.empty((q * (q + 1) // 2, n)), 0
    for c in range(q):  # row c of the triangle, entries (c, c..q-1), as contiguous products
        np.multiply(columns[c], columns[c:], out=products[start:start + q - c])
        start += q - c
    return products.T


def leaf_hessian(Xa, C, outer=None) -> np.ndarray:
    """The block-diagonal Hessian in beta_W of sum_il C-weighted second derivatives, its blocks
    :func:`leaf_hessian_blocks` on the diagonal."""
    return block_diagonal(leaf_hessian_blocks(Xa, C, outer))


def block_diagonal(blocks) -> np.ndarray:
    """The matrix with the square ``blocks`` (m, s, s) on its diagonal, zeros elsewhere (scipy's
    ``block_diag`` of a few small blocks cost a tenth of a constrained fit in its argument checks)."""
    m, size, _ = blocks.shape
    out = np.zeros((m, size, m, size))
    out[np.arange(m), :, np.arange(m), :] = blocks
    return out.reshape(m * size, m * size)


def leaf_hessian_blocks(Xa, C, outer=None) -> np.ndarray:
    """The diagonal blocks (m, K' q, K' q) of the Hessian in beta_W of sum_il C-weighted second derivatives:
    for each leaf l the block sum_i C_abil Xa_i Xa_i^T of its score pairs (a, b); ``C`` (K', K', n, m).
    With several scores all K'^2 pairs come from one matrix product with ``outer``, the rows' Xa_i Xa_i^T
    (:func:`row_outer_products`), when given."""
    k, _, n, m = C.shape
    q = Xa.shape[1]
    if k > 1 and outer is not None:
        return _pair_blocks(C, outer, q).transpose(0, 1, 3, 2, 4).reshape(m, k * q, k * q)
    blocks = np.empty((m, k * q, k * q))
    for l in range(m):
        for a in range(k):
            for b in range(k):
                blocks[l, a * q:(a + 1) * q, b * q:(b + 1) * q] = (Xa.T * C[a, b, :, l]) @ Xa
    return blocks


def _pair_blocks(C, outer, q: int) -> np.ndarray:
    """(m, K', K', q, q): every leaf's sum_i C_abil Xa_i Xa_i^T, from one product of the pairs a <= b of all
    leaves with the upper triangles of the rows' outer products (C and each Xa_i Xa_i^T are symmetric:
    block (b, a) = block (a, b), entry (d, c) = entry (c, d))."""
    k, _, n, m = C.shape
    a, b = np.triu_indices(k)
    c, d = np.triu_indices(q)
    upper = np.ascontiguousarray(C[a, b].transpose(2, 0, 1)).reshape(m * len(a), n) @ outer
    pairs = np.empty((m * len(a), q, q))
    pairs[:, c, d] = upper
    pairs[:, d, c] = upper
    pairs = pairs.reshape(m, len(a), q, q)
    blocks = np.empty((m, k, k, q, q))
    blocks[:, a, b] = pairs
    blocks[:, b, a] = pairs
    return blocks
