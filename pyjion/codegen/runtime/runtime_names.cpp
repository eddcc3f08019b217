// Runtime helpers for the name, attribute, import and cell opcodes. Each one
// follows the semantics of the corresponding opcode in CPython 3.11's
// Python/ceval.c (lookup order, fast and slow paths, exception types and
// messages), written against exported API only. See runtime_names.h.
#include "runtime/cpython_api.h"
#include "runtime/runtime_names.h"

#include <frameobject.h>   // PyFrame_FastToLocalsWithError, PyFrame_LocalsToFast

// interp_names.c: PyInterpreterState.import_func (pycore_interp.h is C only).
extern "C" PyObject *pyj_interp_import_func(PyThreadState *ts);

namespace pyjion::rtn {

namespace {

// Interned attribute / key names, made on first use. NULL (with MemoryError
// set) only if the very first interning fails.
struct Names {
    PyObject *import_ = nullptr;          // __import__
    PyObject *build_class = nullptr;      // __build_class__
    PyObject *annotations = nullptr;      // __annotations__
    PyObject *displayhook = nullptr;      // displayhook
    PyObject *all = nullptr;              // __all__
    PyObject *dict = nullptr;             // __dict__
    PyObject *name_ = nullptr;            // __name__
    PyObject *spec = nullptr;             // __spec__
    PyObject *name_attr = nullptr;        // name (NameError.name)
};

Names *names()
{
    static Names n;
    static bool ready = false;
    if (ready) return &n;
    struct { PyObject **slot; const char *text; } all[] = {
        {&n.import_, "__import__"}, {&n.build_class, "__build_class__"}, {&n.annotations, "__annotations__"},
        {&n.displayhook, "displayhook"}, {&n.all, "__all__"}, {&n.dict, "__dict__"},
        {&n.name_, "__name__"}, {&n.spec, "__spec__"}, {&n.name_attr, "name"},
    };
    for (auto &entry : all) {
        if (*entry.slot == nullptr) {
            *entry.slot = PyUnicode_InternFromString(entry.text);   // kept for the life of the process
            if (*entry.slot == nullptr) return nullptr;
        }
    }
    ready = true;
    return &n;
}

// ceval.c's format_exc_check_arg: `exc` with `format` applied to the name's
// UTF-8 text; a NameError also gets its .name set (for "Did you mean" hints).
void format_exc_check_arg(PyObject *exc, const char *format, PyObject *obj)
{
    if (obj == nullptr) return;
    const char *text = PyUnicode_AsUTF8(obj);
    if (text == nullptr) return;
    PyErr_Format(exc, format, text);
    if (exc != PyExc_NameError) return;
    Names *n = names();
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (n != nullptr && PyErr_GivenExceptionMatches(value, PyExc_NameError)) {
        auto *err = reinterpret_cast<PyNameErrorObject *>(value);
        if (err->name == nullptr) {
            // A failure here is dropped: the NameError is restored below anyway.
            (void)PyObject_SetAttr(value, n->name_attr, obj);
        }
    }
    PyErr_Restore(type, value, tb);
}

constexpr const char kNameErrorMsg[] = "name '%.200s' is not defined";
constexpr const char kUnboundLocalMsg[] = "cannot access local variable '%s' where it is not associated with a value";
constexpr const char kUnboundFreeMsg[] =
    "cannot access free variable '%s' where it is not associated with a value in enclosing scope";

void name_error(PyObject *name) { format_exc_check_arg(PyExc_NameError, kNameErrorMsg, name); }

// Looks `name` up in a mapping that may not be a dict: a new reference, or
// NULL with no exception if it is missing (KeyError swallowed), or NULL with an
// exception set. `*failed` tells the last two apart.
PyObject *mapping_lookup(PyObject *mapping, PyObject *name, bool *failed)
{
    *failed = false;
    if (PyDict_CheckExact(mapping)) {
        PyObject *v = PyDict_GetItemWithError(mapping, name);
        if (v != nullptr) {
            Py_INCREF(v);
            return v;
        }
        *failed = PyErr_Occurred() != nullptr;
        return nullptr;
    }
    PyObject *v = PyObject_GetItem(mapping, name);
    if (v == nullptr) {
        if (!PyErr_ExceptionMatches(PyExc_KeyError)) {
            *failed = true;
            return nullptr;
        }
        PyErr_Clear();
    }
    return v;
}

}  // namespace

// ---- globals and names -------------------------------------------------------

PyObject *pyj_load_global(_PyInterpreterFrame *frame, PyObject *name)
{
    PyObject *globals = frame->f_globals, *builtins = frame->f_builtins;
    if (PyDict_CheckExact(globals) && PyDict_CheckExact(builtins)) {
        // As _PyDict_LoadGlobal: one hash, globals then builtins; a missing
        // name is NULL without an exception.
        Py_hash_t hash = PyObject_Hash(name);
        if (hash == -1) return nullptr;
        PyObject *v = _PyDict_GetItem_KnownHash(globals, name, hash);
        if (v == nullptr) {
            if (PyErr_Occurred()) return nullptr;
            v = _PyDict_GetItem_KnownHash(builtins, name, hash);
            if (v == nullptr) {
                if (!PyErr_Occurred()) name_error(name);
                return nullptr;
            }
        }
        Py_INCREF(v);
        return v;
    }
    // Globals or builtins is not an exact dict: the mapping protocol.
    PyObject *v = PyObject_GetItem(globals, name);
    if (v != nullptr) return v;
    if (!PyErr_ExceptionMatches(PyExc_KeyError)) return nullptr;
    PyErr_Clear();
    v = PyObject_GetItem(builtins, name);
    if (v == nullptr && PyErr_ExceptionMatches(PyExc_KeyError)) name_error(name);
    return v;
}

// LOAD_GLOBAL's cache miss: the lookup, then (for exact dicts left unchanged
// by the lookup itself) a refill of the site's cache.
PyObject *pyj_load_global_cached(_PyInterpreterFrame *frame, PyObject *name, GlobalCache *cache)
{
    PyObject *globals = frame->f_globals, *builtins = frame->f_builtins;
    bool cacheable = PyDict_CheckExact(globals) && PyDict_CheckExact(builtins);
    uint64_t gv = 0, bv = 0;
    if (cacheable) {
        gv = reinterpret_cast<PyDictObject *>(globals)->ma_version_tag;
        bv = reinterpret_cast<PyDictObject *>(builtins)->ma_version_tag;
    }
    PyObject *v = pyj_load_global(frame, name);
    if (v != nullptr && cacheable && gv == reinterpret_cast<PyDictObject *>(globals)->ma_version_tag &&
        bv == reinterpret_cast<PyDictObject *>(builtins)->ma_version_tag) {
        cache->globals_version = gv;
        cache->builtins = builtins;
        cache->builtins_version = bv;
        cache->value = v;
    }
    return v;
}

PyObject *pyj_load_name(_PyInterpreterFrame *frame, PyObject *name)
{
    PyObject *locals = frame->f_locals;
    if (locals == nullptr) {
        PyErr_Format(PyExc_SystemError, "no locals when loading %R", name);
        return nullptr;
    }
    bool failed;
    PyObject *v = mapping_lookup(locals, name, &failed);
    if (v != nullptr || failed) return v;

    v = PyDict_GetItemWithError(frame->f_globals, name);
    if (v != nullptr) {
        Py_INCREF(v);
        return v;
    }
    if (PyErr_Occurred()) return nullptr;

    PyObject *builtins = frame->f_builtins;
    if (PyDict_CheckExact(builtins)) {
        v = PyDict_GetItemWithError(builtins, name);
        if (v == nullptr) {
            if (!PyErr_Occurred()) name_error(name);
            return nullptr;
        }
        Py_INCREF(v);
        return v;
    }
    v = PyObject_GetItem(builtins, name);
    if (v == nullptr && PyErr_ExceptionMatches(PyExc_KeyError)) name_error(name);
    return v;
}

int pyj_store_name(_PyInterpreterFrame *frame, PyObject *name, PyObject *value)
{
    PyObject *ns = frame->f_locals;
    if (ns == nullptr) {
        PyErr_Format(PyExc_SystemError, "no locals found when storing %R", name);
        Py_DECREF(value);
        return -1;
    }
    int err = PyDict_CheckExact(ns) ? PyDict_SetItem(ns, name, value) : PyObject_SetItem(ns, name, value);
    Py_DECREF(value);
    return err != 0 ? -1 : 0;
}

int pyj_delete_name(_PyInterpreterFrame *frame, PyObject *name)
{
    PyObject *ns = frame->f_locals;
    if (ns == nullptr) {
        PyErr_Format(PyExc_SystemError, "no locals when deleting %R", name);
        return -1;
    }
    if (PyObject_DelItem(ns, name) != 0) {
        // Whatever went wrong, the interpreter reports a NameError.
        name_error(name);
        return -1;
    }
    return 0;
}

int pyj_store_global(_PyInterpreterFrame *frame, PyObject *name, PyObject *value)
{
    int err = PyDict_SetItem(frame->f_globals, name, value);
    Py_DECREF(value);
    return err != 0 ? -1 : 0;
}

int pyj_delete_global(_PyInterpreterFrame *frame, PyObject *name)
{
    if (PyDict_DelItem(frame->f_globals, name) != 0) {
        if (PyErr_ExceptionMatches(PyExc_KeyError)) name_error(name);
        return -1;
    }
    return 0;
}

// ---- attributes ----------------------------------------------------------------

int pyj_delete_attr(PyObject *owner, PyObject *name)
{
    int err = PyObject_SetAttr(owner, name, nullptr);
    Py_DECREF(owner);
    return err != 0 ? -1 : 0;
}

// ---- imports -------------------------------------------------------------------

namespace {

PyObject *import_name(PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *name, PyObject *fromlist,
                      PyObject *level)
{
    Names *n = names();
    if (n == nullptr) return nullptr;
#if PY_VERSION_HEX >= 0x030C0000
    // 3.12+ look __import__ up in builtins that may be any mapping (exec with
    // a mappingproxy as __builtins__: test_builtin).
    bool failed;
    PyObject *import_func = mapping_lookup(frame->f_builtins, n->import_, &failed);
    if (import_func == nullptr) {
        if (!failed) PyErr_SetString(PyExc_ImportError, "__import__ not found");
        return nullptr;
    }
#else
    // 3.11's import_name requires a dict.
    PyObject *import_func = PyDict_GetItemWithError(frame->f_builtins, n->import_);
    if (import_func == nullptr) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ImportError, "__import__ not found");
        return nullptr;
    }
    Py_INCREF(import_func);
#endif
    PyObject *locals = frame->f_locals != nullptr ? frame->f_locals : Py_None;
    if (import_func == pyj_interp_import_func(ts)) {
        // builtins.__import__ is the interpreter's own: skip the call.
        Py_DECREF(import_func);
        int ilevel = pyj_long_as_int(level);
        if (ilevel == -1 && PyErr_Occurred()) return nullptr;
        return PyImport_ImportModuleLevelObject(name, frame->f_globals, locals, fromlist, ilevel);
    }
    // A replaced __import__ gets the five arguments positionally.
    PyObject *args[5] = {name, frame->f_globals, locals, fromlist, level};
    PyObject *res = PyObject_Vectorcall(import_func, args, 5, nullptr);
    Py_DECREF(import_func);
    return res;
}

}  // namespace

