"""The student edition never prints the result of a derivation that is graded by hand.

Every manually graded derivation of an assignment states its key result in the instructor's
cell: a paragraph of the model answer that starts with ``**Key result.**``, whose math spans
are the equations the derivation ends with (``notebook.key_results``). This test reads the
student edition of every page in ``_toc.yml`` (the chapter sources without what the edition
filter removes: solutions, ``{only} instructor`` blocks, teaching and instructor notes, see
``test_chapter_listings.student_hidden_lines``; without code cells, listings and inline code)
and fails when one of those equations is printed there, as ``test_chapter_listings`` does for
the reference code of the autograded tasks.

The page's math (``$...$`` and ``$$...$$``) is compared with each key result after a
normalisation that trivial differences do not survive: whitespace, the book's macros (``\\bw``
is ``\\mathbf{w}``), braces, ``\\frac{a}{b}`` against ``a/b``, brackets around a single term
(``(a)/(b + c)`` is ``a/(b + c)``, ``\\max\\{x, 0\\}`` is ``\\max(x, 0)``), ``\\left``/``\\right``
and spacing commands, ``\\lVert`` against ``\\|``, ``\\le`` against ``\\leq``, ``\\leftarrow``
against ``=``, ``\\boldsymbol`` against ``\\mathbf``, ``\\operatorname{max}`` against ``\\max``,
the ways of writing a transpose. A key result of at least ``RENAME_MIN`` tokens also matches
with its letters renamed one to one, Latin for Latin and Greek for Greek (the chapter's $\\omega$
for the assignment's $\\alpha$): a derivation written with other symbols is still printed. Glued
Markdown and the outputs of code cells are not read (they print numbers, not derivations).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import pytest
from test_chapter_listings import student_hidden_lines
from test_chapter_numbers import ROOT, _source, toc_pages

from mlcourse_utils.config import read_config
from mlcourse_utils.grading.notebook import (
    cell_source,
    grade_id,
    is_manual_cell,
    key_results,
    read_notebook_cells,
)

#: A key result has at least this many tokens after normalisation (else it says too little to
#: be recognised: write the whole equation, not a symbol).
KEY_MIN = 8
#: Key results at least this long also match with their letters renamed.
RENAME_MIN = 12

# ---------------------------------------------------------------------------------- normalising

_TOKEN = re.compile(r"\\[A-Za-z]+\*?|\\.|[A-Za-z]|\d|[^\sA-Za-z\d]", re.S)
_GREEK = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu "
    "xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta "
    "Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split())
#: Tokens that change nothing a reader compares: grouping, sizes, spacing, alignment.
_DROP = frozenset(
    "{ } \\left \\right \\middle \\big \\Big \\bigg \\Bigg "
    "\\bigl \\bigr \\Bigl \\Bigr \\biggl \\biggr \\Biggl \\Biggr \\, \\; \\: \\! \\quad \\qquad "
    "\\\\ & $ \\displaystyle \\textstyle \\scriptstyle \\limits \\nolimits \\cdot \\cdotp * ~ "
    "\\nonumber \\notag".split() + ["\\ "])
_ALIASES = {
    "\\boldsymbol": "\\mathbf", "\\bm": "\\mathbf", "\\pmb": "\\mathbf", "\\bf": "\\mathbf",
    "\\widehat": "\\hat", "\\widetilde": "\\tilde", "\\overline": "\\bar",
    "\\le": "\\leq", "\\leqslant": "\\leq", "\\ge": "\\geq", "\\geqslant": "\\geq",
    "\\ne": "\\neq", "\\leftarrow": "=", "\\gets": "=", "\\coloneqq": "=", "\\to": "\\rightarrow",
    "\\lVert": "‖", "\\rVert": "‖", "\\Vert": "‖", "\\|": "‖",
    "\\lvert": "|", "\\rvert": "|", "\\vert": "|", "\\mid": "|",
    "\\intercal": "\\top", "\\dfrac": "\\frac", "\\tfrac": "\\frac", "\\cfrac": "\\frac",
    "[": "(", "]": ")", "\\{": "(", "\\}": ")", "\\langle": "(", "\\rangle": ")",
    "\\lbrace": "(", "\\rbrace": ")", "\\lbrack": "(", "\\rbrack": ")",
}
#: Tokens that separate the terms of an expression: brackets around a stretch without one of
#: these at its own level group a single term and are dropped.
_SEPARATORS = frozenset(
    "+ - = / , ; < > | ‖ \\pm \\mp \\leq \\geq \\neq \\approx \\sim \\propto \\rightarrow "
    "\\iff \\implies \\Rightarrow \\in \\times \\sum \\prod \\int".split())
#: Commands whose argument is a name: ``\operatorname{sign}`` is the one token ``name:sign``.
_TEXT = frozenset(
    "\\operatorname \\operatorname* \\mathrm \\text \\textrm \\textit \\mathit \\mathsf "
    "\\textsf \\mathtt \\texttt \\mbox \\textup".split())
_OPERATORS = frozenset(
    "max min log ln exp det sup inf lim arg sin cos tan Pr deg dim ker".split())
#: Commands dropped together with their argument.
_DROP_WITH_ARGUMENT = frozenset("\\label \\tag \\begin \\end \\hspace \\vspace".split())


@lru_cache(maxsize=1)
def _macros():
    """The book's MathJax macros (``_config.yml``), as ``{"\\bw": "\\mathbf{w}"}``."""
    macros = read_config(ROOT)["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    return {f"\\{name}": value for name, value in macros.items() if isinstance(value, str)}


def _tokens(text, line=0):
    """``[(token, line)]`` of ``text``: control words, control symbols and single characters;
    ``line`` counts from the line of ``text``'s first character."""
    found, starts = [], [m.start() for m in re.finditer(r"\n", text)]
    row = 0
    for match in _TOKEN.finditer(text):
        while row < len(starts) and starts[row] < match.start():
            row += 1
        found.append((match.group(0), line + row))
    return found


def _expand_macros(tokens):
    macros = _macros()
    for _ in range(3):  # a macro may use another
        if not any(t in macros for t, _ in tokens):
            break
        tokens = [new for t, line in tokens
                  for new in (_tokens(macros[t], line) if t in macros else [(t, line)])]
    return tokens


def _argument(tokens, i):
    """``(argument tokens, index after it)``: a brace group or one token, from ``tokens[i]``."""
    while i < len(tokens) and tokens[i][0] in ("\\ ", "\\,"):
        i += 1
    if i >= len(tokens):
        return [], i
    if tokens[i][0] != "{":
        return [tokens[i]], i + 1
    depth, j = 0, i
    while j < len(tokens):
        depth += {"{": 1, "}": -1}.get(tokens[j][0], 0)
        if depth == 0:
            return tokens[i + 1:j], j + 1
        j += 1
    return tokens[i + 1:], len(tokens)


def _normalise(tokens):
    out, i = [], 0
    while i < len(tokens):
        tok, line = tokens[i]
        tok = _ALIASES.get(tok, tok)
        if tok in _DROP_WITH_ARGUMENT:
            i = _argument(tokens, i + 1)[1]
        elif tok in _TEXT:
            argument, i = _argument(tokens, i + 1)
            name = "".join(t for t, _ in argument if t.isalnum())
            if len(name) == 1:
                out.append((name, line))
            elif name:
                out.append((f"name:{name}", line))
        elif tok.startswith("\\") and tok[1:] in _OPERATORS:
            out.append((f"name:{tok[1:]}", line))
            i += 1
        elif tok == "\\frac":
            numerator, i = _argument(tokens, i + 1)
            denominator, i = _argument(tokens, i)
            out += ([("(", line)] + _normalise(numerator) + [(")", line), ("/", line), ("(", line)]
                    + _normalise(denominator) + [(")", line)])
        elif tok in _DROP or (tok == ":" and i + 1 < len(tokens) and tokens[i + 1][0] == "="):
            i += 1
        else:
            out.append((tok, line))
            i += 1
    # the transpose, however it is written: ^T, ^{T}, ^\top, ^{\mathsf T}, \T
    return [("\\top", line) if tok == "T" and k and out[k - 1][0] == "^" else (tok, line)
            for k, (tok, line) in enumerate(out)]


def _single_terms_unbracketed(tokens):
    """``tokens`` without the bracket pairs around a single term (no separator at their own
    level): ``(a)/(b + c)`` becomes ``a/(b + c)``, ``(S(x, t))`` becomes ``S(x, t)``."""
    pairs, stack = {}, []
    for k, (token, _) in enumerate(tokens):
        if token == "(":
            stack.append(k)
        elif token == ")" and stack:
            pairs[stack.pop()] = k
    drop = set()
    for start, end in pairs.items():
        depth, single = 0, True
        for token, _ in tokens[start + 1:end]:
            depth += {"(": 1, ")": -1}.get(token, 0)
            if depth == 0 and token in _SEPARATORS:
                single = False
                break
        if single:
            drop.update((start, end))
    return [pair for k, pair in enumerate(tokens) if k not in drop]


def normalise(math, line=0):
    """``[(token, line)]`` of a LaTeX formula after the normalisation above."""
    return _single_terms_unbracketed(_normalise(_expand_macros(_tokens(math, line))))


def key_tokens(equation):
    """The normalised tokens of a key result, without its closing punctuation."""
    tokens = [t for t, _ in normalise(equation)]
    while tokens and tokens[-1] in (".", ",", ";"):
        tokens.pop()
    return tokens


def _alphabet(token):
    """"latin" or "greek" for a letter (a symbol that renaming may change), else None."""
    if len(token) == 1 and token.isascii() and token.isalpha():
        return "latin"
    return "greek" if token.startswith("\\") and token[1:] in _GREEK else None


_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
#: Between two math spans: no match runs from one formula into the next.
_BETWEEN = "‡"


class Text:
    """The normalised math of a text, indexed for the search of :meth:`find`."""

    def __init__(self, text):
        pairs = []
        for match in _MATH.finditer(text):
            math = match.group(1) if match.group(1) is not None else match.group(2)
            line = text.count("\n", 0, match.start())
            pairs += normalise(math, line) + [(_BETWEEN, line)]
        self.tokens = [t for t, _ in pairs]
        self.lines = [line for _, line in pairs]
        self.index = {}
        for k, token in enumerate(self.tokens):
            self.index.setdefault(token, []).append(k)

    def find(self, key):
        """The line (0-based) where the token sequence ``key`` occurs, or None. With
        ``len(key) >= RENAME_MIN`` its letters may be renamed, consistently and one to one."""
        rename = len(key) >= RENAME_MIN
        anchor = next((k for k, t in enumerate(key) if not (rename and _alphabet(t))), None)
        if anchor is None:
            return None
        m = len(key)
        for position in self.index.get(key[anchor], ()):
            start = position - anchor
            if start < 0 or start + m > len(self.tokens):
                continue
            forward, backward = {}, {}
            for k, h in zip(key, self.tokens[start:start + m], strict=True):
                if rename and _alphabet(k):
                    if _alphabet(h) != _alphabet(k) or forward.setdefault(k, h) != h \
                            or backward.setdefault(h, k) != k:
                        break
                elif k != h:
                    break
            else:
                return self.lines[start]
        return None


# ------------------------------------------------------------------------- the student edition

_FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\s*(?P<info>.*)$")
_CODE_INFO = ("{code-cell", "{literalinclude", "{code", "{eval-rst", "{raw")
_ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}`(?P<body>[^`]*)`")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+\1")


def student_text(source):
    """What the student edition shows of a MyST page, line for line (a removed line is empty):
    no solution, instructor block or note, code cell, listing, option, label or comment."""
    hidden = student_hidden_lines(source)
    lines = source.splitlines()
    shown = [""] * len(lines)
    start = 0
    if lines and lines[0].strip() == "---":  # front matter
        start = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), 0) + 1
    code = None  # the fence of the open code block
    for i in range(start, len(lines)):
        line = lines[i].strip()
        match = _FENCE.match(line)
        if code is not None:
            if match and not match.group("info").strip() and match.group("fence")[0] == code[0] \
                    and len(match.group("fence")) >= len(code):
                code = None
            continue
        if match:
            info = match.group("info").strip()
            if info and (not info.startswith("{") or info.startswith(_CODE_INFO)):
                code = match.group("fence")
            elif info and i not in hidden:
                shown[i] = re.sub(r"^\{[^}]*\}\s*", "", info)  # a directive's title is text
            continue
        if i in hidden or re.match(r"^:[\w-]+:", line) or re.match(r"^\([\w-]+\)=$", line) \
                or line.startswith("%"):
            continue
        shown[i] = lines[i]
    text = "\n".join(shown)
    text = re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = _ROLE.sub(lambda m: m.group("body") if m.group("name") == "term" else " ", text)
    return _INLINE_CODE.sub(" ", text)


# --------------------------------------------------------------------------- the key results

def derivation_keys(root=ROOT):
    """``[(assignment, grade_id, [key equations])]`` of every manually graded derivation."""
    found = []
    for notebook in sorted((root / "solutions").glob("*/*.ipynb")):
        if notebook.stem != notebook.parent.name:
            continue
        for cell in read_notebook_cells(notebook.read_bytes()):
            gid = grade_id(cell) or ""
            if is_manual_cell(cell) and gid.startswith("derivation"):
                found.append((notebook.stem, gid, key_results(cell_source(cell))))
    return found


DERIVATIONS = derivation_keys()


def test_every_assignment_has_derivations():
    """The list the checks below use is read from every solution notebook."""
    assert {a for a, _, _ in DERIVATIONS} == {
        p.parent.name for p in (ROOT / "solutions").glob("*/*.ipynb")
        if p.stem == p.parent.name}


@pytest.mark.parametrize("assignment,gid,keys", DERIVATIONS,
                         ids=[f"{a}-{g}" for a, g, _ in DERIVATIONS])
def test_every_derivation_states_its_key_result(assignment, gid, keys):
    """The model answer of each derivation has a **Key result.** paragraph, and each of its
    equations is long enough to be recognised."""
    assert keys, (f"{assignment}: the model answer of {gid} has no '**Key result.**' paragraph "
                  "(the equations it ends with, each in $...$)")
    short = [k for k in keys if len(key_tokens(k)) < KEY_MIN]
    assert not short, (f"{assignment}: key results of {gid} too short to recognise: {short} "
                       "(write whole equations; describe other symbols in words)")


@pytest.mark.parametrize("docname", toc_pages())
def test_no_derivation_result_is_printed_in_the_student_edition(docname):
    """No key result of a hand-graded derivation appears in the page's student edition (state
    such a result only in a gated solution or an instructor-only block, or change the
    assignment's derivation)."""
    text = Text(student_text(_source(docname)))  # every page of the table of contents has one
    printed = []
    for assignment, gid, keys in DERIVATIONS:
        for key in keys:
            line = text.find(key_tokens(key))
            if line is not None:
                printed.append(f"line {line + 1}: {assignment}/{gid}: ${key}$")
    assert not printed, (f"{docname} prints the result of a derivation graded by hand in the "
                         "student edition:\n" + "\n".join(printed))


def test_the_released_notebooks_hold_no_model_answer():
    """The key results stay in the instructor's cells: no released notebook has one."""
    for notebook in sorted((ROOT / "exercises").glob("*/*.ipynb")):
        cells = read_notebook_cells(notebook.read_bytes())
        leaked = [grade_id(c) for c in cells if key_results(cell_source(c))
                  or "**Key result" in cell_source(c)]
        assert not leaked, f"{notebook.name}: key results in released cells {leaked}"


# ------------------------------------------------------------------------ the check, checked

def _found(key, text):
    return Text(text).find(key_tokens(key)) is not None


@pytest.mark.parametrize("key,printed", [
    # spacing, the book's macros, \T, braces and \left/\right
    (r"\mathbf w^\top\mathbf x_n + b = 0", r"$\bw\T\bx_{n} + b = 0$"),
    (r"(\mathbf X^\top\mathbf X + \lambda\mathbf I)\mathbf w",
     r"$\left(\bX\T \bX+\lambda \mathbf{I}\right) \bw$"),
    # \frac against a slash, \tfrac, \big
    (r"\hat\theta = \frac{N_H + \alpha}{N + 2\alpha}",
     r"$\hat\theta = (N_H + \alpha)/(N + 2\alpha)$."),
    (r"a_d = \tfrac{1}{N}\sum_n x_{nd}^2", r"$$a_d = \frac1N \sum_n x_{nd}^2 ,$$"),
    # norms, relations, operators, bold, an update arrow
    (r"\lVert\mathbf w\rVert_2 \le t", r"$\|\boldsymbol{w}\|_2 \leq t$"),
    (r"w_d \leftarrow \max(\rho_d - \lambda, 0)/a_d",
     r"$w_d = \operatorname{max}\{\rho_d - \lambda, 0\}/a_d$"),
])
def test_trivial_differences_do_not_hide_a_printed_result(key, printed):
    assert _found(key, printed)


def test_letters_may_be_renamed_in_a_long_result():
    """The elastic-net update with the assignment's alpha is the chapter's with omega."""
    key = r"w_d \leftarrow \frac{S(\rho_d, \lambda\alpha)}{a_d + \lambda(1 - \alpha)}"
    assert len(key_tokens(key)) >= RENAME_MIN
    assert _found(key, r"$$w_d \gets \frac{S(\rho_d, \lambda\omega)}{a_d + \lambda(1-\omega)}$$")
    # one to one: alpha cannot stand for both lambda and omega; and Greek stays Greek
    assert not _found(key, r"$w_d \gets \frac{S(\rho_d, \lambda\lambda)}{a_d+\lambda(1-\lambda)}$")
    assert not _found(key, r"$$w_d \gets \frac{S(\rho_d, \lambda c)}{a_d + \lambda(1 - c)}$$")


@pytest.mark.parametrize("key,other", [
    (r"\hat\theta = d/\sum_n x_n", r"$\hat\theta = N/\sum_n x_n$"),     # short: no renaming
    (r"w_d \leftarrow \frac{\max(\rho_d - \lambda\omega, 0)}{a_d + \lambda(1 - \omega)}",
     r"$w_d \leftarrow \frac{S(\rho_d, \lambda\omega)}{a_d + \lambda(1 - \omega)}$"),
    (r"\mathrm{KL}(p\,\|\,q) = \log\frac{\sigma_2}{\sigma_1}",
     r"$\mathrm{KL}(p\,\|\,q) = \log\frac{\sigma_1}{\sigma_2}$"),
    # a function applied is not the same as another function of other arguments
    (r"\mathcal L(\mathbf w, b) = -\sum_{n=1}^N \log\Phi(z_n)",
     r"$\mathcal{L}(\bw, b) = -\sum_{n=1}^{N} \log p(y_n \mid \bx_n)$"),
])
def test_a_different_result_is_not_found(key, other):
    assert not _found(key, other)


PAGE = """\
---
jupytext: {}
---
# A page

```{code-cell} ipython3
x = "$a_d = \\frac{1}{N}\\sum_n x_{nd}^2$"
```

Inline `$a_d = \\frac{1}{N}\\sum_n x_{nd}^2$` and {eq}`a_d-label` are not text.

```{solution} ex
$a_d = \\frac{1}{N}\\sum_n x_{nd}^2$
```

:::{admonition} Teaching note
:class: teaching-note
$a_d = \\frac{1}{N}\\sum_n x_{nd}^2$
:::

```{prf:theorem} Shown
Visible: $b_d = \\max(y_d - t, 0)/(c_d + 1)$.
```
"""


def test_student_text_leaves_out_code_solutions_and_notes():
    """Only the theorem's line is text of the student edition; the key in code, inline code,
    a solution or a teaching note is not found, the theorem's equation is (on its line)."""
    text = student_text(PAGE)
    assert len(text.split("\n")) == len(PAGE.splitlines())
    assert "a_d" not in text and "Visible" in text
    line = Text(text).find(key_tokens(r"b_d = \frac{\max(y_d - t, 0)}{c_d + 1}"))
    assert PAGE.splitlines()[line].startswith("Visible")
    assert Text(text).find(key_tokens(r"a_d = \frac{1}{N}\sum_n x_{nd}^2")) is None


def test_the_old_elastic_net_derivation_would_be_caught():
    """The elastic-net update the ridge_lasso assignment once graded by hand (with the mixing
    weight written alpha) is printed in the regularisation chapter: the check finds it."""
    text = Text(student_text(_source("book/regularization")))
    key = r"w_d \leftarrow \frac{S(\rho_d, \lambda\alpha)}{a_d + \lambda(1 - \alpha)}"
    assert text.find(key_tokens(key)) is not None


def test_key_results_are_read_from_the_paragraph():
    source = ("**Model answer.** $x = 1$.\n\n**Key result.** $a = b + c$ and\n$$d = e$$\n\n"
              "*Rubric.* $f = g$\n")
    from mlcourse_utils.grading.notebook import key_results as read
    assert read(source) == ["a = b + c", "d = e"]
    assert read("no key result $a = b$") == []
    assert json.dumps(read("**Key results.** $y$")) == '["y"]'
