#include "compile.h"

#include "../codegen_api.h"

namespace pyjion {

namespace {
class ErrorCollector : public asmjit::ErrorHandler {
public:
    void handleError(asmjit::Error err, const char *message, asmjit::BaseEmitter *) override
    {
        if (first == asmjit::kErrorOk) {
            first = err;
            text = message;
        }
    }
    asmjit::Error first = asmjit::kErrorOk;
    std::string text;
};
}  // namespace

std::unique_ptr<CompiledCode> compile_code(PyCodeObject *code, const CompileOptions &options)
{
    asmjit::CodeHolder holder;
    ErrorCollector errors;
    holder.init(jit_runtime().environment());
    holder.setErrorHandler(&errors);

    Compiler compiler(code, holder, options);
    compiler.compile();
    if (errors.first != asmjit::kErrorOk) {
        throw CompileError{PYJION_RESULT_JIT_FAILURE, "AsmJit: " + errors.text};
    }
    void *entry = nullptr;
    asmjit::Error err = jit_runtime().add(&entry, &holder);
    if (err != asmjit::kErrorOk) {
        throw CompileError{PYJION_RESULT_JIT_FAILURE,
                           std::string("AsmJit: ") + asmjit::DebugUtils::errorAsString(err)};
    }
    std::vector<NativeMark> marks;
    for (const BoundaryMark &b : compiler.boundaries()) {
        marks.push_back(NativeMark{b.bytecode_offset, opcode_name(b.opcode), b.oparg,
                                   static_cast<uint32_t>(holder.labelOffsetFromBase(b.label))});
    }
    std::vector<NativeCall> calls;
    for (const CallSite &c : compiler.call_sites()) calls.push_back(NativeCall{c.native_offset, c.name});
    return std::make_unique<CompiledCode>(entry, holder.codeSize(), std::move(marks), std::move(calls),
                                          compiler.take_site_data());
}

}  // namespace pyjion
