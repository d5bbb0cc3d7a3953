"""The watch on forbidden calls, what its audit hook does with each event it hears: a
forbidden call's start and end, a request's start and end, imports, and the routes around the
watch it refuses or reports. Built as ``watch_stand_ins.py`` says: each function returns
``{event: handler}``, a handler being called as ``handler(thread id, event, args, frame)``."""

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (one namespace once joined: see seccomp.py)
    from .watch_rules import (
        _CTYPES_MEMORY,
        _FRAME_ATTRIBUTES,
        _FRAME_EVENTS,
        _GC_EVENTS,
        _MEMORY_SYMBOLS,
        _PROGRAM_EVENTS,
        _Refused,
    )


def _call_events(w):
    """A forbidden call starts (reported unless exempt; the stand-in gets the original), ends
    or raises; a request starts; a test's call ends (forbidden calls still running count)."""
    labels, originals, codes, receivers, kinds = w.labels, w.originals, w.codes, w.receivers, \
        w.kinds
    class_mro, own, stacks, child = w.class_mro, w.own, w.stacks, w.child
    emit, monitor, next_request, patch_pending = w.emit, w.monitor, w.next_request, \
        w.patch_pending
    running, student_in_call, exempt, hands_itself_out = w.running, w.student_in_call, \
        w.exempt, w.hands_itself_out
    gettrace, getprofile = w.gettrace, w.getprofile
    set_traceback, set_context, set_cause = w.set_traceback, w.set_context, w.set_cause

    def label_for(index, args):
        label = labels[index]
        if label is not None or not args:
            return label
        first = args[0]
        cls = first if isinstance(first, type) else type(first)
        table = receivers[index]
        for base in class_mro(cls):
            label = table.get(id(base))
            if label is not None:
                return label
        return None

    def enter(tid, origin, index, args, kwargs, box):
        own.add(tid)
        try:
            genuine = origin.f_code is codes[index]
            caller = origin.f_back if genuine else None
        finally:
            own.discard(tid)
        if not genuine:
            return
        stack = stacks.setdefault(tid, [])
        label = label_for(index, args)
        if kinds[index] == "signal":  # signal.signal: a Python handler is handed frames
            if len(args) > 1 and callable(args[1]):
                monitor("installs a signal handler")
            stack.append(None)
        elif label is None:
            stack.append(None)
        elif running(tid) and not child[0] and not student_in_call(caller, tid):
            stack.append([label, False])  # (what a forbidden call calls inside is its own)
        elif exempt(index, label, caller, tid):
            stack.append([label, False])
        else:
            stack.append([label, True])
            emit("forbidden", "name", label)
            if kinds[index] == "compiled" and hands_itself_out(index, args, kwargs):
                monitor("hands a forbidden function to its own __array_ufunc__")
            tracer = gettrace() or getprofile()
            if tracer is not None and type(tracer).__name__ != "Profiler":
                monitor("traces a forbidden call")
        box.append(originals[index])

    def leave(tid, origin, index):
        own.add(tid)
        try:
            genuine = origin.f_code is codes[index]
        finally:
            own.discard(tid)
        stack = stacks.get(tid)
        if genuine and stack:
            stack.pop()

    def on_forbidden(tid, event, args, origin):
        if len(args) == 4 and type(args[0]) is int and 0 <= args[0] < len(codes) and \
                type(args[1]) is tuple and type(args[2]) is dict and type(args[3]) is list \
                and not args[3]:
            enter(tid, origin, args[0], args[1], args[2], args[3])

    def on_return(tid, event, args, origin):
        if len(args) == 1 and type(args[0]) is int and 0 <= args[0] < len(codes):
            leave(tid, origin, args[0])

    def on_raised(tid, event, args, origin):
        if len(args) == 2 and type(args[0]) is int and 0 <= args[0] < len(codes) and \
                any(c is BaseException for c in class_mro(type(args[1]))):
            own.add(tid)
            try:
                genuine = origin.f_code is codes[args[0]]
            finally:
                own.discard(tid)
            if genuine:  # no traceback leads into the original's frames
                set_traceback(args[1], None)
                set_context(args[1], None)
                set_cause(args[1], None)

    def on_request(tid, event, args, origin):
        next_request()
        patch_pending()

    def on_done(tid, event, args, origin):
        for stack in list(stacks.values()):  # forbidden calls still running count
            first = next((e for e in list(stack) if e is not None and e[1]), None)
            if first is not None:
                emit("forbidden", "name", first[0])

    return {"mlcourse.forbidden": on_forbidden, "mlcourse.return": on_return,
            "mlcourse.raised": on_raised, "mlcourse.request": on_request,
            "mlcourse.done": on_done}


