"""Tables to Markdown or LaTeX text (the same Table rows, two spellings)."""
from __future__ import annotations

from elmo_bench.report.table import Table

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$", "{": r"\{",
          "}": r"\}", "±": r"$\pm$", "λ": r"$\lambda$", "—": "--", "−": "$-$", "~": r"\textasciitilde{}"}


def table_md(table: Table) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [f"## {table.title}", "", line(table.header), "|" + "|".join("---" for _ in table.header) + "|"]
    out += [line(row) for row in table.rows] or ["", "_No results for this table yet._"]
    if table.notes:
        out += [""] + [f"- {note}" for note in table.notes]
    return "\n".join(out) + "\n"


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def table_latex(table: Table) -> str:
    cols = "l" * 2 + "r" * (len(table.header) - 2)
    out = [r"\begin{table}[ht]", r"\centering", r"\small", rf"\begin{{tabular}}{{{cols}}}", r"\toprule",
           " & ".join(latex_escape(h) for h in table.header) + r" \\", r"\midrule"]
    out += [" & ".join(latex_escape(c) for c in row) + r" \\" for row in table.rows]
    out += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{latex_escape(table.title)}. "
            + latex_escape(" ".join(table.notes)) + "}", r"\end{table}"]
    return "\n".join(out) + "\n"
