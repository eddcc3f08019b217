// Runtime helpers for generators (see runtime.def).
#include "runtime.h"

namespace pyjion::rt {

// The generator frame's prev_instr is at no resume point of the machine code.
void pyj_rt_bad_resume(_PyInterpreterFrame *frame)
{
    PyErr_Format(PyExc_SystemError, "pyjion: cannot resume %U at offset %d", frame->f_code->co_qualname,
                 _PyInterpreterFrame_LASTI(frame) * 2);
}

// SEND: [receiver, value] -> [receiver, yielded] (0), or [returned] (1, jump),
// or -1 on error with the value released.
int pyj_rt_send(PyObject **sp)
{
    PyObject *value = sp[-1];
    PyObject *receiver = sp[-2];
    PyObject *result = nullptr;
    PySendResult status = PyIter_Send(receiver, value, &result);
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