PyObject *pyj_import_name(PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *name, PyObject *fromlist,
                          PyObject *level)
{
    PyObject *res = import_name(ts, frame, name, fromlist, level);
    Py_DECREF(level);
    Py_DECREF(fromlist);
    return res;
}

PyObject *pyj_import_from(PyObject *from, PyObject *name)
{
    PyObject *x;
    if (pyj_lookup_attr(from, name, &x) != 0) return x;   // found, or an error other than AttributeError

    // Perhaps a circular relative import: the submodule may already be in sys.modules.
    Names *n = names();
    if (n == nullptr) return nullptr;
    PyObject *pkgname = PyObject_GetAttr(from, n->name_);
    if (pkgname != nullptr && !PyUnicode_Check(pkgname)) Py_CLEAR(pkgname);
    if (pkgname != nullptr) {
        PyObject *fullname = PyUnicode_FromFormat("%U.%U", pkgname, name);
        if (fullname == nullptr) {
            Py_DECREF(pkgname);
            return nullptr;
        }
        x = PyImport_GetModule(fullname);
        Py_DECREF(fullname);
        if (x != nullptr || PyErr_Occurred()) {
            Py_DECREF(pkgname);
            return x;
        }
    }

    // ImportError, worded as the interpreter words it.
    PyObject *pkgpath = PyModule_GetFilenameObject(from);
    PyObject *pkgname_or_unknown;
    if (pkgname == nullptr) {
        pkgname_or_unknown = PyUnicode_FromString("<unknown module name>");
        if (pkgname_or_unknown == nullptr) {
            Py_XDECREF(pkgpath);
            return nullptr;
        }
    } else {
        pkgname_or_unknown = pkgname;
    }
    PyObject *errmsg;
    if (pkgpath == nullptr || !PyUnicode_Check(pkgpath)) {
        PyErr_Clear();
        errmsg = PyUnicode_FromFormat("cannot import name %R from %R (unknown location)", name, pkgname_or_unknown);
        PyErr_SetImportError(errmsg, pkgname, nullptr);   // copes with a NULL errmsg or pkgname
    } else {
        PyObject *spec = PyObject_GetAttr(from, n->spec);
        const char *fmt = pyj_spec_is_initializing(spec)
                              ? "cannot import name %R from partially initialized module %R "
                                "(most likely due to a circular import) (%S)"
                              : "cannot import name %R from %R (%S)";
        Py_XDECREF(spec);
        errmsg = PyUnicode_FromFormat(fmt, name, pkgname_or_unknown, pkgpath);
        PyErr_SetImportError(errmsg, pkgname, pkgpath);
    }
#if PY_VERSION_HEX >= 0x030C0000
    // 3.12+: the ImportError names the missing name (name_from), which the
    // traceback module's "Did you mean" suggestions read.
    PyObject *raised = PyErr_GetRaisedException();
    if (raised != nullptr && PyObject_TypeCheck(raised, reinterpret_cast<PyTypeObject *>(PyExc_ImportError))) {
        Py_XSETREF(reinterpret_cast<PyImportErrorObject *>(raised)->name_from, Py_NewRef(name));
    }
    PyErr_SetRaisedException(raised);
#endif
    Py_XDECREF(errmsg);
    Py_XDECREF(pkgname_or_unknown);   // pkgname itself when it was known
    Py_XDECREF(pkgpath);
    return nullptr;
}

