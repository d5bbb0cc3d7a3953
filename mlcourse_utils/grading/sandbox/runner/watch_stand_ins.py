"""The watch on forbidden calls, its stand-ins: a Python function's code changed in place into
a trampoline, a compiled callable replaced by a stand-in, the methods of a class or an object;
and the fingerprints that refuse to run a copy of an original's code.

Each function below builds part of the watch once, when it is installed: it takes what it needs
from the watch's state ``w`` (``watch_install.py``) into locals, defines its closures over them
and returns them by name. A closure never holds ``w`` itself, nor looks up a function of the
runner by its global name when it runs (student code can rebind the runner's globals; it cannot
reach a closure's cells without the watch seeing it). So such a function is as long as the
closures it defines (they share its cells; each is short): the runner's only functions over 60
lines.
"""

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (one namespace once joined: see seccomp.py)
    from .watch_rules import _COMPILED_TYPES, _TRAMPOLINE, _WORKING_SPECIALS, _Refused


def _trampolines(w):
    """``trampoline_code``: a stand-in's code, from a template per number of free variables."""
    audit = w.audit
    templates = {}

    def trampoline_code(nfree, index, name, qualname, filename, firstlineno):
        template = templates.get(nfree)
        if template is None:
            free = ", ".join(f"v{i}" for i in range(nfree))
            text = _TRAMPOLINE.replace("{free}", free) if nfree else \
                _TRAMPOLINE.replace("        if 0:\n            ({free},)\n", "") \
                .replace("{free}", "")
            namespace = {}
            exec(compile(text, "<mlcourse watch>", "exec"), namespace)
            template = templates[nfree] = namespace["_outer"](*range(nfree))
        consts = tuple(audit if c == "__audit__" else index if c == -70001 else c
                       for c in template.co_consts)
        return template.replace(co_consts=consts, co_name=name, co_qualname=qualname,
                                co_filename=filename, co_firstlineno=firstlineno)

    return dict(trampoline_code=trampoline_code)


def _signature_classes(w):
    """What a watched function answers ``inspect.signature`` with (never its original)."""
    import inspect

    class FunctionLike:
        """What inspect reads of a function, for its signature (never the original itself)."""

        def __init__(self, **attributes):
            self.__dict__.update(attributes)

        def __call__(self):  # (inspect wants something callable; it is never called)
            raise TypeError("not a function")

    class LazySignature(inspect.Signature):
        """An original's signature, worked out when first asked (``inspect.signature``)."""

        __slots__ = ("_of",)

        def __init__(self, of):  # noqa: D107 (of: a function-like namespace, never the original)
            self._of = of

        @property
        def _parameters(self):
            return inspect._signature_from_function(inspect.Signature, self._of).parameters

        @property
        def _return_annotation(self):
            return inspect._signature_from_function(inspect.Signature,
                                                    self._of).return_annotation

        def replace(self, **changes):
            return inspect.Signature(list(self.parameters.values()),
                                     return_annotation=self.return_annotation).replace(**changes)

    return dict(FunctionLike=FunctionLike, LazySignature=LazySignature)


def _copies(w):
    """Copies of an original's code: ``fingerprint`` records an original's code, ``refuse_copy``
    refuses to run a copy (reported as that call); ``compiled_under_library_name``."""
    CodeType, ModuleType, emit = w.CodeType, w.ModuleType, w.emit
    prints, libraries, loaded_files = w.prints, w.libraries, w.loaded_files

    def shape(code):
        return (code.co_argcount, code.co_kwonlyargcount, code.co_nlocals, code.co_stacksize,
                len(code.co_names), code.co_flags)

    def fingerprint(code, label):
        """Refuse copies of ``code`` (and of the code objects it holds). Code a library made
        from text (a namedtuple's ``__new__``, a dataclass's ``__init__``) is alike for every
        class of the same shape: not a copy of anything."""
        if code.co_filename.startswith("<"):
            return
        todo, seen = [code], 0
        while todo and seen < 2000:
            c = todo.pop()
            seen += 1
            prints.setdefault(shape(c), []).append((c, label))
            todo.extend(k for k in c.co_consts if type(k) is CodeType)

    def same(code, original, depth=0):
        """The same code but for names of its own (function, variables, file, lines)."""
        if code is original:
            return True
        if depth > 20 or shape(code) != shape(original) or code.co_names != original.co_names \
                or len(code.co_consts) != len(original.co_consts) \
                or code.co_code != original.co_code:
            return False
        for a, b in zip(code.co_consts, original.co_consts, strict=True):  # (plain values)
            if type(a) is not type(b):
                return False
            if type(a) is CodeType:
                if not same(a, b, depth + 1):
                    return False
            elif a != b:
                return False
        return True

    def copies_of(code):
        """The labels of the forbidden functions whose code ``code`` (or a code it holds) is."""
        todo, seen, found = [code], 0, []
        while todo and seen < 20000:
            c = todo.pop()
            seen += 1
            label = next((label for original, label in prints.get(shape(c), ())
                          if same(c, original)), None)
            if label is not None:
                found.append(label)
            else:
                todo.extend(k for k in c.co_consts if type(k) is CodeType)
        return sorted(set(found))

    def refuse_copy(code, first_run_allowed):
        """Refuse to run a copy of a forbidden function's code (reported as that call)."""
        if not prints:
            return
        name = code.co_filename
        if first_run_allowed and code.co_name == "<module>" and type(name) is str \
                and name.startswith(libraries):
            if not loaded_files:
                loaded_files.update(f for f in (getattr(m, "__file__", None) for m in list(
                    sys.modules.values()) if isinstance(m, ModuleType)) if type(f) is str)
            if name not in loaded_files:
                loaded_files.add(name)  # (a library module's first run)
                return
        found = copies_of(code)
        for label in found:
            emit("forbidden", "name", label)
        if found:
            raise _Refused(f"this code is a copy of {', '.join(found)}, forbidden while the "
                           "notebook is graded")

    def compiled_under_library_name(source, filename):
        """Code compiled under the name of a library file whose text it is not."""
        if isinstance(filename, bytes):
            filename = os.fsdecode(filename)
        if type(filename) is not str or not filename.startswith(libraries):
            return False
        if isinstance(source, str):
            source = source.encode()
        if not isinstance(source, (bytes, bytearray, memoryview)):
            return True  # (a syntax tree: no file holds that)
        try:
            with open(filename, "rb") as fh:
                return fh.read() != bytes(source)
        except OSError:
            return True

    return dict(fingerprint=fingerprint, refuse_copy=refuse_copy,
                compiled_under_library_name=compiled_under_library_name)


