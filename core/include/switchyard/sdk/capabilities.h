// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/version.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// How an optional dependency is checked.
enum class DependencyKind {
    Library,    // a soname the dynamic loader can resolve
    File,       // a path that must exist
    Executable, // found on PATH
    Env,        // an environment variable that must be set
};

SWITCHYARD_CORE_EXPORT std::string_view to_string(DependencyKind kind) noexcept;
SWITCHYARD_CORE_EXPORT std::optional<DependencyKind>
dependency_kind_from_string(std::string_view text) noexcept;

struct SWITCHYARD_CORE_EXPORT Dependency {
    std::string name;
    DependencyKind kind = DependencyKind::Library;
    std::string hint; // what to install, e.g. "Install the NVIDIA driver (Debian: nvidia-driver)"
};

/// The outcome of checking one dependency on this machine.
struct SWITCHYARD_CORE_EXPORT DependencyStatus {
    Dependency dependency;
    bool found = false;
    std::string location; // where it was found (a path, or the variable's value)
    std::string detail;   // why it is missing, when it is
};

/// What a backend supports, declared at registration or in its plugin manifest.
struct SWITCHYARD_CORE_EXPORT BackendCapabilities {
    std::vector<Dependency> optional_deps;
    int contract_version = kContractVersion;
    std::optional<std::string> min_core_version; // inclusive
    std::optional<std::string> max_core_version; // inclusive
};

/// Throws ContractMismatch when `caps` needs a newer contract than kContractVersion, or when
/// `core` lies outside [min, max] (first three numeric components; an unparseable `core`
/// version skips the range check, as does an unparseable bound).
SWITCHYARD_CORE_EXPORT void check_contract(const BackendCapabilities& caps,
                                           const std::string& backend,
                                           std::string_view core = core_version());

} // namespace switchyard
