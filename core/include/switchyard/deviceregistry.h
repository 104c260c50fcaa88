// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/device.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// The seam device backends plug into: enumerates the devices of one kind.
class DeviceProvider {
public:
    virtual ~DeviceProvider() = default;
    /// "cpu", "cuda", "opencl": the kernel key's device field.
    virtual std::string kind() const = 0;
    /// The devices present now; an empty list when the runtime or the hardware is missing.
    /// Ids are "<kind>:<n>" (the CPU is just "cpu").
    virtual std::vector<std::shared_ptr<Device>> enumerate() = 0;
};

/// The process-wide list of device providers. The CPU provider is built in; a backend's
/// register hook adds its own (add_provider) and its reset removes it. Thread-safe.
class DeviceRegistry {
public:
    static DeviceRegistry& instance();

    /// Replaces any provider of the same kind.
    void add_provider(std::shared_ptr<DeviceProvider> provider);
    bool remove_provider(std::string_view kind);

    /// Every device of every provider (enumerated on first use, cached until refresh()).
    /// A provider that throws contributes no device.
    std::vector<std::shared_ptr<Device>> devices();
    /// nullptr when no device has this id.
    std::shared_ptr<Device> find(std::string_view id);
    void refresh();

private:
    DeviceRegistry();
    std::mutex m_mutex;
    std::vector<std::shared_ptr<DeviceProvider>> m_providers;
    std::vector<std::shared_ptr<Device>> m_devices;
    bool m_enumerated = false;
};

/// The built-in host CPU device ("cpu"): host memory, host timers, its peak bandwidth
/// from the triad probe and its peak FLOP/s from the FMA probe (hardware.h).
std::shared_ptr<Device> make_cpu_device();

} // namespace switchyard
