// SPDX-License-Identifier: MIT
#include "profiling/guards.h"

#include <switchyard/hardware/devicekind.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace switchyard::detail {

namespace {

// Whether a device of `kind` hands out buffers as addresses (host memory, CUDA's device
// pointers) that an offset can be added to; others hand out handles.
bool by_address(DeviceKind kind) {
    return kind == DeviceKind::Cpu || kind == DeviceKind::Cuda;
}

// How a device's buffers are reached at an offset, for the guard zones.
struct Offsets {
    Device& device;
    BufferViews* views = nullptr; // handles; nullptr: addresses
    bool addresses = false;

    Offsets(Device& d, const std::string& kind)
        : device(d), views(dynamic_cast<BufferViews*>(&d)),
          addresses(by_address(device_kind(kind))) {}
    bool usable() const { return addresses || views; }
    void upload(void* base, std::size_t offset, const void* src, std::size_t bytes) {
        if (addresses)
            device.upload(static_cast<char*>(base) + offset, src, bytes);
        else
            views->upload_at(base, offset, src, bytes);
    }
    void download(void* dst, const void* base, std::size_t offset, std::size_t bytes) {
        if (addresses)
            device.download(dst, static_cast<const char*>(base) + offset, bytes);
        else
            views->download_at(dst, base, offset, bytes);
    }
};

// A buffer of `bytes` with guard zones on both sides where the device allows; returns the
// buffer.
void* add_guarded(Offsets& at, DeviceBuffers& bufs, Guards& guards, std::size_t bytes,
                  std::string name, std::size_t element) {
    if (!at.usable())
        return bufs.add(bytes);
    void* base = bufs.add(bytes + 2 * Guards::kBytes);
    void* inner = nullptr;
    if (at.addresses) {
        inner = static_cast<char*>(base) + Guards::kBytes;
    } else {
        inner = at.views->view(base, Guards::kBytes, bytes);
        if (!inner) // the device cannot start a buffer there: unguarded
            return bufs.add(bytes);
        bufs.views.push_back(inner);
    }
    const std::vector<std::uint32_t> canary(Guards::kBytes / 4, Guards::kCanary);
    at.upload(base, 0, canary.data(), Guards::kBytes);
    at.upload(base, Guards::kBytes + bytes, canary.data(), Guards::kBytes);
    guards.zones.push_back({std::move(name), base, bytes, element});
    return inner;
}

} // namespace

std::vector<std::string> check_guards(Device& device, const std::string& kind, const Guards& guards,
                                      bool inputs) {
    Offsets at(device, kind);
    std::vector<std::string> out;
    std::vector<std::uint32_t> zone(Guards::kBytes / 4);
    for (const auto& z : guards.zones) {
        const char* label = z.element == 1 ? " bytes " : " elements ";
        const std::string unit_name = z.element == 1 ? "the workspace" : "`" + z.name + "`";
        // Before: the element farthest from the buffer that changed.
        at.download(zone.data(), z.base, 0, Guards::kBytes);
        for (std::size_t i = 0; i < zone.size(); ++i)
            if (zone[i] != Guards::kCanary) {
                out.push_back("wrote " + std::to_string((Guards::kBytes - 4 * i) / z.element) +
                              label + "before " + unit_name);
                break;
            }
        at.download(zone.data(), z.base, Guards::kBytes + z.bytes, Guards::kBytes);
        for (std::size_t i = zone.size(); i-- > 0;)
            if (zone[i] != Guards::kCanary) {
                out.push_back("wrote " + std::to_string(4 * (i + 1) / z.element) + label + "past " +
                              unit_name);
                break;
            }
    }
    for (const auto& in : guards.inputs) {
        if (!inputs)
            break;
        std::vector<float> now(in.host->size());
        device.download(now.data(), in.buffer, now.size() * sizeof(float));
        std::size_t changed = 0, first = 0;
        for (std::size_t i = 0; i < now.size(); ++i)
            if (std::memcmp(&now[i], &(*in.host)[i], sizeof(float)) != 0 && changed++ == 0)
                first = i;
        if (changed > 0) {
            char buf[128];
            std::snprintf(buf, sizeof buf, " (%zu elements; %s[%zu]: %g -> %g)", changed,
                          in.name.c_str(), first, double((*in.host)[first]), double(now[first]));
            out.push_back("modified input `" + in.name + "`" + buf);
        }
    }
    return out;
}

KernelArgs make_args(const OpInfo& op, const RowSpec& spec, const Workload& w, Device& device,
                     DeviceBuffers& bufs, std::int64_t workspace, Guards& guards) {
    Offsets at(device, spec.device_kind);
    KernelArgs args;
    args.dims = spec.dims;
    args.scalars = w.scalars;
    args.stream = device.stream();
    for (std::size_t s = 0; s < op.inputs.size(); ++s) {
        const auto& host = w.input(int(s));
        void* d = bufs.add(host.size() * sizeof(float));
        device.upload(d, host.data(), host.size() * sizeof(float));
        args.in[s] = static_cast<const float*>(d);
        guards.inputs.push_back({std::string(op.inputs[s]), d, &host});
    }
    const auto& initial = w.initial_outputs();
    for (std::size_t s = 0; s < op.outputs.size(); ++s) {
        void* d = add_guarded(at, bufs, guards, initial[s].size() * sizeof(float),
                              std::string(op.outputs[s]), sizeof(float));
        device.upload(d, initial[s].data(), initial[s].size() * sizeof(float));
        args.out[s] = static_cast<float*>(d);
    }
    if (workspace > 0) {
        args.workspace = add_guarded(at, bufs, guards, std::size_t(workspace), "workspace", 1);
        args.workspace_bytes = std::size_t(workspace);
    }
    return args;
}

void add_violations(ParityResult& parity, std::vector<std::string> violations) {
    if (violations.empty())
        return;
    parity.pass = false;
    parity.first_failure = violations.front();
    for (auto& v : violations)
        if (std::find(parity.violations.begin(), parity.violations.end(), v) ==
            parity.violations.end())
            parity.violations.push_back(std::move(v));
}

} // namespace switchyard::detail
