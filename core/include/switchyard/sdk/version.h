// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace switchyard {

/// Revision of the backend contract this core implements. A backend declaring a higher
/// revision needs a newer Switchyard; a manifest declaring a lower one stays loadable (what a
/// manifest may say is additive).
inline constexpr int kContractVersion = 5;
/// The oldest revision a plugin *library* may have been built against (its entry's
/// contract_version). Plugins use the SDK's inline code and layouts (TupleKey, Registration,
/// TupleRegistry, CellRegistrar), so a library built against headers whose layout changed
/// would misread them: revision 2 changed TupleKey (an interned entry, 24 bytes instead of a
/// vector of strings) and TupleRegistry's tables; revision 3 added Registration's typed
/// `workspace_bytes` and made BackendLoadError carry the registry's BackendCause (the
/// change packaging/abi-check.sh reported against the revision 2 baseline); revision 4 made
/// TupleRegistry free the cells it retires (epoch-based reclamation: CellRef pins its
/// thread's reader record, two pointers instead of one, and the tables own their cells);
/// revision 5 took nlohmann::json out of the SDK (Registration::meta, the specs' meta,
/// DeviceInfo::properties and a component's config are a switchyard::Value, sdk/value.h) and
/// moved TupleRegistry's per-thread memos and snapshots into the core.
/// Such a library is refused before its register hook runs, with a message saying to rebuild
/// it against this Switchyard.
inline constexpr int kMinBinaryContractVersion = 5;

/// This core's release, "0.1.0".
SWITCHYARD_CORE_EXPORT std::string_view core_version() noexcept;
/// Git hash and build type the core was built from.
SWITCHYARD_CORE_EXPORT std::string_view core_git_hash() noexcept;
SWITCHYARD_CORE_EXPORT std::string_view core_build_type() noexcept;

using VersionTriple = std::array<long long, 3>;

/// The first three numeric components of a version ("1.2.3rc1" -> {1,2,3}), or nullopt
/// when the string does not start with "N.N.N" (Python seed: ^(\d+)\.(\d+)\.(\d+)).
SWITCHYARD_CORE_EXPORT std::optional<VersionTriple> parse_version(std::string_view text) noexcept;

} // namespace switchyard
