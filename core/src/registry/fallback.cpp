// SPDX-License-Identifier: MIT
#include <switchyard/registry/fallback.h>

#include <switchyard/hardware/devicekind.h>
#include <switchyard/hardware/isa.h>

#include "util/textutil.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace switchyard {
namespace {

const std::vector<std::string> kCudaLadder = {"sm_100", "sm_90", "sm_89",  "sm_86",
                                              "sm_80",  "sm_75", "generic"};
const std::vector<std::string> kX86Ladder = {"x86-64-v4", "x86-64-v3", "x86-64-v2", "generic"};
const std::vector<std::string> kArmLadder = {"sve", "neon", "generic"};
const std::vector<std::string> kOpenclLadder = {"generic"};
const std::vector<std::string> kVulkanLadder = {"generic"};

// "sm_87" -> 87; -1 when not an sm_NN arch.
int sm_number(std::string_view arch) {
    if (arch.substr(0, 3) != "sm_" || arch.size() < 4)
        return -1;
    int value = 0;
    auto [p, ec] = std::from_chars(arch.data() + 3, arch.data() + arch.size(), value);
    if (ec != std::errc() || p != arch.data() + arch.size())
        return -1;
    return value;
}

bool host_is_aarch64() {
#if defined(CPU_FEATURES_ARCH_AARCH64)
    return true;
#else
    return false;
#endif
}

} // namespace

const std::vector<std::string>& known_devices() {
    static const std::vector<std::string> devices = [] {
        std::vector<std::string> names;
        for (const auto kind :
             {DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::OpenCl, DeviceKind::Vulkan})
            names.emplace_back(to_string(kind));
        return names;
    }();
    return devices;
}

std::vector<std::string> arch_ladder(std::string_view device) {
    switch (device_kind(device)) {
    case DeviceKind::Cuda:
        return kCudaLadder;
    case DeviceKind::Cpu:
        return host_is_aarch64() ? kArmLadder : kX86Ladder;
    case DeviceKind::OpenCl:
        return kOpenclLadder;
    case DeviceKind::Vulkan:
        return kVulkanLadder;
    case DeviceKind::Other:
        break;
    }
    throw std::invalid_argument("unknown device '" + std::string(device) +
                                "'; known devices: " + text::join(known_devices()));
}

std::vector<std::string> arch_chain(std::string_view device, std::string_view start) {
    auto ladder = arch_ladder(device);
    const DeviceKind kind = device_kind(device);
    if (kind == DeviceKind::Cpu) {
        // Either ladder may be asked about on any host ("what would resolve on an ARM box?").
        const auto& other = host_is_aarch64() ? kX86Ladder : kArmLadder;
        if (std::find(ladder.begin(), ladder.end(), start) == ladder.end() &&
            std::find(other.begin(), other.end(), start) != other.end())
            ladder = other;
    }
    auto it = std::find(ladder.begin(), ladder.end(), start);
    if (it != ladder.end())
        return {it, ladder.end()};
    if (kind == DeviceKind::Cuda) {
        const int wanted = sm_number(start);
        if (wanted >= 0) {
            // Never above the device's compute capability.
            for (auto rung = ladder.begin(); rung != ladder.end(); ++rung) {
                const int n = sm_number(*rung);
                if (n < 0 || n <= wanted)
                    return {rung, ladder.end()};
            }
        }
    }
    throw std::invalid_argument("unknown arch '" + std::string(start) + "' for device '" +
                                std::string(device) + "'; known arches: " + text::join(ladder) +
                                (kind == DeviceKind::Cuda ? " (or any sm_NN)" : ""));
}

std::string host_cpu_arch() {
    return cpu_best_isa_level();
}

Target parse_target(std::string_view text) {
    Target t;
    const auto colon = text.find(':');
    t.device = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos)
        t.arch = std::string(text.substr(colon + 1));
    (void)arch_ladder(t.device); // validates the device
    if (!t.arch.empty() &&
        std::all_of(t.arch.begin(), t.arch.end(), [](char c) { return c >= '0' && c <= '9'; }))
        t.arch.clear(); // "cuda:0" is a device id: the arch comes from the hardware
    if (!t.arch.empty())
        (void)arch_chain(t.device, t.arch); // validates the arch
    return t;
}

std::vector<TupleKey> fallback_chain(std::string_view op, const Target& target,
                                     std::string_view variant) {
    std::string start = target.arch;
    if (start.empty())
        start = device_kind(target.device) == DeviceKind::Cpu ? host_cpu_arch()
                                                              : arch_ladder(target.device).front();
    std::vector<TupleKey> chain;
    for (const auto& arch : arch_chain(target.device, start))
        chain.push_back(TupleKey{op, target.device, arch, variant});
    TupleKey terminal{op, "cpu", "generic", "reference"};
    if (chain.empty() || !(chain.back() == terminal))
        chain.push_back(std::move(terminal));
    return chain;
}

std::string cell_name(const TupleKey& kernel_key) {
    return kernel_key[2] + "/" + kernel_key[3];
}

} // namespace switchyard
