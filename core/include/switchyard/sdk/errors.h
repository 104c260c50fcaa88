// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/capabilities.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace switchyard {

/// Base of every error the core raises for a caller to act on.
class SWITCHYARD_CORE_EXPORT Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A backend name nobody owns (not registered, not built in, no plugin: "not installed").
/// Carries up to two suggestions, chosen as difflib.get_close_matches(name, known, 2, 0.6).
class SWITCHYARD_CORE_EXPORT InvalidBackend : public Error {
public:
    InvalidBackend(std::string name, std::vector<std::string> suggestions);
    const std::string& name() const noexcept { return m_name; }
    const std::vector<std::string>& suggestions() const noexcept { return m_suggestions; }

private:
    std::string m_name;
    std::vector<std::string> m_suggestions;
};

/// Explicit registration of a name that a registered or built-in backend already owns.
class SWITCHYARD_CORE_EXPORT DuplicateBackend : public Error {
public:
    explicit DuplicateBackend(const std::string& name, const std::string& owner);
};

/// The backend exists but some of its optional dependencies are missing here.
class SWITCHYARD_CORE_EXPORT MissingDependency : public Error {
public:
    MissingDependency(std::string backend, std::vector<DependencyStatus> missing);
    const std::string& backend() const noexcept { return m_backend; }
    const std::vector<DependencyStatus>& missing() const noexcept { return m_missing; }

private:
    std::string m_backend;
    std::vector<DependencyStatus> m_missing;
};

/// The backend speaks a newer contract, or was validated against other core versions.
class SWITCHYARD_CORE_EXPORT ContractMismatch : public Error {
public:
    enum class Upgrade { Switchyard, Backend };
    ContractMismatch(std::string backend, Upgrade side, const std::string& message);
    const std::string& backend() const noexcept { return m_backend; }
    /// Which side the user should upgrade.
    Upgrade upgrade() const noexcept { return m_side; }

private:
    std::string m_backend;
    Upgrade m_side;
};

/// Why a backend is in its state: the one vocabulary of the core, the doctor, the CLI and the
/// GUI. A BackendLoadError carries one; the registry stores it beside the backend's state,
/// never parsing it back from a message. Each value has a stable snake_case id and a summary
/// and fix in the registry's cause table (registry/backendcause.h, docs/plugins.md).
enum class BackendCause {
    /// Loaded or Discovered: nothing is wrong.
    None,
    /// No backend has this name (InvalidBackend).
    NotInstalled,
    /// The manifest's library file does not exist.
    LibraryMissing,
    /// The library file exists but cannot be read.
    LibraryUnreadable,
    /// The library is not an ELF shared object for this machine.
    LibraryNotElf,
    /// One of the library's DT_NEEDED entries resolves to nothing.
    LibraryDependencyMissing,
    /// dlopen failed otherwise (an undefined symbol, ...).
    LibraryLoadFailed,
    /// No entry symbol, or it returned no register hook.
    EntryMissing,
    /// The library's entry reports a newer contract than this core implements.
    EntryContractTooNew,
    /// The library was built against an SDK layout this core no longer loads
    /// (kMinBinaryContractVersion).
    EntryContractTooOld,
    /// The manifest declares a newer contract than this core implements.
    ContractTooNew,
    /// This core is newer than the backend's max_core_version.
    CoreTooNew,
    /// This core is older than the backend's min_core_version.
    CoreTooOld,
    /// The register hook threw; nothing it registered remains.
    RegisterHookThrew,
    /// Its folder, manifest or library is writable by other users.
    Untrusted,
    /// The manifest is unreadable or wrong (the message names the key).
    InvalidManifest,
    /// Another backend owns its name.
    Shadowed,
    /// An optional dependency is missing on this machine.
    OptionalDependencyMissing,
    /// Found by an inspection worker, never in-process: the register hook (or a library
    /// constructor) called exit().
    HookExited,
    /// Loading it killed the inspection worker with a signal (in dlopen or the hook).
    HookCrashed,
    /// The register hook did not return in time.
    HookTimedOut,
    /// A library of the closure needs a symbol version (DT_VERNEED) that the library it
    /// resolves to does not define: built with a newer toolchain than this system has.
    SymbolVersionMissing,
    /// A symbol the library imports is defined by no library of its closure (nor the core):
    /// built against a newer SDK or library than this machine has.
    UndefinedSymbol,
    /// The library is for another ELF class, machine or OS ABI than this process.
    WrongArchitecture,
    /// The library (or a cell it declares) needs an x86-64 level this CPU (or the
    /// SWITCHYARD_MAX_ISA cap) does not reach: refused, never run into SIGILL.
    IsaUnsupported,
    /// A CUDA plugin carries no code (cubin or PTX) that can run on this machine's GPUs.
    GpuCodeMissing,
    /// The plugin needs a newer CUDA version than the installed driver supports.
    DriverTooOld,
    /// An OpenCL ICD vendor file names a library the ICD loader cannot load.
    IcdLibraryMissing,
    /// The library file is shorter than its headers say (a copy or download that was cut):
    /// refused before dlopen, which would die of SIGBUS mapping it.
    LibraryTruncated,
    /// The library is ELF for this machine but no shared library the loader maps: an object
    /// file, an executable, a debug-info file, a damaged header, DF_1_NOOPEN.
    LibraryNotLoadable,
    /// The library (or one of its closure) uses initial-exec TLS larger than what is left of
    /// the process's static TLS block ("cannot allocate memory in static TLS block").
    StaticTlsExhausted,
    /// A Vulkan driver manifest (ICD JSON) names a library the Vulkan loader cannot load
    /// (missing, another architecture, a missing dependency) or a Vulkan version too old.
    VulkanIcdBroken,
};

/// The backend is installed but cannot be used: its library or one of the library's own
/// dependencies fails to load, its entry symbol is missing, its register hook threw, ... The
/// cause is the registry's own (`BackendCause`); `reason` is the specific message.
class SWITCHYARD_CORE_EXPORT BackendLoadError : public Error {
public:
    /// The name plugin code and older sources use for the cause type.
    using Cause = BackendCause;
    BackendLoadError(std::string backend, BackendCause cause, const std::string& reason);
    const std::string& backend() const noexcept { return m_backend; }
    BackendCause cause() const noexcept { return m_cause; }
    const std::string& reason() const noexcept { return m_reason; }

private:
    std::string m_backend;
    BackendCause m_cause;
    std::string m_reason;
};

} // namespace switchyard