#if PY_VERSION_HEX < 0x030D0000   // 3.13: CALL_INTRINSIC_1 (IMPORT_STAR)
namespace {

// ceval.c's import_all_from: binds every public name of `from` in `locals`.
int import_all_from(PyObject *locals, PyObject *from)
{
    Names *n = names();
    if (n == nullptr) return -1;
    PyObject *all;
    bool skip_leading_underscores = false;
    if (pyj_lookup_attr(from, n->all, &all) < 0) return -1;
    if (all == nullptr) {
        PyObject *dict;
        if (pyj_lookup_attr(from, n->dict, &dict) < 0) return -1;
        if (dict == nullptr) {
            PyErr_SetString(PyExc_ImportError, "from-import-* object has no __dict__ and no __all__");
            return -1;
        }
        all = PyMapping_Keys(dict);
        Py_DECREF(dict);
        if (all == nullptr) return -1;
        skip_leading_underscores = true;
    }

    int err = 0;
    for (Py_ssize_t pos = 0;; pos++) {
        PyObject *name = PySequence_GetItem(all, pos);
        if (name == nullptr) {
            if (!PyErr_ExceptionMatches(PyExc_IndexError)) err = -1;
            else PyErr_Clear();
            break;
        }
        if (!PyUnicode_Check(name)) {
            PyObject *modname = PyObject_GetAttr(from, n->name_);
            if (modname == nullptr) {
                Py_DECREF(name);
                err = -1;
                break;
            }
            if (!PyUnicode_Check(modname)) {
                PyErr_Format(PyExc_TypeError, "module __name__ must be a string, not %.100s",
                             Py_TYPE(modname)->tp_name);
            } else {
                PyErr_Format(PyExc_TypeError, "%s in %U.%s must be str, not %.100s",
                             skip_leading_underscores ? "Key" : "Item", modname,
                             skip_leading_underscores ? "__dict__" : "__all__", Py_TYPE(name)->tp_name);
            }
            Py_DECREF(modname);
            Py_DECREF(name);
            err = -1;
            break;
        }
        if (skip_leading_underscores) {
            if (PyUnicode_READY(name) == -1) {
                Py_DECREF(name);
                err = -1;
                break;
            }
            if (PyUnicode_GET_LENGTH(name) > 0 && PyUnicode_READ_CHAR(name, 0) == '_') {
                Py_DECREF(name);
                continue;
            }
        }
        PyObject *value = PyObject_GetAttr(from, name);
        if (value == nullptr) err = -1;
        else if (PyDict_CheckExact(locals)) err = PyDict_SetItem(locals, name, value);
        else err = PyObject_SetItem(locals, name, value);
        Py_DECREF(name);
        Py_XDECREF(value);
        if (err != 0) break;
    }
    Py_DECREF(all);
    return err;
}

}  // namespace

