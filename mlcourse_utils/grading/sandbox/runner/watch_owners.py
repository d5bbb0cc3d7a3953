"""The watch on forbidden calls, whose code is running: the library's or the student's, read
from frames for the watch; and which calls an allowed library function makes itself (exempt).
Built as ``watch_stand_ins.py`` says."""

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (one namespace once joined: see seccomp.py)
    from .watch_rules import _FRAME_HELPERS


def _code_owners(w):
    """Whose code runs: ``library``, ``mark_student``, ``frames_from``, the ``student_*`` walks
    down the stack, ``running`` (a forbidden call), and the checks of three events."""
    CodeType, module_vars, code_index = w.CodeType, w.module_vars, w.code_index
    libraries, own_codes, helpers = w.libraries, w.own_codes, w.helpers
    student_codes, student_kept, own, stacks = w.student_codes, w.student_kept, w.own, w.stacks
    for module_, name_ in _FRAME_HELPERS:
        fn = module_vars(sys.modules[module_]).get(name_) if module_ in sys.modules else None
        if type(fn) is w.FunctionType:
            helpers.add(fn.__code__)

    def library(code):
        """Code of the Python installation (or made by it from text: a namedtuple, scipy's
        argument parsers), not the student's (a cell, or text the student ran)."""
        if id(code) in code_index or code in own_codes:
            return True
        name = code.co_filename
        if type(name) is not str or name.startswith("<ipython-input"):
            return False
        if name.startswith("<"):
            return id(code) not in student_codes
        return name.startswith(libraries)

    def mark_student(code):
        """``code`` (and what it holds) was run or made by the student's code."""
        todo, seen = [code], 0
        while todo and seen < 20000:
            c = todo.pop()
            seen += 1
            if id(c) not in student_codes:
                student_codes.add(id(c))
                student_kept.append(c)
            todo.extend(k for k in c.co_consts if type(k) is CodeType)

    def frames_from(frame, tid):
        """The frames from ``frame`` down the stack, with their code (read for the watch), one
        at a time: a walk that stops early reads no more."""
        for _ in range(500):
            if frame is None:
                return
            own.add(tid)
            try:
                code, below = frame.f_code, frame.f_back
            finally:
                own.discard(tid)
            yield frame, code
            frame = below

    def student_in_call(frame, tid):
        """Student code runs between ``frame`` and the forbidden call below it."""
        for _frame, code in frames_from(frame, tid):
            if id(code) in code_index:
                return False
            if not library(code):
                return True
        return False

    def student_anywhere(frame, tid):
        return any(not library(code) for _frame, code in frames_from(frame, tid))

    def student_direct(frame, tid):
        """Student code takes what ``frame`` does (through a helper that hands it frames)."""
        for _frame, code in frames_from(frame, tid):
            if code not in helpers:
                return not library(code)
        return False

    def running(tid=None):
        return any(e is not None for e in stacks.get(tid, ())) if tid is not None else \
            any(e is not None for s in list(stacks.values()) for e in s)

    def is_library_frame(tid, frame):
        own.add(tid)
        try:
            return library(frame.f_code)
        finally:
            own.discard(tid)

    def loads_by_itself(tid, frame):
        """marshal.loads not called by an import (nor a reload) for the code of a module."""
        for _frame, code in frames_from(frame, tid):
            if code in own_codes:
                continue
            if code.co_filename.startswith("<frozen importlib"):
                if code.co_name in ("_find_and_load", "_find_and_load_unlocked", "_exec",
                                    "_load"):
                    return False
                continue
            return not library(code)
        return False

    def sets_tracer(tid, frame):
        for _frame, code in frames_from(frame, tid):
            if code.co_filename.endswith(os.sep + "threading.py"):
                threading_ = module_vars(sys.modules["threading"]) if "threading" in \
                    sys.modules else {}
                return threading_.get("_trace_hook") is not None or \
                    threading_.get("_profile_hook") is not None
            if not library(code):
                return True
            if code.co_filename.endswith((os.sep + "cProfile.py", os.sep + "profile.py")):
                return False
        return False

    return dict(library=library, mark_student=mark_student, student_in_call=student_in_call,
                student_anywhere=student_anywhere, student_direct=student_direct,
                running=running, is_library_frame=is_library_frame,
                loads_by_itself=loads_by_itself, sets_tracer=sets_tracer)


