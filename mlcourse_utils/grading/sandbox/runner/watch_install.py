"""The watch on forbidden calls, put together: its state, its reports, its import hook and its
audit hook, and :func:`_install_monitor`, which builds every part of the watch in turn."""

import os
import struct
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (one namespace once joined: see seccomp.py)
    from .watch_events import _call_events, _import_events, _tamper_events
    from .watch_names import _lookup, _replacing, _resolving
    from .watch_owners import _code_owners, _exemptions
    from .watch_rules import _FRAME_ATTRIBUTES, _FRAME_EVENTS, _IMPORT_HOOK, _Refused
    from .watch_stand_ins import (
        _class_watch,
        _copies,
        _signature_classes,
        _stand_ins,
        _trampolines,
    )


def _watch_state(fd, programs_blocked):
    """What the parts of the watch share, in one namespace that only :func:`_install_monitor`
    holds while it builds them (each part takes what it uses into cells of its own)."""
    import types
    from _thread import get_ident

    ModuleType = types.ModuleType
    return types.SimpleNamespace(
        fd=fd, programs_blocked=programs_blocked, types=types, get_ident=get_ident,
        write=os.write, pack=struct.pack, audit=sys.audit, getframe=sys._getframe,
        gettrace=sys.gettrace, getprofile=sys.getprofile,
        FunctionType=types.FunctionType, CodeType=types.CodeType, ModuleType=ModuleType,
        class_vars=type.__dict__["__dict__"].__get__,  # (never a class's own __getattribute__)
        class_mro=type.__dict__["__mro__"].__get__,
        module_vars=ModuleType.__dict__["__dict__"].__get__,
        set_traceback=BaseException.__dict__["__traceback__"].__set__,
        set_context=BaseException.__dict__["__context__"].__set__,
        set_cause=BaseException.__dict__["__cause__"].__set__,
        missing=object(),
        # Each watched function has a number: its label (None: it depends on the receiver), the
        # original the stand-in calls, the stand-in's code, {id(class): label} for a method
        # shared with other classes, and its kind ("function", "compiled", or "signal" for
        # signal.signal).
        labels=[], originals=[], codes=[], receivers=[], kinds=[],
        code_index={},        # id(a stand-in's code) -> its number
        done={},              # id(an original) -> its number
        kept=[],              # what is watched (kept alive: its id stays unique)
        replacing={},         # id(compiled original) -> (original, stand-in): not replaced yet
        stand_ins={},         # id(compiled original) -> its stand-in
        prints={},            # a code's shape -> [(original code, label)]: copies are refused
        raw_prints=set(),     # the bytecode of every watched original (long enough to be unique)
        faces=[],             # number -> ids of the objects that are that function (a dispatcher)
        baselines={},         # id(a library module's namespace) -> a copy, as it was loaded
        library_functions={},  # id(function) -> whether its code is a library's (until changed)
        student_codes=set(), student_kept=[],  # code run or made from text by student code
        packages=set(),       # packages whose tables may hold a compiled original
        patched_classes={},   # id(class) -> label (every method watched)
        watched_modules=set(),  # modules that hold a stand-in (a re-import would undo it)
        patched_modules=set(),
        prefixes=[],          # module prefixes, and every name not resolved yet
        lazy={},              # entry -> its parts: not resolved yet (its module is not loaded)
        triggers=set(),       # the modules whose import may resolve an entry of `lazy`
        roots=set(),          # top-level packages of `prefixes` (imports the hook must see first)
        pending=set(),        # imported without the import hook: changed at the next event
        listings={},          # folder -> its file names (may a package hold a submodule?)
        loaded_files=set(),   # source files of the modules loaded (a second run is a copy)
        # per thread: the forbidden calls running ([label, counted] or None), inside the hook,
        # reading frames for the hook, wrapped imports running
        stacks={}, inside=set(), own=set(), loading={},
        child=[False],        # a forked child: every forbidden call is reported
        # whose code is running: the Python installation's folders, the runner's own code, and
        # helpers that hand their caller frames
        libraries=tuple(sorted({os.path.join(p, "") for p in (
            sys.prefix, sys.base_prefix, sys.exec_prefix, *[p for p in sys.path if p])})),
        own_codes={v.__code__ for v in globals().values() if type(v) is types.FunctionType},
        helpers=set(),
    )


