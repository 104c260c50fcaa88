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
    /// library_not_elf, library_not_loadable, library_truncated, wrong_architecture (the file
    /// itself, refused before its dependencies are read: check_loadable_file), or
    /// symbol_version_missing, static_tls_exhausted, undefined_symbol (once mapped).
    BackendCause cause = BackendCause::None;
    /// The object the loader would stop at (the plugin library or one of its closure).
    std::string object;
    /// What it lacks, short: "GLIBCXX_3.4.99 from libstdc++.so.6",
    /// "switchyard::foo(int) (_ZN10switchyard3fooEi)", "aarch64 (ELF64)", "its load segment 2
    /// ends at byte 81,920, the file has 40,960 bytes", "56,240 bytes of static TLS …".
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

/// What glibc's loader judges of a file before it reads the file's dependencies
/// (open_verify() and _dl_map_object_from_fd(), elf/dl-load.c, in their order), read as bytes:
/// nullopt when it would go on to the dependencies, else the one problem where it stops:
/// - library_not_elf: not ELF ("file too short" without the ELF magic, "invalid ELF header");
/// - wrong_architecture: another class ("wrong ELF class"), byte order ("ELF file data encoding
///   not little-endian"), OS ABI or its version ("ELF file OS ABI invalid", "ELF file ABI
///   version invalid") or machine (skipped by the loader: "cannot open shared object file");
/// - library_not_loadable: ELF, but no shared library the loader maps: a damaged header ("ELF
///   file version ident does not match current one", "nonzero padding in e_ident", "ELF file
///   version does not match current one", "ELF file's phentsize not the expected size"), an
///   object file or core dump ("only ET_DYN and ET_EXEC can be loaded"), "ELF load command
///   address/offset not page-aligned", "object file has no loadable segments", "cannot
///   dynamically load executable", "object file has no dynamic section", "shared object cannot
///   be dlopen()ed", "cannot dynamically load position-independent executable";
/// - library_truncated: an ELF header, the program headers ("cannot read file data"), a
///   PT_LOAD segment or the dynamic segment (the loader maps them and dies of SIGBUS), or the
///   section headers past the end of the file: a copy or download that was cut.
/// A file that cannot be opened gives nullopt (whoever opens it says why).
SWITCHYARD_CORE_EXPORT std::optional<LoadProblem> check_loadable_file(const std::string& path);

/// What a static load simulation finds about a library and its resolved closure (an
/// ElfDependencyReport), in the loader's order: the library file itself
/// (check_loadable_file: nothing below it is judged when it is refused); every DT_VERNEED
/// entry of every object against the DT_VERDEF of the object its file name resolved to; the
/// initial-exec TLS (DF_STATIC_TLS with a PT_TLS segment) of each object the process has not
/// loaded yet against what is left of this process's static TLS block (glibc's surplus:
/// 1664 bytes with its default tunables); every non-weak undefined dynamic symbol of the
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

/// The simulation of `report` (its library and resolved dependencies). A library the loader
/// refuses itself (check_loadable_file) gives that problem alone.
SWITCHYARD_CORE_EXPORT LoadSimulation simulate_load(const ElfDependencyReport& report);

/// A dlopen() error classified into its typed cause, for every refusal of glibc's
/// elf/dl-load.c listed at check_loadable_file (each to the cause given there; "file too short"
/// is library_truncated when the file it names begins with the ELF magic, else
/// library_not_elf; "cannot read file data" without an errno text is library_truncated), and
/// "version `X' not found" -> symbol_version_missing, "undefined symbol: X" -> undefined_symbol,
/// "cannot allocate memory in static TLS block" -> static_tls_exhausted, "CPU ISA level is
/// lower than required" -> isa_unsupported; nullopt for anything else (library_load_failed,
/// with the message). With `library` (the path dlopen was given): glibc answers a file of
/// another machine with "LIBRARY: cannot open shared object file: No such file or directory"
/// (it skips such a candidate as if it were not there), so that message about a file that
/// exists and whose ELF header names another machine is wrong_architecture too.
SWITCHYARD_CORE_EXPORT std::optional<BackendCause>
classify_dlopen_error(std::string_view message, const std::string& library = {});

/// `name` demangled where it is a C++ name ("switchyard::foo(int)"), else as it is.
SWITCHYARD_CORE_EXPORT std::string demangled(const std::string& name);

} // namespace switchyard
