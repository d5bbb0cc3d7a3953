"""Which library names a piece of code uses, read from its syntax (no code is run).

One cell or one notebook of student code is parsed and every name it refers to is resolved
through its imports and simple assignments to a qualified name (``import scipy.special as ss;
ss.expit`` is ``scipy.special.expit``), including names spelled through ``getattr``,
``__import__``, ``importlib.import_module``, ``vars(...)[...]`` and ``sys.modules[...]`` when
their strings are constants (``"ex" + "pit"``, ``"tipxe"[::-1]``, ``"".join([...])`` are
folded). Names built from run-time values are not seen here: the grader's sandbox watches the
calls themselves (``runner.py``).

This module is pure Python and imports nothing POSIX-only: ``mlcourse check`` uses it on the
student's machine (Windows included). In the grader, student code is scanned only inside the
limited child process of :mod:`.analysis`.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Collection, Iterable, Mapping

from .const_strings import const_str

#: Always watched: the reference package (an answer that uses it earns nothing).
REFERENCE = "mlcourse_utils"

#: Characters of one code cell that Python's parser reads (it needs about 500 bytes of memory per
#: character). A longer cell is judged by its text instead (:func:`scan_code`).
MAX_PARSED_CELL = 200_000

#: Text that shows an attempt to interfere with grading (reported; it earns nothing anyway).
#: Every pattern starts with a fixed word and has only bounded gaps, so a search is linear.
TAMPER_PATTERNS = {
    r"input_transformers|ast_transformers|input_transformer_manager": "rewrites IPython's input",
    r"\.run_code\b|\.run_cell\b|\.run_ast_nodes\b": "patches IPython's execution",
    r"display_formatter|\.displayhook[ \t]*=|display_pub": "hijacks the display formatter",
    r"sys\.modules[ \t]*\[[^]\n]{0,200}\][ \t]*=": "replaces modules in sys.modules",
    r"\bbuiltins\.\w{1,100}[ \t]*=|__builtins__[ \t]*\[": "replaces built-in functions",
    r"\b(?:numpy|np)(?:\.testing)?\.(?:isclose|allclose|array_equal|assert_\w{1,60})[ \t]*=":
        "monkeypatches numpy",
}
_TAMPER = [(re.compile(p), what) for p, what in TAMPER_PATTERNS.items()]
_IMPORT_LINE = re.compile(r"^[ \t]*(?:from|import)[ \t]+([\w.]{1,200})", re.MULTILINE)
_MAGIC_LINE = re.compile(r"^([ \t]*)[%!].*$", re.MULTILINE)

#: Names whose use could disable the grader's watch on forbidden calls (``runner.py``): function
#: internals, frames, the garbage collector's object lists, re-imports, import hooks, tracing,
#: signal handlers and audit hooks (handed frames and events), ctypes' access to memory and to
#: Python's C API, compiled code loaded by hand. No answer of this course needs any of them;
#: where an assignment forbids calls, a cell that uses one costs every task with forbidden calls.
#: (The reply pipe's descriptors are guarded by the sandbox's seccomp filter instead, so
#: ``os.write`` or ``os.dup2`` cost nothing here; nor does ctypes calling the C library.)
MONITOR_ATTRIBUTES = frozenset({
    "__closure__", "cell_contents", "__wrapped__", "__code__", "__globals__", "__defaults__",
    "__kwdefaults__", "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame",
    "gi_frame", "cr_frame", "ag_frame", "meta_path", "path_hooks", "path_importer_cache",
    "_implementation", "from_address", "from_buffer"})
MONITOR_NAMES = ("gc.get_referrers", "gc.get_referents", "gc.get_objects", "sys._getframe",
                 "sys._current_frames", "sys._current_exceptions", "sys.settrace",
                 "sys.setprofile", "sys.monitoring", "sys.addaudithook",
                 "inspect.currentframe", "inspect.stack", "inspect.trace", "inspect.unwrap",
                 "inspect.getclosurevars", "_imp", "importlib.reload", "importlib.util",
                 "importlib.machinery", "imp", "threading.settrace", "threading.setprofile",
                 "sys.modules.pop", "sys.modules.clear", "sys.modules.update",
                 "sys.modules.popitem", "sys.modules.__delitem__", "sys.modules.__setitem__",
                 "signal.signal", "_signal", "marshal.loads", "ctypes.pythonapi", "ctypes.cast",
                 "ctypes.memmove", "ctypes.string_at", "ctypes.wstring_at", "ctypes.py_object",
                 "ctypes.PyDLL", "ctypes.pydll", "_ctypes")


def _without_magics(source):
    """IPython's ``%magic`` and ``!shell`` lines as ``pass`` (a cell magic's body is kept)."""
    if source.lstrip().startswith("%%"):
        source = source.lstrip().split("\n", 1)[1] if "\n" in source.lstrip() else ""
    return _MAGIC_LINE.sub(lambda m: m.group(1) + "pass", source)


# ------------------------------------------------------------------ qualified names

_GETATTR = {"getattr", "builtins.getattr"}
_IMPORT = {"__import__", "builtins.__import__", "importlib.__import__"}
_IMPORT_MODULE = {"importlib.import_module"}
_VARS = {"vars", "builtins.vars"}


class _Resolver:
    """Resolves expressions to dotted names, given the aliases the code defines."""

    def __init__(self, aliases: dict[str, str], star: list[str]) -> None:
        self.aliases = aliases
        self.star = star

    def name(self, node: ast.AST, depth: int = 0) -> str | None:
        if depth > 200:
            return None
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.name(node.value, depth + 1)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.Subscript):
            base = self.name(node.value, depth + 1)
            key = const_str(node.slice)
            if base is None or key is None:
                return None
            if base.endswith(".__dict__"):
                return f"{base[:-len('.__dict__')]}.{key}"
            if base == "sys.modules":
                return key
        return None

    def _call(self, node, depth):
        func = self.name(node.func, depth + 1)
        args = node.args
        if func in _GETATTR and len(args) >= 2:
            base, attr = self.name(args[0], depth + 1), const_str(args[1])
            return f"{base}.{attr}" if base and attr else None
        if func in _IMPORT and args:
            module = const_str(args[0])
            if not module:
                return None
            fromlist = args[3] if len(args) > 3 else next(
                (k.value for k in node.keywords if k.arg == "fromlist"), None)
            has_from = isinstance(fromlist, (ast.List, ast.Tuple)) and fromlist.elts
            return module if has_from else module.split(".")[0]
        if func in _IMPORT_MODULE and args:
            return const_str(args[0])
        if func in _VARS and len(args) == 1:
            base = self.name(args[0], depth + 1)
            return f"{base}.__dict__" if base else None
        return None


def _bind_imports(tree, aliases, star, names):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.name)
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            for alias in node.names:
                if alias.name == "*":
                    star.append(node.module)
                else:
                    full = f"{node.module}.{alias.name}"
                    names.add(full)
                    aliases[alias.asname or alias.name] = full


def _bind_assignments(tree, aliases, star):
    """``x = <dotted name>`` (and ``x: T = ...``, ``with ... as x``) make ``x`` an alias."""
    resolver = _Resolver(aliases, star)
    for _ in range(3):  # an alias of an alias, in any order
        changed = False
        for node in ast.walk(tree):
            pairs = []
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) \
                        and len(target.elts) == len(value.elts):
                    pairs = list(zip(target.elts, value.elts, strict=True))
                else:
                    pairs = [(target, value)]
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                pairs = [(node.target, node.value)]
            for target, value in pairs:
                if not isinstance(target, ast.Name) or isinstance(value, ast.Name) \
                        and value.id == target.id:
                    continue
                resolved = resolver.name(value)
                if resolved and "." in resolved or isinstance(value, ast.Call) and resolved:
                    if aliases.get(target.id) != resolved:
                        aliases[target.id] = resolved
                        changed = True
        if not changed:
            return


def bind_names(tree: ast.AST, aliases: dict[str, str | None] | None = None,
               star: list[str] | None = None) -> tuple[dict[str, str | None], list[str]]:
    """The aliases (``{local name: qualified name}``) and star-imported modules ``tree`` binds,
    added to ``aliases`` and ``star`` (a notebook's cells share them). A name the code binds at
    its top level to anything else (a variable, a function of its own) maps to None: it hides
    what a star import brought in."""
    aliases = {} if aliases is None else aliases
    star = [] if star is None else star
    _bind_imports(tree, aliases, star, set())
    _bind_assignments(tree, aliases, star)
    for name in _binds(tree):
        aliases.setdefault(name, None)
    return aliases, star


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
           ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _own_nodes(scope):
    """The nodes of one scope (a module, function, class or comprehension), with the scopes
    nested in it but not their insides."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _binds(scope):
    """The names one scope binds itself: arguments, assignment and loop targets, functions and
    classes it defines, imports, ``except ... as``."""
    found = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        found.update(x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                     if x is not None)
    for node in _own_nodes(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
    return found


def _unbound_names(tree):
    """The ``Name`` nodes (by id) that no scope of ``tree`` binds: only such a name can be one
    that a star import brought in (a local variable, an argument or a function of the code's
    own never is)."""
    found = set()

    def visit(scope, outer):
        bound = outer | _binds(scope)
        for node in _own_nodes(scope):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                    and node.id not in bound:
                found.add(id(node))
            elif isinstance(node, _SCOPES):  # (a class's names are not its methods')
                visit(node, outer if isinstance(scope, ast.ClassDef) else bound)

    visit(tree, set())
    return found


def _defined(tree):
    """Names ``tree`` binds itself (functions, classes, arguments, assignment targets): they
    hide an alias of the same name bound by another cell."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
    return found


def qualified_names(tree: ast.AST, aliases: Mapping[str, str] | None = None,
                    star: Iterable[str] = ()) -> set[str]:
    """Every dotted name ``tree`` refers to, with imports resolved to what they import.

    ``import numpy as np; np.linalg.inv`` gives ``numpy.linalg.inv``; ``from scipy.stats import
    entropy as H; H(p)`` gives ``scipy.stats.entropy``; an imported module is named too
    (``import mlcourse_utils.mle`` gives ``mlcourse_utils.mle``); ``getattr(ss, "ex" + "pit")``
    gives ``scipy.special.expit``. ``aliases`` and ``star`` are names bound elsewhere (other
    cells of the notebook, :func:`bind_names`). Names built from run-time values are not seen.
    """
    defined = _defined(tree)
    aliases = {k: v for k, v in (aliases or {}).items() if k not in defined}
    star = list(star)
    names = set()
    _bind_imports(tree, aliases, star, names)
    _bind_assignments(tree, aliases, star)
    resolver = _Resolver(aliases, star)
    unbound = _unbound_names(tree) if star else set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name, ast.Call, ast.Subscript)):
            name = resolver.name(node)
            if name is None:
                continue
            names.add(name)
            if isinstance(node, ast.Name) and node.id not in aliases and id(node) in unbound:
                names.update(f"{module}.{node.id}" for module in star)
    return names


def public_name(name: str) -> str:
    """``name`` without its private parts: ``scipy.special._ufuncs.expit`` → ``scipy.special.expit``
    (how a library's public function is usually also reachable)."""
    parts = name.split(".")
    kept = [p for i, p in enumerate(parts)
            if i == 0 or i == len(parts) - 1 or not p.startswith("_") or p.startswith("__")]
    return ".".join(kept)


def matches(name: str, watched: str) -> bool:
    """Whether ``name`` is ``watched`` or inside it (a module prefix covers what it holds), also
    through private submodules (``scipy.special._logsumexp.logsumexp`` counts as
    ``scipy.special.logsumexp``)."""
    for candidate in (name, public_name(name)):
        if candidate == watched or candidate.startswith(watched + "."):
            return True
    return False


def monitor_tampering(names: Iterable[str]) -> list[str]:
    """The names (sorted) that could disable the watch on forbidden calls (:data:`MONITOR_NAMES`,
    :data:`MONITOR_ATTRIBUTES`)."""
    found = set()
    for name in names:
        parts = name.split(".")
        if any(p in MONITOR_ATTRIBUTES for p in parts[1:]) or \
                any(name == m or name.startswith(m + ".") for m in MONITOR_NAMES):
            found.add(name)
    return sorted(found)


@dataclasses.dataclass
class CodeScan:
    """What :func:`scan_code` found in one cell of code."""

    uses: list[str]          # the watched names the code refers to (sorted)
    tamper: list[str]        # what the code's text shows an attempt to do (TAMPER_PATTERNS)
    parsed: bool             # False: judged by its text (too long, or not Python syntax)
    reason: str = ""         # why it was not parsed
    monitor: list[str] = dataclasses.field(default_factory=list)  # see monitor_tampering


def parse_cell(source: str) -> ast.Module | None:
    """A cell's syntax tree (IPython's ``%`` and ``!`` lines as ``pass``), or None."""
    if len(source) > MAX_PARSED_CELL:
        return None
    try:
        return ast.parse(_without_magics(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def scan_code(source: str, watch: Collection[str] = (REFERENCE,),
              aliases: Mapping[str, str] | None = None, star: Iterable[str] = ()) -> CodeScan:
    """The watched names one cell of code uses, and any tampering its text shows.

    Python code is parsed (IPython's ``%`` and ``!`` lines count as ``pass``) and names are
    resolved through its imports (:func:`qualified_names`; ``aliases`` and ``star``: bound by the
    notebook's other cells); a name matches a watched one when it is that name or inside it
    (``mlcourse_utils.mle.gaussian_mle`` is inside ``mlcourse_utils``, :func:`matches`).
    Comments and strings never count. A cell longer than :data:`MAX_PARSED_CELL` characters, or
    one that is not Python, is judged by its text: a watched name written anywhere in it counts.

    In the grader, run it only inside :func:`~.analysis.analyse`'s child: parsing costs
    hundreds of times the text's size in memory.
    """
    tamper = [what for pattern, what in _TAMPER if pattern.search(source)]
    reason, names = "", None
    if len(source) > MAX_PARSED_CELL:
        reason = f"it is longer than {MAX_PARSED_CELL} characters"
    else:
        try:
            names = qualified_names(ast.parse(_without_magics(source)), aliases, star)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            reason = f"it is not valid Python ({type(exc).__name__})"
    if names is not None:
        uses = sorted(w for w in watch if any(matches(n, w) for n in names))
        monitor = monitor_tampering(names)
    else:
        uses = sorted(w for w in watch
                      if re.search(r"(?<![\w.])" + re.escape(w) + r"(?!\w)", source))
        for module in _IMPORT_LINE.findall(source):
            uses += [w for w in watch if matches(module, w) and w not in uses]
        uses.sort()
        monitor = []
    return CodeScan(uses, tamper, names is not None, reason, monitor)


def notebook_bindings(sources: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """The aliases and star imports that all of a notebook's code cells bind (cells share one
    namespace: a module imported in one cell is used in another)."""
    aliases, star = {}, []
    for source in sources:
        tree = parse_cell(source)
        if tree is not None:
            bind_names(tree, aliases, star)
    return aliases, star
