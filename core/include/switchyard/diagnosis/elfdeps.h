// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/diagnosis/loadsim.h>

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// The parts of an ELF file the dynamic loader reads to find its dependencies, read
/// with libelf without loading (or running) the file.
struct SWITCHYARD_CORE_EXPORT ElfDynamicInfo {
    std::string path;
    int elf_class = 0; // ELFCLASS32 / ELFCLASS64
    int machine = 0;   // e_machine (EM_X86_64, EM_AARCH64, ...)
    std::string soname;
    std::vector<std::string> needed;  // DT_NEEDED, in order
    std::vector<std::string> rpath;   // DT_RPATH entries, unexpanded ($ORIGIN stays)
    std::vector<std::string> runpath; // DT_RUNPATH entries, unexpanded
    bool nodeflib = false;            // DF_1_NODEFLIB: no ld.so.cache, no default folders
};

/// Reads `path`'s ELF header and dynamic section. nullopt, with `error` saying why, when
/// the file cannot be read or is not ELF. A static file has no `needed` entries.
SWITCHYARD_CORE_EXPORT std::optional<ElfDynamicInfo> read_elf_dynamic(const std::string& path,
                                                                      std::string* error = nullptr);

/// Where the loader's search found a library (glibc order: RPATH, LD_LIBRARY_PATH,
/// RUNPATH, ld.so.cache, default folders). Direct: the name contains a '/'.
enum class LibrarySearchSource {
    Direct,
    Rpath,
    LdLibraryPath,
    Runpath,
    LdCache,
    DefaultDir,
    NotFound
};
SWITCHYARD_CORE_EXPORT std::string_view to_string(LibrarySearchSource source) noexcept;

/// One DT_NEEDED entry, resolved.
struct SWITCHYARD_CORE_EXPORT ResolvedLibrary {
    std::string soname; // as written in DT_NEEDED
    std::string path;   // the file the loader would open; empty when not found
    LibrarySearchSource source = LibrarySearchSource::NotFound;
    std::string needed_by; // path of the object whose DT_NEEDED names it
    int depth = 1;         // 1: needed by the library itself, 2: by one of its dependencies, ...
    std::string detail;    // not found: the folders searched; found but unreadable: why

    bool found() const noexcept { return !path.empty(); }
};

/// What a report says of the dependencies of a library the loader refuses before it reads
/// them (ElfDependencyReport::dependencies_read false): `show`, `doctor` and the GUI.
inline constexpr std::string_view kNotReadByLoader =
    "not read by the loader (it refuses the library itself first)";

/// What `ldd` would print for one library, without loading it.
struct SWITCHYARD_CORE_EXPORT ElfDependencyReport {
    std::string library;   // the library diagnosed
    bool readable = false; // false: `error` says why
    std::string error;
    std::vector<ResolvedLibrary> dependencies; // breadth-first, each soname once
    /// false: the loader refuses the library file itself before it reads its DT_NEEDED
    /// entries (check_loadable_file: another architecture or class, not ELF, not a shared
    /// library, cut off), so nothing was resolved (`dependencies` is empty, and so is every
    /// dependency problem): "not read by the loader". load_problems' only entry says why.
    bool dependencies_read = true;
    /// What the static load simulation found (diagnosis/loadsim.h): where the loader would
    /// refuse the library although every file is there (another architecture, a cut-off file,
    /// a missing symbol version, static TLS, an undefined symbol); the first is where it would
    /// stop.
    std::vector<LoadProblem> load_problems;
    /// The library's GNU_PROPERTY_X86_ISA_1_NEEDED level (0: no note), for the caller to
    /// judge against the machine's detected (and capped) level.
    int isa_level_needed = 0;

    /// The sonames nothing resolves, in the order met.
    std::vector<std::string> unresolved() const;
    /// The same, each followed by " (needed by PATH)" when a dependency of the library
    /// needs it: what a message names.
    std::vector<std::string> unresolved_with_requester() const;
    bool ok() const { return readable && unresolved().empty() && load_problems.empty(); }
    /// "libfoo.so.1 => /usr/lib/libfoo.so.1 (ld.so.cache)" lines, indented by depth; for a
    /// library refused itself, kNotReadByLoader and why.
    std::string to_text() const;
};

/// Resolves sonames the way glibc's dynamic loader does (ld.so(8)): a name with '/' is a
/// path; otherwise DT_RPATH of the requester and of the objects that loaded it (only when
/// the requester has no DT_RUNPATH), LD_LIBRARY_PATH, the requester's DT_RUNPATH,
/// /etc/ld.so.cache, then the default folders; $ORIGIN, $LIB and $PLATFORM are expanded,
/// and candidates of another ELF class or machine are skipped. A soname already resolved
/// in the same walk is reused, as the loader reuses a loaded object. Thread-safe.
class SWITCHYARD_CORE_EXPORT ElfDependencyResolver {
public:
    struct Options {
        std::vector<std::string> ld_library_path; // default: $LD_LIBRARY_PATH
        std::string ld_cache_path;                // default: the system's /etc/ld.so.cache
        std::vector<std::string> default_dirs;    // default: the loader's system folders
        bool use_ld_cache = true;
    };

    /// Options from the environment and the system.
    ElfDependencyResolver();
    explicit ElfDependencyResolver(Options options);
    ~ElfDependencyResolver();

    /// `soname` as the running process would dlopen it (the dependency check): the
    /// process's ELF class and machine, LD_LIBRARY_PATH, the cache, default folders.
    ResolvedLibrary resolve_for_process(const std::string& soname) const;

    /// The library's DT_NEEDED entries, transitively.
    ElfDependencyReport diagnose(const std::string& library_path) const;

    const Options& options() const noexcept { return m_options; }

private:
    struct Impl;
    Options m_options;
    std::unique_ptr<Impl> m_impl;
};

/// The one JSON shape of a resolved library and of a report (`show --json`,
/// `doctor --json`): {"soname", "path", "found", "source", "needed_by", "depth", "detail"};
/// {"library", "readable", "error", "unresolved", "dependencies_read", "dependencies": [...],
/// "load_problems": [...], "isa_level_needed"}.
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const ResolvedLibrary& library);
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const ElfDependencyReport& report);

/// "its library L cannot be loaded because a library it needs is missing: A, B" (`missing`
/// as ElfDependencyReport::unresolved_with_requester() gives it). What to do is the cause
/// table's fix (registry/backendcause.h, `library_dependency_missing`).
SWITCHYARD_CORE_EXPORT std::string
missing_libraries_message(const std::string& library, const std::vector<std::string>& missing);

/// ElfDependencyResolver().diagnose(path): the plugin library's own dependencies.
SWITCHYARD_CORE_EXPORT ElfDependencyReport diagnose_library(const std::string& path);

} // namespace switchyard