def _stand_ins(w):
    """Making stand-ins: ``watch_function`` (in place), ``watch_compiled`` (a replacement, put
    in place by ``flush``), ``watch_callable`` (either); each returns the watched number."""
    FunctionType, FunctionLike, LazySignature = w.FunctionType, w.FunctionLike, w.LazySignature
    trampoline_code, fingerprint = w.trampoline_code, w.fingerprint
    labels, originals, codes, receivers, kinds = w.labels, w.originals, w.codes, w.receivers, \
        w.kinds
    code_index, done, kept, faces, raw_prints = w.code_index, w.done, w.kept, w.faces, \
        w.raw_prints
    replacing, stand_ins, packages = w.replacing, w.stand_ins, w.packages

    def add(original, label, receiver, kind, code, face):
        index = len(originals)
        faces.append({id(face)})
        labels.append(label)
        originals.append(original)
        codes.append(code)
        receivers.append(receiver)
        kinds.append(kind)
        code_index[id(code)] = index
        return index

    def watch_function(fn, label, receiver=None, depth=0):
        """Make the Python function ``fn`` a stand-in, in place. ``receiver``: the class whose
        instances alone make a call of it forbidden (a method shared by several classes)."""
        index = done.get(id(fn))
        if index is None:
            code = fn.__code__
            closure = fn.__closure__
            if len(code.co_freevars) != len(closure or ()):
                return None
            original = FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, closure)
            original.__kwdefaults__ = fn.__kwdefaults__
            original.__qualname__ = fn.__qualname__
            tramp = trampoline_code(len(code.co_freevars), len(originals), code.co_name,
                                    code.co_qualname, code.co_filename, code.co_firstlineno)
            if "__signature__" not in fn.__dict__:
                fn.__signature__ = LazySignature(FunctionLike(
                    __name__=fn.__name__, __code__=code, __defaults__=fn.__defaults__,
                    __kwdefaults__=fn.__kwdefaults__, __annotations__=fn.__annotations__))
            try:
                fn.__code__ = tramp
            except (AttributeError, TypeError, ValueError):
                return None
            index = add(original, label if receiver is None else None,
                        None if receiver is None else {}, "function", tramp, fn)
            done[id(fn)] = index
            kept.append(fn)
            fingerprint(code, label)
            if len(code.co_code) >= 48 and not code.co_filename.startswith("<"):
                raw_prints.add(code.co_code)
            if depth < 3:  # the original inside a decorator: its __wrapped__ or its closure
                inner = fn.__dict__.get("__wrapped__")
                cells = [c.cell_contents for c in closure or () if _filled(c)]
                for other in ([inner] if inner is not None else []) + cells:
                    if type(other) is FunctionType and other is not fn and \
                            (other is inner or other.__name__ == fn.__name__):
                        watch_function(other, label, receiver, depth + 1)
        if receiver is not None and receivers[index] is not None:
            receivers[index].setdefault(id(receiver), label)
            kept.append(receiver)
        elif receiver is None:
            labels[index], receivers[index] = label, None
        return index

    def _filled(cell):
        try:
            cell.cell_contents  # noqa: B018
        except ValueError:
            return False
        return True

    def watch_compiled(original, label, kind="compiled"):
        """A stand-in for a compiled callable, replacing it wherever it is found."""
        index = done.get(id(original))
        if index is not None:
            return index
        name = str(getattr(original, "__name__", "") or label.rpartition(".")[2])
        code = trampoline_code(0, len(originals), name, name, "<mlcourse watch>", 1)
        stand_in = FunctionType(code, {"__builtins__": __builtins__}, name)
        for attr in ("__doc__", "__module__"):
            try:
                setattr(stand_in, attr, getattr(original, attr))
            except (AttributeError, TypeError):
                pass
        index = add(original, label, None, kind, code, original)
        faces[index].add(id(stand_in))
        done[id(original)] = index
        kept.append(stand_in)
        replacing[id(original)] = (original, stand_in)
        stand_ins[id(original)] = stand_in
        if type(original).__name__ == "ufunc":  # (scipy.special keeps tables of its ufuncs)
            packages.add(".".join(label.split(".")[:2]))
            # A ufunc's methods and attributes stay where code finds them (np.logaddexp.reduce
            # in a task that may use it); a call through a method is the same forbidden call.
            for attr in ("nin", "nout", "nargs", "ntypes", "types", "identity", "signature"):
                try:
                    setattr(stand_in, attr, getattr(original, attr))
                except (AttributeError, TypeError):
                    pass
            for method in ("reduce", "accumulate", "reduceat", "outer", "at"):
                bound = getattr(original, method, None)
                if bound is not None:
                    watch_compiled(bound, label, kind)
                    setattr(stand_in, method, stand_ins[id(bound)])
        return index

    def watch_callable(value, label):
        if type(value) is FunctionType:
            return watch_function(value, label)
        implementation = getattr(value, "_implementation", None) \
            if type(value).__name__ == "_ArrayFunctionDispatcher" else None
        if type(implementation) is FunctionType:  # numpy.cov: the dispatcher stays
            index = watch_function(implementation, label)
            if index is not None:
                faces[index].add(id(value))
                kept.append(value)
            return index
        if type(value).__name__ in _COMPILED_TYPES:
            return watch_compiled(value, label)
        return None

    return dict(watch_function=watch_function, watch_compiled=watch_compiled,
                watch_callable=watch_callable, _filled=_filled)