def _import_events(w):
    """The import hook's events (a module to wrap, being loaded, loaded: its names are watched
    before the import returns) and every import (a re-import, a change to the hook)."""
    Finder, Loader, finder = w.Finder, w.Loader, w.finder
    hook_functions, hook_codes, class_vars, own = w.hook_functions, w.hook_codes, \
        w.class_vars, w.own
    loading, pending, prefixes, roots = w.loading, w.pending, w.prefixes, w.roots
    watched_modules, replacing, module_name = w.watched_modules, w.replacing, w.module_name
    under_prefix, patch_module, resolve_under = w.under_prefix, w.patch_module, w.resolve_under
    replace_in, keep_baseline, flush, wrapped = w.replace_in, w.keep_baseline, w.flush, \
        w.wrapped
    monitor = w.monitor

    def is_hook_code(tid, frame, method):
        own.add(tid)
        try:
            return frame.f_code is hook_codes[method]
        finally:
            own.discard(tid)

    def hook_intact():
        return class_vars(Finder).get("find_spec") is hook_functions["find_spec"] and \
            class_vars(Loader).get("exec_module") is hook_functions["exec_module"] and \
            all(hook_functions[m].__code__ is hook_codes[m] for m in hook_codes)

    def on_find(tid, event, args, origin):
        if len(args) == 2 and type(args[0]) is str and type(args[1]) is list and \
                origin is not None and is_hook_code(tid, origin, "find_spec") and \
                wrapped(args[0]):
            args[1].append(True)

    def on_loading(tid, event, args, origin):
        if origin is None or not is_hook_code(tid, origin, "exec_module"):
            return
        loading[tid] = loading.get(tid, 0) + 1

    def on_loaded(tid, event, args, origin):
        if origin is None or not is_hook_code(tid, origin, "exec_module"):
            return
        loading[tid] = max(loading.get(tid, 1) - 1, 0)
        name = module_name(args[0]) if args else None
        if name is not None:
            pending.discard(name)
            if under_prefix(name):
                patch_module(args[0])
            resolve_under(name, ready=name)
            replace_in(args[0], replacing)
            keep_baseline(args[0])
        if not loading[tid]:
            flush()

    def on_import(tid, event, args, origin):
        name = args[0] if args and type(args[0]) is str else ""
        if name in watched_modules:
            monitor(f"re-imports {name}")
        if prefixes and len(args) > 3 and type(args[3]) is list:
            if not any(f is finder for f in args[3]):
                monitor("removes the import hook")
            elif name.partition(".")[0] in roots and args[3][0] is not finder:
                monitor("puts an import hook before the watch")
            if not hook_intact():
                monitor("changes the watch's import hook")
        if wrapped(name):
            pending.add(name)

    return {"mlcourse.find": on_find, "mlcourse.loading": on_loading,
            "mlcourse.loaded": on_loaded, "import": on_import}


