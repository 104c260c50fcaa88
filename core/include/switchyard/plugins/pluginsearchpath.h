// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/registry/backendregistry.h>

#include <memory>
#include <string>
#include <vector>

namespace switchyard {

/// One folder on the plugin search path and why it is there.
struct SWITCHYARD_CORE_EXPORT PluginSearchDir {
    std::string path;
    std::string origin; // "SWITCHYARD_PLUGIN_PATH", "user", "install" or "explicit"
};

/// What discovery found in one folder (the doctor's "what was found where").
struct SWITCHYARD_CORE_EXPORT PluginDirectoryScan {
    PluginSearchDir dir;
    bool exists = false;
    std::string problem;                // e.g. writable by other users: its plugins are refused
    std::vector<std::string> manifests; // manifest paths, sorted
    std::size_t skipped_files = 0;      // entries that are not manifests
    bool duplicate = false;             // the same folder appeared earlier on the path
};

/// The plugin search path, in order: SWITCHYARD_PLUGIN_PATH (colon-separated), the user's
/// folder ($XDG_DATA_HOME/switchyard/plugins, else ~/.local/share/switchyard/plugins), the
/// install's lib/switchyard/plugins next to the executable (/proc/self/exe/../../lib/...).
/// Discovery reads manifests only; it never opens a library.
class SWITCHYARD_CORE_EXPORT PluginSearchPath {
public:
    PluginSearchPath() = default;
    explicit PluginSearchPath(std::vector<PluginSearchDir> dirs) : m_dirs(std::move(dirs)) {}
    /// Folders given explicitly (tests, tools), origin "explicit".
    static PluginSearchPath from_dirs(const std::vector<std::string>& dirs);
    /// The default path, from the environment and the executable's location.
    static PluginSearchPath from_environment();

    const std::vector<PluginSearchDir>& dirs() const noexcept { return m_dirs; }
    /// What from_environment() ignored, one sentence each: empty and relative entries of
    /// SWITCHYARD_PLUGIN_PATH (a relative folder would depend on the current folder).
    const std::vector<std::string>& warnings() const noexcept { return m_warnings; }

    /// Every `*.plugin.json` in each folder (not recursive), folder order then file name
    /// order; a folder listed twice is scanned once. A plugin whose folder, manifest or
    /// library other users could change (untrusted_reason()) is listed as Invalid with the
    /// reason.
    std::vector<std::shared_ptr<BackendProvider>>
    discover(std::vector<PluginDirectoryScan>* scans = nullptr) const;
    /// What discover() would report in `scans`, without reading any manifest.
    std::vector<PluginDirectoryScan> scan() const;

    /// A PluginDiscovery (for BackendRegistry::set_plugin_discovery) over this path.
    PluginDiscovery discovery() const;

private:
    std::vector<std::shared_ptr<BackendProvider>> walk(std::vector<PluginDirectoryScan>* scans,
                                                       bool read_manifests) const;

    std::vector<PluginSearchDir> m_dirs;
    std::vector<std::string> m_warnings;
};

/// Why other users could change `path`, by the rule of OpenSSH's StrictModes applied to
/// every component from / down to it, symbolic link targets included (plugins/trust.h):
/// empty when they cannot. `what` names it in the message ("plugin folder", "library").
SWITCHYARD_CORE_EXPORT std::string untrusted_reason(const std::string& path,
                                                    const std::string& what);

/// The folder the install's plugins live in, relative to the running executable.
SWITCHYARD_CORE_EXPORT std::string install_plugin_dir();
/// The user's plugin folder (XDG data home).
SWITCHYARD_CORE_EXPORT std::string user_plugin_dir();

} // namespace switchyard