int pyj_import_star(_PyInterpreterFrame *frame, PyObject *from)
{
    // The interpreter syncs fast locals into f_locals around the import
    // (_PyFrame_FastToLocalsWithError / _PyFrame_LocalsToFast, not exported).
    // Code without fast locals (module bodies, exec'd strings) only needs
    // f_locals to exist; otherwise go through the frame object's exported
    // equivalents, which do the same to this (current) frame.
    PyFrameObject *fobj = nullptr;
    if (layout::frame_code(frame)->co_nlocalsplus == 0) {
        if (frame->f_locals == nullptr) {
            frame->f_locals = PyDict_New();
            if (frame->f_locals == nullptr) {
                Py_DECREF(from);
                return -1;
            }
        }
    } else {
        fobj = PyEval_GetFrame();
        if (fobj == nullptr) {
            if (!PyErr_Occurred()) PyErr_NoMemory();
            Py_DECREF(from);
            return -1;
        }
        if (PyFrame_FastToLocalsWithError(fobj) < 0) {
            Py_DECREF(from);
            return -1;
        }
    }
    PyObject *locals = frame->f_locals;
    if (locals == nullptr) {
        PyErr_SetString(PyExc_SystemError, "no locals found during 'import *'");
        Py_DECREF(from);
        return -1;
    }
    int err = import_all_from(locals, from);
    if (fobj != nullptr) PyFrame_LocalsToFast(fobj, 0);
    Py_DECREF(from);
    return err != 0 ? -1 : 0;
}
#endif