def _tamper_events(w):
    """The routes around the watch: copies of an original's code refused; frames, the garbage
    collector, tracers, code made or loaded by hand, new programs and ctypes reported."""
    CodeType, library_functions, raw_prints = w.CodeType, w.library_functions, w.raw_prints
    libraries, pending, patch_pending, programs_blocked = w.libraries, w.pending, \
        w.patch_pending, w.programs_blocked
    refuse_copy, mark_student, compiled_under_library_name = w.refuse_copy, w.mark_student, \
        w.compiled_under_library_name
    running, student_anywhere, student_in_call, student_direct = w.running, \
        w.student_anywhere, w.student_in_call, w.student_direct
    is_library_frame, loads_by_itself, sets_tracer = w.is_library_frame, w.loads_by_itself, \
        w.sets_tracer
    monitor = w.monitor

    def on_gc(tid, event, args, origin):
        monitor(f"uses {event}")

    def on_frames(tid, event, args, origin):
        if event == "object.__getattr__" and (len(args) < 2 or args[1] not in
                                              _FRAME_ATTRIBUTES):
            return
        if event in ("sys._current_frames", "sys._current_exceptions"):
            if running() and student_anywhere(origin, tid):
                monitor("inspects other threads' frames while a forbidden call runs")
        elif running(tid) and student_in_call(origin, tid):
            monitor("inspects frames during a forbidden call")
        if student_direct(origin, tid):
            monitor(f"uses frames ({args[1] if event == 'object.__getattr__' else event})")

    def on_setattr(tid, event, args, origin):
        if len(args) > 1 and args[1] == "__code__":
            library_functions.pop(id(args[0]), None)

    def on_exec(tid, event, args, origin):
        if pending:
            patch_pending()
        if args and type(args[0]) is CodeType:
            refuse_copy(args[0], True)
            if origin is not None and not is_library_frame(tid, origin):
                mark_student(args[0])

    def on_new_function(tid, event, args, origin):
        if args and type(args[0]) is CodeType:
            refuse_copy(args[0], False)
            if origin is not None and not is_library_frame(tid, origin):
                mark_student(args[0])

    def on_new_code(tid, event, args, origin):
        if len(args) >= 2 and args[0] in raw_prints:
            raise _Refused("this code is a copy of a function that is forbidden while the "
                           "notebook is graded")
        if len(args) >= 2 and type(args[1]) is str and args[1].startswith(libraries) \
                and origin is not None and not is_library_frame(tid, origin):
            monitor("makes code under the name of a library file")

    def on_compile(tid, event, args, origin):
        if len(args) >= 2 and compiled_under_library_name(args[0], args[1]):
            monitor("compiles code under the name of a library file")

    def on_marshal(tid, event, args, origin):
        if loads_by_itself(tid, origin):
            monitor("loads compiled code itself (marshal)")

    def on_program(tid, event, args, origin):
        if not programs_blocked:
            monitor("starts another program (a new Python would run unwatched)")

    def on_tracer(tid, event, args, origin):
        if sets_tracer(tid, origin):
            monitor(f"installs a tracer ({event})")

    def on_dlsym(tid, event, args, origin):
        name = args[1] if len(args) > 1 and type(args[1]) is str else ""
        if name.startswith(("Py", "_Py")):
            monitor("reaches Python's C API through ctypes")
        elif name in _MEMORY_SYMBOLS:
            monitor("reads memory through ctypes")

    def on_ctypes_memory(tid, event, args, origin):
        if student_direct(origin, tid):
            monitor("reads memory through ctypes")

    def on_open(tid, event, args, origin):
        path = args[0] if args else None
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if type(path) is str and path.endswith("/mem") and path.startswith("/proc/"):
            monitor("reads its own memory (/proc)")

    return {**dict.fromkeys(_GC_EVENTS, on_gc),
            **dict.fromkeys((*_FRAME_EVENTS, "object.__getattr__"), on_frames),
            "object.__setattr__": on_setattr, "exec": on_exec, "function.__new__": on_new_function,
            "code.__new__": on_new_code, "compile": on_compile, "marshal.loads": on_marshal,
            **dict.fromkeys(_PROGRAM_EVENTS, on_program),
            "sys.settrace": on_tracer, "sys.setprofile": on_tracer, "ctypes.dlsym": on_dlsym,
            **dict.fromkeys(_CTYPES_MEMORY, on_ctypes_memory), "open": on_open}
