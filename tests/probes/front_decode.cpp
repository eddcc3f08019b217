/* The front layer's decoder (pyjion/codegen/front/bytecode.cpp and
   exception_table.cpp) built alone as a module for another CPython than the
   one pyjion's extensions are built for (tests/test_front_layer.py):
   decode(code) -> (max depth, [(offset, opcode name, oparg, jump target
   offset or -1, stack depth or -1), ...]); ValueError with the compiler's
   reason where it refuses the code. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "front/bytecode.h"

static PyObject *decode(PyObject *, PyObject *arg)
{
    if (!PyCode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "decode() expects a code object");
        return nullptr;
    }
    try {
        pyjion::Bytecode bc(reinterpret_cast<PyCodeObject *>(arg));
        PyObject *list = PyList_New(0);
        for (const pyjion::Instr &ins : bc.instrs()) {
            PyObject *row = Py_BuildValue("(isiii)", ins.offset(), pyjion::opcode_name(ins.opcode), ins.oparg,
                                          ins.target < 0 ? -1 : ins.target * 2, ins.depth);
            PyList_Append(list, row);
            Py_DECREF(row);
        }
        PyObject *out = Py_BuildValue("(iN)", bc.max_depth(), list);
        return out;
    } catch (const pyjion::CompileError &e) {
        PyErr_SetString(PyExc_ValueError, e.what.c_str());
        return nullptr;
    }
}

static PyMethodDef methods[] = {{"decode", decode, METH_O, nullptr}, {nullptr, nullptr, 0, nullptr}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "front_decode", nullptr, -1, methods};
PyMODINIT_FUNC PyInit_front_decode(void) { return PyModule_Create(&module); }
