// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <string>
#include <vector>

namespace switchyard {

/// One GPU of the host as the kernel lists it on the PCI bus, whatever runtime or plugin is
/// installed: what a machine's identity (profiling/fingerprint.h) names, so that it does not
/// depend on which devices a run selected or which plugins are on the path.
struct SWITCHYARD_CORE_EXPORT HostGpu {
    std::string pci;       // "0000:01:00.0"
    std::string vendor_id; // "10de"
    std::string device_id; // "2330"
    std::string vendor;    // "NVIDIA", "AMD", "Intel"
    std::string name;      // the driver's model name where it gives one, else "NVIDIA 10de:2330"
    std::string driver;    // the kernel driver bound to it ("nvidia", "amdgpu", "i915"; "" none)
    std::string driver_version; // /sys/module/<driver>/version ("580.159.04"; "" unknown)
};

/// The display and 3D controllers (PCI class 0x03) of the vendors that make compute GPUs
/// (NVIDIA, AMD, Intel, and a few more), read from `sysfs` (/sys: the kernel's; a folder
/// laid out the same way in tests). A virtual machine's emulated VGA is not one. Sorted by
/// PCI address; empty where the bus cannot be read.
SWITCHYARD_CORE_EXPORT std::vector<HostGpu> host_gpus(const std::string& sysfs = "/sys");

} // namespace switchyard