def _reporting(w):
    """Reports on the reply pipe: ``emit`` (each once per request, and per process in a forked
    child), ``monitor`` (a route around the watch), ``next_request`` (a request starts)."""
    import mmap

    fd, child, write, pack = w.fd, w.child, w.write, w.pack
    reported = set()
    page = mmap.mmap(-1, 8)  # the request number, shared with forked children

    def clean(text):
        return "".join(c for c in str(text)[:200] if c.isalnum() or c in "._- ")

    def emit(kind, key, text):
        mark = (kind, text, bytes(page[:8])) if child[0] else (kind, text)
        if mark in reported:
            return
        reported.add(mark)
        data = f'{{"event": "{kind}", "{key}": "{clean(text)}"}}'.encode()
        frame = pack(">I", len(data)) + data
        while frame:
            frame = frame[write(fd, frame):]

    def monitor(what):
        emit("monitor", "what", what)

    def next_request():
        if not child[0]:
            reported.clear()
            page[:8] = (int.from_bytes(page[:8], "little") + 1).to_bytes(8, "little")

    return dict(emit=emit, monitor=monitor, next_request=next_request)


def _import_hook(w):
    """The import hook, made from its text with constants only: ``Loader``, ``Finder``, the
    ``finder`` to put first in ``sys.meta_path``, and its functions and their codes (the hook
    answers only those codes' events, and reports a change to them)."""
    class_vars, own_codes = w.class_vars, w.own_codes
    constants = {"__audit__": w.audit, "__getattr__": getattr, "__hasattr__": hasattr}
    namespace = {"__builtins__": __builtins__, "__name__": "mlcourse_watch"}
    exec(compile(_IMPORT_HOOK, "<mlcourse watch>", "exec"), namespace)
    Loader, Finder = namespace["Loader"], namespace["Finder"]
    finders = tuple(sys.meta_path)  # (the interpreter's, before any student code ran)
    constants.update({"__L__": Loader, "__finders__": finders})
    hook_functions, hook_codes = {}, {}
    for cls, method in ((Loader, "exec_module"), (Finder, "find_spec"),
                        (Loader, "__getattr__")):
        fn = class_vars(cls)[method]
        fn.__code__ = fn.__code__.replace(co_consts=tuple(
            constants.get(c, c) if type(c) is str else c for c in fn.__code__.co_consts))
        hook_functions[method], hook_codes[method] = fn, fn.__code__
    own_codes.update(hook_codes.values())
    finder = Finder()
    return dict(Loader=Loader, Finder=Finder, finder=finder, hook_functions=hook_functions,
                hook_codes=hook_codes)


