// SPDX-License-Identifier: MIT
#include <switchyard/hardware/devicekind.h>

#include <array>
#include <utility>

namespace switchyard {

namespace {

// The one table between a known kind and its text.
constexpr std::array<std::pair<DeviceKind, std::string_view>, 4> kKindNames = {{
    {DeviceKind::Cpu, "cpu"},
    {DeviceKind::Cuda, "cuda"},
    {DeviceKind::OpenCl, "opencl"},
    {DeviceKind::Vulkan, "vulkan"},
}};

} // namespace

DeviceKind device_kind(std::string_view text) noexcept {
    for (const auto& [kind, name] : kKindNames)
        if (name == text)
            return kind;
    return DeviceKind::Other;
}

std::string_view to_string(DeviceKind kind) noexcept {
    for (const auto& [known, name] : kKindNames)
        if (known == kind)
            return name;
    return {};
}

} // namespace switchyard
