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

/// The backend is installed but broken: its library or one of the library's own
/// dependencies fails to load, its entry symbol is missing, or its register hook threw.
/// Each cause has a stable id in the registry (`BackendCause`, registry/backendcause.h).
class SWITCHYARD_CORE_EXPORT BackendLoadError : public Error {
public:
    enum class Cause {
        LibraryMissing,           // the library file does not exist
        LibraryUnreadable,        // the library file exists but cannot be read
        LibraryNotElf,            // the library file is not an ELF shared object for this machine
        LibraryDependencyMissing, // a DT_NEEDED entry resolves to nothing
        LibraryLoadFailed,        // dlopen failed otherwise (undefined symbol, ...)
        EntryMissing,             // no entry symbol, or it returned no register hook
        EntryContractTooNew,      // the entry reports a newer contract than this core implements
        RegisterHookThrew,        // the register hook threw
        InvalidManifest,          // the manifest is unreadable or wrong
        Untrusted,                // its folder, manifest or library is writable by others
        EntryContractTooOld,      // the entry reports a contract older than the oldest layout
                                  // this core loads (kMinBinaryContractVersion): rebuild it
    };
    BackendLoadError(std::string backend, Cause cause, const std::string& reason);
    const std::string& backend() const noexcept { return m_backend; }
    Cause cause() const noexcept { return m_cause; }
    const std::string& reason() const noexcept { return m_reason; }

private:
    std::string m_backend;
    Cause m_cause;
    std::string m_reason;
};

} // namespace switchyard
