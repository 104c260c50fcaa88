// SPDX-License-Identifier: MIT
#include <switchyard/sdk/errors.h>

#include "util/textutil.h"

namespace switchyard {
namespace {

std::string invalid_backend_message(const std::string& name,
                                    const std::vector<std::string>& suggestions) {
    std::string message = "Invalid backend: '" + name + "'";
    if (!suggestions.empty()) {
        message += ", did you mean: " + text::join(suggestions, ", ", text::quoted) + "?";
    } else {
        message += ".";
    }
    return message +
           " See `switchyard-cli list --all --include-unavailable` for the installed backends.";
}

std::string missing_message(const std::string& backend,
                            const std::vector<DependencyStatus>& missing) {
    std::string names;
    std::string hints;
    for (const auto& m : missing) {
        // Names and hints come from the manifest: escaped where they enter the message.
        const auto name = text::untrusted(m.dependency.name);
        names += (names.empty() ? "" : ", ") + name;
        hints += "\n  - " + name + " (" + std::string(to_string(m.dependency.kind)) + "): " +
                 (m.dependency.hint.empty() ? "no install hint declared"
                                            : text::untrusted(m.dependency.hint));
    }
    return "backend '" + backend + "' is missing optional dependencies: " + names +
           ". Install them and retry:" + hints;
}

} // namespace

InvalidBackend::InvalidBackend(std::string name, std::vector<std::string> suggestions)
    : Error(invalid_backend_message(name, suggestions)), m_name(std::move(name)),
      m_suggestions(std::move(suggestions)) {}

DuplicateBackend::DuplicateBackend(const std::string& name, const std::string& owner)
    : Error("backend '" + name + "' is already registered (" + owner +
            "); unregister it first or choose another name") {}

MissingDependency::MissingDependency(std::string backend, std::vector<DependencyStatus> missing)
    : Error(missing_message(backend, missing)), m_backend(std::move(backend)),
      m_missing(std::move(missing)) {}

ContractMismatch::ContractMismatch(std::string backend, Upgrade side, const std::string& message)
    : Error(message), m_backend(std::move(backend)), m_side(side) {}

BackendLoadError::BackendLoadError(std::string backend, BackendCause cause,
                                   const std::string& reason)
    : Error("Cannot load backend '" + backend + "': " + reason), m_backend(std::move(backend)),
      m_cause(cause), m_reason(reason) {}

} // namespace switchyard
