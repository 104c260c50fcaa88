// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/errors.h>

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

struct ElfDependencyReport;

/// One reason the dynamic loader would refuse a library, found without loading it.
struct SWITCHYARD_CORE_EXPORT LoadProblem {
    /// wrong_architecture, symbol_version_missing or undefined_symbol.
    BackendCause cause = BackendCause::None;
    /// The object the loader would stop at (the plugin library or one of its closure).
    std::string object;
    /// What it lacks, short: "GLIBCXX_3.4.99 from libstdc++.so.6",
    /// "switchyard::foo(int) (_ZN10switchyard3fooEi)", "aarch64 (ELF64)".
    std::string missing;
    /// The provider the loader looked in, and what it offers ("GLIBCXX_3.4 … GLIBCXX_3.4.30"),
    /// where that is known.
    std::string provider;
    std::string provided;
    /// One line: what is wrong, where, and what the provider has.
    std::string message;
};
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const LoadProblem& problem);

/// The x86-64 level (0: none said, 1: baseline, 2..4: x86-64-v2..v4) an object's
/// `GNU_PROPERTY_X86_ISA_1_NEEDED` note asks for: the highest level whose bit is set.
/// "x86-64-v4" for 4; "x86-64" for 1; "" for 0.
SWITCHYARD_CORE_EXPORT std::string isa_level_name(int level);

/// What a static load simulation finds about a library and its resolved closure (an
/// ElfDependencyReport), in the loader's order: the library's ELF class, machine and OS ABI
/// against this process's; every DT_VERNEED entry of every object against the DT_VERDEF of
/// the object its file name resolved to; every non-weak undefined dynamic symbol of the
/// library that no object of the closure (nor the process's own, such as the core) defines,
/// versions respected. Nothing is loaded or run; each object's tables are read once per
/// process while the file is unchanged.
struct SWITCHYARD_CORE_EXPORT LoadSimulation {
    std::vector<LoadProblem> problems; // the first is where the loader would stop
    /// The library's GNU_PROPERTY_X86_ISA_1_NEEDED level (0: no note); judged against the
    /// machine by the caller, who knows the detected level and its cap.
    int isa_level_needed = 0;
    bool ok() const noexcept { return problems.empty(); }
};

/// The simulation of `report` (its library and resolved dependencies). An unreadable or
/// foreign library gives a wrong_architecture problem alone (nothing below it is judged).
SWITCHYARD_CORE_EXPORT LoadSimulation simulate_load(const ElfDependencyReport& report);

/// A dlopen() error classified into its typed cause: "version `X' not found" ->
/// symbol_version_missing, "undefined symbol: X" -> undefined_symbol, "wrong ELF class",
/// "invalid ELF header", "ELF file OS ABI invalid" and the loader's machine mismatch ->
/// wrong_architecture, "CPU ISA level is lower than required" -> isa_unsupported; nullopt for
/// anything else (library_load_failed). With `library` (the path dlopen was given): glibc
/// answers a file of another machine with "LIBRARY: cannot open shared object file: No such
/// file or directory" (it skips such a candidate as if it were not there), so that message
/// about a file that exists and whose ELF header names another machine is wrong_architecture
/// too.
SWITCHYARD_CORE_EXPORT std::optional<BackendCause>
classify_dlopen_error(std::string_view message, const std::string& library = {});

/// `name` demangled where it is a C++ name ("switchyard::foo(int)"), else as it is.
SWITCHYARD_CORE_EXPORT std::string demangled(const std::string& name);

} // namespace switchyard