def _class_watch(w):
    """The methods of a forbidden class (``watch_class``) or object (``watch_methods``)."""
    FunctionType, class_vars, class_mro, module_vars = w.FunctionType, w.class_vars, \
        w.class_mro, w.module_vars
    watch_function, faces, patched_classes = w.watch_function, w.faces, w.patched_classes

    def functions_of(cls):
        """The functions a class defines itself: {name: function}."""
        found = {}
        for attr, value in list(class_vars(cls).items()):
            if type(value) in (staticmethod, classmethod):
                value = value.__func__
            if type(value) is FunctionType:
                found[attr] = value
        return found

    def watch_class(cls, label):
        """Every method a class defines, and its construction."""
        if patched_classes.get(id(cls)) is not None:
            return
        patched_classes[id(cls)] = label
        for attr, fn in functions_of(cls).items():
            if attr in ("__init__", "__new__", "__call__"):
                index = watch_function(fn, label)
                if index is not None and attr != "__call__":
                    faces[index].add(id(cls))  # (code that names the class makes one)
            elif attr in _WORKING_SPECIALS or not (attr.startswith("__") and
                                                   attr.endswith("__")):
                watch_function(fn, f"{label}.{attr}")

    def frozen_class(cls):
        """``multivariate_normal_frozen`` for ``multivariate_normal_gen`` (scipy's names)."""
        name = class_vars(cls).get("__module__")
        module = sys.modules.get(name) if type(name) is str else None
        if module is None or not cls.__name__.endswith("_gen"):
            return None
        frozen = module_vars(module).get(cls.__name__[:-4] + "_frozen")
        return frozen if isinstance(frozen, type) else None

    def watch_methods(owner, entry, only=None):
        """The methods of a forbidden object (all of them, or ``only`` and its private
        implementation ``_only``), on its class and on its frozen class; a method a base class
        shares with other classes is forbidden for this object's class only."""
        for cls in (type(owner), frozen_class(type(owner))):
            if cls is None:
                continue
            seen = set()
            for base in class_mro(cls):
                if base is object:
                    continue
                for attr, fn in functions_of(base).items():
                    if attr in seen:
                        continue
                    seen.add(attr)
                    if only is not None and attr not in (only, "_" + only):
                        continue
                    if only is None and attr.startswith("__") and attr.endswith("__") and \
                            attr not in ("__call__", "__init__"):
                        continue
                    label = entry if only is not None or attr in ("__call__", "__init__") \
                        else f"{entry}.{attr}"
                    watch_function(fn, label, None if base is cls else cls)

    return dict(functions_of=functions_of, watch_class=watch_class, watch_methods=watch_methods)
