// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/device.h>

#include <memory>

namespace switchyard {

/// The built-in host CPU device ("cpu"): host memory, host timers, its peak bandwidth
/// from the triad probe and its peak FLOP/s from the FMA probe (probes.h).
SWITCHYARD_CORE_EXPORT std::shared_ptr<Device> make_cpu_device();
/// The provider of the one CPU device (the same device object on every enumerate()).
SWITCHYARD_CORE_EXPORT std::shared_ptr<DeviceProvider> make_cpu_device_provider();

} // namespace switchyard
