// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/registry/backendregistry.h>

#include <string>

namespace switchyard {

/// The code a cell runs: who ships it, and the ELF build ID of the library that holds it.
struct SWITCHYARD_CORE_EXPORT CodeIdentity {
    std::string backend;  // the built-in backend's name ("cpu") or the plugin's
    std::string version;  // the plugin's version; the core's for a built-in cell
    std::string build_id; // of the plugin's library; of libswitchyard-core for a built-in
    /// "fixture-tuning 1.0.0, build 1a2b3c4d5e6f".
    std::string text() const;
    /// Empty where the two match; else what differs ("its library was rebuilt (build
    /// 1a2b… now, 9f8e… when tuned)", "its version is 1.1.0 now, 1.0.0 when tuned").
    std::string difference(const CodeIdentity& now) const;
    friend bool operator==(const CodeIdentity&, const CodeIdentity&) = default;
};

/// The identity of `cell`'s code, as `registry` knows its backend (no library is loaded for
/// it: the build ID is read from the file).
SWITCHYARD_CORE_EXPORT CodeIdentity code_identity(BackendRegistry& registry,
                                                  const KernelCell& cell);

} // namespace switchyard