// ---- class bodies, annotations, the REPL -------------------------------------------

PyObject *pyj_load_build_class(_PyInterpreterFrame *frame)
{
    Names *n = names();
    if (n == nullptr) return nullptr;
    PyObject *builtins = frame->f_builtins;
    if (PyDict_CheckExact(builtins)) {
        PyObject *bc = PyDict_GetItemWithError(builtins, n->build_class);
        if (bc == nullptr) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_NameError, "__build_class__ not found");
            return nullptr;
        }
        Py_INCREF(bc);
        return bc;
    }
    PyObject *bc = PyObject_GetItem(builtins, n->build_class);
    if (bc == nullptr && PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_SetString(PyExc_NameError, "__build_class__ not found");
    }
    return bc;
}

int pyj_setup_annotations(_PyInterpreterFrame *frame)
{
    Names *n = names();
    if (n == nullptr) return -1;
    PyObject *locals = frame->f_locals;
    if (locals == nullptr) {
        PyErr_Format(PyExc_SystemError, "no locals found when setting up annotations");
        return -1;
    }
    bool failed;
    PyObject *ann = mapping_lookup(locals, n->annotations, &failed);
    if (ann != nullptr) {
        Py_DECREF(ann);
        return 0;
    }
    if (failed) return -1;
    ann = PyDict_New();
    if (ann == nullptr) return -1;
    int err = PyDict_CheckExact(locals) ? PyDict_SetItem(locals, n->annotations, ann)
                                        : PyObject_SetItem(locals, n->annotations, ann);
    Py_DECREF(ann);
    return err != 0 ? -1 : 0;
}

