// SPDX-License-Identifier: MIT
#include <switchyard/registry/backendcause.h>

#include "util/jsonread.h"

#include <nlohmann/json.hpp>

#include <array>
#include <stdexcept>
#include <string>
#include <utility>

namespace switchyard {
namespace {

using C = BackendCause;

// The one table of ids.
constexpr std::array<std::pair<BackendCause, std::string_view>, 21> kIds{{
    {C::None, "none"},
    {C::NotInstalled, "not_installed"},
    {C::LibraryMissing, "library_missing"},
    {C::LibraryUnreadable, "library_unreadable"},
    {C::LibraryNotElf, "library_not_elf"},
    {C::LibraryDependencyMissing, "library_dependency_missing"},
    {C::LibraryLoadFailed, "library_load_failed"},
    {C::EntryMissing, "entry_missing"},
    {C::EntryContractTooNew, "entry_contract_too_new"},
    {C::EntryContractTooOld, "entry_contract_too_old"},
    {C::ContractTooNew, "contract_too_new"},
    {C::CoreTooNew, "core_too_new"},
    {C::CoreTooOld, "core_too_old"},
    {C::RegisterHookThrew, "register_hook_threw"},
    {C::Untrusted, "untrusted"},
    {C::InvalidManifest, "invalid_manifest"},
    {C::Shadowed, "shadowed"},
    {C::OptionalDependencyMissing, "optional_dependency_missing"},
    {C::HookExited, "hook_exited"},
    {C::HookCrashed, "hook_crashed"},
    {C::HookTimedOut, "hook_timed_out"},
}};

} // namespace

std::string_view to_string(BackendCause cause) noexcept {
    for (const auto& [c, id] : kIds)
        if (c == cause)
            return id;
    return "none";
}

std::optional<BackendCause> backend_cause_from_string(std::string_view id) noexcept {
    for (const auto& [c, i] : kIds)
        if (i == id)
            return c;
    return std::nullopt;
}

std::vector<BackendCause> all_backend_causes() {
    std::vector<BackendCause> out;
    for (const auto& [c, id] : kIds)
        out.push_back(c);
    return out;
}

BackendCause to_backend_cause(BackendLoadError::Cause cause) noexcept {
    using L = BackendLoadError::Cause;
    switch (cause) {
    case L::LibraryMissing:
        return C::LibraryMissing;
    case L::LibraryUnreadable:
        return C::LibraryUnreadable;
    case L::LibraryNotElf:
        return C::LibraryNotElf;
    case L::LibraryDependencyMissing:
        return C::LibraryDependencyMissing;
    case L::LibraryLoadFailed:
        return C::LibraryLoadFailed;
    case L::EntryMissing:
        return C::EntryMissing;
    case L::EntryContractTooNew:
        return C::EntryContractTooNew;
    case L::EntryContractTooOld:
        return C::EntryContractTooOld;
    case L::RegisterHookThrew:
        return C::RegisterHookThrew;
    case L::InvalidManifest:
        return C::InvalidManifest;
    case L::Untrusted:
        return C::Untrusted;
    }
    return C::LibraryLoadFailed;
}

void to_json(nlohmann::json& j, BackendCause cause) {
    j = std::string(to_string(cause));
}

void from_json(const nlohmann::json& j, BackendCause& cause) {
    cause = jsonread::Value(j, "cause").id_as("backend cause", backend_cause_from_string);
}

} // namespace switchyard
