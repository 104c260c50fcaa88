// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <string_view>

namespace switchyard {

/// The device kinds the core itself knows, as one closed set to decide by. The text stays
/// what crosses files, processes and plugins (DeviceInfo::kind, RowSpec::device_kind, a cell
/// key's device): a plugin may name a kind of its own, which reads as Other here.
enum class DeviceKind { Cpu, Cuda, OpenCl, Vulkan, Other };

/// The kind `text` names exactly ("cuda"; not "cuda:0", a device id); Other for any other.
SWITCHYARD_CORE_EXPORT DeviceKind device_kind(std::string_view text) noexcept;
/// "cpu", "cuda", "opencl", "vulkan"; "" for Other, whose text is the device's own.
SWITCHYARD_CORE_EXPORT std::string_view to_string(DeviceKind kind) noexcept;

} // namespace switchyard
