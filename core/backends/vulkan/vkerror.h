// SPDX-License-Identifier: MIT
#pragma once

#include <vulkan/vulkan.h>

#include <string>

namespace switchyard::vulkan {

/// "VK_ERROR_INCOMPATIBLE_DRIVER" for -9, "VK_ERROR_UNKNOWN" for a code this table lacks.
const char* error_name(VkResult code) noexcept;

/// "vkCreateInstance: -9 VK_ERROR_INCOMPATIBLE_DRIVER", the way vulkaninfo reports a call.
std::string describe_error(const char* call, VkResult code);

/// Throws std::runtime_error(describe_error(call, code)) unless code is VK_SUCCESS.
void check(VkResult code, const char* call);

} // namespace switchyard::vulkan
