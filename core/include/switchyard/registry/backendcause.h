// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/errors.h>

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string_view>
#include <vector>

namespace switchyard {

/// Why a backend is in its state: stored beside BackendState, never parsed back from the
/// message. Each value has a stable snake_case id (to_string/backend_cause_from_string),
/// the `"cause"` of every `--json` output; docs/plugins.md lists them with their fixes.
enum class BackendCause {
    None,                      // Loaded or Discovered: nothing is wrong
    NotInstalled,              // no backend has this name (InvalidBackend)
    LibraryMissing,            // the manifest's library file does not exist
    LibraryUnreadable,         // the library file exists but cannot be read
    LibraryNotElf,             // the library is not an ELF shared object for this machine
    LibraryDependencyMissing,  // one of the library's DT_NEEDED entries resolves to nothing
    LibraryLoadFailed,         // dlopen failed otherwise (undefined symbol, ...)
    EntryMissing,              // no entry symbol, or it returned no register hook
    EntryContractTooNew,       // the library's entry reports a newer contract than the core's
    EntryContractTooOld,       // the library was built against an SDK layout this core dropped
    ContractTooNew,            // the manifest declares a newer contract than the core's
    CoreTooNew,                // this core is newer than the backend's max_core_version
    CoreTooOld,                // this core is older than the backend's min_core_version
    RegisterHookThrew,         // the register hook threw; nothing it registered remains
    Untrusted,                 // its folder, manifest or library is writable by other users
    InvalidManifest,           // the manifest is unreadable or wrong (the message names the key)
    Shadowed,                  // another backend owns its name
    OptionalDependencyMissing, // an optional dependency is missing on this machine
    // Found by an inspection worker (worker/inspect.h), never in-process: loading the plugin
    // ended the process that loaded it.
    HookExited,   // the register hook (or a library constructor) called exit()
    HookCrashed,  // loading it killed the process with a signal (in dlopen or the hook)
    HookTimedOut, // the register hook did not return in time
};

/// The stable id, e.g. "untrusted", "library_missing".
SWITCHYARD_CORE_EXPORT std::string_view to_string(BackendCause cause) noexcept;
/// The cause whose id is `id`; nullopt for an unknown id.
SWITCHYARD_CORE_EXPORT std::optional<BackendCause>
backend_cause_from_string(std::string_view id) noexcept;
/// Every cause, in declaration order (docs, tests).
SWITCHYARD_CORE_EXPORT std::vector<BackendCause> all_backend_causes();
/// The registry's cause for a load error's cause (one to one).
SWITCHYARD_CORE_EXPORT BackendCause to_backend_cause(BackendLoadError::Cause cause) noexcept;

SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, BackendCause cause);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, BackendCause& cause);

} // namespace switchyard
