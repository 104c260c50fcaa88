// SPDX-License-Identifier: MIT
#include <switchyard/sdk/capabilities.h>
#include <switchyard/sdk/errors.h>

namespace switchyard {

std::string_view to_string(DependencyKind kind) noexcept {
    switch (kind) {
    case DependencyKind::Library:
        return "library";
    case DependencyKind::File:
        return "file";
    case DependencyKind::Executable:
        return "executable";
    case DependencyKind::Env:
        return "env";
    }
    return "library";
}

std::optional<DependencyKind> dependency_kind_from_string(std::string_view text) noexcept {
    if (text == "library")
        return DependencyKind::Library;
    if (text == "file")
        return DependencyKind::File;
    if (text == "executable")
        return DependencyKind::Executable;
    if (text == "env")
        return DependencyKind::Env;
    return std::nullopt;
}

void check_contract(const BackendCapabilities& caps, const std::string& backend,
                    std::string_view core) {
    if (caps.contract_version > kContractVersion) {
        throw ContractMismatch(backend, ContractMismatch::Upgrade::Switchyard,
                               "backend '" + backend + "' implements backend-contract revision " +
                                   std::to_string(caps.contract_version) +
                                   ", but this Switchyard core implements up to revision " +
                                   std::to_string(kContractVersion) +
                                   "; upgrade Switchyard to use it");
    }
    const auto version = parse_version(core);
    if (!version)
        return;
    if (caps.min_core_version) {
        const auto floor = parse_version(*caps.min_core_version);
        if (floor && *version < *floor)
            throw ContractMismatch(
                backend, ContractMismatch::Upgrade::Switchyard,
                "backend '" + backend + "' requires Switchyard >= " + *caps.min_core_version +
                    ", found " + std::string(core) + "; upgrade Switchyard to use it");
    }
    if (caps.max_core_version) {
        const auto ceiling = parse_version(*caps.max_core_version);
        if (ceiling && *version > *ceiling)
            throw ContractMismatch(
                backend, ContractMismatch::Upgrade::Backend,
                "backend '" + backend + "' supports Switchyard <= " + *caps.max_core_version +
                    ", found " + std::string(core) + "; check the backend for an update");
    }
}

} // namespace switchyard