def _audit_hook(w):
    """The audit hook (``hook``): it hands each event it hears to its handler in ``w.handlers``
    (events the watch's own work raises are not heard); and the state of a forked child."""
    handlers, monitor, get_ident, getframe = w.handlers, w.monitor, w.get_ident, w.getframe
    inside, own, child, stacks = w.inside, w.own, w.child, w.stacks
    interesting = frozenset({*handlers, "sys.addaudithook"})

    def hook(event, args):
        if event not in interesting or event == "object.__getattr__" and (
                len(args) < 2 or args[1] not in _FRAME_ATTRIBUTES) or \
                event == "object.__setattr__" and (len(args) < 2 or args[1] != "__code__"):
            return
        if event == "sys.addaudithook":  # a later hook would see what this one hands out
            monitor("adds an audit hook")
            raise RuntimeError("no audit hook may be added while the notebook is graded")
        tid = get_ident()
        if tid in inside:
            if tid not in own and (event in _FRAME_EVENTS or event == "object.__getattr__"):
                monitor("runs code inside the watch that inspects frames")
            return
        inside.add(tid)
        try:
            own.add(tid)
            try:
                origin = getframe(1)
            except ValueError:
                origin = None
            finally:
                own.discard(tid)
            handlers[event](tid, event, args, origin)
        except _Refused:
            raise
        except Exception:  # noqa: BLE001, S110 (never break the operation being audited)
            pass
        finally:
            inside.discard(tid)

    def after_fork_in_child():
        child[0] = True
        me = get_ident()
        for tid in [t for t in stacks if t != me]:
            stacks.pop(tid, None)
        inside.clear()
        own.clear()

    return dict(hook=hook, after_fork_in_child=after_fork_in_child)


def _resolve_all(w, entries):
    """Watch every entry whose module is loaded; the others wait for their module's import.
    Returns ``(number of functions watched now, names watched on import)``."""
    ModuleType, module_vars, resolve, flush = w.ModuleType, w.module_vars, w.resolve, w.flush
    watch_compiled, keep_baseline, kinds = w.watch_compiled, w.keep_baseline, w.kinds
    lazy, prefixes, triggers, roots = w.lazy, w.prefixes, w.triggers, w.roots
    watched_modules, baselines = w.watched_modules, w.baselines
    for entry in entries:
        lazy[entry] = parts = entry.split(".")
        if parts[0] not in sys.modules:
            continue  # (a whole package is never imported here)
        resolve(entry)
    for entry, parts in lazy.items():  # the rest waits for its module
        if entry not in prefixes:
            prefixes.append(entry)
        triggers.update(".".join(parts[:cut]) for cut in range(1, len(parts)))
    roots.update(p.partition(".")[0] for p in prefixes)
    import _signal  # a Python signal handler is handed the frame that runs (the hook's)

    watch_compiled(module_vars(_signal)["signal"], "signal.signal", "signal")
    watched_modules.add("_signal")
    count = sum(1 for k in kinds if k != "signal")
    flush()
    for module in list(sys.modules.values()):
        if isinstance(module, ModuleType):
            keep_baseline(module)
    builtins_ = module_vars(sys.modules["builtins"])
    baselines[id(builtins_)] = builtins_.copy()
    return count, sorted(prefixes)


def _install_monitor(entries, fd, programs_blocked=False):
    """Watch the calls ``entries`` (qualified names or module prefixes), reporting on the
    descriptor ``fd``; ``programs_blocked``: the seccomp filter refuses new programs. Returns
    ``(number of functions watched now, names watched on import)``."""
    w = _watch_state(fd, programs_blocked)
    # Each part takes from `w` what the parts before it made, and adds its own functions.
    for build in (_reporting, _import_hook, _trampolines, _signature_classes, _copies,
                  _stand_ins, _class_watch, _lookup, _replacing, _code_owners, _exemptions,
                  _resolving):
        vars(w).update(build(w))
    w.handlers = {**_call_events(w), **_import_events(w), **_tamper_events(w)}
    vars(w).update(_audit_hook(w))
    module_vars, ModuleType = w.module_vars, w.ModuleType
    w.loaded_files.update(f for f in (module_vars(m).get("__file__") for m in list(
        sys.modules.values()) if isinstance(m, ModuleType)) if type(f) is str)
    # The hook is added once the watched functions are in place (their setting up raises
    # events of its own, thousands where a whole package is forbidden); nothing runs in
    # between that could call one. Later, the hook does that work itself.
    sys.meta_path.insert(0, w.finder)
    found = _resolve_all(w, entries)
    sys.addaudithook(w.hook)
    os.register_at_fork(after_in_child=w.after_fork_in_child)
    return found
