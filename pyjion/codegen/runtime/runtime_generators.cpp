// Runtime helpers for generators (see runtime.def).
#include "runtime/runtime.h"

#include "runtime/direct_call.h"
#include "cpython/interp_state.h"
#include "front/opcodes.h"
#include "runtime/cpython_api.h"

namespace pyjion::rt {

// The generator frame's prev_instr is at no resume point of the machine code.
void pyj_rt_bad_resume(_PyInterpreterFrame *frame)
{
    PyErr_Format(PyExc_SystemError, "pyjion: cannot resume %U at offset %d", layout::frame_code(frame)->co_qualname,
                 layout::frame_unit(frame) * 2);
}

// SEND: [receiver, value] -> [receiver, yielded] (0), or [returned] (1, jump),
// or -1 on error with the value released.
int pyj_rt_send(PyObject **sp, PyThreadState *ts)
{
    PyObject *value = sp[-1];
    PyObject *receiver = sp[-2];
    PyObject *result = nullptr;
    PySendResult status = direct::gen_send(ts, receiver, value, &result);
    Py_DECREF(value);
    if (status == PYGEN_ERROR) return -1;
    if (status == PYGEN_RETURN) {
        Py_DECREF(receiver);
        sp[-2] = result;
        return 1;
    }
    sp[-1] = result;
    return 0;
}

// GET_YIELD_FROM_ITER: [iterable] -> [iterator]; -1 with the slot released.
int pyj_rt_get_yield_from_iter(PyObject **sp, int co_flags)
{
    PyObject *iterable = sp[-1];
    if (PyCoro_CheckExact(iterable)) {
        if (!(co_flags & (CO_COROUTINE | CO_ITERABLE_COROUTINE))) {
            Py_DECREF(iterable);
            sp[-1] = nullptr;
            PyErr_SetString(PyExc_TypeError, "cannot 'yield from' a coroutine object in a non-coroutine generator");
            return -1;
        }
        return 0;
    }
    if (PyGen_CheckExact(iterable)) return 0;
    PyObject *iter = PyObject_GetIter(iterable);
    Py_DECREF(iterable);
    sp[-1] = iter;
    return iter == nullptr ? -1 : 0;
}

}  // namespace pyjion::rt

