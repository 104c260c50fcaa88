// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/device.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace switchyard {

/// A list of device providers. The process-wide one (runtime.h) starts with the CPU
/// provider; a backend's register hook adds its own (PluginContext::add_device_provider)
/// and unloading or resetting the backend removes them. Thread-safe.
class SWITCHYARD_CORE_EXPORT DeviceRegistry {
public:
    DeviceRegistry() = default;
    DeviceRegistry(const DeviceRegistry&) = delete;
    DeviceRegistry& operator=(const DeviceRegistry&) = delete;

    /// Replaces any provider of the same kind.
    void add_provider(std::shared_ptr<DeviceProvider> provider);
    bool remove_provider(std::string_view kind);
    /// The kinds of the providers, in the order they were added.
    std::vector<std::string> kinds();
    /// The provider of `kind`, or nullptr.
    std::shared_ptr<DeviceProvider> provider(std::string_view kind);

    /// Every device of every provider (enumerated on first use, cached until refresh()).
    /// A provider that throws contributes no device; enumeration_errors() says why.
    std::vector<std::shared_ptr<Device>> devices();
    /// What each provider that threw while listing its devices said, as (kind, message),
    /// from the last enumeration (devices() enumerates first when it has to).
    std::vector<std::pair<std::string, std::string>> enumeration_errors();
    /// nullptr when no device has this id.
    std::shared_ptr<Device> find(std::string_view id);
    void refresh();

private:
    void enumerate_locked(); // m_mutex held
    std::mutex m_mutex;
    std::vector<std::shared_ptr<DeviceProvider>> m_providers;
    std::vector<std::shared_ptr<Device>> m_devices;
    std::vector<std::pair<std::string, std::string>> m_errors;
    bool m_enumerated = false;
};

} // namespace switchyard
