// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

/// The plugin SDK's entry point. A plugin is a shared library plus a manifest
/// (`<name>.plugin.json`, see docs/plugins.md) in the same folder. The library exports
/// one extern "C" function, `switchyard_plugin_entry`, that returns a PluginEntry; the
/// SWITCHYARD_PLUGIN macro writes it:
///
///     #include <switchyard/sdk/plugin.h>
///
///     static void register_cells(switchyard::PluginContext& ctx) {
///         ctx.add_kernel({.op = "gemm", .device = "cpu", .arch = "generic", .variant = "mine",
///                         .fn = [](const switchyard::KernelArgs& a) { ... }});
///     }
///     SWITCHYARD_PLUGIN(register_cells)
///
/// Contract between the core and a plugin:
/// - The core reads the manifest first and refuses, without opening the library, a
///   plugin whose `capabilities.contract_version` is newer than kContractVersion or whose
///   core version range excludes this core. The entry's `contract_version` is checked
///   again after dlopen, before the register hook runs.
/// - The register hook runs once per process (loading is idempotent and serialised), on
///   any thread. Cells it adds are buffered and published only when it returns; if it
///   throws, nothing it added becomes visible and the plugin is marked Failed with the
///   exception's message.
/// - Don't run code at load time (static constructors with side effects): the library may be
///   opened only to be refused. The library stays mapped for the process's lifetime.
/// - Plugins are C++ and share the core's C++ ABI: build them with the same compiler
///   family and standard library as the core (the CMake package's switchyard_add_plugin).

#include <switchyard/sdk/registries.h>
#include <switchyard/sdk/version.h>

#include <cstdint>
#include <string>
#include <utility>

namespace switchyard {

/// The name of the one symbol a plugin library exports.
inline constexpr const char* kPluginEntrySymbol = "switchyard_plugin_entry";

/// What a plugin's register hook receives: where to add cells, and where it lives.
class SWITCHYARD_CORE_EXPORT PluginContext {
public:
    PluginContext(CellRegistrar& cells, std::string backend, std::string plugin_dir,
                  std::string manifest_path)
        : m_cells(cells), m_backend(std::move(backend)), m_plugin_dir(std::move(plugin_dir)),
          m_manifest_path(std::move(manifest_path)) {}

    /// Adds a kernel cell (op, device, arch, variant); throws std::invalid_argument without `fn`.
    void add_kernel(CellRegistrar::KernelSpec spec) { m_cells.add_kernel(std::move(spec)); }
    /// Adds a component cell (kind, device, variant).
    void add_component(CellRegistrar::ComponentSpec spec) {
        m_cells.add_component(std::move(spec));
    }
    /// Adds the plugin's device provider (its devices appear in the profiler, `hardware`
    /// and the GUI once the plugin is loaded; they go away when it is unregistered).
    void add_device_provider(std::shared_ptr<DeviceProvider> provider) {
        m_cells.add_device_provider(std::move(provider));
    }
    CellRegistrar& cells() noexcept { return m_cells; }

    /// The backend's name, from the manifest.
    const std::string& backend() const noexcept { return m_backend; }
    /// The folder holding the manifest and the library (for data files shipped beside them).
    const std::string& plugin_dir() const noexcept { return m_plugin_dir; }
    const std::string& manifest_path() const noexcept { return m_manifest_path; }
    /// The contract revision of the core that is loading the plugin.
    int core_contract_version() const noexcept { return kContractVersion; }

private:
    CellRegistrar& m_cells;
    std::string m_backend;
    std::string m_plugin_dir;
    std::string m_manifest_path;
};

using PluginRegisterFn = void (*)(PluginContext& context);
using PluginResetFn = void (*)();

/// What switchyard_plugin_entry() returns: a pointer to static data, valid while the
/// library is loaded.
struct SWITCHYARD_CORE_EXPORT PluginEntry {
    std::uint32_t struct_size = sizeof(PluginEntry); // lets later revisions append fields
    int contract_version = kContractVersion;         // the revision the plugin was built against
    PluginRegisterFn register_cells = nullptr;       // required
    PluginResetFn reset = nullptr;                   // optional: release process-wide state
};

} // namespace switchyard

extern "C" {
/// The type of `switchyard_plugin_entry`.
typedef const switchyard::PluginEntry* (*SwitchyardPluginEntryFn)(void);
}

#define SWITCHYARD_PLUGIN_EXPORT __attribute__((visibility("default")))

/// Defines the entry symbol with an explicit contract revision (tests use it to fake a
/// plugin from the future); plugin authors use SWITCHYARD_PLUGIN below.
#define SWITCHYARD_PLUGIN_DEFINE(register_fn, reset_fn, contract)                                  \
    extern "C" SWITCHYARD_PLUGIN_EXPORT const ::switchyard::PluginEntry* switchyard_plugin_entry(  \
        void) {                                                                                    \
        static const ::switchyard::PluginEntry entry{sizeof(::switchyard::PluginEntry),            \
                                                     (contract), (register_fn), (reset_fn)};       \
        return &entry;                                                                             \
    }

/// Exports `register_fn` (void(switchyard::PluginContext&)) as the plugin's register hook.
#define SWITCHYARD_PLUGIN(register_fn)                                                             \
    SWITCHYARD_PLUGIN_DEFINE(register_fn, nullptr, ::switchyard::kContractVersion)
/// The same, with a reset hook (void()) that releases process-wide state.
#define SWITCHYARD_PLUGIN_WITH_RESET(register_fn, reset_fn)                                        \
    SWITCHYARD_PLUGIN_DEFINE(register_fn, reset_fn, ::switchyard::kContractVersion)