#if PY_VERSION_HEX < 0x030D0000   // 3.13: CALL_INTRINSIC_1 (PRINT)
int pyj_print_expr(PyThreadState *ts, PyObject *value)
{
    Names *n = names();
    if (n == nullptr) {
        Py_DECREF(value);
        return -1;
    }
    PyObject *hook = _PySys_GetAttr(ts, n->displayhook);   // borrowed
    if (hook == nullptr) {
        PyErr_SetString(PyExc_RuntimeError, "lost sys.displayhook");
        Py_DECREF(value);
        return -1;
    }
    PyObject *res = PyObject_CallOneArg(hook, value);
    Py_DECREF(value);
    if (res == nullptr) return -1;
    Py_DECREF(res);
    return 0;
}
#endif

// ---- cells -----------------------------------------------------------------------

void pyj_unbound_deref(_PyInterpreterFrame *frame, int index)
{
    if (PyErr_Occurred()) return;   // do not stomp an exception already set
    PyCodeObject *co = layout::frame_code(frame);
#if PY_VERSION_HEX >= 0x030D0000
    _PyEval_FormatExcUnbound(PyThreadState_Get(), co, index);
#else
    PyObject *name = PyTuple_GET_ITEM(co->co_localsplusnames, index);
    if (index < co->co_nplaincellvars + co->co_nlocals) {
        format_exc_check_arg(PyExc_UnboundLocalError, kUnboundLocalMsg, name);
    } else {
        format_exc_check_arg(PyExc_NameError, kUnboundFreeMsg, name);
    }
#endif
}

#if PY_VERSION_HEX < 0x030D0000   // 3.13: LOAD_FROM_DICT_OR_DEREF
PyObject *pyj_load_classderef(_PyInterpreterFrame *frame, int index)
{
    PyObject *name = PyTuple_GET_ITEM(layout::frame_code(frame)->co_localsplusnames, index);
    if (frame->f_locals == nullptr) {
        // Only class bodies use LOAD_CLASSDEREF, and they always have locals (the
        // interpreter merely asserts it); fail cleanly rather than crash.
        PyErr_Format(PyExc_SystemError, "no locals when loading %R", name);
        return nullptr;
    }
    bool failed;
    PyObject *v = mapping_lookup(frame->f_locals, name, &failed);
    if (v != nullptr || failed) return v;
    v = PyCell_GET(frame->localsplus[index]);
    if (v == nullptr) {
        pyj_unbound_deref(frame, index);
        return nullptr;
    }
    Py_INCREF(v);
    return v;
}
#endif

int pyj_make_cell(_PyInterpreterFrame *frame, int index)
{
    // The initial value is usually NULL, but an argument that is also a cell
    // variable holds the argument.
    PyObject *initial = frame->localsplus[index];
    PyObject *cell = PyCell_New(initial);
    if (cell == nullptr) return -1;
    frame->localsplus[index] = cell;
    Py_XDECREF(initial);   // the cell holds its own reference
    return 0;
}

}  // namespace pyjion::rtn
