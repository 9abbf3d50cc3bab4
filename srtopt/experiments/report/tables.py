"""The cells of the report's tables (numbers, R^2 with sigma, differences, seconds) and the tables
themselves, as Markdown and as LaTeX ``table`` environments."""

from __future__ import annotations

import math


def _num(value, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return format(value, fmt)


def _r2_sigma(r2, sigma) -> str:
    if r2 is None or (isinstance(r2, float) and math.isnan(r2)):
        return "n/a"
    return f"{_num(r2, '.3f')} ({_num(sigma, '.2f')})"


def _diff(ours, paper, fmt=".3f") -> str:
    if ours is None or paper is None or math.isnan(ours) or math.isnan(paper):
        return ""
    return format(ours - paper, "+" + fmt)


def _time(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.3g}" if value < 10 else f"{value:.1f}"


def _cell(value, fmt: str) -> str:
    if fmt == "time":
        return _time(value)
    return _num(value, fmt)


def _markdown(header, rows) -> str:
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join("---" if i == 0 else "---:" for i in range(len(header))) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _latex_escape(text: str) -> str:
    return (text.replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("%", r"\%")
            .replace("&", r"\&").replace("#", r"\#").replace("R²", "$R^2$").replace("σ", r"$\sigma$")
            .replace("Δ", r"$\Delta$").replace("—", "--"))


def _latex(header, rows, caption: str, n_summary: int = 2) -> str:
    """A ``table`` environment; the last ``n_summary`` rows (the averages) in bold."""
    spec = "l" + "r" * (len(header) - 1)
    lines = [r"\begin{table}[ht]", r"\centering", r"\resizebox{\textwidth}{!}{%",
             rf"\begin{{tabular}}{{{spec}}}", r"\hline",
             " & ".join(_latex_escape(h) for h in header) + r" \\ \hline"]
    n_data = len(rows) - n_summary
    for i, row in enumerate(rows):
        cells = [_latex_escape(c) for c in row]
        if i >= n_data:
            cells = [rf"\textbf{{{c}}}" if c and j else c for j, c in enumerate(cells)]
        end = r" \\ \hline" if i == n_data - 1 or i >= n_data else r" \\"
        lines.append(" & ".join(cells) + end)
    lines += [r"\end{tabular}}", rf"\caption{{{_latex_escape(caption)}}}", r"\end{table}"]
    return "\n".join(lines)
