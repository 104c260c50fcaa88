// SPDX-License-Identifier: MIT
#pragma once

#include <memory>

namespace switchyard {
class DeviceProvider;
}

namespace switchyard::cuda {

/// The provider of the "cuda" devices (cuda:0, cuda:1, ...): one Device per GPU the
/// runtime reports, none (and no error) without a driver or a GPU.
std::shared_ptr<DeviceProvider> make_device_provider();

} // namespace switchyard::cuda