def _exemptions(w):
    """A call an allowed library function makes itself (``exempt``), read against the modules
    as they were loaded (``keep_baseline``); a ufunc handed to student code
    (``hands_itself_out``)."""
    FunctionType, ModuleType, types = w.FunctionType, w.ModuleType, w.types
    class_vars, class_mro, module_vars = w.class_vars, w.class_mro, w.module_vars
    library, functions_of, missing = w.library, w.functions_of, w.missing
    baselines, libraries, library_functions = w.baselines, w.libraries, w.library_functions
    stand_ins, kept, code_index, faces, own = w.stand_ins, w.kept, w.code_index, w.faces, w.own

    def keep_baseline(module):
        """A copy of a library module's namespace as it was loaded (a library function's call
        is its own only while what it names is unchanged)."""
        name = module_vars(module).get("__file__")
        if type(name) is str and name.startswith(libraries):
            baselines.setdefault(id(module_vars(module)), module_vars(module).copy())

    def unchanged(namespace, names):
        base = baselines.get(id(namespace))
        if base is None:
            return False
        for name in names:
            now, then = namespace.get(name, missing), base.get(name, missing)
            if now is not then and stand_ins.get(id(then)) is not now:
                return False
        return True

    def library_function(fn):
        found = library_functions.get(id(fn))
        if found is None:
            found = library_functions[id(fn)] = library(fn.__code__)
            kept.append(fn)
        return found

    def trusted(value, depth=0):
        """Not a callable of the student's (on a library object, it would steer its methods)."""
        kind = type(value)
        if kind is FunctionType:
            return library_function(value)
        if kind is types.MethodType:
            return trusted(value.__func__, depth + 1)
        if kind.__name__ == "partial" and depth < 5:
            return trusted(object.__getattribute__(value, "func"), depth + 1)
        return not callable(value) or depth < 5 and library_class(kind)

    def library_class(cls):
        """A class (and its bases) whose every function is library code."""
        return all(library_function(fn) for base in class_mro(cls)
                   for fn in functions_of(base).values())

    def exempt(index, label, frame, tid):
        """A call that an allowed library function makes itself: its code names the forbidden
        call (not a function handed to it, as map or numpy.apply_along_axis are), its module
        and the modules it names are as they were loaded, and it is not a method of a student's
        class; or a library module (or class body) calls it while it is imported."""
        if frame is None:
            return False
        own.add(tid)
        try:
            code = frame.f_code
            if not library(code) or id(code) in code_index:
                return False
            if not code.co_flags & 1:  # (not CO_OPTIMIZED: a module or class body, importing)
                return True
            names = code.co_names
            namespace = frame.f_globals
            builtins_ = frame.f_builtins
            receiver = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount and \
                code.co_varnames[0] in ("self", "cls") else missing
        finally:
            own.discard(tid)
        mine = faces[index]
        named = False
        for name in names:
            value = namespace.get(name, missing)
            if id(value) in mine:
                named = True
            elif isinstance(value, ModuleType):
                inner = module_vars(value)
                if any(id(inner.get(n)) in mine for n in names):
                    named = True
                if not unchanged(inner, names):
                    return False
        if receiver is not missing:
            cls = receiver if isinstance(receiver, type) else type(receiver)
            if not library_class(cls):
                return False
            if not isinstance(receiver, type):
                try:
                    attrs = object.__getattribute__(receiver, "__dict__")
                except AttributeError:
                    attrs = {}
                if type(attrs) is dict and not all(trusted(v) for v in attrs.values()):
                    return False
            for name in names:
                for base in class_mro(cls):
                    found = class_vars(base).get(name, missing)
                    if found is not missing:
                        if type(found) in (staticmethod, classmethod):
                            found = found.__func__
                        named = named or id(found) in mine
                        break
        return named and unchanged(namespace, names) and \
            (type(builtins_) is not dict or unchanged(builtins_, names))

    def hands_itself_out(index, args, kwargs):
        """A compiled original (a ufunc) would be handed to student code by numpy's
        ``__array_ufunc__`` protocol."""
        values = list(args) + list(kwargs.values())
        for value in list(values):
            if type(value) is tuple:
                values.extend(value)
        for value in values:
            for base in class_mro(type(value)):
                method = class_vars(base).get("__array_ufunc__")
                if method is not None:
                    if type(method) is FunctionType and not library(method.__code__):
                        return True
                    break
        return False

    return dict(keep_baseline=keep_baseline, exempt=exempt, hands_itself_out=hands_itself_out)
