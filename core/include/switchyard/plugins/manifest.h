// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/capabilities.h>
#include <switchyard/sdk/registries.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// The manifest's JSON key names, in one place (docs/plugins.md describes them).
namespace manifest_keys {
inline constexpr const char* kSchema = "schema";
inline constexpr const char* kName = "name";
inline constexpr const char* kVersion = "version";
inline constexpr const char* kDescription = "description";
inline constexpr const char* kLibrary = "library";
inline constexpr const char* kTags = "tags";
inline constexpr const char* kCapabilities = "capabilities";
inline constexpr const char* kContractVersion = "contract_version";
inline constexpr const char* kMinCoreVersion = "min_core_version";
inline constexpr const char* kMaxCoreVersion = "max_core_version";
inline constexpr const char* kOptionalDeps = "optional_deps";
inline constexpr const char* kDepName = "name";
inline constexpr const char* kDepKind = "kind";
inline constexpr const char* kDepHint = "hint";
inline constexpr const char* kKernels = "kernels";
inline constexpr const char* kOp = "op";
inline constexpr const char* kDevice = "device";
inline constexpr const char* kArch = "arch";
inline constexpr const char* kVariant = "variant";
inline constexpr const char* kWorkspaceBytes = "workspace_bytes";
inline constexpr const char* kComponents = "components";
inline constexpr const char* kKind = "kind";
inline constexpr const char* kProvidesDevices = "provides_devices";
} // namespace manifest_keys

/// The manifest schema revision this core reads.
inline constexpr int kManifestSchema = 1;
/// Limits on what one manifest may hold; a manifest over any of them is Invalid, with a
/// message naming the limit (and never takes discovery of the others down).
inline constexpr std::size_t kMaxManifestBytes = std::size_t(1) << 20;
inline constexpr std::size_t kMaxManifestDepth = 32;      // nested arrays/objects
inline constexpr std::size_t kMaxManifestValues = 100000; // JSON values of any kind
inline constexpr std::size_t kMaxManifestCells = 10000;   // kernels + components
/// What a manifest's file name ends with.
inline constexpr std::string_view kManifestSuffix = ".plugin.json";

/// A plugin manifest (`<name>.plugin.json`), read without touching the library it names.
///
/// Required: schema, name, version, library. Optional: description, tags, capabilities
/// (contract_version, min_core_version, max_core_version, optional_deps), kernels,
/// components, provides_devices. Unknown keys are kept in `extra` (nested ones under a dotted path
/// such as "capabilities.vendor" or "kernels[2].note"); a missing required key or a wrong type is
/// an error that names the key. Fields are meaningful only when is_valid(), except `name`, which is
/// filled whenever the manifest had a string name.
struct SWITCHYARD_CORE_EXPORT PluginManifest {
    int schema = kManifestSchema;
    std::string name;
    std::string version;
    std::string description;
    std::string library; // a file name in the manifest's folder
    std::vector<std::string> tags;
    BackendCapabilities capabilities;
    DeclaredCells kernels;    // (op, device, arch, variant) + workspace_bytes
    DeclaredCells components; // (kind, device, variant)
    /// The device kinds whose devices the library's DeviceProviders list ("provides_devices":
    /// ["cuda"]; [] for a plugin that only adds cells); nullopt when the key is absent
    /// (registry/devicebackends.h infers them for such an older manifest).
    std::optional<std::vector<std::string>> provides_devices;
    nlohmann::json extra = nlohmann::json::object();
    std::vector<std::string> errors; // "key 'tags': expected an array of strings, got string"

    bool is_valid() const noexcept { return errors.empty(); }

    /// Parses manifest text; never throws (problems go to `errors`, JSON errors with their
    /// line and column; over a limit above: the limit).
    static PluginManifest parse(std::string_view text);
    /// Reads and parses a manifest file; an unreadable file is an error too.
    static PluginManifest read(const std::string& path);
    /// The manifest as JSON again (known keys plus `extra`), e.g. for `show --json`.
    nlohmann::json to_json() const;
};

namespace detail {
/// PluginManifest::parse() without its direct path (a well-formed manifest read straight from
/// its text, no JSON DOM): every manifest read the collecting way, as one with a problem
/// always is. Tests and the fuzzer compare the two.
SWITCHYARD_CORE_EXPORT PluginManifest parse_manifest_general(std::string_view text);
} // namespace detail

/// True when `file_name` ends with ".plugin.json" (and is more than that).
SWITCHYARD_CORE_EXPORT bool is_manifest_file_name(std::string_view file_name) noexcept;

} // namespace switchyard
