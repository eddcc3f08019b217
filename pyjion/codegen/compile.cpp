#include "compile.h"

#include <cstdio>

#include "codegen_api.h"
#include "machine/code_heap.h"
#include "machine/perf_map.h"
#include "machine/size_stats.h"

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

// A code object's qualified name and file for the listing and the perf map
// ("?" where one is not valid text).
struct CodeNames {
    const char *name, *file;
};
CodeNames code_names(PyCodeObject *code)
{
    const char *name = PyUnicode_AsUTF8(code->co_qualname);
    if (name == nullptr) PyErr_Clear();
    const char *file = PyUnicode_AsUTF8(code->co_filename);
    if (file == nullptr) PyErr_Clear();
    return CodeNames{name ? name : "?", file ? file : "?"};
}

// Appends one compile's listing to options.dump_asm ("-": stderr). Best
// effort: a listing that cannot be written never fails the compile.
void write_listing(PyCodeObject *code, const std::string &path, const asmjit::StringLogger &logger,
                   const void *entry, size_t size)
{
    FILE *out = path == "-" ? stderr : std::fopen(path.c_str(), "a");
    if (out == nullptr) return;
    CodeNames names = code_names(code);
    std::fprintf(out, "; ==== pyjion: %s (%s:%d) at %p, %zu bytes\n", names.name, names.file,
                 code->co_firstlineno, entry, size);
    std::fwrite(logger.data(), 1, logger.dataSize(), out);
    std::fputs("; ==== end\n", out);
    if (out == stderr) {
        std::fflush(out);
    } else {
        std::fclose(out);
    }
}

// The perf map's name of a compiled code object: "pyjion::qualname:file:line".
std::string perf_name(PyCodeObject *code)
{
    CodeNames names = code_names(code);
    std::string out = std::string("pyjion::") + names.name + ":" + names.file + ":" +
                      std::to_string(code->co_firstlineno);
    for (char &ch : out) {
        if (ch == '\n' || ch == '\r') ch = ' ';   // one line per block
    }
    return out;
}
}  // namespace

namespace {

std::unique_ptr<CompiledCode> compile_once(PyCodeObject *code, const CompileOptions &options, bool *tier_pays)
{
    asmjit::CodeHolder holder;
    ErrorCollector errors;
    holder.init(asmjit::Environment::host());
    holder.setErrorHandler(&errors);
    // The listing: only with config(dump_asm=...); otherwise no logger is
    // attached, and AsmJit formats nothing.
    std::unique_ptr<asmjit::StringLogger> logger;
    if (options.dump_asm != nullptr) {
        logger = std::make_unique<asmjit::StringLogger>();
        logger->addFlags(asmjit::FormatFlags::kMachineCode | asmjit::FormatFlags::kHexOffsets |
                         asmjit::FormatFlags::kHexImms);
        holder.setLogger(logger.get());
    }

    Compiler compiler(code, holder, options);
    compiler.compile();
    if (!compiler.tier_pays()) {
        *tier_pays = false;
        return nullptr;
    }
    if (errors.first != asmjit::kErrorOk) {
        throw CompileError{PYJION_RESULT_JIT_FAILURE, "AsmJit: " + errors.text};
    }
    void *entry = nullptr;
    size_t size = 0;
    asmjit::Error err = code_heap::place(holder, &entry, &size);
    if (err != asmjit::kErrorOk) {
        throw CompileError{PYJION_RESULT_JIT_FAILURE,
                           std::string("AsmJit: ") + asmjit::DebugUtils::errorAsString(err)};
    }
    if (logger) write_listing(code, *options.dump_asm, *logger, entry, size);
    if (perf_map::enabled()) perf_map::record(entry, size, perf_name(code));
    size_stats::add(compiler.finish_sizes());
    std::vector<NativeMark> marks;
    marks.reserve(compiler.boundaries().size());
    for (const BoundaryMark &b : compiler.boundaries()) {
        marks.push_back(NativeMark{static_cast<uint32_t>(holder.labelOffsetFromBase(b.label)), b.bytecode_offset,
                                   b.oparg, static_cast<uint8_t>(b.opcode)});
    }
    std::vector<NativeCall> calls;
    calls.reserve(compiler.call_sites().size());
    for (const CallSite &c : compiler.call_sites()) {
        calls.push_back(NativeCall{c.native_offset(), intern_name(c.name)});
    }
    auto compiled = std::make_unique<CompiledCode>(entry, size, std::move(marks), std::move(calls),
                                                   compiler.take_site_data());
    if (const auto *exits = compiler.exit_counts()) compiled->set_exit_counts(exits);
    if (!compiler.loops().empty() || options.resume_anywhere) {
        std::vector<OsrLoop> loops;
        for (const LoopHeader &l : compiler.loops()) loops.push_back(OsrLoop{l.header, l.end, l.depth});
        void *osr = static_cast<char *>(entry) + holder.labelOffsetFromBase(compiler.osr_entry());
        compiled->set_osr(osr, std::move(loops));
    }
    return compiled;
}

}  // namespace

std::unique_ptr<CompiledCode> compile_code(PyCodeObject *code, const CompileOptions &options)
{
    bool tier_pays = true;
    std::unique_ptr<CompiledCode> compiled = compile_once(code, options, &tier_pays);
    if (compiled) return compiled;
    // The optimising tier would convert between boxed and unboxed values
    // more than it computes on unboxed ones: the baseline's code instead.
    CompileOptions baseline = options;
    baseline.opt = false;
    return compile_once(code, baseline, &tier_pays);
}

}  // namespace pyjion