namespace pyjion::rt {

namespace {

bool is_coroutine(PyObject *o)
{
    if (PyCoro_CheckExact(o)) return true;
    // A generator decorated with types.coroutine.
    return PyGen_CheckExact(o) &&
           (layout::frame_code(reinterpret_cast<_PyInterpreterFrame *>(reinterpret_cast<PyGenObject *>(o)->gi_iframe))
                ->co_flags &
            CO_ITERABLE_COROUTINE);
}

// What `await o` iterates: the coroutine itself, or o.__await__() checked to
// be an iterator that is not a coroutine (PEP 492).
PyObject *awaitable_iter(PyObject *o)
{
    if (is_coroutine(o)) return Py_NewRef(o);
    PyTypeObject *type = Py_TYPE(o);
    unaryfunc getter = type->tp_as_async != nullptr ? type->tp_as_async->am_await : nullptr;
    if (getter == nullptr) {
        PyErr_Format(PyExc_TypeError, "object %.100s can't be used in 'await' expression", type->tp_name);
        return nullptr;
    }
    PyObject *res = getter(o);
    if (res == nullptr) return nullptr;
    if (is_coroutine(res)) {
        PyErr_SetString(PyExc_TypeError, "__await__() returned a coroutine");
        Py_DECREF(res);
        return nullptr;
    }
    if (!PyIter_Check(res)) {
        PyErr_Format(PyExc_TypeError, "__await__() returned non-iterator of type '%.100s'", Py_TYPE(res)->tp_name);
        Py_DECREF(res);
        return nullptr;
    }
    return res;
}

// The coroutine is suspended inside an `await` (a yield from): the instruction
// after its current one is RESUME with oparg >= 2.
bool coroutine_is_awaiting(PyObject *coro)
{
#if PY_VERSION_HEX >= 0x030D0000
    // What it awaits (the value below the top of its stack while suspended in one).
    PyObject *yf = _PyGen_yf(reinterpret_cast<PyGenObject *>(coro));
    Py_XDECREF(yf);
    return yf != nullptr;
#else
    auto *gen = reinterpret_cast<PyGenObject *>(coro);
    if (gen->gi_frame_state >= FRAME_CLEARED || gen->gi_frame_state == FRAME_CREATED) return false;
    auto *frame = reinterpret_cast<_PyInterpreterFrame *>(gen->gi_iframe);
    _Py_CODEUNIT next = frame->prev_instr[1];
    int op = _Py_OPCODE(next);
    return (op == RESUME || op == RESUME_QUICK) && _Py_OPARG(next) >= 2;
#endif
}

#if PY_VERSION_HEX < 0x030D0000
struct WrappedValue {   // the layout of async generators' value wrapper
    PyObject_HEAD
    PyObject *value;
};
#endif

}  // namespace

// GET_AWAITABLE: [obj] -> [iterator]; -1 with the slot cleared.
int pyj_rt_get_awaitable(PyObject **sp, int oparg)
{
    PyObject *iterable = sp[-1];
    PyObject *iter = awaitable_iter(iterable);
    if (iter == nullptr) {
        PyTypeObject *type = Py_TYPE(iterable);
        if ((type->tp_as_async == nullptr || type->tp_as_async->am_await == nullptr) && (oparg == 1 || oparg == 2)) {
            PyErr_Format(PyExc_TypeError,
                         oparg == 1 ? "'async with' received an object from __aenter__ that does not implement __await__: %.100s"
                                    : "'async with' received an object from __aexit__ that does not implement __await__: %.100s",
                         type->tp_name);
        }
    }
    Py_DECREF(iterable);
    if (iter != nullptr && PyCoro_CheckExact(iter) && coroutine_is_awaiting(iter)) {
        Py_CLEAR(iter);
        PyErr_SetString(PyExc_RuntimeError, "coroutine is being awaited already");
    }
    sp[-1] = iter;
    return iter == nullptr ? -1 : 0;
}

// GET_AITER: [obj] -> [obj.__aiter__()]; -1 with the slot cleared.
int pyj_rt_get_aiter(PyObject **sp)
{
    PyObject *obj = sp[-1];
    PyTypeObject *type = Py_TYPE(obj);
    unaryfunc getter = type->tp_as_async != nullptr ? type->tp_as_async->am_aiter : nullptr;
    sp[-1] = nullptr;
    if (getter == nullptr) {
        PyErr_Format(PyExc_TypeError, "'async for' requires an object with __aiter__ method, got %.100s",
                     type->tp_name);
        Py_DECREF(obj);
        return -1;
    }
    PyObject *iter = getter(obj);
    Py_DECREF(obj);
    if (iter == nullptr) return -1;
    if (Py_TYPE(iter)->tp_as_async == nullptr || Py_TYPE(iter)->tp_as_async->am_anext == nullptr) {
        PyErr_Format(PyExc_TypeError,
                     "'async for' received an object from __aiter__ that does not implement __anext__: %.100s",
                     Py_TYPE(iter)->tp_name);
        Py_DECREF(iter);
        return -1;
    }
    sp[-1] = iter;
    return 0;
}

// GET_ANEXT: [aiter] -> [aiter, awaitable]; NULL on error (nothing consumed).
PyObject *pyj_rt_get_anext(PyObject **sp)
{
    PyObject *aiter = sp[-1];
    PyTypeObject *type = Py_TYPE(aiter);
    if (PyAsyncGen_CheckExact(aiter)) return type->tp_as_async->am_anext(aiter);
    unaryfunc getter = type->tp_as_async != nullptr ? type->tp_as_async->am_anext : nullptr;
    if (getter == nullptr) {
        PyErr_Format(PyExc_TypeError, "'async for' requires an iterator with __anext__ method, got %.100s",
                     type->tp_name);
        return nullptr;
    }
    PyObject *next_iter = getter(aiter);
    if (next_iter == nullptr) return nullptr;
    PyObject *awaitable = awaitable_iter(next_iter);
    if (awaitable == nullptr) {
        _PyErr_FormatFromCause(PyExc_TypeError, "'async for' received an invalid object from __anext__: %.100s",
                               Py_TYPE(next_iter)->tp_name);
    }
    Py_DECREF(next_iter);
    return awaitable;
}

// END_ASYNC_FOR: [aiter, exc] -> [] if exc is StopAsyncIteration (returns 0);
// otherwise re-raises exc (returns 1, one value consumed).
int pyj_rt_end_async_for(PyObject **sp)
{
    PyObject *value = sp[-1];
    if (PyErr_GivenExceptionMatches(value, PyExc_StopAsyncIteration)) {
        Py_DECREF(value);
        Py_DECREF(sp[-2]);
        return 0;
    }
    PyObject *type = Py_NewRef(PyExceptionInstance_Class(value));
    PyErr_Restore(type, value, PyException_GetTraceback(value));
    return 1;
}

// BEFORE_ASYNC_WITH: as BEFORE_WITH, with __aenter__/__aexit__.
int pyj_rt_before_async_with(PyObject **sp) { return enter_context(sp, true); }

// ASYNC_GEN_WRAP: wraps a value an async generator yields, so its asend()
// can tell a yield from an await.
#if PY_VERSION_HEX < 0x030D0000
PyObject *pyj_rt_async_gen_wrap(PyObject *value)
{
    WrappedValue *w = PyObject_GC_New(WrappedValue, &_PyAsyncGenWrappedValue_Type);
    if (w == nullptr) return nullptr;
    w->value = Py_NewRef(value);
    PyObject_GC_Track(w);
    return reinterpret_cast<PyObject *>(w);
}
#endif

}  // namespace pyjion::rt
