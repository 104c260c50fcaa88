// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/diagnosis/elfdeps.h>

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace switchyard {

/// Where the Vulkan loader (libvulkan.so.1, Khronos' loader on Linux) looks for driver
/// manifests (ICD JSON files), read from the environment the way it reads it:
/// - `VK_DRIVER_FILES` (or, when that is unset, the older `VK_ICD_FILENAMES`): a
///   colon-separated list of manifests and folders that replaces the whole search;
/// - `VK_ADD_DRIVER_FILES`: manifests and folders searched before the standard folders;
/// - the standard folders, each `<dir>/vulkan/icd.d`: `$XDG_CONFIG_HOME` (`~/.config`),
///   `$XDG_CONFIG_DIRS` (`/etc/xdg`), `/etc`, `$XDG_DATA_HOME` (`~/.local/share`),
///   `$XDG_DATA_DIRS` (`/usr/local/share:/usr/share`).
struct SWITCHYARD_CORE_EXPORT VulkanIcdSearch {
    struct Place {
        std::string path; // a manifest or a folder of them
        std::string
            origin; // "VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES", "default"
    };
    std::vector<Place> places; // in the loader's order
    bool replaced = false;     // VK_DRIVER_FILES or VK_ICD_FILENAMES replaced the standard folders

    /// The environment's values (nullopt: unset) the search depends on.
    struct Environment {
        std::optional<std::string> driver_files, icd_filenames, add_driver_files;
        std::optional<std::string> xdg_config_home, xdg_config_dirs, xdg_data_home, xdg_data_dirs,
            home;
        static Environment current();
    };
    static VulkanIcdSearch from_environment();
    static VulkanIcdSearch from_values(const Environment& env);
    /// "VK_DRIVER_FILES=/x" or "/etc/vulkan/icd.d, /usr/share/vulkan/icd.d, …": for messages.
    std::string describe() const;
};

/// What stops the loader from using a driver, found without loading it.
enum class VulkanIcdState {
    Ok,
    ManifestInvalid,   // unreadable, not JSON, or no ICD.library_path
    LibraryMissing,    // library_path resolves to no file
    WrongArchitecture, // the library (or its library_arch) is for another ELF class or machine
    DependencyMissing, // a library it needs is not found
    LoadFails,         // the load simulation's symbol version or undefined symbol
    ApiTooOld,         // api_version below 1.1: the vulkan plugin's shaders need 1.1
};
/// "ok", "manifest_invalid", "library_missing", "wrong_architecture", "dependency_missing",
/// "load_fails", "api_too_old".
SWITCHYARD_CORE_EXPORT std::string_view to_string(VulkanIcdState state) noexcept;

/// One driver manifest the loader would read: the library it names, where that library
/// resolves and what the static load simulation says of it. Nothing is loaded.
struct SWITCHYARD_CORE_EXPORT VulkanIcd {
    std::string manifest;     // the JSON file
    std::string origin;       // VulkanIcdSearch::Place::origin of where it was found
    std::string library;      // ICD.library_path as written
    std::string api_version;  // ICD.api_version ("1.3.230"); empty when absent
    std::string library_arch; // ICD.library_arch ("64", "32"); empty when absent
    /// The driver runs on the CPU (Mesa's lavapipe, SwiftShader), by its manifest's or
    /// library's name; false for a GPU vendor's driver.
    bool cpu_driver = false;
    ResolvedLibrary resolved;                        // the file the loader would dlopen
    std::optional<ElfDependencyReport> dependencies; // of the resolved library, when found
    VulkanIcdState state = VulkanIcdState::Ok;
    /// Why the loader cannot use the driver; empty when Ok: "/x/libvulkan_foo.so is not found",
    /// "libvulkan_radeon.so needs libLLVM-15.so.1, which the dynamic loader cannot find".
    std::string problem;

    bool ok() const { return state == VulkanIcdState::Ok; }
};

/// The one JSON shape of a driver (`doctor --json`, `hardware --json`): {"manifest", "origin",
/// "library", "api_version", "library_arch", "cpu_driver", "path" (the resolved library, "" when
/// not found), "state" (to_string(VulkanIcdState)), "problem"}.
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const VulkanIcd& icd);

/// The manifests of `search` in the loader's order (a folder's `*.json` files by name),
/// each read and its library resolved; a place that does not exist gives none.
SWITCHYARD_CORE_EXPORT std::vector<VulkanIcd> find_vulkan_icds(const VulkanIcdSearch& search);
SWITCHYARD_CORE_EXPORT std::vector<VulkanIcd> find_vulkan_icds();

/// When a GPU vendor's driver cannot load and every driver that can runs on the CPU:
/// "Vulkan sees only a CPU device (lvp_icd.x86_64.json): the GPU driver nvidia_icd.json
/// cannot load". Empty otherwise.
SWITCHYARD_CORE_EXPORT std::string vulkan_only_cpu(const std::vector<VulkanIcd>& icds);

} // namespace switchyard
